"""The merge's knobs (stage 2) of a plan: partials one fold takes (`merge_block_s`), column
slices a row (`merge_d_split`), warps a program, rows a program (`merge_rows`), whether it
folds each split as stage 1 flags it (`merge_streams`) and the requests it merges one row a
program (`merge_long_partials`); each the caller's, checked, or the measured default for the
plan's stage 1 (`plan_rules`)."""

from __future__ import annotations

from typing import NamedTuple

from splitkv.checks import check_int, check_pow2
from splitkv.plan_rules import (
    MAX_MERGE_ROWS,
    MAX_SPLITS,
    default_long_partials,
    default_merge_block_s,
    default_merge_d_split,
    default_merge_num_warps,
    merge_partials_per_row,
    merge_rows_for,
    merge_streams_for,
    narrow_merge_rows,
    narrow_rows_merge_slicing,
    next_pow2,
    one_wave_merge_slicing,
    wide_merge_slicing,
)


class MergeKnobs(NamedTuple):
    """The merge's knobs, the plan's `merge_*` fields (None: the caller left it to the plan)."""

    block_s: int | None
    d_split: int | None
    num_warps: int | None
    rows: int | None
    streams: bool | None
    long_partials: int | None


def merge_plan(requested: MergeKnobs, *, kind: str, balanced: bool, num_programs: int,
               num_splits: int, batch_size: int, rows: int, head_dim_v: int, equal_shares: bool,
               interpreted: bool, compute_units: int) -> MergeKnobs:  # fmt: skip
    """Every merge knob for a stage 1 of `balanced` schedule over `num_programs` programs or
    `num_splits` splits (`merge_knobs` for its arguments): the caller's `requested`, checked,
    and the defaults for those left None."""
    knobs_free = all(knob is None for knob in requested[:4])
    block_s, d_split, num_warps, merge_rows = merge_knobs(
        *requested[:4], balanced=balanced, num_programs=num_programs, num_splits=num_splits,
        batch_size=batch_size, rows=rows, head_dim_v=head_dim_v, equal_shares=equal_shares,
        interpreted=interpreted, compute_units=compute_units,
    )  # fmt: skip
    streams = merge_streams_for(requested.streams, kind=kind, balanced=balanced,
                                merge_block_s=block_s, num_splits=num_splits,
                                merge_d_split=d_split)  # fmt: skip
    if streams and merge_rows > 1:
        raise ValueError(f"merge_rows: merge_streams folds one row a program, got {merge_rows}")
    # The default was measured on MLA's ragged batches only: GQA, equal shares (a long batch
    # streamed by the program loop) and pinned merges keep theirs (merge_streams runs on
    # uniform splits only, where merge_long_partials is off).
    long_partials, merge_rows = merge_long_partials_for(
        requested.long_partials, merge_rows, balanced=balanced,
        by_default=kind == "mla" and knobs_free and not equal_shares and not interpreted,
        batch_size=batch_size, num_programs=num_programs, rows=rows,
    )  # fmt: skip
    return MergeKnobs(block_s, d_split, num_warps, merge_rows, streams, long_partials)


