"""Packing several kv heads into one GQA stage-1 program (`DecodePlan.kv_pack`).

Triton's dots take 16 query rows at least, so a kv head whose group serves fewer rows (gpt-oss
and qwen-64-8 at qlen 1: 8 query heads a kv head; llama3-8b: 4) leaves the rest of the tile
padding, and its program still runs the softmax, the page ids and the row offsets of every key
block for those padded rows. Packed, one program attends KV_PACK kv heads at once: a key's
KV_PACK heads become one row of KV_PACK x head-dim columns, each query row holds its query in
its own head's columns and zeros in the others (kernels/gqa_split.py `gqa_attend_keys`). The
dots do the same work per byte as before; the per-block work is shared by KV_PACK heads.

For the tile rules a packed program is a program of one kv head KV_PACK times as wide: the
planner counts `num_kv_heads // kv_pack` programs a request and split, and gives the rules a
head dim of `kv_pack * head_dim` (`packed_tile`).
"""

from __future__ import annotations

from splitkv.checks import check_int, check_pow2
from splitkv.device import DeviceSpec
from splitkv.gqa_tile_rules import gqa_long_split_residency
from splitkv.partition import resident_programs_per_sm
from splitkv.plan_rules import MIN_DOT, next_pow2

GQA_PACK_MAX_COLUMNS = 256  # a packed program's K and V columns (the widest unpacked head dim)
GQA_PACK_MAX_ROWS = MIN_DOT  # packing fills Triton's smallest dot; taller tiles have no padding
# The default pack: two heads of head dim 64 (128 columns) whose rows fill the 16-row tile.
# Head dim 128 packed to 256 columns ran 1-9% slower everywhere (docs/perf.md session 47).
GQA_DEFAULT_PACK = 2
GQA_DEFAULT_PACK_HEAD_DIM = 64
# A packed split at least this long takes the place of an unpacked one split of the same grid
# (`packed_plan_agrees`): measured from 4,096 keys a split (H100, docs/perf.md session 56);
# 16 x 2,048 (512-1,024 keys a split) lost on the H200 (session 47).
GQA_PACK_LONG_SPLIT_KEYS = 4096


def kv_pack_for(requested: int | None, kind: str, num_kv_heads: int, group_rows: int,
                head_dim: int) -> int:  # fmt: skip
    """The plan's `kv_pack`: as requested (checked), else 1. (The planner's default packs
    GQA_DEFAULT_PACK where `gqa_kv_pack_may_pay` and `packed_plan_agrees`, by planning both.)

    A pack must divide the kv heads, and its rows (`kv_pack` runs of the group's rows rounded
    up to a power of two) must fit one 16-row tile, and its columns 256."""
    if requested is None:
        return 1
    check_int("kv_pack", requested, 1, None)
    check_pow2("kv_pack", requested)
    if requested == 1:
        return 1
    if kind != "gqa":
        raise ValueError(f"kv_pack: packs GQA kv heads, got kind={kind!r}")
    if num_kv_heads % requested:
        raise ValueError(
            f"kv_pack: expected a divisor of num_kv_heads={num_kv_heads}, got {requested}"
        )
    rows = packed_rows(group_rows, requested)
    if rows > GQA_PACK_MAX_ROWS:
        raise ValueError(
            f"kv_pack: {requested} kv heads of {group_rows} query rows (heads x qlen) need "
            f"{rows} rows, more than one {GQA_PACK_MAX_ROWS}-row tile"
        )
    columns = requested * next_pow2(head_dim)
    if columns > GQA_PACK_MAX_COLUMNS:
        raise ValueError(
            f"kv_pack: {requested} kv heads of head_dim={head_dim} need {columns} columns, "
            f"more than {GQA_PACK_MAX_COLUMNS}"
        )
    return requested


def packed_rows(group_rows: int, kv_pack: int) -> int:
    """Rows of a pack's tile: kv_pack runs of the group's rows, each rounded up to a power of
    two (kernels/gqa_split.py `gqa_rows`); unpacked, the group's rows."""
    return group_rows if kv_pack == 1 else kv_pack * next_pow2(group_rows)


