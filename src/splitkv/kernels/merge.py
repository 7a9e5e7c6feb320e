"""Stage 2: merge the split partials of each (request, query row) into the output.

Blocked and head-dim-tiled (seed 000): each iteration merges BLOCK_S partials as one
[BLOCK_S, BLOCK_D] tile, which shortens the serial rescale chain by BLOCK_S and puts BLOCK_S
independent loads in flight; D_SPLIT programs per row each own BLOCK_D columns of the output and
re-derive the same statistics from the same partial-lse vector, so they never communicate.
BLOCK_S = D_SPLIT = 1 is the plain serial merge.
"""

import triton
import triton.language as tl

from splitkv.kernels.dependent_launch import release_dependent_grid, wait_for_prior_grid
from splitkv.kernels.online_softmax import (
    LOG2E,
    fold_states,
    merged_lse,
    merged_output,
    sink_weights,
    state_weights,
)
from splitkv.kernels.rows import row_offsets
from splitkv.kernels.split_flags import splits_landed
from splitkv.kernels.split_range import clamped_seq_len, first_visible_key, keys_per_split
from splitkv.kernels.timer import stamp

SMALL_S = tl.constexpr(8)  # rows with at most this many partials merge them in one small tile


@triton.jit
def merge_splits_kernel(
    partial_o_ptr,
    partial_lse_ptr,
    seq_lens_ptr,
    piece_ranges_ptr,  # [batch, 2] int32 first and last stage-1 program, used when BALANCED
    out_ptr,
    lse_ptr,
    max_seq_len,
    num_splits,
    window_left,  # used when HAS_WINDOW: the splits cover only the keys a window can see
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
    split_flags_ptr=None,  # MERGE_STREAMS: [programs, num_splits] int32 (kernels/split_flags.py)
    MERGE_STREAMS: tl.constexpr = False,
    ROWS_PER_PROGRAM: tl.constexpr = 1,  # kernels/merge_rows.py takes more
):
    tl.static_assert(ROWS_PER_PROGRAM == 1, "one row a program (merge_rows_kernel: several)")
    ROWS: tl.constexpr = QLEN * NUM_HEADS
    row_id = tl.program_id(0)  # request * ROWS + row
    slice_id = tl.program_id(1)  # which BLOCK_D columns
    times_at = 3 * (row_id * tl.num_programs(1) + slice_id)  # TIME_PROGRAMS: this row's stamps
    stamp(program_times_ptr, times_at, TIME_PROGRAMS)
    # The next call's stage 1 (a dependent launch with the plan's `early_start`) may start its
    # prologue now; it waits for our writes before reading q or writing the workspace.
    release_dependent_grid(RELEASE_NEXT)
    d_start = slice_id * BLOCK_D
    request = row_id // ROWS
    row = row_id % ROWS

    seq_len = merged_seq_len(seq_lens_ptr, request, max_seq_len, window_left, QLEN,
                             SPLIT_BLOCK_N, HAS_WINDOW)  # fmt: skip
    if not BALANCED:
        num_written = tl.cdiv(seq_len, keys_per_split(seq_len, num_splits, SPLIT_BLOCK_N))
        first_slot = row_id.to(tl.int64) * num_splits
    offs_d = d_start + tl.arange(0, BLOCK_D)
    d_ok = offs_d < HEAD_DIM_V
    m_i = tl.full([1], float("-inf"), tl.float32)
    l_i = tl.zeros([1], tl.float32)
    acc = tl.zeros([BLOCK_D], tl.float32)
    # Launched as a programmatic dependent of stage 1: no partial may be read before stage 1 has
    # finished. What comes before reads only inputs stage 1 does not write (seq_lens), so
    # that latency overlaps stage 1's tail.
    wait_for_prior_grid(WAIT_FOR_STAGE_1)
    stamp(program_times_ptr, times_at + 1, TIME_PROGRAMS)
    if BALANCED:
        has_keys = seq_len > 0
        first, num_written = piece_range(piece_ranges_ptr, request, has_keys, num_programs)
        first_slot = row.to(tl.int64) * (num_programs + batch) + first + request
        if WHOLE_PIECES:  # noqa: SIM102 (a compile-time branch around a run-time one)
            # One piece held all the request's keys: stage 1 wrote its output and lse itself
            # (the Gluon program loop's `store_rows`), so there is nothing to fold.
            if has_keys & (num_written == 1):
                return
    # Most rows of a ragged batch have one or two partials, where a [BLOCK_S, BLOCK_D] tile
    # spends its instructions on masked slots: they take one small tile (H200, docs/perf.md
    # v0.2.4). Uniform plans size BLOCK_S to the split count already: where it is not wider
    # than the small tile, the condition is a compile-time False and the branch folds away.
    if MERGE_STREAMS:
        # Uniform, one tile (plan_rules.merge_streams_for): each partial as its flag goes up.
        flags = split_flags_ptr + (row_id.to(tl.int64) * tl.num_programs(1) + slice_id) * num_splits
        m_i, l_i, acc = fold_as_written(
            partial_o_ptr, partial_lse_ptr, flags, first_slot, num_written, offs_d, d_ok,
            m_i, l_i, acc, HEAD_DIM_V, BLOCK_S,
        )  # fmt: skip
    elif (BLOCK_S > SMALL_S) & (num_written <= SMALL_S):
        m_i, l_i, acc = fold_partials(
            partial_o_ptr, partial_lse_ptr, first_slot, 0, num_written, offs_d, d_ok,
            m_i, l_i, acc, HEAD_DIM_V, SMALL_S,
        )  # fmt: skip
    else:
        for s0 in range(0, num_written, BLOCK_S):
            m_i, l_i, acc = fold_partials(
                partial_o_ptr, partial_lse_ptr, first_slot, s0, num_written, offs_d, d_ok,
                m_i, l_i, acc, HEAD_DIM_V, BLOCK_S,
            )  # fmt: skip

    q_pos = row // NUM_HEADS
    head = row % NUM_HEADS
    if HAS_SINKS:
        # A sink is one more logit in the softmax's denominator with no value (gpt-oss); it
        # arrives in natural log, the partials are base 2.
        sink = tl.load(sinks_ptr + head + tl.arange(0, 1)) * LOG2E
        m_i, l_i, alpha = sink_weights(m_i, l_i, sink)
        acc = acc * alpha
    result = merged_output(acc, l_i)
    out_row = row_offsets(request, q_pos, head, stride_out_batch, stride_out_pos, stride_out_head)
    tl.store(out_ptr + out_row + offs_d, result.to(out_ptr.dtype.element_ty), mask=d_ok)
    # Two ifs: the first is compile-time (constexpr), the second a run-time branch.
    if WRITE_LSE:  # noqa: SIM102
        if slice_id == 0:
            lse = merged_lse(m_i, l_i)
            lse_row = row_offsets(
                request, q_pos, head, stride_lse_batch, stride_lse_pos, stride_lse_head
            )
            tl.store(lse_ptr + lse_row + tl.arange(0, 1), lse)
    stamp(program_times_ptr, times_at + 2, TIME_PROGRAMS)


