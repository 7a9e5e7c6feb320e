"""Stage 1 of MLA decode on Hopper (sm_90), warp-specialized in Gluon: the uniform-split
kernel of `mla_split.py`, rebuilt so the copies and the math run on different warps (the
`warp_specialized` plan; measured against the Triton tile in docs/perf.md).

One program attends one head block of BLOCK_Q query rows (16, 32 or 64) of one request to one
key split, and
writes the same partials as `mla_split_kernel` (so the merge is the same):
    partial_o   [batch, qlen * heads, num_splits, 512] the plan's partial_dtype, normalised
    partial_lse [batch, qlen * heads, num_splits]      float32, base 2
- a one-warp producer partition (GATHER_WARPS warps where it gathers key rows instead:
  `gathered_keys.py`) brings the query rows (QUERY_TMA: a contiguous q; else all
  warps load them through registers first) and each key block in by bulk tensor copies (TMA),
  the keys through the request's page-table row into a ring of NUM_STAGES shared-memory
  buffers guarded by mbarriers (the hardware bounds-checks every copy: a corrupt page id reads
  zeros, never outside the pool);
- the default partition runs the attention as wgmma with K and V straight from those buffers,
  the online softmax in registers between them, and releases each buffer when its last wgmma
  has read it: for 64-row head blocks two warpgroups that split the columns of S = Q K^T and
  of O += P V (`attend_key_blocks`, here), or (ALTERNATE_BLOCKS) two partitions of one
  warpgroup taking turns on the key blocks (`kernels/mla_alternate_blocks.py`); with the keys
  as wgmma's rows, S^T = K Q^T and O^T += V^T P^T on one warpgroup per 16-32 query rows
  (`kernels/mla_keys_as_rows.py`: always below 64 rows, where a 64-row tile would be mostly
  padding).
Why it is faster than the Triton tile: there the same warps issue the loads, wait for them and
do the math, so each block's copy latency and softmax sit between its matrix multiplies.

Absorbed MLA only: keys `[latent 512 | rope 64]`, values the latent part of the same rows.
"""

from __future__ import annotations

from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import (
    fence_async_shared,
    mbarrier,
    tma,
    warpgroup_mma,
    warpgroup_mma_wait,
)

from splitkv.kernels.gathered_keys import (
    COPY_PRODUCER_REGS,
    GATHER_ARRIVALS,
    GATHER_PRODUCER_REGS,
    GATHER_WARPS,
    gather_key_blocks,
    key_source,
)
from splitkv.kernels.gluon_dependent_launch import release_dependents, wait_for_kernel_ahead
from splitkv.kernels.gluon_row_store import store_row_half
from splitkv.kernels.gluon_softmax import block_probabilities, row_key_bounds
from splitkv.kernels.mla_alternate_blocks import allocate_turn_buffers, attend_alternate_blocks
from splitkv.kernels.mla_keys_as_rows import attend_key_blocks_narrow
from splitkv.kernels.shared_rows import wait_for_key_block
from splitkv.kernels.split_flags import mark_split_written_gluon
from splitkv.kernels.split_range import clamped_seq_len, keys_per_split, split_and_request

LATENT = gl.constexpr(512)
ROPE = gl.constexpr(64)
HALF = gl.constexpr(256)  # a bulk copy's box is at most 256 elements wide: two per latent row
BLOCK_M = gl.constexpr(64)  # query rows of the wide tile: one warpgroup's wgmma M


@gluon.jit
def load_key_blocks(source, k_lo, k_hi, k_pe, ready, empty, table_row, max_pages, first_key,
                    num_blocks, ring_start, BLOCK_N: gl.constexpr, NUM_STAGES: gl.constexpr,
                    PAGE_SIZE: gl.constexpr):  # fmt: skip
    """Producer: the key blocks by bulk copies (source: the pool's descriptors, `copy_key_blocks`)
    or, for pages those cannot take, row by row (source: the pool's pointer, strides, pages and
    page-id buffer, `gathered_keys.gather_key_blocks`)."""
    if len(source) == 2:
        lat_desc, rope_desc = source
        copy_key_blocks(lat_desc, rope_desc, k_lo, k_hi, k_pe, ready, empty, table_row,
                        max_pages, first_key, num_blocks, ring_start, BLOCK_N, NUM_STAGES,
                        PAGE_SIZE)  # fmt: skip
    else:
        gather_key_blocks(source, k_lo, k_hi, k_pe, ready, empty, table_row, max_pages,
                          first_key, num_blocks, ring_start, BLOCK_N, NUM_STAGES,
                          PAGE_SIZE)  # fmt: skip


