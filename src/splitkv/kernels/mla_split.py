"""Stage 1 of MLA decode: each program attends one head block of one request to one key split
(uniform splits), or to the one piece of the balanced schedule its slot names, or (the program
loop) to each piece of one schedule program in turn; the attention itself is `mla_attend.py`.

Partials go to a workspace the merge reads:
    partial_o   [batch, qlen * heads, num_splits, d_v] partial_dtype (float32), normalised (acc / l)
    partial_lse [batch, qlen * heads, num_splits]      float32, base 2
Row r of a request is query position r // heads, head r % heads (q's own memory order).
"""

import triton
import triton.language as tl

from splitkv.kernels.balanced import (
    mark_empty,
    pick,
    piece_blocks,
    piece_of_slot,
    program_requests,
    record_piece_range,
    request_blocks,
    request_units,
)
from splitkv.kernels.dependent_launch import release_dependent_grid
from splitkv.kernels.mla_attend import mla_attend_keys, mla_load_queries
from splitkv.kernels.online_softmax import store_partial
from splitkv.kernels.split_flags import mark_split_written
from splitkv.kernels.split_range import clamped_seq_len, keys_per_split, split_and_request


@triton.jit
def mla_split_kernel(
    q_ptr,
    kv_ptr,
    page_table_ptr,
    seq_lens_ptr,
    partial_o_ptr,
    partial_lse_ptr,
    scale_log2,  # softmax scale * log2(e): scores live in base 2 inside the kernel
    batch,
    num_pages,
    max_pages,
    num_splits,
    stride_q_batch,
    stride_q_pos,
    stride_q_head,
    stride_kv_page,
    stride_kv_slot,
    stride_table_batch,
    NUM_HEADS: tl.constexpr,
    QLEN: tl.constexpr,
    HEAD_DIM_V: tl.constexpr,
    HEAD_DIM_PE: tl.constexpr,
    BLOCK_DV: tl.constexpr,
    BLOCK_DPE: tl.constexpr,
    PAGE_SIZE: tl.constexpr,
    BLOCK_H: tl.constexpr,
    BLOCK_N: tl.constexpr,
    SPLIT_MAJOR: tl.constexpr,
    PREFETCH_PAGE: tl.constexpr,
    RELEASE_MERGE: tl.constexpr = False,
    LATENT_CHAINS: tl.constexpr = 1,
    latent_desc=None,  # KV_TMA: host tensor descriptors over the pool's rows (mla_attend_keys)
    rope_desc=None,
    KV_TMA: tl.constexpr = False,
    split_flags_ptr=None,  # MERGE_STREAMS: the merge programs' flags (kernels/split_flags.py)
    MERGE_STREAMS: tl.constexpr = False,
    D_SPLIT: tl.constexpr = 1,  # MERGE_STREAMS: the merge's programs per row
):
    ROWS: tl.constexpr = QLEN * NUM_HEADS
    release_dependent_grid(RELEASE_MERGE)  # the merge may launch now; it waits for our writes
    pid = tl.program_id(0)
    split, request = split_and_request(pid, num_splits, batch, SPLIT_MAJOR)
    head_block = pid // (num_splits * batch)

    seq_len = clamped_seq_len(seq_lens_ptr, request, max_pages * PAGE_SIZE)
    per_split = keys_per_split(seq_len, num_splits, BLOCK_N)
    split_start = split * per_split
    split_end = tl.minimum(split_start + per_split, seq_len)
    if split_start >= split_end:
        return  # empty split: writes nothing, and the merge never reads it

    q_a, q_b, q_pe, rows, row_ok, q_pos = mla_load_queries(
        q_ptr,
        request,
        head_block,
        stride_q_batch,
        stride_q_pos,
        stride_q_head,
        NUM_HEADS,
        QLEN,
        HEAD_DIM_V,
        HEAD_DIM_PE,
        BLOCK_DV,
        BLOCK_DPE,
        BLOCK_H,
        LATENT_CHAINS,
    )
    table_row = page_table_ptr + request.to(tl.int64) * stride_table_batch
    m_i, l_i, acc = mla_attend_keys(
        q_a,
        q_b,
        q_pe,
        kv_ptr,
        table_row,
        split_start,
        split_end,
        seq_len - QLEN + q_pos,
        num_pages,
        stride_kv_page,
        stride_kv_slot,
        scale_log2,
        HEAD_DIM_V,
        HEAD_DIM_PE,
        BLOCK_DV,
        BLOCK_DPE,
        PAGE_SIZE,
        BLOCK_H,
        BLOCK_N,
        PREFETCH_PAGE,
        LATENT_CHAINS,
        latent_desc,
        rope_desc,
        KV_TMA,
    )
    slot = (request.to(tl.int64) * ROWS + rows) * num_splits + split
    dv = tl.arange(0, BLOCK_DV)
    store_partial(
        partial_o_ptr, partial_lse_ptr, slot, row_ok, m_i, l_i, acc, dv, dv < HEAD_DIM_V, HEAD_DIM_V
    )
    if MERGE_STREAMS:
        mark_split_written(split_flags_ptr, request, rows, row_ok, split, num_splits, ROWS,
                           D_SPLIT)  # fmt: skip


