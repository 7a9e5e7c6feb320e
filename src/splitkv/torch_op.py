"""`torch.ops.splitkv.mla_decode`: MLA decode registered as a torch custom op, so `torch.compile`
traces through it (fullgraph) instead of breaking the graph at a Triton launch.

The op allocates its outputs and plans per call (default MLA widths: 576 / 512). For CUDA-graph
capture with a preallocated workspace, call `splitkv.mla_decode(..., plan=plan)` directly.
"""

from __future__ import annotations

import torch

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
