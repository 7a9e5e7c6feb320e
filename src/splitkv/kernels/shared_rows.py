"""Shared-memory helpers of the warp-specialized MLA consumers (both tile shapes)."""

from __future__ import annotations

from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import fence_async_shared, mbarrier


@gluon.jit
def wait_for_key_block(k_lo, k_hi, ready, ring, block_key, seq_len, BLOCK_N: gl.constexpr,
                       NUM_STAGES: gl.constexpr):  # fmt: skip
    """Consumers: the ring's block number `ring` (keys from block_key) once its copies landed,
    with its latent rows past the request's end zeroed; returns its stage. Those rows hold
    whatever the page holds (NaN, say): a masked score gives them weight 0, but 0 * NaN in
    P V is NaN."""
    stage = ring % NUM_STAGES
    mbarrier.wait(ready.index(stage), (ring // NUM_STAGES) & 1)
    if block_key + BLOCK_N > seq_len:
        zero_rows_from(k_lo.index(stage), seq_len - block_key, BLOCK_N)
        zero_rows_from(k_hi.index(stage), seq_len - block_key, BLOCK_N)
        fence_async_shared()  # the zeros, visible to the wgmma (the async proxy)
        gl.thread_barrier()  # of this partition's warps: all rows zeroed before any reads
    return stage


@gluon.jit
def zero_rows_from(buffer, first_row, BLOCK_N: gl.constexpr):
    """Rows [first_row, BLOCK_N) of a [BLOCK_N, 256] shared buffer set to 0, 16 rows at a time
    (a whole tile at once would need 32 more registers per thread beside O's 128), by the
    warps of whichever partition calls it."""
    layout: gl.constexpr = gl.BlockedLayout([1, 8], [2, 16], [gl.num_warps(), 1], [1, 0])
    for r in gl.static_range(0, BLOCK_N, 16):
        part = buffer.slice(r, 16)
        rows = r + gl.arange(0, 16, gl.SliceLayout(1, layout))
        values = part.load(layout)
        part.store(gl.where((rows < first_row)[:, None], values, 0.0).to(values.dtype))
