"""The shapes splitkv is measured on (BENCH.md), and what each must read and compute."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import torch

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

    @property
    def lengths(self) -> list[int]:
        return list(self.seq_lens) if self.seq_lens else [self.context] * self.batch

    @property
    def element_size(self) -> int:
        return DTYPES[self.dtype].itemsize

    @property
    def bytes_read(self) -> int:
        """Every attended KV row once, plus q."""
        rows = sum(self.lengths)
        return (rows + self.batch * self.qlen * self.heads) * HEAD_DIM_QK * self.element_size

    @property
    def unique_bytes(self) -> int:
        """KV rows once even where requests share them, plus q: the floor with prefix reuse."""
        shared = min(self.shared_prefix, min(self.lengths))
        rows = sum(self.lengths) - (self.batch - 1) * shared
        return (rows + self.batch * self.qlen * self.heads) * HEAD_DIM_QK * self.element_size

    @property
    def flops(self) -> int:
        """2*d_qk + 2*d_v per visible key per query row (BENCH.md)."""
        visible = sum(max(0, n - self.qlen + 1 + i) for n in self.lengths for i in range(self.qlen))
        return visible * self.heads * (2 * HEAD_DIM_QK + 2 * HEAD_DIM_V)

    def describe(self) -> str:
        what = self.label or f"ctx {self.context} x bs {self.batch}"
        return f"h{self.heads} {what} q{self.qlen} p{self.page_size} {self.dtype}"


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


def special_shapes(heads: int = 12, dtype: str = "bf16") -> list[BenchShape]:
    """BENCH.md's non-uniform batches: ragged, prefix-boundary, one long beside 47 short."""
    one_long = (327600, *(1 + (4095 * i) // 46 for i in range(47)))
    return [
        BenchShape(heads, max(RAGGED), len(RAGGED), dtype=dtype, seq_lens=RAGGED, label="ragged"),
        BenchShape(
            heads,
            max(PREFIX_BOUNDARY),
            8,
            dtype=dtype,
            seq_lens=PREFIX_BOUNDARY,
            label="prefix-boundary",
        ),
        BenchShape(heads, 327600, 48, dtype=dtype, seq_lens=one_long, label="1x327600+47 short"),
        shared_prefix_shape(heads, dtype),
    ]


SHARED_PREFIX = 308736  # BENCH.md: 8 requests of 327,600 tokens sharing this prefix


def shared_prefix_shape(heads: int = 12, dtype: str = "bf16") -> BenchShape:
    label = f"8x327600 sharing {SHARED_PREFIX}"
    return BenchShape(heads, 327600, 8, dtype=dtype, shared_prefix=SHARED_PREFIX, label=label)
