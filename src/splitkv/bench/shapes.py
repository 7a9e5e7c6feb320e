"""The shapes splitkv is measured on (BENCH.md), and what each must read and compute."""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from splitkv.testing import prefix_groups_of

STANDARD_HEADS = (12, 16, 128)  # Kimi-K3 at TP8, DeepSeek-V3 at TP8, DeepSeek-V3 unsharded
STANDARD_CONTEXTS = (8192, 68096, 327600)
STANDARD_BATCHES = (1, 8, 16, 48, 128)
MAX_KV_BYTES = 40e9  # BENCH.md skips shapes whose KV exceeds 40 GB
HEAD_DIM_QK, HEAD_DIM_V = 576, 512
DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}


@dataclass(frozen=True)
class BenchShape:
    heads: int
    context: int
    batch: int
    qlen: int = 1
    page_size: int = 64
    dtype: str = "bf16"
    seq_lens: tuple[int, ...] | None = None  # explicit lengths (ragged batches); else uniform
    label: str = ""
    shared_prefix: int = 0  # leading tokens whose pages all requests share (prefix caching)
    # several groups instead: (request indices, leading tokens they share) per group
    prefix_groups: tuple[tuple[tuple[int, ...], int], ...] = ()
    kind: str = "mla"  # or "gqa": separate K and V caches of kv_heads x head_dim
    kv_heads: int = 1
    head_dim: int = HEAD_DIM_QK  # GQA head dim (MLA: the key width)
    sinks: bool = False  # GQA attention sinks (gpt-oss)
    model: str = ""  # GQA model name (GQA_MODELS)

    @property
    def lengths(self) -> list[int]:
        return list(self.seq_lens) if self.seq_lens else [self.context] * self.batch

    @property
    def element_size(self) -> int:
        return DTYPES[self.dtype].itemsize

    @property
    def bytes_read(self) -> int:
        """Every attended KV row once, plus q."""
        return self._bytes(sum(self.lengths))

    @property
    def unique_bytes(self) -> int:
        """KV rows once even where requests share them, plus q: the floor with prefix reuse."""
        lengths = self.lengths
        reused = sum(
            (len(members) - 1) * min(tokens, *(lengths[b] for b in members))
            for members, tokens in shape_prefix_groups(self)
            if members
        )
        return self._bytes(sum(lengths) - reused)

    def _bytes(self, tokens: int) -> int:
        q = self.batch * self.qlen * self.heads * self.head_dim
        # MLA: one latent row per token serves keys and values; GQA: K and V per kv head.
        kv = tokens * self.head_dim * (1 if self.kind == "mla" else 2 * self.kv_heads)
        return (q + kv) * self.element_size

    @property
    def flops(self) -> int:
        """Per visible key per query row: 2*d_qk + 2*d_v (BENCH.md)."""
        visible = sum(max(0, n - self.qlen + 1 + i) for n in self.lengths for i in range(self.qlen))
        d_v = HEAD_DIM_V if self.kind == "mla" else self.head_dim
        return visible * self.heads * (2 * self.head_dim + 2 * d_v)

    def describe(self) -> str:
        what = self.label or f"ctx {self.context} x bs {self.batch}"
        heads = (
            f"h{self.heads}"
            if self.kind == "mla"
            else (f"gqa {self.heads}/{self.kv_heads} d{self.head_dim}")
        )
        return f"{heads} {what} q{self.qlen} p{self.page_size} {self.dtype}"


def grid_shapes(
    heads=STANDARD_HEADS,
    contexts=STANDARD_CONTEXTS,
    batches=STANDARD_BATCHES,
    qlens=(1,),
    page_sizes=(64,),
    dtype: str = "bf16",
) -> list[BenchShape]:
    """The cross product, skipping shapes whose KV would exceed MAX_KV_BYTES."""
    shapes = []
    for h, ctx, bs, ql, ps in itertools.product(heads, contexts, batches, qlens, page_sizes):
        shape = BenchShape(h, ctx, bs, ql, ps, dtype)
        if shape.bytes_read <= MAX_KV_BYTES:
            shapes.append(shape)
    return shapes


RAGGED = (1, 63, 64, 65, 4096, 4097, 65536, 327600)
PREFIX_BOUNDARY = (308736, 308737, 312831, 312832, 312833, 320000, 327599, 327600)


