"""One MLA program's attention over a key range of one request: its query rows, the key
blocks streamed through an online softmax, one block at a time (shared by the uniform and the
balanced stage-1 kernels in `mla_split.py`).

Absorbed MLA: a key row is `[latent (d_v) | rope (d_qk - d_v)]` and the value is the latent part
of the same row, so each key block is loaded once and used twice (scores, then values).
"""

import triton
import triton.language as tl

from splitkv.kernels.online_softmax import softmax_step, softmax_weights
from splitkv.kernels.paged import (
    advance_page_ids,
    block_page_ids,
    first_page_ids,
    kv_row_offsets,
)
from splitkv.kernels.rows import row_offsets


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
    q_row = row_offsets(
        request, q_pos, rows % NUM_HEADS, stride_q_batch, stride_q_pos, stride_q_head
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
    and `rope_desc` ([BLOCK_N, BLOCK_DPE]); a partial last block takes masked loads 16 keys at
    a time (small tiles: a whole-block second copy of the body spilled), so slots past key_end
    (whatever they hold) never enter."""
    m_i = tl.full([BLOCK_H], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_H], tl.float32)
    acc = tl.zeros([BLOCK_H, BLOCK_DV], tl.float32)
    HALF: tl.constexpr = BLOCK_DV // 2
    acc_lo = tl.zeros([BLOCK_H, HALF], tl.float32)
    acc_hi = tl.zeros([BLOCK_H, HALF], tl.float32)
    offs_n = tl.arange(0, BLOCK_N)
    # Pages off a power of two: the 64-row tile divides once a block (kernels/paged.py).
    BY_BLOCK: tl.constexpr = BLOCK_H >= 64
    if PREFETCH_PAGE:
        next_page = first_page_ids(table_row, key_start, offs_n, key_end, PAGE_SIZE, BLOCK_N,
                                   BY_BLOCK)  # fmt: skip
    # Bulk copies take whole blocks only; the tail block, if partial, goes below.
    loop_end = key_end
    if KV_TMA:
        loop_end = key_start + (key_end - key_start) // BLOCK_N * BLOCK_N
    for block_start in range(key_start, loop_end, BLOCK_N):
        keys = block_start + offs_n
        key_ok = keys < key_end
        if PREFETCH_PAGE:
            page, next_page = advance_page_ids(
                table_row, block_start, offs_n, next_page, key_end, PAGE_SIZE, BLOCK_N, BY_BLOCK
            )
        else:
            page = block_page_ids(table_row, block_start, offs_n, key_ok, PAGE_SIZE, BLOCK_N,
                                  BY_BLOCK)  # fmt: skip
        m_i, l_i, acc, acc_lo, acc_hi = mla_attend_block(
            q_a, q_b, q_pe, kv_ptr, latent_desc, rope_desc, page, block_start, keys, key_ok,
            last_key, m_i, l_i, acc, acc_lo, acc_hi, num_pages, stride_kv_page, stride_kv_slot,
            scale_log2, HEAD_DIM_V, HEAD_DIM_PE, BLOCK_DV, BLOCK_DPE, PAGE_SIZE, LATENT_CHAINS,
            KV_TMA, BY_BLOCK,
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
            page = block_page_ids(table_row, tail_start, offs_t, key_ok, PAGE_SIZE, TAIL_N,
                                  BY_BLOCK)  # fmt: skip
            m_i, l_i, acc, acc_lo, acc_hi = mla_attend_block(
                q_a, q_b, q_pe, kv_ptr, latent_desc, rope_desc, page, tail_start, keys, key_ok,
                last_key, m_i, l_i, acc, acc_lo, acc_hi, num_pages, stride_kv_page,
                stride_kv_slot, scale_log2, HEAD_DIM_V, HEAD_DIM_PE, BLOCK_DV, BLOCK_DPE,
                PAGE_SIZE, LATENT_CHAINS, False, BY_BLOCK,
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
    BY_BLOCK: tl.constexpr = False,
):
    """Fold one key block into the running state (see `mla_attend_keys`): LATENT_CHAINS = 2
    updates acc_lo / acc_hi, else acc. USE_TMA: the block is whole and inside
    one page, and arrives by bulk copies; else by masked loads (slots past seq_len are masked
    at the load, so whatever they hold, NaN included, never enters). The latent rows are the
    values too: one load, used twice."""
    HALF: tl.constexpr = BLOCK_DV // 2
    if USE_TMA:
        row0 = tl.minimum(tl.maximum(page, 0), num_pages - 1) * PAGE_SIZE
        row0 += block_start % PAGE_SIZE
    else:
        kv_rows = kv_row_offsets(
            page,
            block_start,
            keys,
            num_pages,
            stride_kv_page,
            stride_kv_slot,
            PAGE_SIZE,
            BY_BLOCK=BY_BLOCK,
        )
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