def merge_knobs(
    merge_block_s: int | None,
    merge_d_split: int | None,
    merge_num_warps: int | None,
    merge_rows: int | None,
    *,
    balanced: bool,
    num_programs: int,
    num_splits: int,
    batch_size: int,
    rows: int,
    head_dim_v: int,
    equal_shares: bool,
    interpreted: bool,
    compute_units: int,
) -> tuple[int, int, int, int]:
    """(merge_block_s, merge_d_split, merge_num_warps, merge_rows) for a stage 1 of `balanced`
    schedule over `num_programs` programs or `num_splits` splits, `batch_size` requests of
    `rows` query rows (heads x qlen) of `head_dim_v` columns. `equal_shares`: the balanced
    schedule was taken from uniform splits (equal shares a row)."""
    mean_partials = merge_partials_per_row(balanced, num_programs, batch_size, num_splits)
    block_s_free = merge_block_s is None
    if block_s_free:
        merge_block_s = default_merge_block_s(balanced, num_programs, mean_partials,
                                              equal_shares)  # fmt: skip
    check_int("merge_block_s", merge_block_s, 1, MAX_SPLITS)
    check_pow2("merge_block_s", merge_block_s)
    slicing_free = merge_d_split is None and merge_num_warps is None
    if merge_d_split is None:
        # The interpreter runs one program at a time, so there fewer, wider programs win.
        merge_d_split = 1 if interpreted else default_merge_d_split(head_dim_v)
    check_int("merge_d_split", merge_d_split, 1, head_dim_v)
    # The tile most rows fold. Uniform: the tile's rows; balanced: the rows' mean partials, if
    # fewer.
    partials = min(merge_block_s, next_pow2(mean_partials)) if balanced else merge_block_s
    if merge_num_warps is None:
        merge_num_warps = default_merge_num_warps(partials, next_pow2(head_dim_v // merge_d_split))
    if slicing_free and not interpreted and narrow_merge_rows(head_dim_v):
        merge_d_split, merge_num_warps, narrow_block_s = narrow_rows_merge_slicing(
            head_dim_v, merge_d_split, merge_block_s, partials, batch_size * rows,
            compute_units,
        )  # fmt: skip
        if block_s_free:
            merge_block_s = narrow_block_s
        if merge_rows is None:
            merge_rows, rows_block_s = merge_rows_for(
                rows, batch_size * rows * merge_d_split, merge_block_s,
                next_pow2(head_dim_v // merge_d_split), merge_num_warps, compute_units,
            )  # fmt: skip
            if block_s_free:
                merge_block_s = rows_block_s
    elif slicing_free and not interpreted:
        merge_d_split, merge_num_warps = one_wave_merge_slicing(
            head_dim_v, merge_d_split, merge_num_warps, batch_size * rows, compute_units
        )
        if not balanced:
            merge_d_split, merge_num_warps = wide_merge_slicing(
                merge_d_split, merge_num_warps, batch_size * rows, compute_units
            )
    check_int("merge_num_warps", merge_num_warps, 1, 8)
    check_pow2("merge_num_warps", merge_num_warps)
    if merge_rows is None:
        merge_rows = 1  # MLA's wide rows, pinned slicing, the interpreter
    check_int("merge_rows", merge_rows, 1, MAX_MERGE_ROWS)
    check_pow2("merge_rows", merge_rows)
    if rows % merge_rows:
        raise ValueError(
            f"merge_rows: expected a divisor of heads x qlen = {rows}, got {merge_rows}"
        )
    if head_dim_v % merge_d_split:
        raise ValueError(
            f"merge_d_split: expected a divisor of head_dim_v={head_dim_v}, got {merge_d_split}"
        )
    return merge_block_s, merge_d_split, merge_num_warps, merge_rows


def merge_long_partials_for(
    requested: int | None,
    merge_rows: int,
    *,
    balanced: bool,
    by_default: bool,
    batch_size: int,
    num_programs: int,
    rows: int,
) -> tuple[int, int]:
    """(merge_long_partials, merge_rows): with `merge_long_partials`, the balanced merge folds a
    request of more partials than it one row a program, and the others `merge_rows` a program
    in one tile of it (kernels/merge_by_length.py); 0 turns it off. A power of two up to
    MAX_SPLITS. Default: off, or where `by_default` (the caller's measured cases) on a balanced
    schedule, `default_long_partials`."""
    if requested is None:
        if not (by_default and balanced):
            return 0, merge_rows
        return default_long_partials(batch_size, num_programs, rows, merge_rows)
    check_int("merge_long_partials", requested, 0, MAX_SPLITS)
    if requested == 0:
        return 0, merge_rows
    check_pow2("merge_long_partials", requested)
    if not balanced:
        raise ValueError(
            "merge_long_partials: splits a balanced schedule's merge by its requests' partials; "
            "this plan's schedule is uniform (every request's rows fold num_splits partials)"
        )
    return requested, merge_rows