def packed_tile(num_kv_heads: int, head_dim: int, kv_pack: int) -> tuple[int, int]:
    """(programs a request and split serves, the head dim the tile rules weigh) for a pack."""
    return num_kv_heads // kv_pack, head_dim * kv_pack


def gqa_kv_pack_may_pay(num_kv_heads: int, group_rows: int, head_dim: int,
                        itemsize: int) -> bool:  # fmt: skip
    """Whether a shape may take the default pack: 16-bit types at head dim 64 (gpt-oss), 5-8
    query rows a kv head (two of them fill the 16-row tile: gpt-oss at qlen 1) and an even
    number of kv heads. The planner then packs where the packed plan keeps the unpacked one's
    schedule and one split or not (`packed_plan_agrees`)."""
    if itemsize != 2 or next_pow2(head_dim) != GQA_DEFAULT_PACK_HEAD_DIM:
        return False
    return num_kv_heads % GQA_DEFAULT_PACK == 0 and (
        packed_rows(group_rows, GQA_DEFAULT_PACK) == MIN_DOT
    )


def packed_plan_agrees(unpacked, packed, spec: DeviceSpec, keys: int) -> bool:
    """Whether a packed plan keeps its unpacked twin's schedule and, on uniform splits, its one
    split or not, and where both take one split, whether it runs no more rounds of programs
    (`one_split_rounds`): the packed launch has half the programs, each streaming twice the
    bytes, so the split rules may decide otherwise, and a packed wave lasts twice as long.
    One exception to "one split or not": an unpacked one split whose packed twin launches the
    same grid on splits of at least GQA_PACK_LONG_SPLIT_KEYS of the `keys` (the longest
    request's) takes the pack. Both launches then run the same programs over the same bytes;
    the packed ones fill their tile's rows, and the merge they add reads 2 partials a row.

    H200, gpt-oss at qlen 1, the default against packed (docs/perf.md session 47, calls 1-3, 2
    rounds): uniform 8 x 131,072 490.4 -> 476.5 us, 21 x 56,853 718.6 -> 658.0, 38 x 25,678
    611.1 -> 564.1; one split 96 x 4,096 212.3 -> 193.9 (1.45 waves unpacked, 0.97 packed),
    256 x 1,024 134.1 -> 126.1; balanced 24 x 2,000-60,000 377.2 -> 364.0, 19 x 519-3,376 32.1
    -> 28.2, 1 x 131,072 + 47 short 131.7 -> 128.0; slower: 8 x 1,971 (16 splits) 11.9 ->
    12.2, 1 x 32,768 (64) 22.7 -> 23.2, issue 5's ragged 101.0 -> 102.4. Where packing turned
    a one split into 2-4 splits: 16 x 2,048 22.3 -> 25.2; into the balanced schedule: 256 x
    100-2,000 150.2 -> 156.0; a one split into more rounds: 160 x 1,500 134.3 -> 156.5 (2.42
    waves unpacked, 3 rounds of one program's time, against 1.21 packed, 2 rounds of twice
    that), 38 x 358 9.8 -> 11.5 (one round either way)."""
    if unpacked.schedule != packed.schedule:
        return False
    if unpacked.schedule == "balanced":
        return True  # its split count is the one the schedule model weighed, not one it runs
    if unpacked.num_splits == 1 and packed.split_grid == unpacked.split_grid:
        return -(-keys // packed.num_splits) >= GQA_PACK_LONG_SPLIT_KEYS
    if (unpacked.num_splits == 1) != (packed.num_splits == 1):
        return False
    if unpacked.num_splits > 1:
        return True
    return packed.kv_pack * one_split_rounds(packed, spec) <= one_split_rounds(unpacked, spec)


def one_split_rounds(plan, spec: DeviceSpec) -> int:
    """Rounds of programs a uniform one-split launch runs: its grid over a wave of its tile
    (the long-split tile's 3 stages or the uniform tile's 2; `gqa_tile_rules`), rounded up."""
    if plan.split_num_stages == 3:
        held = gqa_long_split_residency(plan.block_h, plan.tile_head_dim, plan.dtype.itemsize)
    else:
        held = resident_programs_per_sm("gqa", plan.block_h, plan.tile_head_dim, spec)
    return -(-plan.split_grid // (held * spec.compute_units))
