"""Stage 1 of MLA decode: each program attends one head block of one request to one key split.

Absorbed MLA: a key row is `[latent (d_v) | rope (d_qk - d_v)]` and the value is the latent part
of the same row, so each key block is loaded once and used twice (scores, then values).

Partials go to a workspace the merge reads:
    partial_o   [batch, qlen * heads, num_splits, d_v] float32, normalised (acc / l)
    partial_lse [batch, qlen * heads, num_splits]      float32, base 2
Row r of a request is query position r // heads, head r % heads (q's own memory order).
"""

import triton
import triton.language as tl

from splitkv.kernels.balanced import mark_empty, piece_of_slot
from splitkv.kernels.dependent_launch import release_dependent_grid
from splitkv.kernels.online_softmax import (
    LN2,
    normalized_state,
    softmax_step,
    softmax_weights,
    store_partial,
    write_partial,
)
from splitkv.kernels.paged import (
    advance_page_ids,
    block_page_ids,
    first_page_ids,
    kv_row_offsets,
)
from splitkv.kernels.split_range import clamped_seq_len, keys_per_split


@triton.jit
def mla_split_kernel(
    q_ptr,
    kv_ptr,
    page_table_ptr,
    seq_lens_ptr,
    key_starts_ptr,  # [batch] int32 first key of each request, used when HAS_KEY_START
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
    HAS_KEY_START: tl.constexpr,
    RELEASE_MERGE: tl.constexpr = False,
    LATENT_CHAINS: tl.constexpr = 1,
    latent_desc=None,  # KV_TMA: host tensor descriptors over the pool's rows (mla_attend_keys)
    rope_desc=None,
    KV_TMA: tl.constexpr = False,
):
    ROWS: tl.constexpr = QLEN * NUM_HEADS
    release_dependent_grid(RELEASE_MERGE)  # the merge may launch now; it waits for our writes
    pid = tl.program_id(0)
    # Split-major: consecutive program ids are the splits of one request (DESIGN.md). Either
    # order only relabels which program computes which (request, split, head block).
    if SPLIT_MAJOR:
        split = pid % num_splits
        request = (pid // num_splits) % batch
        head_block = pid // (num_splits * batch)
    else:
        request = pid % batch
        split = (pid // batch) % num_splits
        head_block = pid // (num_splits * batch)

    seq_len = clamped_seq_len(seq_lens_ptr, request, max_pages * PAGE_SIZE)
    if HAS_KEY_START:
        # Keys before the start were attended elsewhere (a shared prefix's own pass).
        first_key = clamped_seq_len(key_starts_ptr, request, seq_len)
        per_split = keys_per_split(seq_len - first_key, num_splits, BLOCK_N)
        split_start = first_key + split * per_split
    else:
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


@triton.jit
def mla_load_queries(
    q_ptr,
    request,
    head_block,
    stride_q_batch,
    stride_q_pos,
    stride_q_head,
    NUM_HEADS: tl.constexpr,
    QLEN: tl.constexpr,
    HEAD_DIM_V: tl.constexpr,
    HEAD_DIM_PE: tl.constexpr,
    BLOCK_DV: tl.constexpr,
    BLOCK_DPE: tl.constexpr,
    BLOCK_H: tl.constexpr,
    LATENT_CHAINS: tl.constexpr,
):
    """A head block's query rows of one request: (q_a, q_b, q_pe, rows, row_ok, q_pos). Row r
    is query position r // heads, head r % heads. q_a is the latent part (q_b the same) or,
    with LATENT_CHAINS = 2, its low half and q_b its high half, loaded apart (split in
    registers, they spilled); q_pe is q_a when there is no rope part."""
    rows = head_block * BLOCK_H + tl.arange(0, BLOCK_H)
    row_ok = rows < QLEN * NUM_HEADS
    q_pos = rows // NUM_HEADS
    q_row = (
        request.to(tl.int64) * stride_q_batch
        + q_pos.to(tl.int64) * stride_q_pos
        + (rows % NUM_HEADS).to(tl.int64) * stride_q_head
    )
    if LATENT_CHAINS == 2:
        dh = tl.arange(0, BLOCK_DV // 2)
        q_a = tl.load(
            q_ptr + q_row[:, None] + dh[None, :],
            mask=row_ok[:, None] & (dh < HEAD_DIM_V)[None, :],
            other=0.0,
        )
        q_b = tl.load(
            q_ptr + q_row[:, None] + BLOCK_DV // 2 + dh[None, :],
            mask=row_ok[:, None] & (BLOCK_DV // 2 + dh < HEAD_DIM_V)[None, :],
            other=0.0,
        )
    else:
        dv = tl.arange(0, BLOCK_DV)
        q_a = tl.load(
            q_ptr + q_row[:, None] + dv[None, :],
            mask=row_ok[:, None] & (dv < HEAD_DIM_V)[None, :],
            other=0.0,
        )
        q_b = q_a
    q_pe = q_a
    if HEAD_DIM_PE > 0:
        dpe = tl.arange(0, BLOCK_DPE)
        q_pe = tl.load(
            q_ptr + q_row[:, None] + HEAD_DIM_V + dpe[None, :],
            mask=row_ok[:, None] & (dpe < HEAD_DIM_PE)[None, :],
            other=0.0,
        )
    return q_a, q_b, q_pe, rows, row_ok, q_pos


@triton.jit
def mla_attend_keys(
    q_a,
    q_b,
    q_pe,
    kv_ptr,
    table_row,
    key_start,
    key_end,
    last_key,
    num_pages,
    stride_kv_page,
    stride_kv_slot,
    scale_log2,
    HEAD_DIM_V: tl.constexpr,
    HEAD_DIM_PE: tl.constexpr,
    BLOCK_DV: tl.constexpr,
    BLOCK_DPE: tl.constexpr,
    PAGE_SIZE: tl.constexpr,
    BLOCK_H: tl.constexpr,
    BLOCK_N: tl.constexpr,
    PREFETCH_PAGE: tl.constexpr,
    LATENT_CHAINS: tl.constexpr,
    latent_desc=None,
    rope_desc=None,
    KV_TMA: tl.constexpr = False,
):
    """Online softmax of the rows over keys [key_start, key_end) of one request (key_start on a
    block boundary); row r sees keys up to last_key[r] (the causal MTP rule). Returns the
    running (max, sum, unnormalised output) in base 2. q_a, q_b: as `mla_load_queries` gives.

    LATENT_CHAINS = 2 keeps the latent dims in halves with an accumulator each, so the score
    dot runs as independent mma chains of BLOCK_DV / 32 steps instead of one chain of
    BLOCK_DV / 16 plus the rope's (docs/perf.md: the 16-row tile waits on that chain).

    KV_TMA (with LATENT_CHAINS = 2 and a block inside one page): whole key blocks arrive as
    bulk tensor copies through `latent_desc` ([BLOCK_N, BLOCK_DV / 2] boxes of the pool's rows)
    and `rope_desc` ([BLOCK_N, BLOCK_DPE]); a last partial block takes the masked loads, so
    slots past key_end (whatever they hold) never enter."""
    m_i = tl.full([BLOCK_H], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_H], tl.float32)
    acc = tl.zeros([BLOCK_H, BLOCK_DV], tl.float32)
    HALF: tl.constexpr = BLOCK_DV // 2
    acc_lo = tl.zeros([BLOCK_H, HALF], tl.float32)
    acc_hi = tl.zeros([BLOCK_H, HALF], tl.float32)
    offs_n = tl.arange(0, BLOCK_N)
    if PREFETCH_PAGE:
        next_page = first_page_ids(table_row, key_start, offs_n, key_end, PAGE_SIZE, BLOCK_N)
    # Bulk copies take whole blocks only; the tail block, if partial, goes below.
    loop_end = key_end
    if KV_TMA:
        loop_end = key_start + (key_end - key_start) // BLOCK_N * BLOCK_N
    for block_start in range(key_start, loop_end, BLOCK_N):
        keys = block_start + offs_n
        key_ok = keys < key_end
        if PREFETCH_PAGE:
            page, next_page = advance_page_ids(
                table_row, block_start, keys, next_page, key_end, PAGE_SIZE, BLOCK_N
            )
        else:
            page = block_page_ids(table_row, block_start, keys, key_ok, PAGE_SIZE, BLOCK_N)
        m_i, l_i, acc, acc_lo, acc_hi = mla_attend_block(
            q_a, q_b, q_pe, kv_ptr, latent_desc, rope_desc, page, block_start, keys, key_ok,
            last_key, m_i, l_i, acc, acc_lo, acc_hi, num_pages, stride_kv_page, stride_kv_slot,
            scale_log2, HEAD_DIM_V, HEAD_DIM_PE, BLOCK_DV, BLOCK_DPE, PAGE_SIZE, LATENT_CHAINS,
            KV_TMA,
        )  # fmt: skip
    # Two ifs: the first is compile-time (constexpr), the second a run-time branch.
    if KV_TMA:
        # The partial last block, by masked loads of TAIL_N keys at a time: small tiles, so
        # this second copy of the block's code does not raise the kernel's register count.
        TAIL_N: tl.constexpr = 16
        offs_t = tl.arange(0, TAIL_N)
        for tail_start in range(loop_end, key_end, TAIL_N):
            keys = tail_start + offs_t
            key_ok = keys < key_end
            page = block_page_ids(table_row, tail_start, keys, key_ok, PAGE_SIZE, TAIL_N)
            m_i, l_i, acc, acc_lo, acc_hi = mla_attend_block(
                q_a, q_b, q_pe, kv_ptr, latent_desc, rope_desc, page, tail_start, keys, key_ok,
                last_key, m_i, l_i, acc, acc_lo, acc_hi, num_pages, stride_kv_page,
                stride_kv_slot, scale_log2, HEAD_DIM_V, HEAD_DIM_PE, BLOCK_DV, BLOCK_DPE,
                PAGE_SIZE, LATENT_CHAINS, False,
            )  # fmt: skip
    if LATENT_CHAINS == 2:
        # [BLOCK_H, HALF, 2] -> [BLOCK_H, 2, HALF] -> rows of BLOCK_DV, low half first.
        acc = tl.reshape(tl.permute(tl.join(acc_lo, acc_hi), [0, 2, 1]), [BLOCK_H, BLOCK_DV])
    return m_i, l_i, acc


@triton.jit
def mla_attend_block(
    q_a,
    q_b,
    q_pe,
    kv_ptr,
    latent_desc,
    rope_desc,
    page,
    block_start,
    keys,
    key_ok,
    last_key,
    m_i,
    l_i,
    acc,
    acc_lo,
    acc_hi,
    num_pages,
    stride_kv_page,
    stride_kv_slot,
    scale_log2,
    HEAD_DIM_V: tl.constexpr,
    HEAD_DIM_PE: tl.constexpr,
    BLOCK_DV: tl.constexpr,
    BLOCK_DPE: tl.constexpr,
    PAGE_SIZE: tl.constexpr,
    LATENT_CHAINS: tl.constexpr,
    USE_TMA: tl.constexpr,
):
    """Fold one key block into the running state (see `mla_attend_keys`): LATENT_CHAINS = 2
    updates acc_lo / acc_hi, else acc. USE_TMA: the block is whole and inside one page, and
    arrives by bulk copies; else by masked loads (slots past seq_len are masked at the load, so
    whatever they hold, NaN included, never enters). The latent rows are the values too: one
    load, used twice."""
    HALF: tl.constexpr = BLOCK_DV // 2
    if USE_TMA:
        row0 = tl.minimum(tl.maximum(page, 0), num_pages - 1) * PAGE_SIZE
        row0 += block_start % PAGE_SIZE
    else:
        kv_rows = kv_row_offsets(page, keys, num_pages, stride_kv_page, stride_kv_slot, PAGE_SIZE)
    if LATENT_CHAINS == 2:
        if USE_TMA:
            k_lo = latent_desc.load([row0, 0])
            k_hi = latent_desc.load([row0, HALF])
        else:
            dh = tl.arange(0, HALF)
            k_lo = tl.load(
                kv_ptr + kv_rows[:, None] + dh[None, :],
                mask=key_ok[:, None] & (dh < HEAD_DIM_V)[None, :],
                other=0.0,
            )
            k_hi = tl.load(
                kv_ptr + kv_rows[:, None] + HALF + dh[None, :],
                mask=key_ok[:, None] & (HALF + dh < HEAD_DIM_V)[None, :],
                other=0.0,
            )
        # Each dot scaled before the sum: Triton folds `dot + dot` back into one chain.
        scores = tl.dot(q_a, tl.trans(k_lo)) * scale_log2
        scores += tl.dot(q_b, tl.trans(k_hi)) * scale_log2
    else:
        dv = tl.arange(0, BLOCK_DV)
        k_lo = tl.load(
            kv_ptr + kv_rows[:, None] + dv[None, :],
            mask=key_ok[:, None] & (dv < HEAD_DIM_V)[None, :],
            other=0.0,
        )
        scores = tl.dot(q_a, tl.trans(k_lo))
    if HEAD_DIM_PE > 0:
        if USE_TMA:
            k_pe = rope_desc.load([row0, HEAD_DIM_V])
        else:
            dpe = tl.arange(0, BLOCK_DPE)
            k_pe = tl.load(
                kv_ptr + kv_rows[:, None] + HEAD_DIM_V + dpe[None, :],
                mask=key_ok[:, None] & (dpe < HEAD_DIM_PE)[None, :],
                other=0.0,
            )
        if LATENT_CHAINS == 2:
            scores += tl.dot(q_pe, tl.trans(k_pe)) * scale_log2
        else:
            scores += tl.dot(q_pe, tl.trans(k_pe))
    visible = key_ok[None, :] & (keys[None, :] <= last_key[:, None])
    if LATENT_CHAINS == 2:
        scores = tl.where(visible, scores, float("-inf"))
        m_i, l_i, alpha, p = softmax_weights(m_i, l_i, scores)
        p = p.to(k_lo.dtype)
        acc_lo = acc_lo * alpha[:, None] + tl.dot(p, k_lo)
        acc_hi = acc_hi * alpha[:, None] + tl.dot(p, k_hi)
    else:
        scores = tl.where(visible, scores * scale_log2, float("-inf"))
        m_i, l_i, acc = softmax_step(m_i, l_i, acc, scores, k_lo)
    return m_i, l_i, acc, acc_lo, acc_hi


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
    out_ptr=None,  # WRITE_WHOLE: the call's out and lse, and their strides
    lse_ptr=None,
    stride_out_batch=0,
    stride_out_pos=0,
    stride_out_head=0,
    stride_lse_batch=0,
    stride_lse_pos=0,
    stride_lse_head=0,
    WRITE_LSE: tl.constexpr = False,
    WRITE_WHOLE: tl.constexpr = False,
):
    """Stage 1 on the balanced schedule (kernels/balanced.py): one program per slot of a head
    block, attending the one piece of the schedule that writes that slot.

    WRITE_WHOLE: a piece that is a whole request (short requests, mostly) writes the final
    output and lse itself, and the merge skips that request (its merge would be a copy)."""
    release_dependent_grid(RELEASE_MERGE)
    num_slots = num_programs + batch
    slot = tl.program_id(0) % num_slots
    head_block = tl.program_id(0) // num_slots
    request, lo, hi, first_block, seq_len, _ = piece_of_slot(
        seq_lens_ptr, batch, max_pages * PAGE_SIZE, 0, slot, num_programs, QLEN, BLOCK_B,
        BLOCK_N, False,
    )  # fmt: skip
    rows = head_block * BLOCK_H + tl.arange(0, BLOCK_H)
    # Row-major slots [ROWS, num_programs + batch]: each row's partials are contiguous.
    slots = rows.to(tl.int64) * num_slots + slot
    if request < batch:
        if lo >= hi:
            mark_empty(partial_lse_ptr, slots, rows < QLEN * NUM_HEADS)
        else:
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
            )
            dv = tl.arange(0, BLOCK_DV)
            o, lse2 = normalized_state(m_i, l_i, acc)
            dv_ok = dv < HEAD_DIM_V
            if WRITE_WHOLE:
                # A piece that is its request's whole key range writes the final rows itself.
                if (lo == first_block) & (hi == first_block + tl.cdiv(seq_len, BLOCK_N)):
                    head = rows % NUM_HEADS
                    out_rows = (
                        request.to(tl.int64) * stride_out_batch
                        + q_pos.to(tl.int64) * stride_out_pos
                        + head.to(tl.int64) * stride_out_head
                    )
                    tl.store(out_ptr + out_rows[:, None] + dv[None, :],
                             o.to(out_ptr.dtype.element_ty),
                             mask=row_ok[:, None] & dv_ok[None, :])  # fmt: skip
                    if WRITE_LSE:
                        lse_rows = (
                            request.to(tl.int64) * stride_lse_batch
                            + q_pos.to(tl.int64) * stride_lse_pos
                            + head.to(tl.int64) * stride_lse_head
                        )
                        tl.store(lse_ptr + lse_rows, lse2 * LN2, mask=row_ok)
                else:
                    write_partial(partial_o_ptr, partial_lse_ptr, slots, row_ok, o, lse2, dv,
                                  dv_ok, HEAD_DIM_V)  # fmt: skip
            else:
                write_partial(partial_o_ptr, partial_lse_ptr, slots, row_ok, o, lse2, dv, dv_ok,
                              HEAD_DIM_V)  # fmt: skip
