"""Stage 2 for many narrow rows: each program merges ROWS_PER_PROGRAM rows of one request
(the plan's `merge_rows`) as one [rows, BLOCK_S, BLOCK_D] tile of partials a step.

A GQA batch of thousands of rows of 64-128 columns launches thousands of one-row merge
programs (kernels/merge.py), more than an SM holds at once, each a chain of dependent loads
(the piece range, the lse, the partials) paid wave after wave. Here a program's rows share
their request, so its range is read once and the rows' partials load together. H200
(docs/perf.md session 38): gpt-oss, 128 requests of up to 2k keys at qlen 4, the merge alone
23.2 -> 8.5 us with 8 rows a program. Same arguments as `merge_splits_kernel`, whose one-row
form (MLA's rows, `merge_streams`) is unchanged.
"""

import triton
import triton.language as tl

from splitkv.kernels.dependent_launch import release_dependent_grid, wait_for_prior_grid
from splitkv.kernels.merge import SMALL_S, merged_seq_len, piece_range
from splitkv.kernels.online_softmax import output_rows, row_fold_states, row_state_weights
from splitkv.kernels.rows import row_offsets
from splitkv.kernels.split_range import keys_per_split
from splitkv.kernels.timer import stamp


@triton.jit
def merge_rows_kernel(
    partial_o_ptr,
    partial_lse_ptr,
    seq_lens_ptr,
    piece_ranges_ptr,  # [batch, 2] int32 first and last stage-1 program, used when BALANCED
    out_ptr,
    lse_ptr,
    max_seq_len,
    num_splits,
    window_left,  # used when HAS_WINDOW
    sinks_ptr,  # [NUM_HEADS] float32 natural-log logits, used when HAS_SINKS
    batch,  # used when BALANCED
    num_programs,  # used when BALANCED: stage 1's programs per head block
    stride_out_batch,
    stride_out_pos,
    stride_out_head,
    stride_lse_batch,
    stride_lse_pos,
    stride_lse_head,
    NUM_HEADS: tl.constexpr,
    QLEN: tl.constexpr,
    HEAD_DIM_V: tl.constexpr,
    SPLIT_BLOCK_N: tl.constexpr,
    BLOCK_S: tl.constexpr,
    BLOCK_D: tl.constexpr,
    WRITE_LSE: tl.constexpr,
    HAS_WINDOW: tl.constexpr,
    HAS_SINKS: tl.constexpr,
    BALANCED: tl.constexpr,
    WAIT_FOR_STAGE_1: tl.constexpr = False,
    WHOLE_PIECES: tl.constexpr = False,  # BALANCED: one-piece requests were written by stage 1
    RELEASE_NEXT: tl.constexpr = False,  # the next call's stage 1 starts early (early_start)
    program_times_ptr=None,  # TIME_PROGRAMS: [programs, 3] int64 ns: start, after the wait, end
    TIME_PROGRAMS: tl.constexpr = False,
    split_flags_ptr=None,  # merge_streams is merge_splits_kernel's alone
    MERGE_STREAMS: tl.constexpr = False,
    ROWS_PER_PROGRAM: tl.constexpr = 2,
):
    tl.static_assert(not MERGE_STREAMS, "merge_streams folds one row a program")
    ROWS: tl.constexpr = QLEN * NUM_HEADS
    R: tl.constexpr = ROWS_PER_PROGRAM
    tl.static_assert(ROWS % R == 0, "a program's rows belong to one request")
    program = tl.program_id(0)
    slice_id = tl.program_id(1)  # which BLOCK_D columns
    times_at = 3 * (program * tl.num_programs(1) + slice_id)  # TIME_PROGRAMS: its stamps
    stamp(program_times_ptr, times_at, TIME_PROGRAMS)
    release_dependent_grid(RELEASE_NEXT)
    request = (program * R) // ROWS
    rows = (program * R) % ROWS + tl.arange(0, R)  # of the request's ROWS

    seq_len = merged_seq_len(seq_lens_ptr, request, max_seq_len, window_left, QLEN,
                             SPLIT_BLOCK_N, HAS_WINDOW)  # fmt: skip
    if not BALANCED:
        num_written = tl.cdiv(seq_len, keys_per_split(seq_len, num_splits, SPLIT_BLOCK_N))
        first_slot = (request * ROWS + rows).to(tl.int64) * num_splits
    offs_d = slice_id * BLOCK_D + tl.arange(0, BLOCK_D)
    d_ok = offs_d < HEAD_DIM_V
    m_i = tl.full([R], float("-inf"), tl.float32)
    l_i = tl.zeros([R], tl.float32)
    acc = tl.zeros([R, BLOCK_D], tl.float32)
    # A programmatic dependent of stage 1: no partial (nor piece range) before it finished.
    wait_for_prior_grid(WAIT_FOR_STAGE_1)
    stamp(program_times_ptr, times_at + 1, TIME_PROGRAMS)
    if BALANCED:
        has_keys = seq_len > 0
        first, num_written = piece_range(piece_ranges_ptr, request, has_keys, num_programs)
        first_slot = rows.to(tl.int64) * (num_programs + batch) + first + request
        if WHOLE_PIECES:  # noqa: SIM102 (a compile-time branch around a run-time one)
            if has_keys & (num_written == 1):
                return  # stage 1 wrote these rows itself
    # As merge_splits_kernel: rows of few partials take one small tile.
    if (BLOCK_S > SMALL_S) & (num_written <= SMALL_S):
        m_i, l_i, acc = fold_row_partials(
            partial_o_ptr, partial_lse_ptr, first_slot, 0, num_written, offs_d, d_ok,
            m_i, l_i, acc, HEAD_DIM_V, SMALL_S,
        )  # fmt: skip
    else:
        for s0 in range(0, num_written, BLOCK_S):
            m_i, l_i, acc = fold_row_partials(
                partial_o_ptr, partial_lse_ptr, first_slot, s0, num_written, offs_d, d_ok,
                m_i, l_i, acc, HEAD_DIM_V, BLOCK_S,
            )  # fmt: skip

    store_merged_rows(out_ptr, lse_ptr, sinks_ptr, request, rows, slice_id, m_i, l_i, acc,
                      offs_d, d_ok, stride_out_batch, stride_out_pos, stride_out_head,
                      stride_lse_batch, stride_lse_pos, stride_lse_head, NUM_HEADS, QLEN,
                      WRITE_LSE, HAS_SINKS)  # fmt: skip
    stamp(program_times_ptr, times_at + 2, TIME_PROGRAMS)


