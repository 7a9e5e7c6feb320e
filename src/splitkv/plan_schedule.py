"""The schedule of a plan left on `schedule="auto"`: uniform splits, or the balanced schedule
where the given lengths would finish sooner on it (the schedule model, splitkv/schedule.py), for
GQA without lengths (a CUDA graph's plan, replayed on ragged steps) from two requests, or
where Hopper's 16-row keys-as-rows program loop streams a long batch. The caller has already
named the schedule of a plan whose split count or grid was given (plan.py)."""

from __future__ import annotations

import torch

from splitkv import warp_specialized as ws
from splitkv.device import DeviceSpec
from splitkv.gqa_tile_rules import gqa_tile_for
from splitkv.plan_gluon import GluonOutlook
from splitkv.plan_rules import (
    MIN_DOT,
    gqa_graph_plan_balanced,
    loop_streams_long_batch,
)
from splitkv.schedule import modelled_schedule


def auto_schedule(
    lengths: list[int],
    *,
    kind: str,
    batch_size: int,
    keys: int,
    block_h: int,
    block_n: int | None,
    tile_head_dim: int,
    dtype: torch.dtype,
    num_splits: int,
    short_split_keys: int | None,
    default_splits: bool,
    num_programs: int,
    default_grid: bool,
    programs_a_split: int,
    wave: int,
    gqa_tiled: bool,
    gqa_grid: int | None,
    gluon: GluonOutlook,
    gluon_splits: int,
    program_loop: bool | None,
    spec: DeviceSpec,
) -> tuple[str, bool]:
    """(schedule, equal_shares) for `batch_size` requests of the given `lengths` (empty: not
    known) up to `keys` keys, on `num_splits` uniform splits (`gluon_splits` on the Gluon
    kernel, where it may run: its count, narrowed on the keys-as-rows tiles) or
    `num_programs` balanced programs a kv head and head block (`gqa_grid`: GQA's own
    balanced grid, where it has one). `equal_shares`: the balanced schedule was taken from
    uniform splits, so every row's partials are equal shares (the merge's tile then fits
    them, plan_merge.py)."""
    schedule = "uniform"
    if lengths and short_split_keys is None:
        # The model counts 64-key blocks: the unit cancels between the two schedules.
        narrow = block_h in ws.NARROW_BLOCK_H
        modelled_gluon_splits = gluon_splits if gluon.may_run and default_grid else None
        model_splits = num_splits
        if gqa_tiled and default_grid and programs_a_split == 1:
            # On one kv head and head block, the uniform plan's own count: the long-split
            # tile halves the planner's splits where their launch would pass a wave of it
            # (llama3-70b-tp8, 48 x 4k-12k: 8 splits run, not 16; uniform 66.6 us, balanced
            # 58.7; 48 x up to 16k at qlen 4 140.4 / 88.6). At 8 kv heads the halved
            # uniform launch (one split of 384 programs, one wave) ran as fast as the
            # planner's count models it (llama3-8b 48 x up to 4k at qlen 4: uniform 152.5,
            # balanced 163.0), so the planner's count stays (docs/perf.md session 36).
            _, model_splits, _ = gqa_tile_for(False, block_h, tile_head_dim, dtype.itemsize,
                                              num_splits, keys, batch_size, spec.compute_units,
                                              may_halve=default_splits)  # fmt: skip
        schedule = modelled_schedule(lengths, model_splits, num_programs, programs_a_split,
                                     wave, block_n or 64, kind=kind, spec=spec,
                                     gluon_splits=modelled_gluon_splits, narrow=narrow,
                                     balanced_on_gluon=gluon.pays[True],
                                     balanced_grid=gqa_grid)  # fmt: skip
    elif (
        gqa_tiled
        and default_grid
        and gqa_graph_plan_balanced(lengths, batch_size, short_split_keys is not None)
    ):
        schedule = "balanced"
    # 16-row tiles only: at 32 rows (12 heads x qlen 2) the loop lost 2% at 68k x 8 / 16
    # and tied at 327k (docs/perf.md v0.2.9f).
    narrow_loop = gluon.may_run and block_h == MIN_DOT and program_loop is not False
    if narrow_loop and loop_streams_long_batch(batch_size, keys, lengths):
        # Taken from uniform splits: lengths equal or unknown, equal shares a row.
        return "balanced", schedule == "uniform"
    return schedule, False
