"""GQA's stage-1 tile and split count where the caller left the block shape to the planner on a
measured device: balanced programs take their own tile (docs/perf.md session 28); uniform
splits take the long-split tile where their launch fits one wave of it, on half the planner's
splits if need be (sessions 29 and 30), else keep the uniform tile, whose split count is
checked against the waves its launch really takes where the lengths are equal
(gqa_uniform_waves.py)."""

from __future__ import annotations

import torch

from splitkv.device import DeviceSpec
from splitkv.gqa_tile_rules import gqa_tile_for
from splitkv.gqa_uniform_waves import (
    equal_lengths,
    gqa_uniform_residency,
    gqa_uniform_split_count,
)


def gqa_planned_tile(
    balanced: bool,
    lengths: list[int],
    *,
    block_h: int,
    tile_head_dim: int,
    head_dim_v: int,
    kv_pack: int,
    num_kv_heads: int,
    dtype: torch.dtype,
    num_splits: int,
    default_splits: bool,
    short_split_keys: int | None,
    keys: int,
    batch_size: int,
    programs_a_split: int,
    spec: DeviceSpec,
) -> tuple[tuple[int, int, bool] | None, int]:
    """(tile, num_splits): the measured tile as (block_n, num_stages, page_prefetch), or None
    where the uniform tile's own rules apply (plan_tile.py), and the split count the launch
    runs (`num_splits` where the planner may not change it: `default_splits` False)."""
    programs = batch_size * programs_a_split
    tile, splits, _ = gqa_tile_for(
        balanced, block_h, tile_head_dim, dtype.itemsize, num_splits, keys, programs,
        spec.compute_units, may_halve=default_splits, short_split_keys=short_split_keys,
    )  # fmt: skip
    if tile is None and not balanced and default_splits and equal_lengths(lengths):
        held = gqa_uniform_residency(block_h, head_dim_v, kv_pack, num_kv_heads, dtype.itemsize)
        splits = gqa_uniform_split_count(splits, programs, held, spec.compute_units)
    return tile, splits
