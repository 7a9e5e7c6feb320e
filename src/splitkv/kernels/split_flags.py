"""The flags of the plan's `merge_streams`: stage 1 tells each merge program which splits it has
written, so the merge folds a partial as soon as it lands instead of waiting for all of stage 1.

`split_flags[request, row, slice, split]` (int32, zero between calls) belongs to one merge
program (request, row, column slice): stage 1's program for (request, head block, split) sets
it to 1 for each of its rows and every slice, after its partial stores; the merge program
polls its row of flags, folds the splits whose flag is up, and clears its flags once all its
splits are in. One flag a merge program, so no flag has two readers and a clear needs no
count. Launched as a programmatic dependent of stage 1, the merge's programs start only after
every stage-1 program has (so spinning merge programs never hold an SM a stage-1 program
waits for), and the next call's stage 1 writes flags only after this merge has finished.

Ordering: a CTA barrier after the partial stores, then each flag raised with release
semantics at GPU scope; the merge reads its flags with acquire semantics before loading those
partials, and loads them from L2 (a stale L1 line of the previous call must not be read).
"""

import triton
import triton.language as tl
from triton.experimental import gluon
from triton.experimental.gluon import language as gl


@triton.jit
def mark_split_written(flags_ptr, request, rows, row_ok, split, num_splits,
                       ROWS: tl.constexpr, D_SPLIT: tl.constexpr):  # fmt: skip
    """Stage 1 (Triton): this program's partial for `split` is stored, for its `rows` (the
    head block's, those under `row_ok`) and every merge slice of them."""
    tl.debug_barrier()  # every thread's partial stores before any flag
    slices = tl.arange(0, D_SPLIT)
    programs = (request.to(tl.int64) * ROWS + rows)[:, None] * D_SPLIT + slices[None, :]
    ok = row_ok[:, None] & (slices < D_SPLIT)[None, :]
    tl.atomic_xchg(flags_ptr + programs * num_splits + split, 1, mask=ok, sem="release",
                   scope="gpu")  # fmt: skip


@gluon.jit
def mark_split_written_gluon(flags_ptr, request, first_row, split, num_splits,
                             ROWS: gl.constexpr, BLOCK_Q: gl.constexpr,
                             D_SPLIT: gl.constexpr):  # fmt: skip
    """Stage 1 (Gluon, after the partitions joined): as `mark_split_written` for the head
    block's BLOCK_Q rows from first_row."""
    gl.thread_barrier()  # every consumer's partial stores before any flag
    # A warp's lanes over the slices first (every flag once where rows x slices cover the
    # threads), the rest of the slices in each thread's registers.
    LANES: gl.constexpr = D_SPLIT if D_SPLIT < 32 else 32
    layout: gl.constexpr = gl.BlockedLayout([1, D_SPLIT // LANES], [32 // LANES, LANES],
                                            [gl.num_warps(), 1], [1, 0])  # fmt: skip
    rows = first_row + gl.arange(0, BLOCK_Q, gl.SliceLayout(1, layout))
    slices = gl.arange(0, D_SPLIT, gl.SliceLayout(0, layout))
    programs = (request.to(gl.int64) * ROWS + rows)[:, None] * D_SPLIT + slices[None, :]
    ok = (rows < ROWS)[:, None] & (slices < D_SPLIT)[None, :]
    gl.atomic_xchg(flags_ptr + programs * num_splits + split,
                   gl.full([BLOCK_Q, D_SPLIT], 1, gl.int32, layout), mask=ok, sem="release",
                   scope="gpu")  # fmt: skip


@triton.jit
def splits_landed(flags, pending):
    """The merge: which of the `pending` splits (flag pointers `flags`) stage 1 has written,
    with acquire semantics, so the partials' loads that follow see its stores."""
    up = tl.atomic_add(flags, 0, mask=pending, sem="acquire", scope="gpu")
    # The acquiring threads are not the ones that load each partial's columns: a CTA barrier
    # carries the acquire to them.
    tl.debug_barrier()
    return pending & (up != 0)