@triton.jit
def mla_balanced_kernel(
    q_ptr,
    kv_ptr,
    page_table_ptr,
    seq_lens_ptr,
    partial_o_ptr,
    partial_lse_ptr,
    scale_log2,
    batch,
    num_pages,
    max_pages,
    num_programs,
    stride_q_batch,
    stride_q_pos,
    stride_q_head,
    stride_kv_page,
    stride_kv_slot,
    stride_table_batch,
    NUM_HEADS: tl.constexpr,
    QLEN: tl.constexpr,
    HEAD_DIM_V: tl.constexpr,
    HEAD_DIM_PE: tl.constexpr,
    BLOCK_DV: tl.constexpr,
    BLOCK_DPE: tl.constexpr,
    PAGE_SIZE: tl.constexpr,
    BLOCK_H: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_B: tl.constexpr,
    PREFETCH_PAGE: tl.constexpr,
    RELEASE_MERGE: tl.constexpr = False,
    LATENT_CHAINS: tl.constexpr = 1,
    latent_desc=None,  # KV_TMA: as in mla_split_kernel
    rope_desc=None,
    KV_TMA: tl.constexpr = False,
    piece_ranges_ptr=None,  # [batch, 2] int32: the merge's program range per request
    PROGRAM_LOOP: tl.constexpr = False,
    PIECE_COST: tl.constexpr = 0,  # PROGRAM_LOOP: the schedule's units a piece (request_units)
):
    """Stage 1 on the balanced schedule (kernels/balanced.py), writing the same slots either
    way, so the merge is the same:
    - one program per slot of a head block, attending the one piece that writes that slot;
    - PROGRAM_LOOP (the `program_loop` plan): one program per schedule program, walking its
      pieces request by request, so every program streams the same number of key blocks and
      a grid of one wave ends together (one program per piece leaves the SMs that drew short
      pieces idle while others finish whole shares)."""
    release_dependent_grid(RELEASE_MERGE)
    num_slots = num_programs + batch
    if PROGRAM_LOOP:
        program = tl.program_id(0) % num_programs
        head_block = tl.program_id(0) // num_programs
        lens, _firsts, blocks, _cu_blocks, _total_blocks = request_blocks(
            seq_lens_ptr, batch, max_pages * PAGE_SIZE, 0, QLEN, BLOCK_B, BLOCK_N, False
        )
        units = request_units(blocks, PIECE_COST)
        cu_end = tl.cumsum(units, 0)
        lo_p, hi_p, first, last, spanned = program_requests(
            cu_end, units, batch, program, num_programs, tl.maximum(tl.sum(units, 0), 1),
            BLOCK_B, PIECE_COST,
        )  # fmt: skip
        rows = head_block * BLOCK_H + tl.arange(0, BLOCK_H)
        # Row-major slots [ROWS, num_programs + batch]: each row's partials are contiguous.
        row_slots = rows.to(tl.int64) * num_slots + program
        if spanned < batch:
            mark_empty(partial_o_ptr, partial_lse_ptr, row_slots + spanned, rows < QLEN * NUM_HEADS,
                       HEAD_DIM_V, BLOCK_DV)  # fmt: skip
        for i in range(0, last - first + 1):
            request = first + i  # a tensor in the interpreter too (a range over it yields ints)
            start = pick(cu_end - units, request, BLOCK_B)
            lo, hi = piece_blocks(lo_p, hi_p, start, pick(blocks, request, BLOCK_B), PIECE_COST)
            if lo < hi:  # requests with no blocks between two others have no piece
                seq_len = pick(lens, request, BLOCK_B)
                if head_block == 0:
                    record_piece_range(
                        piece_ranges_ptr, request, program + request, lo, hi, 0, seq_len, 0,
                        BLOCK_N,
                    )  # fmt: skip
                m_i, l_i, acc, row_ok, _ = mla_attend_piece(
                    q_ptr, kv_ptr, page_table_ptr, request, head_block, lo, hi, 0, seq_len,
                    num_pages, stride_q_batch, stride_q_pos, stride_q_head, stride_kv_page,
                    stride_kv_slot, stride_table_batch, scale_log2, NUM_HEADS, QLEN, HEAD_DIM_V,
                    HEAD_DIM_PE, BLOCK_DV, BLOCK_DPE, PAGE_SIZE, BLOCK_H, BLOCK_N, PREFETCH_PAGE,
                    LATENT_CHAINS, latent_desc, rope_desc, KV_TMA,
                )  # fmt: skip
                dv = tl.arange(0, BLOCK_DV)
                store_partial(partial_o_ptr, partial_lse_ptr, row_slots + request, row_ok, m_i,
                              l_i, acc, dv, dv < HEAD_DIM_V, HEAD_DIM_V)  # fmt: skip
    else:
        slot = tl.program_id(0) % num_slots
        head_block = tl.program_id(0) // num_slots
        request, lo, hi, first_block, seq_len, _first_key = piece_of_slot(
            seq_lens_ptr, batch, max_pages * PAGE_SIZE, 0, slot, num_programs, QLEN, BLOCK_B,
            BLOCK_N, False,
        )  # fmt: skip
        rows = head_block * BLOCK_H + tl.arange(0, BLOCK_H)
        slots = rows.to(tl.int64) * num_slots + slot
        if request < batch:
            if lo >= hi:
                mark_empty(partial_o_ptr, partial_lse_ptr, slots, rows < QLEN * NUM_HEADS,
                           HEAD_DIM_V, BLOCK_DV)  # fmt: skip
            else:
                if head_block == 0:
                    record_piece_range(
                        piece_ranges_ptr, request, slot, lo, hi, first_block, seq_len, 0, BLOCK_N
                    )
                m_i, l_i, acc, row_ok, _q_pos = mla_attend_piece(
                    q_ptr, kv_ptr, page_table_ptr, request, head_block, lo, hi, first_block,
                    seq_len, num_pages, stride_q_batch, stride_q_pos, stride_q_head,
                    stride_kv_page, stride_kv_slot, stride_table_batch, scale_log2, NUM_HEADS,
                    QLEN, HEAD_DIM_V, HEAD_DIM_PE, BLOCK_DV, BLOCK_DPE, PAGE_SIZE, BLOCK_H,
                    BLOCK_N, PREFETCH_PAGE, LATENT_CHAINS, latent_desc, rope_desc, KV_TMA,
                )  # fmt: skip
                dv = tl.arange(0, BLOCK_DV)
                store_partial(partial_o_ptr, partial_lse_ptr, slots, row_ok, m_i, l_i, acc, dv,
                              dv < HEAD_DIM_V, HEAD_DIM_V)  # fmt: skip


