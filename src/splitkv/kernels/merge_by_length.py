"""Stage 2 of the balanced schedule with programs sized by how many partials a request has (the
plan's `merge_long_partials`, opt-in): the requests with more than LONG_PARTIALS partials
one row a program on a tile of BLOCK_S partials a step, the rest ROWS_PER_PROGRAM rows a
program in one tile of LONG_PARTIALS.

Why: one row a program (kernels/merge.py) launches batch x rows x slices programs, and on a
batch of many short requests beside a long one the launches are what the merge costs (H100,
12 heads x qlen 4, 1 x 327,600 + 47 short: 18,432 programs, 12.8 us alone, as fast with 32
programs an SM as with 12; docs/perf.md run238). Several rows a program cut the launches but
fold the long request's ~132 partials in more steps of a smaller tile, after stage 1's end
(run239: the merge alone 12.8 -> 8.2 us, the call only -1.1%, the ragged batch +2.7%).

How the long requests get few programs: a request of n partials spans n consecutive stage-1
programs, and two requests share at most the program where one ends and the next begins, so
the requests' (n - 1) sum to at most num_programs - 1. At most (num_programs - 1) //
LONG_PARTIALS requests have more than LONG_PARTIALS partials, so that many request slots (or
the batch, if fewer) x rows cover them whatever the lengths, and a CUDA graph keeps one grid.
The grid's first programs are the long slots (they start first: their chains are the merge's
longest); slot k takes the k-th request with more than LONG_PARTIALS partials (in batch
order) and returns if there is none.
"""

import triton
import triton.language as tl

from splitkv.kernels.dependent_launch import release_dependent_grid, wait_for_prior_grid
from splitkv.kernels.merge import merged_seq_len, piece_range
from splitkv.kernels.merge_rows import fold_row_partials, store_merged_rows
from splitkv.kernels.timer import stamp


@triton.jit
def merge_by_length_kernel(
    partial_o_ptr,
    partial_lse_ptr,
    seq_lens_ptr,
    piece_ranges_ptr,  # [batch, 2] int32 first and last stage-1 program of each request
    out_ptr,
    lse_ptr,
    max_seq_len,
    window_left,  # used when HAS_WINDOW
    sinks_ptr,  # [NUM_HEADS] float32 natural-log logits, used when HAS_SINKS
    batch,
    num_programs,  # stage 1's programs per head block
    long_slots,  # requests the long programs cover: min(batch, (num_programs - 1) // LONG_PARTIALS)
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
    BLOCK_S: tl.constexpr,  # the long rows' tile of partials a step
    BLOCK_D: tl.constexpr,
    BLOCK_B: tl.constexpr,  # >= batch: the long slots' search over the requests
    LONG_PARTIALS: tl.constexpr,  # more than this and a request's rows go one a program
    WRITE_LSE: tl.constexpr,
    HAS_WINDOW: tl.constexpr,
    HAS_SINKS: tl.constexpr,
    WAIT_FOR_STAGE_1: tl.constexpr = False,
    WHOLE_PIECES: tl.constexpr = False,  # one-piece requests were written by stage 1
    RELEASE_NEXT: tl.constexpr = False,  # the next call's stage 1 starts early (early_start)
    ROWS_PER_PROGRAM: tl.constexpr = 2,  # the short requests' rows a program
    program_times_ptr=None,  # TIME_PROGRAMS: [programs, 3] int64 ns: start, after the wait, end
    TIME_PROGRAMS: tl.constexpr = False,
):
    ROWS: tl.constexpr = QLEN * NUM_HEADS
    R: tl.constexpr = ROWS_PER_PROGRAM
    tl.static_assert(ROWS % R == 0, "a program's rows belong to one request")
    program = tl.program_id(0)
    slice_id = tl.program_id(1)  # which BLOCK_D columns
    times_at = 3 * (program * tl.num_programs(1) + slice_id)  # TIME_PROGRAMS: its stamps
    stamp(program_times_ptr, times_at, TIME_PROGRAMS)
    release_dependent_grid(RELEASE_NEXT)
    offs_d = slice_id * BLOCK_D + tl.arange(0, BLOCK_D)
    d_ok = offs_d < HEAD_DIM_V
    long_programs = long_slots * ROWS
    # A programmatic dependent of stage 1: no partial (nor piece range) before it finished.
    wait_for_prior_grid(WAIT_FOR_STAGE_1)
    stamp(program_times_ptr, times_at + 1, TIME_PROGRAMS)
    if program < long_programs:
        request = kth_long_request(seq_lens_ptr, piece_ranges_ptr, program // ROWS, batch,
                                   max_seq_len, window_left, num_programs, QLEN,
                                   SPLIT_BLOCK_N, BLOCK_B, LONG_PARTIALS,
                                   HAS_WINDOW)  # fmt: skip
        if request < batch:
            rows = program % ROWS + tl.arange(0, 1)
            merge_rows_of(partial_o_ptr, partial_lse_ptr, seq_lens_ptr, piece_ranges_ptr,
                          out_ptr, lse_ptr, sinks_ptr, request, rows, slice_id, offs_d, d_ok,
                          max_seq_len, window_left, batch, num_programs, stride_out_batch,
                          stride_out_pos, stride_out_head, stride_lse_batch, stride_lse_pos,
                          stride_lse_head, NUM_HEADS, QLEN, HEAD_DIM_V, SPLIT_BLOCK_N,
                          1, BLOCK_D, BLOCK_S, num_programs, WRITE_LSE, HAS_WINDOW,
                          HAS_SINKS, False)  # fmt: skip
    else:
        first_row = (program - long_programs) * R
        rows = first_row % ROWS + tl.arange(0, R)
        merge_rows_of(partial_o_ptr, partial_lse_ptr, seq_lens_ptr, piece_ranges_ptr,
                      out_ptr, lse_ptr, sinks_ptr, first_row // ROWS, rows, slice_id, offs_d,
                      d_ok, max_seq_len, window_left, batch, num_programs, stride_out_batch,
                      stride_out_pos, stride_out_head, stride_lse_batch, stride_lse_pos,
                      stride_lse_head, NUM_HEADS, QLEN, HEAD_DIM_V, SPLIT_BLOCK_N,
                      R, BLOCK_D, LONG_PARTIALS, LONG_PARTIALS, WRITE_LSE, HAS_WINDOW,
                      HAS_SINKS, WHOLE_PIECES)  # fmt: skip
    stamp(program_times_ptr, times_at + 2, TIME_PROGRAMS)