@triton.jit
def merged_seq_len(seq_lens_ptr, request, max_seq_len, window_left, QLEN: tl.constexpr,
                   SPLIT_BLOCK_N: tl.constexpr, HAS_WINDOW: tl.constexpr):  # fmt: skip
    """The keys stage 1 split for `request`, with the same bounds as stage 1 (only partials
    stage 1 wrote are read): its clamped length, or with a window the keys the window sees."""
    seq_len = clamped_seq_len(seq_lens_ptr, request, max_seq_len)
    if HAS_WINDOW:
        seq_len = seq_len - first_visible_key(seq_len, window_left, QLEN, SPLIT_BLOCK_N)
    return seq_len


@triton.jit
def piece_range(piece_ranges_ptr, request, has_keys, num_programs):
    """The balanced schedule's (first program, pieces) of `request`, read after stage 1 ends.

    Request b's pieces sit in slots first + b ... last + b of each row's contiguous
    [num_programs + batch] slots; stage 1 wrote [first, last] (kernels/balanced.py) for every
    request with keys, and empty programs in the range marked their slot lse -inf. Clamped to
    the grid, so no workspace content can send the reads out of bounds."""
    first = tl.load(piece_ranges_ptr + 2 * request, mask=has_keys, other=0)
    last = tl.load(piece_ranges_ptr + 2 * request + 1, mask=has_keys, other=-1)
    first = tl.minimum(tl.maximum(first, 0), num_programs - 1)
    return first, tl.maximum(tl.minimum(last, num_programs - 1) - first + 1, 0)