def mtp_suffix(qlen: int) -> str:
    """What a special batch's label adds at qlen > 1 (MTP)."""
    return "" if qlen == 1 else f" qlen {qlen}"


def special_shapes(
    heads: int = 12, dtype: str = "bf16", qlen: int = 1, page_size: int = 64
) -> list[BenchShape]:
    """BENCH.md's non-uniform batches: ragged, prefix-boundary, one long beside 47 short, and
    the shared-prefix batches (at page sizes that divide their prefixes); with qlen > 1 (MTP)
    labelled "... qlen N"."""
    one_long = (327600, *(1 + (4095 * i) // 46 for i in range(47)))
    mtp = mtp_suffix(qlen)
    ragged = [
        BenchShape(heads, max(lengths), len(lengths), qlen, page_size, dtype, lengths, name + mtp)
        for lengths, name in (
            (RAGGED, "ragged"),
            (PREFIX_BOUNDARY, "prefix-boundary"),
            (one_long, "1x327600+47 short"),
        )
    ]
    shared = [shared_prefix_shape(heads, dtype, qlen), prefix_mix_shape(heads, dtype, qlen)]
    shared = [
        dataclasses.replace(shape, page_size=page_size)
        for shape in shared
        if all(tokens % page_size == 0 for _, tokens in shape_prefix_groups(shape))
    ]
    return [*ragged, *shared]


def shape_prefix_groups(shape: BenchShape) -> list[tuple[Sequence[int], int]]:
    """(members, shared tokens) of each of the shape's prefix groups."""
    return prefix_groups_of(shape.shared_prefix, shape.prefix_groups, shape.batch)


SHARED_PREFIX = 308736  # BENCH.md: 8 requests of 327,600 tokens sharing this prefix


def with_labels(shapes: list[BenchShape], prefixes: list[str] | None) -> list[BenchShape]:
    """The shapes whose label starts with one of `prefixes` (all of them without prefixes).

    >>> [s.label for s in with_labels(special_shapes(), ["ragged", "1x"])]
    ['ragged', '1x327600+47 short']
    """
    if not prefixes:
        return shapes
    return [s for s in shapes if any(s.label.startswith(p) for p in prefixes)]


def shared_prefix_shape(heads: int = 12, dtype: str = "bf16", qlen: int = 1) -> BenchShape:
    label = f"8x327600 sharing {SHARED_PREFIX}" + mtp_suffix(qlen)
    return BenchShape(heads, 327600, 8, qlen, dtype=dtype, shared_prefix=SHARED_PREFIX, label=label)


# Issue 5's realistic mix: 6 groups of 8 requests, each group sharing a prefix of 16k-64k tokens
# (multiples of the 64-token page), each request with its own 100-4,000 tokens after it.
MIX_PREFIXES = (16384, 24576, 32768, 40960, 49152, 65536)
MIX_GROUP = 8


def prefix_mix_shape(heads: int = 12, dtype: str = "bf16", qlen: int = 1) -> BenchShape:
    batch = len(MIX_PREFIXES) * MIX_GROUP
    suffixes = [100 + (3900 * i) // (batch - 1) for i in range(batch)]
    lengths = tuple(MIX_PREFIXES[b // MIX_GROUP] + suffixes[b] for b in range(batch))
    groups = tuple(
        (tuple(range(g * MIX_GROUP, (g + 1) * MIX_GROUP)), prefix)
        for g, prefix in enumerate(MIX_PREFIXES)
    )
    return BenchShape(
        heads,
        max(lengths),
        batch,
        qlen,
        dtype=dtype,
        seq_lens=lengths,
        prefix_groups=groups,
        label="48 in 6 prefix groups" + mtp_suffix(qlen),
    )


# Issue 4's GQA models: (q heads, kv heads, head dim, sinks).
GQA_MODELS = {
    "llama3-70b-tp8": (8, 1, 128, False),
    "llama3-8b": (32, 8, 128, False),
    "qwen-64-8": (64, 8, 128, False),
    "mha-32": (32, 32, 128, False),
    "gpt-oss": (64, 8, 64, True),
}
GQA_CONTEXTS = (4096, 32768, 131072)
GQA_BATCHES = (1, 8, 32, 128, 256)


# Issue 5's ragged batches at GQA's contexts: the MLA batches with the longest requests at
# the GQA sweep's longest context.
GQA_RAGGED = (1, 63, 64, 65, 4096, 4097, 32768, 131072)
GQA_ONE_LONG = (131072, *(1 + (4095 * i) // 46 for i in range(47)))


# The shared-prefix batch at GQA's longest context: 8 requests sharing 94% of it, as the MLA
# batch shares 308,736 of 327,600 tokens.
GQA_SHARED_PREFIX = 122880


def gqa_special_shapes(
    models=tuple(GQA_MODELS), dtype: str = "bf16", qlen: int = 1, page_size: int = 16
) -> list[BenchShape]:
    """The ragged and one-long batches for each GQA model (labelled "... qlen N" for MTP)."""
    mtp = mtp_suffix(qlen)
    shapes = []
    for model in models:
        for lengths, name in ((GQA_RAGGED, "ragged"), (GQA_ONE_LONG, "1x131072+47 short")):
            shapes.append(
                BenchShape(GQA_MODELS[model][0], max(lengths), len(lengths), qlen, dtype=dtype,
                           seq_lens=lengths, label=name + mtp, **_gqa_fields(model, page_size))
            )  # fmt: skip
    return shapes


def gqa_prefix_shapes(
    models=tuple(GQA_MODELS), dtype: str = "bf16", qlen: int = 1, page_size: int = 16
) -> list[BenchShape]:
    """For each GQA model, batches whose requests share pages: 8 x 131,072 sharing 122,880
    tokens, and issue 5's mix of 6 prefix groups."""
    shapes = []
    for model in models:
        q_heads, gqa = GQA_MODELS[model][0], _gqa_fields(model, page_size)
        label = f"8x{GQA_CONTEXTS[-1]} sharing {GQA_SHARED_PREFIX}" + mtp_suffix(qlen)
        shapes.append(BenchShape(q_heads, GQA_CONTEXTS[-1], 8, qlen, dtype=dtype,
                                 shared_prefix=GQA_SHARED_PREFIX, label=label, **gqa))  # fmt: skip
        shapes.append(dataclasses.replace(prefix_mix_shape(q_heads, dtype, qlen), **gqa))
    return shapes


def gqa_batch(model: str, lengths: Sequence[int], qlen: int = 1, page_size: int = 16,
              dtype: str = "bf16") -> BenchShape:  # fmt: skip
    """One batch of a GQA model (`GQA_MODELS`) at the given request lengths: what a one-off
    device script times under a few plan knobs (`sweep.build_cases` makes its inputs,
    `providers.prepare_splitkv` its timed call)."""
    heads = GQA_MODELS[model][0]
    return BenchShape(heads, max(lengths), len(lengths), qlen, dtype=dtype,
                      seq_lens=tuple(lengths), **_gqa_fields(model, page_size))  # fmt: skip


def _gqa_fields(model: str, page_size: int) -> dict:
    _, kv_heads, head_dim, sinks = GQA_MODELS[model]
    return {"kind": "gqa", "kv_heads": kv_heads, "head_dim": head_dim, "sinks": sinks,
            "model": model, "page_size": page_size}  # fmt: skip


def gqa_shapes(
    models=tuple(GQA_MODELS),
    contexts=GQA_CONTEXTS,
    batches=GQA_BATCHES,
    qlens=(1,),
    page_size: int = 16,
    dtype: str = "bf16",
) -> list[BenchShape]:
    """Issue 4's GQA sweep, skipping shapes whose KV would exceed MAX_KV_BYTES."""
    shapes = []
    for model, ctx, bs, ql in itertools.product(models, contexts, batches, qlens):
        q_heads, kv_heads, head_dim, sinks = GQA_MODELS[model]
        shape = BenchShape(
            q_heads,
            ctx,
            bs,
            ql,
            page_size,
            dtype,
            label="",
            kind="gqa",
            kv_heads=kv_heads,
            head_dim=head_dim,
            sinks=sinks,
            model=model,
        )
        if shape.bytes_read <= MAX_KV_BYTES:
            shapes.append(shape)
    return shapes
