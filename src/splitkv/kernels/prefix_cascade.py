"""The shared-prefix cascade's two small kernels around its passes (splitkv/prefix.py), each
one launch where torch needed a dozen elementwise kernels (~3 us each under a CUDA graph on
the H200: 8 x 327,600 spent ~50 of its 298 us in them, docs/perf.md session 18).

- `suffix_rows_kernel`: per request, whether it takes part in its group's prefix pass (its
  query tokens all follow the prefix), and its suffix: the table row shifted left by the
  prefix's pages, the length cut by as much; a request taking part also names itself the
  table row its group's chunks read the prefix through.
- `merge_prefix_kernel`: per query row, its prefix state (the chunk row it was stacked in,
  weight 0 where it took no part) merged with its suffix state, in fp32.
"""

import triton
import triton.language as tl

from splitkv.kernels.online_softmax import (
    LOG2E,
    fold_states,
    merged_lse,
    merged_output,
    state_weights,
)


@triton.jit
def suffix_rows_kernel(
    page_table_ptr,
    seq_lens_ptr,
    prefix_len_ptr,  # [batch] int32 shared keys of the request's group (0: none), whole pages
    suffix_table_ptr,  # [batch, columns] int32, written
    suffix_lens_ptr,  # [batch] int32, written
    takes_part_ptr,  # [batch] int8, written
    chunk_lo_ptr,  # [batch] int32: the request's group's chunks of the prefix pass [lo, hi)
    chunk_hi_ptr,
    chunk_first_ptr,  # [chunks] int64: the member each chunk reads the prefix through, written
    columns,
    stride_table,
    QLEN: tl.constexpr,
    PAGE_SIZE: tl.constexpr,
    BLOCK_C: tl.constexpr,
):
    request = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)
    seq_len = tl.load(seq_lens_ptr + request).to(tl.int64)  # int64: corrupt lengths do not wrap
    prefix_len = tl.load(prefix_len_ptr + request).to(tl.int64)
    takes_part = (prefix_len > 0) & (prefix_len <= seq_len - QLEN + 1)
    shift = tl.where(takes_part, prefix_len // PAGE_SIZE, 0)
    # Columns past the row's end repeat its last one: beyond the cut length, never read.
    source = tl.minimum(cols + shift, columns - 1)
    ok = cols < columns
    pages = tl.load(page_table_ptr + request * stride_table + source, mask=ok)
    tl.store(suffix_table_ptr + request * columns + cols, pages, mask=ok)
    if tl.program_id(1) == 0:
        tl.store(suffix_lens_ptr + request, (seq_len - shift * PAGE_SIZE).to(tl.int32))
        tl.store(takes_part_ptr + request, takes_part.to(tl.int8))
        if takes_part:
            # Its table row holds the shared pages; a member ending inside the prefix may not.
            # Members taking part race to write: any of them is right.
            for chunk in range(tl.load(chunk_lo_ptr + request), tl.load(chunk_hi_ptr + request)):
                tl.store(chunk_first_ptr + chunk, request)


@triton.jit
def merge_prefix_kernel(
    chunk_out_ptr,  # [chunk rows, HEAD_DIM] the prefix pass's output, contiguous
    chunk_lse_ptr,  # [chunk rows] natural log
    scatter_ptr,  # [rows] int64 the chunk row holding each query row's prefix state
    takes_part_ptr,  # [batch] int8
    suffix_out_ptr,  # [rows, HEAD_DIM] contiguous
    suffix_lse_ptr,  # [rows]
    out_ptr,  # [rows, HEAD_DIM] contiguous, written
    lse_ptr,  # [rows], written
    ROWS_PER_REQUEST: tl.constexpr,
    HEAD_DIM: tl.constexpr,
    BLOCK_D: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    offs_d = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)
    d_ok = offs_d < HEAD_DIM
    takes_part = tl.load(takes_part_ptr + row // ROWS_PER_REQUEST) != 0
    chunk_row = tl.load(scatter_ptr + row)
    prefix_lse = tl.load(chunk_lse_ptr + chunk_row, mask=takes_part, other=float("-inf"))
    suffix_lse = tl.load(suffix_lse_ptr + row)
    # The two states as a tile of 2, folded as merge_states folds its tiles.
    first = tl.arange(0, 2) == 0
    lse_s = tl.where(first, prefix_lse, suffix_lse) * LOG2E
    m_i, alpha, weight = state_weights(tl.full([1], float("-inf"), tl.float32), lse_s)
    # A state without keys (a request outside the prefix pass: weight 0) is not read: its
    # output may hold anything. (Its columns' bound drops to 0: the interpreter cannot AND a
    # reduced scalar's comparison into a vector mask.)
    prefix_columns = tl.where(tl.sum(tl.where(first, weight, 0.0), 0) > 0.0, HEAD_DIM, 0)
    suffix_columns = tl.where(tl.sum(tl.where(first, 0.0, weight), 0) > 0.0, HEAD_DIM, 0)
    prefix_o = tl.load(chunk_out_ptr + chunk_row * HEAD_DIM + offs_d,
                       mask=offs_d < prefix_columns, other=0.0).to(tl.float32)  # fmt: skip
    suffix_o = tl.load(suffix_out_ptr + row * HEAD_DIM + offs_d,
                       mask=offs_d < suffix_columns, other=0.0).to(tl.float32)  # fmt: skip
    o_s = tl.where(first[:, None], prefix_o[None, :], suffix_o[None, :])
    acc, l_i = fold_states(tl.zeros([BLOCK_D], tl.float32), tl.zeros([1], tl.float32), alpha,
                           weight, o_s)  # fmt: skip
    result = merged_output(acc, l_i).to(out_ptr.dtype.element_ty)
    tl.store(out_ptr + row * HEAD_DIM + offs_d, result, mask=d_ok)
    if tl.program_id(1) == 0:
        tl.store(lse_ptr + row + tl.arange(0, 1), merged_lse(m_i, l_i))
