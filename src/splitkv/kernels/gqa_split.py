"""Stage 1 of GQA/MHA decode: each program attends the query rows of one kv head (its group of
query heads x qlen positions) of one request to one key split.

Caches are NHD: `[num_pages, page_size, kv_heads, head_dim]`, keys and values in separate
tensors. Partials go to the same workspace layout as MLA, so one merge serves both:
    partial_o   [batch, qlen * q_heads, num_splits, head_dim] partial_dtype (float32), normalised
    partial_lse [batch, qlen * q_heads, num_splits]           float32, base 2
Row r of a request is query position r // q_heads, query head r % q_heads.
"""

import triton
import triton.language as tl

from splitkv.kernels.balanced import mark_empty, piece_of_slot, record_piece_range
from splitkv.kernels.dependent_launch import release_dependent_grid
from splitkv.kernels.online_softmax import LOG2E, output_rows, softmax_step, store_partial
from splitkv.kernels.paged import (
    advance_page_ids,
    block_page_ids,
    first_page_ids,
    kv_row_offsets,
)
from splitkv.kernels.rows import row_offsets
from splitkv.kernels.split_range import (
    clamped_seq_len,
    first_visible_key,
    keys_per_split,
    split_and_request,
)


# `batch` is not specialised: Triton compiles an int argument equal to 1 as a constant, and that
# build of this kernel streamed 2-5% slower at batch 1 on the H200 (gpt-oss 131,072 x 1: 126
# registers against 114, 73.2 us against 69.3; llama3-8b 262,144 x 1 254.0 against 245.7;
# docs/perf.md, session 32), so every batch runs the one build that batch 2 runs.
@triton.jit(do_not_specialize=["batch"])
def gqa_split_kernel(
    q_ptr,
    k_ptr,
    v_ptr,
    page_table_ptr,
    seq_lens_ptr,
    partial_o_ptr,
    partial_lse_ptr,
    scale,  # softmax scale (natural units)
    logit_cap,  # soft cap of the scaled logits (Gemma/Grok); used when HAS_CAP
    window_left,  # keys left of the query's own position it may see; used when HAS_WINDOW
    batch,
    num_pages,
    max_pages,
    num_splits,
    stride_q_batch,
    stride_q_pos,
    stride_q_head,
    stride_k_page,
    stride_k_slot,
    stride_k_head,
    stride_v_page,
    stride_v_slot,
    stride_v_head,
    stride_table_batch,
    NUM_Q_HEADS: tl.constexpr,
    NUM_KV_HEADS: tl.constexpr,
    QLEN: tl.constexpr,
    HEAD_DIM: tl.constexpr,
    BLOCK_D: tl.constexpr,
    PAGE_SIZE: tl.constexpr,
    BLOCK_H: tl.constexpr,
    BLOCK_N: tl.constexpr,
    SPLIT_MAJOR: tl.constexpr,
    PREFETCH_PAGE: tl.constexpr,
    HAS_WINDOW: tl.constexpr,
    HAS_CAP: tl.constexpr,
    RELEASE_MERGE: tl.constexpr = False,
    # KV_SAME_STRIDES (the key and value caches laid out alike, as one tensor's two halves
    # are): a key block's value rows sit at its key rows' offsets, computed once.
    KV_SAME_STRIDES: tl.constexpr = False,
    # KV_PACK (a power of two dividing NUM_KV_HEADS): kv heads one program attends at once
    # (`gqa_attend_keys`); the grid's kv-head axis counts groups of KV_PACK heads.
    KV_PACK: tl.constexpr = 1,
    # ONE_SPLIT_OUTPUT (one split a request): write the rows' output and lse, as the merge
    # would, instead of a partial, and no merge follows (`output_rows`).
    out_ptr=None,
    lse_ptr=None,  # WRITE_LSE: [batch, qlen, heads] float32, natural log
    sinks_ptr=None,  # HAS_SINKS: [heads] float32 natural-log logits
    stride_out_batch=0,
    stride_out_pos=0,
    stride_out_head=0,
    stride_lse_batch=0,
    stride_lse_pos=0,
    stride_lse_head=0,
    ONE_SPLIT_OUTPUT: tl.constexpr = False,
    WRITE_LSE: tl.constexpr = False,
    HAS_SINKS: tl.constexpr = False,
):
    GROUP: tl.constexpr = NUM_Q_HEADS // NUM_KV_HEADS
    ROWS: tl.constexpr = QLEN * NUM_Q_HEADS
    release_dependent_grid(RELEASE_MERGE)  # the merge may launch now; it waits for our writes
    pid = tl.program_id(0)
    split, request = split_and_request(pid, num_splits, batch, SPLIT_MAJOR)
    KV_GROUPS: tl.constexpr = NUM_KV_HEADS // KV_PACK
    kv_group = (pid // (num_splits * batch)) % KV_GROUPS
    head_block = pid // (num_splits * batch * KV_GROUPS)

    seq_len = clamped_seq_len(seq_lens_ptr, request, max_pages * PAGE_SIZE)
    if HAS_WINDOW:  # noqa: SIM108 (a compile-time branch; Triton folds it)
        first_key = first_visible_key(seq_len, window_left, QLEN, BLOCK_N)
    else:
        first_key = 0
    per_split = keys_per_split(seq_len - first_key, num_splits, BLOCK_N)
    split_start = first_key + split * per_split
    split_end = tl.minimum(split_start + per_split, seq_len)
    if not ONE_SPLIT_OUTPUT:  # noqa: SIM102 (a compile-time branch around a run-time one)
        if split_start >= split_end:
            return  # empty split: writes nothing, and the merge never reads it

    q, row_ok, q_pos, q_head = gqa_load_queries(
        q_ptr,
        request,
        kv_group,
        head_block,
        stride_q_batch,
        stride_q_pos,
        stride_q_head,
        GROUP,
        QLEN,
        HEAD_DIM,
        BLOCK_D,
        BLOCK_H,
        KV_PACK,
    )
    m_i, l_i, acc = gqa_attend_keys(
        q,
        k_ptr,
        v_ptr,
        page_table_ptr + request.to(tl.int64) * stride_table_batch,
        split_start,
        split_end,
        seq_len - QLEN + q_pos,
        kv_group,
        num_pages,
        stride_k_page,
        stride_k_slot,
        stride_k_head,
        stride_v_page,
        stride_v_slot,
        stride_v_head,
        scale,
        logit_cap,
        window_left,
        HEAD_DIM,
        BLOCK_D,
        PAGE_SIZE,
        BLOCK_H,
        BLOCK_N,
        PREFETCH_PAGE,
        HAS_WINDOW,
        HAS_CAP,
        KV_SAME_STRIDES,
        KV_PACK,
    )
    d = tl.arange(0, BLOCK_D)
    if ONE_SPLIT_OUTPUT:
        out_row = row_offsets(request, q_pos, q_head, stride_out_batch, stride_out_pos,
                              stride_out_head)  # fmt: skip
        lse_row = row_offsets(request, q_pos, q_head, stride_lse_batch, stride_lse_pos,
                              stride_lse_head)  # fmt: skip
        output_rows(out_ptr + out_row, lse_ptr + lse_row, sinks_ptr + q_head, row_ok, row_ok,
                    m_i, l_i, acc, d, d < HEAD_DIM, WRITE_LSE, HAS_SINKS)  # fmt: skip
    else:
        slot = (request.to(tl.int64) * ROWS + q_pos * NUM_Q_HEADS + q_head) * num_splits + split
        store_partial(
            partial_o_ptr, partial_lse_ptr, slot, row_ok, m_i, l_i, acc, d, d < HEAD_DIM, HEAD_DIM
        )


@triton.jit
def gqa_rows(kv_group, head_block, GROUP: tl.constexpr, QLEN: tl.constexpr,
             BLOCK_H: tl.constexpr, KV_PACK: tl.constexpr = 1):  # fmt: skip
    """A head block's rows of a group of KV_PACK kv heads: (row_ok, query position, query
    head, member). The tile's rows are KV_PACK runs of BLOCK_H // KV_PACK, run `member`
    holding kv head kv_group * KV_PACK + member's rows (one run, the head block's, unpacked)."""
    tile_row = tl.arange(0, BLOCK_H)
    if KV_PACK > 1:  # one head block (the planner's rule)
        member = pack_member(BLOCK_H, KV_PACK)
        local = tile_row % (BLOCK_H // KV_PACK)
    else:
        member = tile_row * 0
        local = head_block * BLOCK_H + tile_row
    kv_head = kv_group * KV_PACK + member
    return local < QLEN * GROUP, local // GROUP, kv_head * GROUP + local % GROUP, member


@triton.jit
def pack_member(BLOCK_H: tl.constexpr, KV_PACK: tl.constexpr):
    """Each tile row's kv head within its pack: KV_PACK runs of BLOCK_H // KV_PACK rows."""
    return tl.arange(0, BLOCK_H) // (BLOCK_H // KV_PACK)


@triton.jit
def pack_columns(BLOCK_D: tl.constexpr, KV_PACK: tl.constexpr):
    """A packed tile's KV_PACK * BLOCK_D columns and each one's dim within its head's
    BLOCK_D: (column, d); column // BLOCK_D is the column's kv head within the pack."""
    column = tl.arange(0, KV_PACK * BLOCK_D)
    d = column % BLOCK_D if KV_PACK > 1 else column
    return column, d


@triton.jit
def gqa_load_queries(
    q_ptr,
    request,
    kv_group,
    head_block,
    stride_q_batch,
    stride_q_pos,
    stride_q_head,
    GROUP: tl.constexpr,
    QLEN: tl.constexpr,
    HEAD_DIM: tl.constexpr,
    BLOCK_D: tl.constexpr,
    BLOCK_H: tl.constexpr,
    KV_PACK: tl.constexpr = 1,
):
    """A group of KV_PACK kv heads' query rows of a request (`gqa_rows`), as the
    [BLOCK_H, KV_PACK * BLOCK_D] tile `gqa_attend_keys` takes: a row's query sits in its
    member's BLOCK_D columns, zeros in the others. Returns (q, row_ok, q_pos, q_head)."""
    row_ok, q_pos, q_head, member = gqa_rows(kv_group, head_block, GROUP, QLEN, BLOCK_H, KV_PACK)
    q_row = row_offsets(request, q_pos, q_head, stride_q_batch, stride_q_pos, stride_q_head)
    column, d = pack_columns(BLOCK_D, KV_PACK)
    mask = row_ok[:, None] & (d < HEAD_DIM)[None, :]
    if KV_PACK > 1:
        mask = mask & (member[:, None] == (column // BLOCK_D)[None, :])
    q = tl.load(q_ptr + q_row[:, None] + d[None, :], mask=mask, other=0.0)
    return q, row_ok, q_pos, q_head


@triton.jit
def gqa_attend_keys(
    q,
    k_ptr,
    v_ptr,
    table_row,
    key_start,
    key_end,
    last_key,
    kv_group,
    num_pages,
    stride_k_page,
    stride_k_slot,
    stride_k_head,
    stride_v_page,
    stride_v_slot,
    stride_v_head,
    scale,
    logit_cap,
    window_left,
    HEAD_DIM: tl.constexpr,
    BLOCK_D: tl.constexpr,
    PAGE_SIZE: tl.constexpr,
    BLOCK_H: tl.constexpr,
    BLOCK_N: tl.constexpr,
    PREFETCH_PAGE: tl.constexpr,
    HAS_WINDOW: tl.constexpr,
    HAS_CAP: tl.constexpr,
    KV_SAME_STRIDES: tl.constexpr,
    KV_PACK: tl.constexpr = 1,
):
    """Online softmax of the rows over keys [key_start, key_end) of a group of KV_PACK kv
    heads (key_start on a block boundary). Row r sees keys up to last_key[r] (causal MTP rule)
    and, with a window, none before last_key[r] - window_left. Returns (max, sum,
    unnormalised output [BLOCK_H, BLOCK_D]), base 2.

    Packed (KV_PACK > 1), a key's KV_PACK heads are one row of KV_PACK * BLOCK_D columns:
    the rows' zero columns (`gqa_load_queries`) keep each row's scores to its own head, and
    of the [BLOCK_H, KV_PACK * BLOCK_D] output each row keeps its own head's columns. The dots
    do the same work per byte as KV_PACK programs of a half-empty tile (gpt-oss at qlen 1: 8
    rows a kv head on Triton's 16-row dots), while the softmax, the page ids and the row
    offsets are computed once for all KV_PACK heads."""
    column, d = pack_columns(BLOCK_D, KV_PACK)
    d_ok = d < HEAD_DIM
    m_i = tl.full([BLOCK_H], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_H], tl.float32)
    acc = tl.zeros([BLOCK_H, KV_PACK * BLOCK_D], tl.float32)
    first_head = kv_group * KV_PACK
    k_head = first_head.to(tl.int64) * stride_k_head
    v_head = first_head.to(tl.int64) * stride_v_head
    if KV_PACK > 1:
        # A column's head within the group (64-bit: a head stride may span the whole pool).
        k_columns = (column // BLOCK_D).to(tl.int64) * stride_k_head + d
        v_columns = (column // BLOCK_D).to(tl.int64) * stride_v_head + d
    else:
        k_columns = d
        v_columns = d
    offs_n = tl.arange(0, BLOCK_N)
    if PREFETCH_PAGE:
        next_page = first_page_ids(table_row, key_start, offs_n, key_end, PAGE_SIZE, BLOCK_N)
    for block_start in range(key_start, key_end, BLOCK_N):
        keys = block_start + offs_n
        key_ok = keys < key_end
        if PREFETCH_PAGE:
            page, next_page = advance_page_ids(
                table_row, block_start, offs_n, next_page, key_end, PAGE_SIZE, BLOCK_N
            )
        else:
            page = block_page_ids(table_row, block_start, offs_n, key_ok, PAGE_SIZE, BLOCK_N)
        k_rows = kv_row_offsets(
            page,
            block_start,
            keys,
            num_pages,
            stride_k_page,
            stride_k_slot,
            PAGE_SIZE,
            SLOT_BY_MASK=True,
        )
        tile_ok = key_ok[:, None] & d_ok[None, :]
        # Slots past seq_len are masked at the load, so whatever they hold (NaN) never enters.
        k = tl.load(k_ptr + k_head + k_rows[:, None] + k_columns[None, :], mask=tile_ok, other=0.0)
        scores = tl.dot(q, tl.trans(k)) * scale
        if HAS_CAP:
            # cap * tanh(x / cap), with tanh(y) = 1 - 2 / (1 + e^(2y)): no overflow to NaN.
            scores = logit_cap * (1.0 - 2.0 / (1.0 + tl.exp2(scores * (2.0 * LOG2E / logit_cap))))
        visible = key_ok[None, :] & (keys[None, :] <= last_key[:, None])
        if HAS_WINDOW:
            visible = visible & (keys[None, :] >= last_key[:, None] - window_left)
        scores = tl.where(visible, scores * LOG2E, float("-inf"))
        if KV_SAME_STRIDES:  # a compile-time branch (Triton folds it)
            v_rows = k_rows
        else:
            v_rows = kv_row_offsets(
                page,
                block_start,
                keys,
                num_pages,
                stride_v_page,
                stride_v_slot,
                PAGE_SIZE,
                SLOT_BY_MASK=True,
            )
        v = tl.load(v_ptr + v_head + v_rows[:, None] + v_columns[None, :], mask=tile_ok, other=0.0)
        m_i, l_i, acc = softmax_step(m_i, l_i, acc, scores, v)
    if KV_PACK > 1:
        acc = own_head_columns(acc, BLOCK_H, BLOCK_D, KV_PACK)
    return m_i, l_i, acc


@triton.jit
def own_head_columns(acc, BLOCK_H: tl.constexpr, BLOCK_D: tl.constexpr, KV_PACK: tl.constexpr):
    """Of a packed output [BLOCK_H, KV_PACK * BLOCK_D], each row's own head's BLOCK_D columns
    (row runs as `pack_member`); the other heads' columns hold its weights times their values."""
    member = pack_member(BLOCK_H, KV_PACK)
    heads = tl.reshape(acc, [BLOCK_H, KV_PACK, BLOCK_D])
    own = member[:, None, None] == tl.arange(0, KV_PACK)[None, :, None]
    return tl.sum(tl.where(own, heads, 0.0), 1)


@triton.jit
def gqa_balanced_kernel(
    q_ptr,
    k_ptr,
    v_ptr,
    page_table_ptr,
    seq_lens_ptr,
    partial_o_ptr,
    partial_lse_ptr,
    scale,
    logit_cap,
    window_left,
    batch,
    num_pages,
    max_pages,
    num_programs,
    stride_q_batch,
    stride_q_pos,
    stride_q_head,
    stride_k_page,
    stride_k_slot,
    stride_k_head,
    stride_v_page,
    stride_v_slot,
    stride_v_head,
    stride_table_batch,
    NUM_Q_HEADS: tl.constexpr,
    NUM_KV_HEADS: tl.constexpr,
    QLEN: tl.constexpr,
    HEAD_DIM: tl.constexpr,
    BLOCK_D: tl.constexpr,
    PAGE_SIZE: tl.constexpr,
    BLOCK_H: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_B: tl.constexpr,
    PREFETCH_PAGE: tl.constexpr,
    HAS_WINDOW: tl.constexpr,
    HAS_CAP: tl.constexpr,
    RELEASE_MERGE: tl.constexpr = False,
    KV_SAME_STRIDES: tl.constexpr = False,  # as gqa_split_kernel's
    KV_PACK: tl.constexpr = 1,  # as gqa_split_kernel's
    piece_ranges_ptr=None,  # [batch, 2] int32: the merge's program range per request
):
    """Stage 1 on the balanced schedule (kernels/balanced.py): one program per slot of a kv
    head's head block, attending the one piece of the schedule that writes that slot."""
    release_dependent_grid(RELEASE_MERGE)
    GROUP: tl.constexpr = NUM_Q_HEADS // NUM_KV_HEADS
    num_slots = num_programs + batch
    slot = tl.program_id(0) % num_slots
    KV_GROUPS: tl.constexpr = NUM_KV_HEADS // KV_PACK
    kv_group = (tl.program_id(0) // num_slots) % KV_GROUPS
    head_block = tl.program_id(0) // (num_slots * KV_GROUPS)
    request, lo, hi, first_block, seq_len, first_key = piece_of_slot(
        seq_lens_ptr,
        batch,
        max_pages * PAGE_SIZE,
        window_left,
        slot,
        num_programs,
        QLEN,
        BLOCK_B,
        BLOCK_N,
        HAS_WINDOW,
    )
    row_ok, q_pos, q_head, _ = gqa_rows(kv_group, head_block, GROUP, QLEN, BLOCK_H, KV_PACK)
    # Row-major slots [ROWS, num_programs + batch]: each row's partials are contiguous.
    slots = (q_pos * NUM_Q_HEADS + q_head).to(tl.int64) * num_slots + slot
    if request < batch:
        if lo >= hi:
            mark_empty(partial_o_ptr, partial_lse_ptr, slots, row_ok, HEAD_DIM, BLOCK_D)
        else:
            if tl.program_id(0) < num_slots:  # kv head 0, head block 0
                record_piece_range(
                    piece_ranges_ptr, request, slot, lo, hi, first_block, seq_len, first_key,
                    BLOCK_N,
                )  # fmt: skip
            q, row_ok, q_pos, q_head = gqa_load_queries(
                q_ptr,
                request,
                kv_group,
                head_block,
                stride_q_batch,
                stride_q_pos,
                stride_q_head,
                GROUP,
                QLEN,
                HEAD_DIM,
                BLOCK_D,
                BLOCK_H,
                KV_PACK,
            )
            m_i, l_i, acc = gqa_attend_keys(
                q,
                k_ptr,
                v_ptr,
                page_table_ptr + request.to(tl.int64) * stride_table_batch,
                first_key + (lo - first_block) * BLOCK_N,
                tl.minimum(first_key + (hi - first_block) * BLOCK_N, seq_len),
                seq_len - QLEN + q_pos,
                kv_group,
                num_pages,
                stride_k_page,
                stride_k_slot,
                stride_k_head,
                stride_v_page,
                stride_v_slot,
                stride_v_head,
                scale,
                logit_cap,
                window_left,
                HEAD_DIM,
                BLOCK_D,
                PAGE_SIZE,
                BLOCK_H,
                BLOCK_N,
                PREFETCH_PAGE,
                HAS_WINDOW,
                HAS_CAP,
                KV_SAME_STRIDES,
                KV_PACK,
            )
            d = tl.arange(0, BLOCK_D)
            store_partial(
                partial_o_ptr,
                partial_lse_ptr,
                slots,
                row_ok,
                m_i,
                l_i,
                acc,
                d,
                d < HEAD_DIM,
                HEAD_DIM,
            )
