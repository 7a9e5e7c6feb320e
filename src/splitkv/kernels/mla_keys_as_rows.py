"""The consumers of the warp-specialized MLA stage 1 for narrow head blocks (8 to 32 query
rows: 12 or 16 heads at qlen 1 or 2) on Hopper: the keys are wgmma's rows.

wgmma's M is 64 rows a warpgroup, so a 64-row tile spends most of its work on padding when a
head block has 16 rows (the Triton 16-row tile runs mma.sync instead, with the copies and
the math on the same warps). Here the product is transposed: per block of 64 keys,
    S^T [64 keys, BLOCK_Q] = K [64, 576] Q^T          (K from the ring, Q^T from shared memory)
    O^T [512, BLOCK_Q]    += V^T [512, 64] P^T        (V^T: the ring's latent rows, transposed;
                                                       P^T through a small shared buffer)
so M is the keys (and the value columns) and N the query rows: one warpgroup of 4 warps does
4x less wgmma work than the padded 64-row tile, and O^T is 64 registers a thread at 16 rows.
The softmax reduces over the keys, i.e. across the warpgroup's 4 warps: the maximum once per
block (through shared memory), the sum kept per key row and reduced once at the end.

Same contract as `attend_key_blocks` (kernels/mla_warp_specialized.py): the same arguments,
ring, masks and partials, so both kernels (uniform and program loop) take either consumer.
"""

from __future__ import annotations

from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import (
    fence_async_shared,
    mbarrier,
    warpgroup_mma,
    warpgroup_mma_wait,
)

from splitkv.kernels.gluon_row_store import final_rows
from splitkv.kernels.shared_rows import wait_for_key_block

LATENT = gl.constexpr(512)
HALF = gl.constexpr(256)


