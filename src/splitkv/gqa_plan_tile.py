"""GQA's stage-1 tile and split count where the caller left the block shape to the planner on a
measured device: balanced programs take their own tile (docs/perf.md session 28); uniform
splits take the long-split tile where their launch fits one wave of it, on half the planner's
splits if need be (sessions 29 and 30), else keep the uniform tile, whose split count is
checked against the waves its launch really takes where the lengths are equal
(gqa_uniform_waves.py). On a device that tables `gqa_wide_uniform_split_keys` (the H100), the
32-row head-dim-128 tile keeps the uniform tile at the long-split count for batches of long
splits (`keeps_uniform_tile`)."""

from __future__ import annotations

import torch

from splitkv.device import DeviceSpec
from splitkv.gqa_tile_rules import gqa_tile_for
from splitkv.gqa_uniform_waves import (
    equal_lengths,
    gqa_uniform_residency,
    gqa_uniform_split_count,
)
from splitkv.plan_rules import next_pow2


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
    elif (
        tile is not None
        and not balanced
        and keeps_uniform_tile(block_h, tile_head_dim, batch_size, keys, splits, spec)
    ):
        tile = None  # `short_split_keys`' one split never meets it: it asks for two
    return tile, splits


# The tile (rows, head dim padded) `gqa_wide_uniform_split_keys` speaks for.
WIDE_UNIFORM_TILE = (32, 128)


def keeps_uniform_tile(block_h: int, tile_head_dim: int, batch_size: int, keys: int,
                       num_splits: int, spec: DeviceSpec) -> bool:  # fmt: skip
    """Whether `num_splits` uniform splits of `keys` at the long-split tile's count run on the
    uniform tile instead (`PartitionTunables.gqa_wide_uniform_split_keys`); one split (the
    build that writes the output itself, a tile of its own) keeps the long-split tile, as no
    such plan was timed against it. H100 (docs/perf.md session 57, run172-174, min of 2
    rounds; qwen-64-8 and llama3-70b-tp8 at qlen 4, llama3-8b at qlen 8): two requests
    or more on splits of 2,048-4,096 keys ran 0.7-6.6% faster on the uniform tile in 19 of 19
    (llama3-8b 8 x 16,384 201.1 -> 187.9 us, llama3-70b-tp8 32 x 32,768 196.5 -> 187.2, qwen-64-8
    16 x 4,096 105.7 -> 100.2); one request level (within 0.2%, but 1 x 16,384 on 512-key
    splits +3.0%), 64-128 splits of 1,024 keys 2.1-2.9% slower. On the H200 the long-split tile
    won at this height against the 64-key uniform tile of the time (session 30), which the
    128-key one replaced in session 39; not timed there since."""
    least = spec.tunables.gqa_wide_uniform_split_keys
    wide = (block_h, next_pow2(tile_head_dim)) == WIDE_UNIFORM_TILE
    several = batch_size >= 2 and num_splits >= 2
    return least > 0 and wide and several and -(-keys // num_splits) >= least