@triton.jit
def kth_long_request(seq_lens_ptr, piece_ranges_ptr, k, batch, max_seq_len, window_left,
                     num_programs, QLEN: tl.constexpr, SPLIT_BLOCK_N: tl.constexpr,
                     BLOCK_B: tl.constexpr, LONG_PARTIALS: tl.constexpr,
                     HAS_WINDOW: tl.constexpr):  # fmt: skip
    """The k-th request (in batch order) with more than LONG_PARTIALS partials, or `batch` if
    fewer have: every request's length and range as its own merge program reads them
    (`merged_seq_len`, `piece_range`), as one [BLOCK_B] tile."""
    offs_b = tl.arange(0, BLOCK_B)
    in_batch = offs_b < batch
    # The lanes past the batch read the last request's length (in bounds) and count as empty.
    lens = merged_seq_len(seq_lens_ptr, tl.minimum(offs_b, batch - 1), max_seq_len, window_left,
                          QLEN, SPLIT_BLOCK_N, HAS_WINDOW)  # fmt: skip
    has_keys = in_batch & (lens > 0)
    _, pieces = piece_range(piece_ranges_ptr, offs_b, has_keys, num_programs)
    is_long = has_keys & (pieces > LONG_PARTIALS)
    rank = tl.cumsum(is_long.to(tl.int32), 0) - 1
    match = is_long & (rank == k)
    return tl.min(tl.where(match, offs_b, batch), 0)


@triton.jit
def merge_rows_of(partial_o_ptr, partial_lse_ptr, seq_lens_ptr, piece_ranges_ptr, out_ptr,
                  lse_ptr, sinks_ptr, request, rows, slice_id, offs_d, d_ok, max_seq_len,
                  window_left, batch, num_programs, stride_out_batch, stride_out_pos,
                  stride_out_head, stride_lse_batch, stride_lse_pos, stride_lse_head,
                  NUM_HEADS: tl.constexpr, QLEN: tl.constexpr, HEAD_DIM_V: tl.constexpr,
                  SPLIT_BLOCK_N: tl.constexpr, R: tl.constexpr, BLOCK_D: tl.constexpr,
                  TILE_S: tl.constexpr, MOST_PARTIALS,
                  WRITE_LSE: tl.constexpr, HAS_WINDOW: tl.constexpr, HAS_SINKS: tl.constexpr,
                  WHOLE_PIECES: tl.constexpr):  # fmt: skip
    """Merge the R `rows` of `request` (of at most MOST_PARTIALS partials: a request of more is
    another program's) in tiles of TILE_S partials into out (and lse), BLOCK_D columns."""
    seq_len = merged_seq_len(seq_lens_ptr, request, max_seq_len, window_left, QLEN,
                             SPLIT_BLOCK_N, HAS_WINDOW)  # fmt: skip
    has_keys = seq_len > 0
    first, num_written = piece_range(piece_ranges_ptr, request, has_keys, num_programs)
    mine = num_written <= MOST_PARTIALS
    if WHOLE_PIECES:
        mine = mine & ~(has_keys & (num_written == 1))  # stage 1 wrote these rows itself
    if mine:
        first_slot = rows.to(tl.int64) * (num_programs + batch) + first + request
        m_i = tl.full([R], float("-inf"), tl.float32)
        l_i = tl.zeros([R], tl.float32)
        acc = tl.zeros([R, BLOCK_D], tl.float32)
        for s0 in range(0, num_written, TILE_S):
            m_i, l_i, acc = fold_row_partials(
                partial_o_ptr, partial_lse_ptr, first_slot, s0, num_written, offs_d, d_ok,
                m_i, l_i, acc, HEAD_DIM_V, TILE_S,
            )  # fmt: skip
        store_merged_rows(out_ptr, lse_ptr, sinks_ptr, request, rows, slice_id, m_i, l_i, acc,
                          offs_d, d_ok, stride_out_batch, stride_out_pos, stride_out_head,
                          stride_lse_batch, stride_lse_pos, stride_lse_head, NUM_HEADS, QLEN,
                          WRITE_LSE, HAS_SINKS)  # fmt: skip
