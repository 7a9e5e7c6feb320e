"""Every provider behind one signature: `prepare(case, **knobs) -> Prepared`, whose `run()` is
the timed step (no allocation, graph-capturable) and whose `result()` gives (out, lse) in
splitkv's convention (lse natural log, or None where the provider does not return it).

Peers are loaded from installed packages (or a file the user points to), never copied here; a
peer that cannot be loaded is reported as missing, with the reason.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib.util
import os
import sys
import types
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch

import splitkv
from splitkv.gqa import gqa_stage_one
from splitkv.mla import merge_follows, merge_workspace, mla_stage_one
from splitkv.plan_rules import launched_wave_programs
from splitkv.testing import GqaCase, MlaCase

SGLANG_MODULE = "sglang/srt/layers/attention/triton_ops/decode_attention.py"
SGLANG_FILE_ENV = "SPLITKV_SGLANG_DECODE_ATTENTION"  # a path to that one file
PEER_SPLITS = (8, 16, 32, 64, 128, 256)  # the Triton peer is timed at each; its best is kept


@dataclass
class Prepared:
    run: Callable[[], object]
    result: Callable[[], tuple[torch.Tensor, torch.Tensor | None]]
    num_splits: int
    merge_run: Callable[[], object] | None = None  # stage 2 alone, where it can run alone
    stage1_run: Callable[[], object] | None = None  # stage 1 alone (the merge's added cost)
    schedule: str = ""  # splitkv's stage-1 schedule ("uniform", "balanced x 264 programs")


class Unsupported(Exception):
    """The provider cannot run this shape (say why)."""


def describe_schedule(plan: splitkv.DecodePlan) -> str:
    if plan.schedule == "balanced":
        return f"balanced x {plan.num_programs} programs"
    return plan.schedule


def prepare_splitkv(case: MlaCase | GqaCase, launched_waves: int = 0, window_left: int = -1,
                    **plan_knobs) -> Prepared:  # fmt: skip
    """`plan_knobs`: any `plan_decode` overrides (num_splits, grid_order, merge tiling...).
    `launched_waves` (balanced ablations): size the grid so that stage 1 launches that many
    waves of programs, num_programs + batch per head block, instead of num_programs.
    `window_left` >= 0 (GQA): a sliding window, planned and decoded so (gpt-oss's alternate
    layers: 128 keys); the stages are then timed together only."""
    if window_left >= 0 and not isinstance(case, GqaCase):
        raise Unsupported("a sliding window is GQA's")
    batch, qlen, heads, head_dim = case.q.shape
    cache = case.key_pool
    page_size = cache.shape[1]
    max_seq_len = int(case.page_table.shape[1] * page_size)
    gqa = {}
    if isinstance(case, GqaCase):
        gqa = {"kind": "gqa", "num_kv_heads": cache.shape[2], "head_dim": head_dim,
               "window_left": window_left}  # fmt: skip
    shape = dict(qlen=qlen, page_size=page_size, dtype=case.q.dtype, device=case.q.device, **gqa)
    knobs = {"seq_lens": case.seq_lens, **plan_knobs}  # the lengths steer schedule="auto"
    if launched_waves:
        # A uniform plan's num_programs is one wave of programs per head block.
        wave = splitkv.plan_decode(batch, max_seq_len, heads, schedule="uniform", **shape)
        knobs["num_programs"] = launched_wave_programs(launched_waves, wave.num_programs, batch)
    plan = splitkv.plan_decode(batch, max_seq_len, heads, **shape, **knobs)
    # The stages timed apart run without merge_streams' flags (a merge alone would wait for
    # flags no stage 1 raised); the same kernels and workspace otherwise.
    apart = dataclasses.replace(plan, merge_streams=False)
    out = case.q.new_empty(batch, qlen, heads, plan.head_dim_v)
    lse = torch.empty(batch, qlen, heads, device=case.q.device)
    if isinstance(case, GqaCase):
        sinks = case.sinks
        run = lambda: splitkv.gqa_decode(*case.args, plan=plan, out=out, lse=lse, sinks=sinks,
                                         window_left=window_left)  # fmt: skip
        stage1 = lambda: gqa_stage_one(*case.args, plan=plan, out=out, lse=lse, sinks=sinks)
    else:
        sinks = None
        run = lambda: splitkv.mla_decode(*case.args, plan=plan, out=out, lse=lse)
        stage1 = lambda: mla_stage_one(*case.args, plan=apart, out=out, lse=lse)
    merge_alone = lambda: merge_workspace(
        apart,
        case.seq_lens,
        out,
        lse,
        max_seq_len=max_seq_len,
        sinks=sinks,
        # As after stage 1 on the Gluon kernel (the benchmark's caches are page-contiguous).
        whole_pieces=plan.whole_pieces,
    )
    return Prepared(
        run=run,
        result=lambda: (out, lse),
        num_splits=plan.num_splits,
        schedule=describe_schedule(plan),
        # A one-split plan whose stage 1 writes the output runs no merge to time; the stages
        # alone take no window.
        merge_run=merge_alone if merge_follows(plan) and window_left < 0 else None,
        stage1_run=stage1 if window_left < 0 else None,
    )


@functools.cache  # one module, so its kernels compile once per run, not once per prepare
def load_sglang_decode_attention() -> types.ModuleType:
    """SGLang's Triton decode_attention module, without importing sglang (which starts the whole
    server stack): from $SPLITKV_SGLANG_DECODE_ATTENTION, ./.peers/, or the installed package."""
    candidates = [os.environ.get(SGLANG_FILE_ENV), ".peers/sglang_decode_attention.py"]
    spec = importlib.util.find_spec("sglang")
    if spec is not None and spec.submodule_search_locations:
        root = Path(next(iter(spec.submodule_search_locations))).parent
        candidates.append(str(root / SGLANG_MODULE))
    path = next((c for c in candidates if c and Path(c).is_file()), None)
    if path is None:
        raise ImportError(f"no {SGLANG_MODULE} (install sglang or set {SGLANG_FILE_ENV})")
    # Its one sglang import is `from sglang.srt.utils import is_hip`: stub just that, briefly.
    utils = types.ModuleType("sglang.srt.utils")
    utils.is_hip = lambda: torch.version.hip is not None
    stubs = {"sglang": types.ModuleType("sglang"), "sglang.srt": types.ModuleType("sglang.srt")}
    stubs["sglang.srt.utils"] = utils
    saved = {name: sys.modules.get(name) for name in stubs}
    sys.modules.update(stubs)
    try:
        module_spec = importlib.util.spec_from_file_location("_splitkv_peer_sglang_decode", path)
        module = importlib.util.module_from_spec(module_spec)
        module_spec.loader.exec_module(module)
    finally:
        for name, previous in saved.items():
            if previous is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = previous
    return module


def prepare_triton_peer(case: MlaCase | GqaCase, num_splits: int | None = None) -> Prepared:
    """SGLang's split-KV Triton decode (token-level indices, i.e. page size 1 addressing);
    MLA passes the latent cache as keys and its first 512 columns as values."""
    module = load_sglang_decode_attention()
    batch, qlen, heads, d_qk = case.q.shape
    if qlen != 1:
        raise Unsupported("the Triton peer decodes one query token per request")
    if isinstance(case, GqaCase):
        page_size, kv_heads, d_v = case.k_cache.shape[1:]
        keys = case.k_cache.view(-1, kv_heads, d_qk)
        values = case.v_cache.view(-1, kv_heads, d_v)
        sinks = case.sinks
    else:
        page_size, d_v = case.kv_cache.shape[1], 512
        keys = case.kv_cache.view(-1, 1, d_qk)
        values = keys[..., :d_v]
        sinks = None
    lengths = case.seq_lens.tolist()
    device = case.q.device
    indices = []
    for b, n in enumerate(lengths):
        pos = torch.arange(n, device=device)
        indices.append(case.page_table[b, pos // page_size].long() * page_size + pos % page_size)
    kv_indices = torch.cat(indices).to(torch.int32)
    kv_indptr = torch.zeros(batch + 1, dtype=torch.int32, device=device)
    kv_indptr[1:] = torch.tensor(lengths, device=device).cumsum(0)
    splits = num_splits or 32
    q = case.q[:, 0].contiguous()
    out = q.new_empty(batch, heads, d_v)
    logits = torch.empty(batch, heads, splits, d_v, dtype=torch.float32, device=device)
    lse = torch.empty(batch, heads, splits, dtype=torch.float32, device=device)
    num_kv_splits = torch.full((batch,), splits, dtype=torch.int32, device=device)
    scale = d_qk**-0.5
    extra = {} if sinks is None else {"sinks": sinks}

    def run():
        module.decode_attention_fwd(
            q,
            keys,
            values,
            out,
            kv_indptr,
            kv_indices,
            logits,
            lse,
            num_kv_splits,
            splits,
            scale,
            **extra,
        )

    return Prepared(run=run, result=lambda: (out[:, None], None), num_splits=splits)


def prepare_splitkv_prefix(case: MlaCase | GqaCase, **plan_knobs) -> Prepared:
    """splitkv's shared-prefix cascade: each group's shared pages read once for the group
    (for GQA, once a chunk of its members: splitkv/prefix_gqa.py)."""
    if not case.sharing:
        raise Unsupported("needs a batch with a shared prefix")
    batch, page_size = case.q.shape[0], case.key_pool.shape[1]
    prefix = splitkv.plan_shared_prefix(
        [(list(members), tokens // page_size) for members, tokens in case.sharing],
        batch,
        case.page_table.shape[1],
        page_size,
        case.q.device,
    )
    result = {}

    def run():
        if isinstance(case, GqaCase):
            result["out"] = splitkv.gqa_decode_shared_prefix(*case.args, prefix, sinks=case.sinks)
        else:
            result["out"] = splitkv.mla_decode_shared_prefix(*case.args, prefix)

    return Prepared(run=run, result=lambda: result["out"], num_splits=0)


PROVIDERS: dict[str, Callable[..., Prepared]] = {
    "splitkv": prepare_splitkv,
    "splitkv-prefix": prepare_splitkv_prefix,
    "triton-peer": prepare_triton_peer,
}
# Peers with no adapter here yet: reported as missing when they are not importable.
OPTIONAL_PEERS = {"flashinfer": "flashinfer", "flashmla": "flash_mla"}


def missing_reason(provider: str) -> str | None:
    """Why a provider cannot run on this machine, or None if it can."""
    if provider == "triton-peer":
        try:
            load_sglang_decode_attention()
        except Exception as error:  # any failure to load the peer is reported, not raised
            return f"not loadable: {error}"
        return None
    if provider in OPTIONAL_PEERS:
        if importlib.util.find_spec(OPTIONAL_PEERS[provider]) is None:
            return f"not importable ({OPTIONAL_PEERS[provider]} is not installed)"
        return "importable, but splitkv has no adapter for it yet"
    if provider not in PROVIDERS:
        return "unknown provider"
    return None