@triton.jit
def store_merged_rows(out_ptr, lse_ptr, sinks_ptr, request, rows, slice_id, m_i, l_i, acc,
                      offs_d, d_ok, stride_out_batch, stride_out_pos, stride_out_head,
                      stride_lse_batch, stride_lse_pos, stride_lse_head,
                      NUM_HEADS: tl.constexpr, QLEN: tl.constexpr, WRITE_LSE: tl.constexpr,
                      HAS_SINKS: tl.constexpr):  # fmt: skip
    """Write the merged `rows` of `request` (its rows of QLEN x NUM_HEADS; every one in
    range) from their running (max, sum, output): the BLOCK_D columns offs_d of the output,
    and from the first column slice each row's lse (natural log)."""
    ROWS: tl.constexpr = QLEN * NUM_HEADS
    q_pos = rows // NUM_HEADS
    head = rows % NUM_HEADS
    out_rows = row_offsets(request, q_pos, head, stride_out_batch, stride_out_pos, stride_out_head)
    lse_rows = row_offsets(request, q_pos, head, stride_lse_batch, stride_lse_pos, stride_lse_head)
    row_ok = rows < ROWS
    # One slice of a row writes its lse (a compare of the rows, not `row_ok & (slice_id ==
    # 0)`: Triton 3.9's interpreter makes a non-boolean mask of a tensor and a scalar
    # compare); the sinks are natural-log logits, as for stage 1.
    lse_ok = rows < tl.where(slice_id == 0, ROWS, 0)
    output_rows(out_ptr + out_rows, lse_ptr + lse_rows, sinks_ptr + head, row_ok, lse_ok,
                m_i, l_i, acc, offs_d, d_ok, WRITE_LSE, HAS_SINKS)  # fmt: skip


@triton.jit
def fold_row_partials(partial_o_ptr, partial_lse_ptr, first_slot, s0, num_written, offs_d,
                      d_ok, m_i, l_i, acc, HEAD_DIM_V: tl.constexpr,
                      TILE_S: tl.constexpr):  # fmt: skip
    """Fold the rows' partials s0 .. s0 + TILE_S (those under num_written, the same count for
    every row of a request) into their running (max, sum, output): first_slot [rows], one
    [rows, TILE_S, BLOCK_D] tile."""
    splits = s0 + tl.arange(0, TILE_S)
    slots = first_slot[:, None] + splits[None, :]
    s_ok = (splits < num_written)[None, :]  # the loads broadcast it over the rows
    lse_s = tl.load(partial_lse_ptr + slots, mask=s_ok, other=float("-inf"))
    # The outputs' loads before the maximum's reduction, as in kernels/merge.py: both round
    # trips to L2 overlap.
    o_s = tl.load(
        partial_o_ptr + slots[:, :, None] * HEAD_DIM_V + offs_d[None, None, :],
        mask=s_ok[:, :, None] & d_ok[None, None, :],
        other=0.0,
    )
    m_i, alpha, weight = row_state_weights(m_i, lse_s)
    # bfloat16 partials (the plan's partial_dtype) sum in fp32
    acc, l_i = row_fold_states(acc, l_i, alpha, weight, o_s.to(tl.float32))
    return m_i, l_i, acc