@gluon.jit
def attend_key_blocks_narrow(q_lo, q_hi, q_pe, k_lo, k_hi, k_pe, ready, empty, ring_start,
                             num_blocks, first_key, lo_key, hi_key, seq_len, last_key,
                             head_block, slot_base, split, num_splits, rows_total, partial_o_ptr,
                             partial_lse_ptr, scale_log2, queries_in, queries_free,
                             NUM_HEADS: gl.constexpr, BLOCK_N: gl.constexpr,
                             NUM_STAGES: gl.constexpr, WAIT_FOR_QUERIES: gl.constexpr,
                             RELEASE_QUERIES: gl.constexpr, final=None,
                             whole=False):  # fmt: skip
    """`attend_key_blocks` with the keys as rows: the head block's BLOCK_Q query rows (q_lo's
    rows) as wgmma's N, split between the partition's warpgroups (one for 16-32 rows; two for
    64, each then attending its own 32 rows to the same ring: the softmax reduces over keys,
    which stay inside a warpgroup, so the two never exchange anything). `final` and `whole`:
    `store_rows`."""
    BLOCK_Q: gl.constexpr = q_lo.shape[0]
    GROUPS: gl.constexpr = gl.num_warps() // 4
    # One layout for S^T [64, BLOCK_Q] and O^T's halves [256, BLOCK_Q] (4 reps of 64 rows), so
    # the per-query-row vectors (max, scale) serve both without a conversion.
    layout: gl.constexpr = gl.NVMMADistributedLayout(
        version=[3, 0], warps_per_cta=[4, GROUPS], instr_shape=[16, BLOCK_Q // GROUPS, 16]
    )
    per_row: gl.constexpr = gl.SliceLayout(0, layout)  # a value per query row
    per_key: gl.constexpr = gl.SliceLayout(1, layout)  # a value per key (or value column)
    p_t = gl.allocate_shared_memory(
        q_lo.dtype, [BLOCK_N, BLOCK_Q],
        gl.NVMMASharedLayout.get_default_for([BLOCK_N, BLOCK_Q], q_lo.dtype),
    )  # fmt: skip
    rows = gl.arange(0, BLOCK_Q, per_row)
    q_pos = (head_block * BLOCK_Q + rows) // NUM_HEADS
    row_limit = gl.minimum(hi_key, last_key + q_pos + 1)  # keys past it are masked
    unmasked_end = gl.minimum(hi_key, last_key + 1)  # blocks ending here need no mask
    key_index = gl.arange(0, BLOCK_N, per_key)
    m_i = gl.full([BLOCK_Q], float("-inf"), gl.float32, per_row)
    # The softmax's sums stay per key row until the end: a reduction across the warps a block
    # would cost a second round through shared memory.
    l_rows = gl.zeros([BLOCK_N, BLOCK_Q], gl.float32, layout)
    o_lo = gl.zeros([HALF, BLOCK_Q], gl.float32, layout)
    o_hi = gl.zeros([HALF, BLOCK_Q], gl.float32, layout)
    if WAIT_FOR_QUERIES:
        mbarrier.wait(queries_in, 0)
    for j in range(num_blocks):
        ring = ring_start + j
        block_key = first_key + j * BLOCK_N
        stage = wait_for_key_block(k_lo, k_hi, ready, ring, block_key, seq_len, BLOCK_N,
                                   NUM_STAGES)  # fmt: skip
        scores = gl.zeros([BLOCK_N, BLOCK_Q], gl.float32, layout)
        scores = warpgroup_mma(k_lo.index(stage), q_lo.permute((1, 0)), scores, is_async=True)
        scores = warpgroup_mma(k_hi.index(stage), q_hi.permute((1, 0)), scores, is_async=True)
        scores = warpgroup_mma(k_pe.index(stage), q_pe.permute((1, 0)), scores, is_async=True)
        scores = warpgroup_mma_wait(num_outstanding=0, deps=(scores,))
        if RELEASE_QUERIES:  # noqa: SIM102 (a compile-time branch around a run-time one)
            if j == num_blocks - 1:
                mbarrier.arrive(queries_free, count=1)
        scores = scores * scale_log2
        if (block_key < lo_key) | (block_key + BLOCK_N > unmasked_end):
            keys = block_key + key_index
            visible = (keys[:, None] >= lo_key) & (keys[:, None] < row_limit[None, :])
            scores = gl.where(visible, scores, float("-inf"))
        m_new = gl.maximum(m_i, gl.max(scores, 0))
        # A row with nothing visible yet keeps m = -inf: subtract 0 there, not -inf (no NaN).
        m_safe = gl.where(m_new == float("-inf"), 0.0, m_new)
        p = gl.exp2(scores - m_safe[None, :])
        alpha = gl.exp2(m_i - m_safe)[None, :]
        l_rows = l_rows * alpha + p
        m_i = m_new
        p_t.store(p.to(q_lo.dtype))
        fence_async_shared()  # P^T, visible to the wgmma
        gl.thread_barrier()  # from all four warps
        o_lo = warpgroup_mma(k_lo.index(stage).permute((1, 0)), p_t, o_lo * alpha, is_async=True)
        o_hi = warpgroup_mma(k_hi.index(stage).permute((1, 0)), p_t, o_hi * alpha, is_async=True)
        o_lo, o_hi = warpgroup_mma_wait(num_outstanding=0, deps=(o_lo, o_hi))
        mbarrier.arrive(empty.index(stage), count=1)

    store_rows(m_i, gl.sum(l_rows, 0), o_lo, o_hi, head_block * BLOCK_Q + rows, rows_total,
               num_blocks, (slot_base + rows.to(gl.int64)) * num_splits + split, partial_o_ptr,
               partial_lse_ptr, NUM_HEADS, layout, final, whole)  # fmt: skip


@gluon.jit
def store_rows(m_i, l_i, o_lo, o_hi, rows, rows_total, num_blocks, slots, partial_o_ptr,
               partial_lse_ptr, NUM_HEADS: gl.constexpr, layout: gl.constexpr, final=None,
               whole=False):  # fmt: skip
    """The piece's rows (O^T's columns): its partial at `slots`, or, where `whole` (the piece
    holds its request's every key) and `final` is given, the request's output and lse
    themselves, so the merge has nothing to fold for it (kernels/merge.py, WHOLE_PIECES).
    final: (out + the request's offset, out's query-position and head strides), then, when
    the call asked for the lse, (lse + its offset, its strides). Rows that saw no key get out
    0 and lse -inf (the merge weighs a partial so 0; an empty request's rows are so written
    where `whole`: a one-split uniform plan runs no merge)."""
    per_key: gl.constexpr = gl.SliceLayout(1, layout)
    row_ok = (rows < rows_total) & (num_blocks > 0)
    has_keys = l_i > 0.0
    lse = gl.where(has_keys, m_i + gl.log2(gl.where(has_keys, l_i, 1.0)), float("-inf"))
    inv_l = gl.where(has_keys, 1.0 / gl.where(has_keys, l_i, 1.0), 0.0)[None, :]
    columns = gl.arange(0, HALF, per_key)[:, None]
    # Two ifs: `final is not None` is compile-time, so kernels without it build only the
    # partial store; `whole` is a run-time value once the program loop has assigned it (a lone
    # `if whole:` would build store_final for them too, and it cannot take a None `final`).
    if final is not None:
        if whole:
            # Every row of the request, with keys or not: no merge writes them after this.
            store_final(o_lo * inv_l, o_hi * inv_l, lse, rows, rows < rows_total, columns,
                        NUM_HEADS, final)  # fmt: skip
        else:
            store_partial(o_lo * inv_l, o_hi * inv_l, lse, slots, row_ok, columns,
                          partial_o_ptr, partial_lse_ptr)  # fmt: skip
    else:
        store_partial(o_lo * inv_l, o_hi * inv_l, lse, slots, row_ok, columns, partial_o_ptr,
                      partial_lse_ptr)  # fmt: skip


@gluon.jit
def store_partial(o_lo, o_hi, lse, slots, row_ok, columns, partial_o_ptr, partial_lse_ptr):
    """The normalised O^T halves and base-2 lse of a piece at its partial slots."""
    gl.store(partial_lse_ptr + slots, lse, mask=row_ok)
    # O^T's column r is row r's output: lanes holding neighbouring value columns write
    # neighbouring addresses (32-byte runs).
    offsets = slots[None, :] * LATENT + columns
    gl.store(partial_o_ptr + offsets, o_lo, mask=row_ok[None, :])
    gl.store(partial_o_ptr + offsets + HALF, o_hi, mask=row_ok[None, :])


@gluon.jit
def store_final(o_lo, o_hi, lse, rows, row_ok, columns, NUM_HEADS: gl.constexpr, final):
    """The normalised O^T halves as the request's output rows and the lse in natural log
    (`gluon_row_store.final_rows`), as the merge writes them."""
    out_ptr = final[0]
    out_rows = final_rows(lse, rows, row_ok, NUM_HEADS, final, True)[None, :]
    dtype = out_ptr.dtype.element_ty
    gl.store(out_ptr + out_rows + columns, o_lo.to(dtype), mask=row_ok[None, :])
    gl.store(out_ptr + out_rows + HALF + columns, o_hi.to(dtype), mask=row_ok[None, :])