@triton.jit
def fold_partials(
    partial_o_ptr,
    partial_lse_ptr,
    first_slot,
    s0,
    num_written,
    offs_d,
    d_ok,
    m_i,
    l_i,
    acc,
    HEAD_DIM_V: tl.constexpr,
    TILE_S: tl.constexpr,
):
    """Fold the row's partials s0 .. s0 + TILE_S (those under num_written) into the running
    (max, sum, output) as one [TILE_S, BLOCK_D] tile."""
    splits = s0 + tl.arange(0, TILE_S)
    return fold_slots(partial_o_ptr, partial_lse_ptr, first_slot + splits, splits < num_written,
                      offs_d, d_ok, m_i, l_i, acc, HEAD_DIM_V, "")  # fmt: skip


@triton.jit
def fold_as_written(partial_o_ptr, partial_lse_ptr, flags, first_slot, num_written, offs_d,
                    d_ok, m_i, l_i, acc, HEAD_DIM_V: tl.constexpr,
                    TILE_S: tl.constexpr):  # fmt: skip
    """`merge_streams`: fold the row's num_written partials (one tile) in the order stage 1
    writes them, each once its flag is up (kernels/split_flags.py), then clear the flags. The
    partials come from L2: an L1 line of the previous call's must not be read."""
    splits = tl.arange(0, TILE_S)
    s_ok = splits < num_written
    pending = s_ok
    while tl.sum(pending.to(tl.int32), 0) > 0:
        landed = splits_landed(flags + splits, pending)
        if tl.sum(landed.to(tl.int32), 0) > 0:
            m_i, l_i, acc = fold_slots(partial_o_ptr, partial_lse_ptr, first_slot + splits,
                                       landed, offs_d, d_ok, m_i, l_i, acc, HEAD_DIM_V,
                                       ".cg")  # fmt: skip
        pending = pending & ~landed
    tl.store(flags + splits, tl.zeros([TILE_S], tl.int32), mask=s_ok)
    return m_i, l_i, acc


@triton.jit
def fold_slots(partial_o_ptr, partial_lse_ptr, slots, s_ok, offs_d, d_ok, m_i, l_i, acc,
               HEAD_DIM_V: tl.constexpr, CACHE: tl.constexpr):  # fmt: skip
    """Fold the partials at `slots` (those under s_ok) into the running (max, sum, output) as
    one [slots, BLOCK_D] tile, loaded with the cache modifier CACHE ("" for the default)."""
    lse_s = tl.load(partial_lse_ptr + slots, mask=s_ok, other=float("-inf"),
                    cache_modifier=CACHE)  # fmt: skip
    # The outputs' loads before the maximum's reduction, whose barriers the compiler does not
    # move loads across: both round trips to L2 overlap instead of following each other (one
    # less on the merge's critical path after stage 1; ncu at 8k x 1, docs/perf.md v0.2.16).
    o_s = tl.load(
        partial_o_ptr + slots[:, None] * HEAD_DIM_V + offs_d[None, :],
        mask=s_ok[:, None] & d_ok[None, :],
        other=0.0,
        cache_modifier=CACHE,
    )
    m_i, alpha, weight = state_weights(m_i, lse_s)
    # bfloat16 partials (the plan's partial_dtype) sum in fp32
    acc, l_i = fold_states(acc, l_i, alpha, weight, o_s.to(tl.float32))
    return m_i, l_i, acc