@triton.jit
def mla_attend_piece(
    q_ptr,
    kv_ptr,
    page_table_ptr,
    request,
    head_block,
    lo,
    hi,
    first_block,
    seq_len,
    num_pages,
    stride_q_batch,
    stride_q_pos,
    stride_q_head,
    stride_kv_page,
    stride_kv_slot,
    stride_table_batch,
    scale_log2,
    NUM_HEADS: tl.constexpr,
    QLEN: tl.constexpr,
    HEAD_DIM_V: tl.constexpr,
    HEAD_DIM_PE: tl.constexpr,
    BLOCK_DV: tl.constexpr,
    BLOCK_DPE: tl.constexpr,
    PAGE_SIZE: tl.constexpr,
    BLOCK_H: tl.constexpr,
    BLOCK_N: tl.constexpr,
    PREFETCH_PAGE: tl.constexpr,
    LATENT_CHAINS: tl.constexpr,
    latent_desc,
    rope_desc,
    KV_TMA: tl.constexpr,
):
    """One piece of the balanced schedule: a head block's query rows of `request` over its
    global key blocks [lo, hi) (the request's blocks start at first_block). Returns the running
    state (m, l, acc) and the rows' (row_ok, q_pos)."""
    q_a, q_b, q_pe, _, row_ok, q_pos = mla_load_queries(
        q_ptr,
        request,
        head_block,
        stride_q_batch,
        stride_q_pos,
        stride_q_head,
        NUM_HEADS,
        QLEN,
        HEAD_DIM_V,
        HEAD_DIM_PE,
        BLOCK_DV,
        BLOCK_DPE,
        BLOCK_H,
        LATENT_CHAINS,
    )
    m_i, l_i, acc = mla_attend_keys(
        q_a,
        q_b,
        q_pe,
        kv_ptr,
        page_table_ptr + request.to(tl.int64) * stride_table_batch,
        (lo - first_block) * BLOCK_N,
        tl.minimum((hi - first_block) * BLOCK_N, seq_len),
        seq_len - QLEN + q_pos,
        num_pages,
        stride_kv_page,
        stride_kv_slot,
        scale_log2,
        HEAD_DIM_V,
        HEAD_DIM_PE,
        BLOCK_DV,
        BLOCK_DPE,
        PAGE_SIZE,
        BLOCK_H,
        BLOCK_N,
        PREFETCH_PAGE,
        LATENT_CHAINS,
        latent_desc,
        rope_desc,
        KV_TMA,
    )
    return m_i, l_i, acc, row_ok, q_pos
