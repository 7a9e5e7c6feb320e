"""`torch.ops.splitkv.mla_decode`, `torch.ops.splitkv.gqa_decode` and
`torch.ops.splitkv.merge_states`: the decodes and the merge registered as torch custom ops, so
`torch.compile` traces through them (fullgraph) instead of breaking the graph at a Triton
launch.

The ops allocate their outputs and a workspace per call (MLA at its default widths, 576 / 512;
a shape's plan is made once and remembered, `splitkv/plan_memo.py`). For
CUDA-graph capture with a preallocated workspace, call the functions with `plan=` directly.
"""

from __future__ import annotations

import torch

from splitkv.gqa import gqa_decode
from splitkv.merge import merge_states
from splitkv.mla import mla_decode
from splitkv.plan import MLA_HEAD_DIM_V


@torch.library.custom_op("splitkv::mla_decode", mutates_args=())
def mla_decode_op(
    q: torch.Tensor,
    kv_cache: torch.Tensor,
    page_table: torch.Tensor,
    seq_lens: torch.Tensor,
    scale: float | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Same contract as `splitkv.mla_decode(q, kv_cache, page_table, seq_lens, scale=scale)`."""
    return mla_decode(q, kv_cache, page_table, seq_lens, scale=scale)


@mla_decode_op.register_fake
def _mla_decode_shapes(q, kv_cache, page_table, seq_lens, scale=None):
    batch, qlen, heads, _ = q.shape
    out = q.new_empty(batch, qlen, heads, MLA_HEAD_DIM_V)
    lse = q.new_empty(batch, qlen, heads, dtype=torch.float32)
    return out, lse


@torch.library.custom_op("splitkv::gqa_decode", mutates_args=())
def gqa_decode_op(
    q: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    page_table: torch.Tensor,
    seq_lens: torch.Tensor,
    scale: float | None = None,
    window_left: int = -1,
    logit_cap: float = 0.0,
    sinks: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Same contract as `splitkv.gqa_decode` with these keyword arguments."""
    return gqa_decode(
        q,
        k_cache,
        v_cache,
        page_table,
        seq_lens,
        scale=scale,
        window_left=window_left,
        logit_cap=logit_cap,
        sinks=sinks,
    )


@gqa_decode_op.register_fake
def _gqa_decode_shapes(
    q, k_cache, v_cache, page_table, seq_lens, scale=None, window_left=-1, logit_cap=0.0, sinks=None
):
    return q.new_empty(q.shape), q.new_empty(q.shape[:3], dtype=torch.float32)


@torch.library.custom_op("splitkv::merge_states", mutates_args=())
def merge_states_op(outs: torch.Tensor, lses: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Same contract as `splitkv.merge_states(outs, lses)`, the states stacked: outs [S, ..., D],
    lses [S, ...] float32 natural log."""
    return merge_states(outs, lses)


@merge_states_op.register_fake
def _merge_states_shapes(outs, lses):
    return outs.new_empty(outs.shape[1:]), lses.new_empty(lses.shape[1:])
