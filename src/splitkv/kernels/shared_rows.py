"""Shared-memory helpers of the warp-specialized MLA kernels (both tile shapes): a key block's
wait and tail, and the producers' query copies and early blocks."""

from __future__ import annotations

from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import fence_async_shared, mbarrier, tma

LATENT = gl.constexpr(512)
HALF = gl.constexpr(256)


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


@gluon.jit
def load_query_block(q_lat_desc, q_rope_desc, q_lo, q_hi, q_pe, queries_in, queries_free, row,
                     pieces):  # fmt: skip
    """Producer: the 64 query rows from `row` of q (as rows of 576) into the query buffers by
    bulk copies, once the consumers freed them (not before the first piece: `pieces` counts
    the loads before this one). Rows past the head block's are another request's or zeros:
    their results are never stored."""
    QUERY_BYTES: gl.constexpr = 2 * q_lat_desc.block_type.nbytes + q_rope_desc.block_type.nbytes
    mbarrier.wait(queries_free, (pieces & 1) ^ 1, pred=pieces > 0)
    mbarrier.expect(queries_in, QUERY_BYTES)
    tma.async_copy_global_to_shared(q_lat_desc, [row, 0], queries_in, q_lo)
    tma.async_copy_global_to_shared(q_lat_desc, [row, HALF], queries_in, q_hi)
    tma.async_copy_global_to_shared(q_rope_desc, [row, LATENT], queries_in, q_pe)


@gluon.jit
def early_key_blocks(first_key, num_blocks, new_keys_from, BLOCK_N: gl.constexpr,
                     NUM_STAGES: gl.constexpr, EARLY_BLOCKS: gl.constexpr):  # fmt: skip
    """How many of a piece's first key blocks (from first_key) the producer may bring before
    the wait for the kernel ahead (EARLY_START): at most EARLY_BLOCKS, within the ring's
    stages (the consumers free none before the queries come), and only blocks whose keys all
    lie before new_keys_from (the new tokens' keys, which that kernel may still be
    writing)."""
    gl.static_assert(EARLY_BLOCKS <= NUM_STAGES, "early blocks must fit the ring")
    old = gl.maximum(new_keys_from - first_key, 0) // BLOCK_N
    return gl.minimum(gl.minimum(old, num_blocks), EARLY_BLOCKS)