@gluon.jit
def copy_key_blocks(lat_desc, rope_desc, k_lo, k_hi, k_pe, ready, empty, table_row, max_pages,
                    first_key, num_blocks, ring_start, BLOCK_N: gl.constexpr,
                    NUM_STAGES: gl.constexpr, PAGE_SIZE: gl.constexpr):  # fmt: skip
    """Producer: key block j (keys first_key + j * BLOCK_N onward) into the ring's buffer
    (ring_start + j) % NUM_STAGES once the consumers released it (ring_start: blocks the ring
    carried before, for a program that streams several pieces). A block arrives as copies of
    SUB rows, the descriptors' box height (the plan's `copy_rows`: a power of two dividing the
    page size, at most BLOCK_N): a copy starts on a multiple of SUB, so it never crosses a
    page, whatever the page size (48: three copies of 16 rows a 48-key page). A page index
    past the table row (the tail of a last block) is clamped to its last entry, and those
    keys are masked by the consumers."""
    SUB: gl.constexpr = lat_desc.block_type.shape[0]
    COPIES: gl.constexpr = BLOCK_N // SUB
    BLOCK_BYTES: gl.constexpr = COPIES * (
        2 * lat_desc.block_type.nbytes + rope_desc.block_type.nbytes
    )
    copy_layout: gl.constexpr = gl.BlockedLayout([1], [32], [1], [0])  # one warp
    copy = gl.arange(0, COPIES, copy_layout)
    for j in range(num_blocks):
        ring = ring_start + j
        stage = ring % NUM_STAGES
        # The block's page ids first: their load overlaps the wait for a free buffer instead
        # of delaying the copies after it.
        keys = first_key + j * BLOCK_N + copy * SUB
        pages = gl.load(table_row + gl.minimum(keys // PAGE_SIZE, max_pages - 1))
        # The first pass over the ring has nothing to wait for.
        mbarrier.wait(empty.index(stage), ((ring // NUM_STAGES) & 1) ^ 1, pred=ring >= NUM_STAGES)
        mbarrier.expect(ready.index(stage), BLOCK_BYTES)
        for c in gl.static_range(COPIES):
            page = gl.sum(gl.where(copy == c, pages, 0), 0)
            row = page * PAGE_SIZE + (first_key + j * BLOCK_N + c * SUB) % PAGE_SIZE
            bar = ready.index(stage)
            tma.async_copy_global_to_shared(
                lat_desc, [row, 0], bar, k_lo.index(stage).slice(c * SUB, SUB)
            )
            tma.async_copy_global_to_shared(
                lat_desc, [row, HALF], bar, k_hi.index(stage).slice(c * SUB, SUB)
            )
            tma.async_copy_global_to_shared(
                rope_desc, [row, LATENT], bar, k_pe.index(stage).slice(c * SUB, SUB)
            )


@gluon.jit
def allocate_buffers(lat_desc, rope_desc, q_lat_desc, q_rope_desc, dtype: gl.constexpr,
                     BLOCK_Q: gl.constexpr, BLOCK_N: gl.constexpr, NUM_STAGES: gl.constexpr,
                     RELEASES: gl.constexpr = 1, ARRIVALS: gl.constexpr = 1):  # fmt: skip
    """Shared memory of both kernels, barriers initialised: the query rows (queries_in / _free:
    their bulk copy landed / the consumers are done with them) and the ring of key blocks
    (ready / empty per stage; RELEASES: the consumer partitions that each release a block, and
    the queries; ARRIVALS: the producer's arrivals a block, one for bulk copies, one a thread
    for gathered rows)."""
    q_lo = gl.allocate_shared_memory(dtype, [BLOCK_Q, HALF], q_lat_desc.layout)
    q_hi = gl.allocate_shared_memory(dtype, [BLOCK_Q, HALF], q_lat_desc.layout)
    q_pe = gl.allocate_shared_memory(dtype, [BLOCK_Q, ROPE], q_rope_desc.layout)
    k_lo = gl.allocate_shared_memory(dtype, [NUM_STAGES, BLOCK_N, HALF], lat_desc.layout)
    k_hi = gl.allocate_shared_memory(dtype, [NUM_STAGES, BLOCK_N, HALF], lat_desc.layout)
    k_pe = gl.allocate_shared_memory(dtype, [NUM_STAGES, BLOCK_N, ROPE], rope_desc.layout)
    ready = gl.allocate_shared_memory(gl.int64, [NUM_STAGES, 1], mbarrier.MBarrierLayout())
    empty = gl.allocate_shared_memory(gl.int64, [NUM_STAGES, 1], mbarrier.MBarrierLayout())
    queries_in = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    queries_free = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    for i in gl.static_range(NUM_STAGES):
        mbarrier.init(ready.index(i), count=ARRIVALS)
        mbarrier.init(empty.index(i), count=RELEASES)
    mbarrier.init(queries_in, count=1)
    mbarrier.init(queries_free, count=RELEASES)
    return (q_lo, q_hi, q_pe, queries_in, queries_free), (k_lo, k_hi, k_pe, ready, empty)


@gluon.jit
def store_query_rows(q_lo, q_hi, q_pe, q_ptr, request, head_block, stride_q_batch,
                     stride_q_pos, stride_q_head, rows_total,
                     NUM_HEADS: gl.constexpr):  # fmt: skip
    """The head block's query rows into the query buffers through registers (any q strides),
    by the warps of whichever partition calls it."""
    wide: gl.constexpr = gl.BlockedLayout([1, 8], [1, 32], [gl.num_warps(), 1], [1, 0])
    narrow: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [gl.num_warps(), 1], [1, 0])
    strides = (stride_q_batch, stride_q_pos, stride_q_head)
    BLOCK_Q: gl.constexpr = q_lo.shape[0]
    q_lo.store(load_query_rows(q_ptr, request, head_block, *strides, rows_total, NUM_HEADS, 0,
                               HALF, BLOCK_Q, wide))  # fmt: skip
    q_hi.store(load_query_rows(q_ptr, request, head_block, *strides, rows_total, NUM_HEADS,
                               HALF, HALF, BLOCK_Q, wide))  # fmt: skip
    q_pe.store(load_query_rows(q_ptr, request, head_block, *strides, rows_total, NUM_HEADS,
                               LATENT, ROPE, BLOCK_Q, narrow))  # fmt: skip


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
def load_split(source, q_lat_desc, q_rope_desc, queries, ring, table_row,
               max_pages, first_key, num_blocks, query_row, new_keys_from,
               BLOCK_N: gl.constexpr, NUM_STAGES: gl.constexpr, PAGE_SIZE: gl.constexpr,
               QUERY_TMA: gl.constexpr, EARLY_START: gl.constexpr,
               EARLY_BLOCKS: gl.constexpr):  # fmt: skip
    """Producer of the uniform kernel: with QUERY_TMA the queries first, then the split's key
    blocks. EARLY_START: the ring's first blocks before the wait for the kernel ahead, those
    whose keys all lie before `new_keys_from` (`early_key_blocks`), the queries after it."""
    q_lo, q_hi, q_pe, queries_in, queries_free = queries
    k_lo, k_hi, k_pe, ready, empty = ring
    early = 0
    if EARLY_START:
        early = early_key_blocks(first_key, num_blocks, new_keys_from, BLOCK_N, NUM_STAGES,
                                 EARLY_BLOCKS)  # fmt: skip
        load_key_blocks(source, k_lo, k_hi, k_pe, ready, empty, table_row, max_pages,
                        first_key, early, 0, BLOCK_N, NUM_STAGES, PAGE_SIZE)  # fmt: skip
        wait_for_kernel_ahead()
    if QUERY_TMA:
        load_query_block(q_lat_desc, q_rope_desc, q_lo, q_hi, q_pe, queries_in, queries_free,
                         query_row, 0)  # fmt: skip
    load_key_blocks(source, k_lo, k_hi, k_pe, ready, empty, table_row, max_pages,
                    first_key + early * BLOCK_N, num_blocks - early, early, BLOCK_N,
                    NUM_STAGES, PAGE_SIZE)  # fmt: skip


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


@gluon.jit
def attend_key_blocks(q_lo, q_hi, q_pe, k_lo, k_hi, k_pe, ready, empty, ring_start, num_blocks,
                      first_key, lo_key, hi_key, seq_len, last_key, head_block, slot_base, split,
                      num_splits, rows_total, partial_o_ptr, partial_lse_ptr, scale_log2,
                      queries_in, queries_free, NUM_HEADS: gl.constexpr,
                      BLOCK_N: gl.constexpr, NUM_STAGES: gl.constexpr,
                      WAIT_FOR_QUERIES: gl.constexpr, RELEASE_QUERIES: gl.constexpr,
                      final=None, whole=False):  # fmt: skip
    """Consumers: the online softmax over the ring's next num_blocks blocks (from ring_start, as
    the producer counts them), then the partial of the split (or piece) at column `split` of the
    row slots from slot_base, `num_splits` columns a row, or, where `whole`, the request's
    output and lse at `final` (`gluon_row_store.store_row_half`). WAIT_FOR_QUERIES: the
    queries come by bulk copy, signalled on `queries_in` (phase 0). RELEASE_QUERIES: arrive on the
    `queries_free` barrier once the last block's scores are in, so the producer may bring the
    next piece's queries while these finish.

    Row r (query position q_pos) sees keys [lo_key, min(hi_key, last_key + q_pos + 1)); only
    blocks that reach past a bound pay for the mask. Each block's wgmma finish before its
    softmax: overlapping the softmax with the previous block's P V measured slower (the probe,
    docs/perf.md session 8). Each row's sum is kept per score (16 registers a thread) and
    added across the two warpgroups once, after the last block: an exchange between them every
    block had cost 3-4% at 12 heads x qlen 4 (docs/perf.md session 33)."""
    s_layout: gl.constexpr = gl.NVMMADistributedLayout(
        version=[3, 0], warps_per_cta=[4, 2], instr_shape=[16, BLOCK_N // 2, 16]
    )
    o_layout: gl.constexpr = gl.NVMMADistributedLayout(
        version=[3, 0], warps_per_cta=[4, 2], instr_shape=[16, 128, 16]
    )
    p_layout: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=o_layout, k_width=2)
    s_rows: gl.constexpr = gl.SliceLayout(1, s_layout)
    o_rows: gl.constexpr = gl.SliceLayout(1, o_layout)
    rows, row_limit, unmasked_end, cols = row_key_bounds(head_block, hi_key, last_key, NUM_HEADS,
                                                         BLOCK_M, BLOCK_N, s_layout)  # fmt: skip
    m_i = gl.full([BLOCK_M], float("-inf"), gl.float32, s_rows)
    l_cols = gl.zeros([BLOCK_M, BLOCK_N], gl.float32, s_layout)
    o_lo = gl.zeros([BLOCK_M, HALF], gl.float32, o_layout)
    o_hi = gl.zeros([BLOCK_M, HALF], gl.float32, o_layout)
    if WAIT_FOR_QUERIES:
        mbarrier.wait(queries_in, 0)
    for j in range(num_blocks):
        ring = ring_start + j
        block_key = first_key + j * BLOCK_N
        stage = wait_for_key_block(k_lo, k_hi, ready, ring, block_key, seq_len, BLOCK_N,
                                   NUM_STAGES)  # fmt: skip
        scores = gl.zeros([BLOCK_M, BLOCK_N], gl.float32, s_layout)
        scores = warpgroup_mma(q_lo, k_lo.index(stage).permute((1, 0)), scores, is_async=True)
        scores = warpgroup_mma(q_hi, k_hi.index(stage).permute((1, 0)), scores, is_async=True)
        scores = warpgroup_mma(q_pe, k_pe.index(stage).permute((1, 0)), scores, is_async=True)
        scores = warpgroup_mma_wait(num_outstanding=0, deps=(scores,))
        if RELEASE_QUERIES:  # noqa: SIM102 (a compile-time branch around a run-time one)
            if j == num_blocks - 1:
                mbarrier.arrive(queries_free, count=1)
        p, m_new, m_safe = block_probabilities(scores, m_i, block_key, cols, lo_key, row_limit,
                                               unmasked_end, scale_log2, BLOCK_N)  # fmt: skip
        alpha = gl.exp2(m_i - m_safe)
        l_cols = l_cols * alpha[:, None] + p
        m_i = m_new
        alpha_o = gl.convert_layout(alpha, o_rows)[:, None]
        p_op = gl.convert_layout(p.to(q_lo.dtype), p_layout)
        o_lo = warpgroup_mma(p_op, k_lo.index(stage), o_lo * alpha_o, is_async=True)
        o_hi = warpgroup_mma(p_op, k_hi.index(stage), o_hi * alpha_o, is_async=True)
        o_lo, o_hi = warpgroup_mma_wait(num_outstanding=0, deps=(o_lo, o_hi))
        mbarrier.arrive(empty.index(stage), count=1)

    l_i = gl.sum(l_cols, 1)
    # The partial (or the request's output): rows that saw no key get out 0 and lse -inf (the
    # merge weighs them 0).
    request_rows = head_block * BLOCK_M + rows
    has_keys = l_i > 0.0
    lse = gl.where(has_keys, m_i + gl.log2(gl.where(has_keys, l_i, 1.0)), float("-inf"))
    slots = (slot_base + rows.to(gl.int64)) * num_splits + split
    inv_l = gl.convert_layout(gl.where(has_keys, 1.0 / gl.where(has_keys, l_i, 1.0), 0.0), o_rows)
    store_row_half(o_lo * inv_l[:, None], 0, lse, request_rows, rows_total, num_blocks, slots,
                   partial_o_ptr, partial_lse_ptr, NUM_HEADS, True, final, whole)  # fmt: skip
    store_row_half(o_hi * inv_l[:, None], HALF, lse, request_rows, rows_total, num_blocks,
                   slots, partial_o_ptr, partial_lse_ptr, NUM_HEADS, False, final,
                   whole)  # fmt: skip


@gluon.jit
def attend_any_rows(q_lo, q_hi, q_pe, k_lo, k_hi, k_pe, ready, empty, ring_start, num_blocks,
                    first_key, lo_key, hi_key, seq_len, last_key, head_block, slot_base, split,
                    num_splits, rows_total, partial_o_ptr, partial_lse_ptr, scale_log2,
                    queries_in, queries_free, NUM_HEADS: gl.constexpr, BLOCK_N: gl.constexpr,
                    NUM_STAGES: gl.constexpr, WAIT_FOR_QUERIES: gl.constexpr,
                    RELEASE_QUERIES: gl.constexpr, KEYS_AS_ROWS: gl.constexpr, final=None,
                    whole=False):  # fmt: skip
    """The consumers: `attend_key_blocks_narrow` (keys as wgmma's rows; always for head blocks
    under 64 rows) or `attend_key_blocks` (query rows as wgmma's rows, 64-row head blocks).
    (Gluon cannot bind a function to a name at compile time, so the choice is this branch.)
    final, whole: a piece (or split) holding its request's every key writes the request's
    output (`mla_keys_as_rows.store_rows`, `gluon_row_store.store_row_half`)."""
    if KEYS_AS_ROWS:
        attend_key_blocks_narrow(q_lo, q_hi, q_pe, k_lo, k_hi, k_pe, ready, empty, ring_start,
                                 num_blocks, first_key, lo_key, hi_key, seq_len, last_key,
                                 head_block, slot_base, split, num_splits, rows_total,
                                 partial_o_ptr, partial_lse_ptr, scale_log2, queries_in,
                                 queries_free, NUM_HEADS, BLOCK_N, NUM_STAGES, WAIT_FOR_QUERIES,
                                 RELEASE_QUERIES, final, whole)  # fmt: skip
    else:
        attend_key_blocks(q_lo, q_hi, q_pe, k_lo, k_hi, k_pe, ready, empty, ring_start,
                          num_blocks, first_key, lo_key, hi_key, seq_len, last_key, head_block,
                          slot_base, split, num_splits, rows_total, partial_o_ptr,
                          partial_lse_ptr, scale_log2, queries_in, queries_free, NUM_HEADS,
                          BLOCK_N, NUM_STAGES, WAIT_FOR_QUERIES, RELEASE_QUERIES, final,
                          whole)  # fmt: skip


@gluon.jit
def load_query_rows(q_ptr, request, head_block, stride_q_batch, stride_q_pos, stride_q_head,
                    rows_total, NUM_HEADS: gl.constexpr, COL0: gl.constexpr,
                    COLS: gl.constexpr, BLOCK_Q: gl.constexpr,
                    layout: gl.constexpr):  # fmt: skip
    """Columns [COL0, COL0 + COLS) of the head block's BLOCK_Q query rows (row r: query
    position r // heads, head r % heads); rows past the request's are 0."""
    rows = head_block * BLOCK_Q + gl.arange(0, BLOCK_Q, gl.SliceLayout(1, layout))
    offsets = (
        request.to(gl.int64) * stride_q_batch
        + (rows // NUM_HEADS).to(gl.int64) * stride_q_pos
        + (rows % NUM_HEADS).to(gl.int64) * stride_q_head
    )
    cols = COL0 + gl.arange(0, COLS, gl.SliceLayout(0, layout))
    ok = (rows < rows_total)[:, None] & (cols < COL0 + COLS)[None, :]
    return gl.load(q_ptr + offsets[:, None] + cols[None, :], mask=ok, other=0.0)


@gluon.jit
def mla_warp_specialized_kernel(
    q_ptr,
    lat_desc,  # the pool as rows [num_pages * page_size, 576], boxes [SUB, 256]
    rope_desc,  # the same rows, boxes [SUB, 64]
    q_lat_desc,  # QUERY_TMA: q as rows [batch * qlen * heads, 576], boxes [BLOCK_Q, 256]
    q_rope_desc,  # and [BLOCK_Q, 64] (without QUERY_TMA: lat_desc, rope_desc, for layouts)
    page_table_ptr,
    seq_lens_ptr,
    partial_o_ptr,
    partial_lse_ptr,
    scale_log2,  # softmax scale * log2(e): scores in base 2, as in mla_split_kernel
    batch,
    max_pages,
    num_splits,
    stride_q_batch,
    stride_q_pos,
    stride_q_head,
    stride_table_batch,
    out_ptr,  # WHOLE_OUTPUT: the call's out [batch, qlen, heads, 512] and lse [batch, qlen, heads]
    lse_ptr,
    stride_out_batch,
    stride_out_pos,
    stride_out_head,
    stride_lse_batch,
    stride_lse_pos,
    stride_lse_head,
    NUM_HEADS: gl.constexpr,
    QLEN: gl.constexpr,
    BLOCK_Q: gl.constexpr,  # query rows a program: 16, 32 or 64
    KEYS_AS_ROWS: gl.constexpr,  # the keys as wgmma's rows (kernels/mla_keys_as_rows.py)
    PAGE_SIZE: gl.constexpr,
    BLOCK_N: gl.constexpr,
    NUM_STAGES: gl.constexpr,
    SPLIT_MAJOR: gl.constexpr,
    QUERY_TMA: gl.constexpr,
    RELEASE_MERGE: gl.constexpr = False,
    EARLY_START: gl.constexpr = False,  # launched as a dependent of the kernel ahead
    EARLY_BLOCKS: gl.constexpr = 2,  # EARLY_START: key blocks brought before its wait
    split_flags_ptr=None,  # MERGE_STREAMS: the merge programs' flags (kernels/split_flags.py)
    MERGE_STREAMS: gl.constexpr = False,
    D_SPLIT: gl.constexpr = 1,  # MERGE_STREAMS: the merge's programs per row
    ALTERNATE_BLOCKS: gl.constexpr = False,  # 64 rows: kernels/mla_alternate_blocks.py
    WHOLE_OUTPUT: gl.constexpr = False,  # one split: it writes out (and lse) itself, no merge
    WRITE_LSE: gl.constexpr = False,  # WHOLE_OUTPUT: the call asked for the lse
    kv_ptr=None,  # GATHER_KEYS: the pool [num_pages, page_size, 576], its rows gathered
    stride_kv_page=0,
    stride_kv_slot=0,
    num_pages=0,
    GATHER_KEYS: gl.constexpr = False,  # pages bulk copies cannot take (kernels/gathered_keys.py)
):
    """The uniform schedule's program (request, split, head block): the head block fastest,
    then split and request as in `mla_split_kernel`; its split's keys as there (whole blocks
    from the request's first key). EARLY_START (the plan's `early_start`): nothing but
    seq_lens, the page table and old keys is read, and nothing written, before
    the wait for the kernel ahead (the producer's, `load_split`; the consumers write only
    after the queries it brings after that wait). WHOLE_OUTPUT (the plan's `whole_pieces` on
    one split): every program holds its request's every key, so it writes the request's rows
    of out and lse itself and no merge runs."""
    ROWS: gl.constexpr = QLEN * NUM_HEADS
    HEAD_BLOCKS: gl.constexpr = (ROWS + BLOCK_Q - 1) // BLOCK_Q
    if RELEASE_MERGE:
        release_dependents()  # the merge may launch now; it waits for our writes
    pid = gl.program_id(0)
    # The head blocks of one (request, split) are neighbours: they read the same keys at about
    # the same time, so the second read comes from L2 (128 heads x 48 requests: -9%, against
    # the head block as the slowest index, session 8).
    head_block = pid % HEAD_BLOCKS
    split, request = split_and_request(pid // HEAD_BLOCKS, num_splits, batch, SPLIT_MAJOR)

    seq_len = clamped_seq_len(seq_lens_ptr, request, max_pages * PAGE_SIZE)
    per_split = keys_per_split(seq_len, num_splits, BLOCK_N)  # whole blocks
    lo_key = split * per_split  # so blocks start on block (and page) bounds
    hi_key = gl.minimum(lo_key + per_split, seq_len)
    num_blocks = gl.where(lo_key < hi_key, gl.cdiv(hi_key - lo_key, BLOCK_N), 0)

    queries, ring = allocate_buffers(lat_desc, rope_desc, q_lat_desc, q_rope_desc,
                                     q_ptr.dtype.element_ty, BLOCK_Q, BLOCK_N, NUM_STAGES,
                                     2 if ALTERNATE_BLOCKS else 1,
                                     GATHER_ARRIVALS if GATHER_KEYS else 1)  # fmt: skip
    source = key_source(lat_desc, rope_desc, kv_ptr, stride_kv_page, stride_kv_slot, num_pages,
                        BLOCK_N, GATHER_KEYS)  # fmt: skip
    PRODUCER_REGS: gl.constexpr = GATHER_PRODUCER_REGS if GATHER_KEYS else COPY_PRODUCER_REGS
    PRODUCER_WARPS: gl.constexpr = GATHER_WARPS if GATHER_KEYS else 1
    q_lo, q_hi, q_pe, queries_in, queries_free = queries
    k_lo, k_hi, k_pe, ready, empty = ring
    if ALTERNATE_BLOCKS:
        gl.static_assert(BLOCK_Q == BLOCK_M and not KEYS_AS_ROWS, "alternate blocks: 64 rows")
        turns = allocate_turn_buffers(q_ptr.dtype.element_ty, BLOCK_N)
    if not QUERY_TMA:  # else the producer brings them
        if EARLY_START:
            wait_for_kernel_ahead()  # it may be writing q
        store_query_rows(q_lo, q_hi, q_pe, q_ptr, request, head_block, stride_q_batch,
                         stride_q_pos, stride_q_head, ROWS, NUM_HEADS)  # fmt: skip
    # The query rows every warp wrote and the initialised barriers, visible to the wgmma and
    # the bulk copies (the async proxy) before any partition starts.
    fence_async_shared()
    gl.thread_barrier()
    slot_base = request.to(gl.int64) * ROWS + head_block * BLOCK_Q
    table_row = page_table_ptr + request.to(gl.int64) * stride_table_batch
    # Where the consumers would write the request's rows (WHOLE_OUTPUT; else they write
    # partials, and these are stand-ins: a None cannot reach a partition).
    final = (out_ptr + request.to(gl.int64) * stride_out_batch, stride_out_pos, stride_out_head)
    if WRITE_LSE:  # the lse's part only then: the stores tell by the tuple's length
        final = final + (  # noqa: RUF005 (the JIT frontend takes no starred tuple)
                         lse_ptr + request.to(gl.int64) * stride_lse_batch, stride_lse_pos,
                         stride_lse_head)  # fmt: skip
    # Constexprs inline: bound to a tuple first they would reach the partitions as tensors.
    # fmt: off
    if ALTERNATE_BLOCKS:
        gl.warp_specialize(
            [
                (attend_alternate_blocks, (q_lo, q_hi, q_pe, k_lo, k_hi, k_pe, ready, empty,
                                           turns, 0, num_blocks, lo_key, lo_key, hi_key,
                                           seq_len, seq_len - QLEN, head_block, slot_base, split,
                                           num_splits, ROWS, partial_o_ptr, partial_lse_ptr,
                                           scale_log2, queries_in, queries_free, 0, NUM_HEADS,
                                           BLOCK_N, NUM_STAGES, QUERY_TMA, False, 1, final,
                                           WHOLE_OUTPUT)),
                (attend_alternate_blocks, (q_lo, q_hi, q_pe, k_lo, k_hi, k_pe, ready, empty,
                                           turns, 0, num_blocks, lo_key, lo_key, hi_key,
                                           seq_len, seq_len - QLEN, head_block, slot_base, split,
                                           num_splits, ROWS, partial_o_ptr, partial_lse_ptr,
                                           scale_log2, queries_in, queries_free, 0, NUM_HEADS,
                                           BLOCK_N, NUM_STAGES, QUERY_TMA, False, 0, final,
                                           WHOLE_OUTPUT)),
                (load_split, (source, q_lat_desc, q_rope_desc, queries, ring,
                              table_row, max_pages, lo_key, num_blocks,
                              request * ROWS + head_block * BLOCK_Q, seq_len - QLEN, BLOCK_N,
                              NUM_STAGES, PAGE_SIZE, QUERY_TMA, EARLY_START, EARLY_BLOCKS)),
            ],
            [4, PRODUCER_WARPS],  # the second consumer warpgroup; the producer
            [232, PRODUCER_REGS],
        )
    else:
        gl.warp_specialize(
            [
                (attend_any_rows, (q_lo, q_hi, q_pe, k_lo, k_hi, k_pe, ready, empty, 0,
                                     num_blocks, lo_key, lo_key, hi_key, seq_len, seq_len - QLEN,
                                     head_block, slot_base, split, num_splits, ROWS, partial_o_ptr,
                                     partial_lse_ptr, scale_log2, queries_in, queries_free,
                                     NUM_HEADS, BLOCK_N, NUM_STAGES, QUERY_TMA, False,
                                     KEYS_AS_ROWS, final, WHOLE_OUTPUT)),
                (load_split, (source, q_lat_desc, q_rope_desc, queries, ring,
                              table_row, max_pages, lo_key, num_blocks,
                              request * ROWS + head_block * BLOCK_Q, seq_len - QLEN, BLOCK_N,
                              NUM_STAGES, PAGE_SIZE, QUERY_TMA, EARLY_START, EARLY_BLOCKS)),
            ],
            [PRODUCER_WARPS],  # the producer: one warp of bulk copies, or GATHER_WARPS gathering
            [PRODUCER_REGS],  # and few registers, so the consumers keep theirs
        )
    # fmt: on
    if MERGE_STREAMS:  # noqa: SIM102 (a compile-time branch around a run-time one)
        if num_blocks > 0:  # as the consumers' stores: an empty split writes nothing
            mark_split_written_gluon(split_flags_ptr, request, head_block * BLOCK_Q, split,
                                     num_splits, ROWS, BLOCK_Q, D_SPLIT)  # fmt: skip
