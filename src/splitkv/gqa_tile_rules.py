"""The planner's rules for GQA tiles (plan_rules.py holds the rest): the uniform 32- and 64-row
tiles' key blocks and warps, and the balanced schedule's programs of any height (tile and grid),
each citing its measurement (docs/perf.md)."""

from __future__ import annotations

from collections.abc import Sequence

from splitkv.host_lengths import as_host_lengths
from splitkv.plan_rules import MIN_DOT, next_pow2, prev_pow2

GQA_WIDE_TILE_SCORES = 4096  # query rows x keys a wide GQA tile scores an iteration
GQA_WIDE_TILE_KEY_ELEMENTS = 16384  # keys x head dim a block: 32 KB of bf16 K, as many of V
GQA_WIDE_TILE_MIN_BLOCKS = 4  # key blocks a split keeps, so that loads overlap the dots
GQA_WIDE_TILE_FEW_BLOCKS = 2  # ... or 2, where the wider block adds the launch no wave
# Keys a block at most where the head dim is at most 64 (gpt-oss): 128 held its 32 rows to 2-3
# programs an SM (142-177 registers), 64 keys to 4 (100-124).
GQA_WIDE_TILE_SMALL_HEAD_DIM = 64
GQA_WIDE_TILE_SMALL_HEAD_KEYS = 64
# The wide tiles (rows, head dim padded) that take 3 stages on one split: 32 rows at head dim
# 128 (128-key blocks; its 2-stage one-split build, num_splits a constant 1, spills at 255
# registers, this one not) and 64 rows at head dim 64 (64-key blocks; 116 -> 127 registers,
# 4 programs an SM either way). Both lost 1-3% on 2 and 8 splits, which keep 2.
GQA_WIDE_TILE_DEEP = ((32, 128), (64, 64))
GQA_WIDE_TILE_DEEP_STAGES = 3
# Programs of the wide tile's 2-stage uniform builds an H200 SM holds, by (rows, head dim) and
# key block, in 16-bit types: the fewest of the models' builds on 16 splits, as the GPU
# specialises them (`tools/inspect_gqa.py --batch many --knobs block_n=N num_stages=2
# num_splits=16`, sm_90; checked by tests/test_gqa_compiled.py). At head dim 128 a wider block
# costs programs an SM (32 rows: 122-125 -> 138-140 -> 199-200 registers); at 64, fewer.
GQA_WIDE_TILE_RESIDENCY = {(32, 64): {32: 5, 64: 5, 128: 3}, (32, 128): {32: 4, 64: 3, 128: 2},
                           (64, 64): {32: 5, 64: 4, 128: 2}, (64, 128): {32: 4, 64: 2}}  # fmt: skip


def gqa_wide_tile(block_h: int, head_dim: int, balanced: bool, split_keys: int,
                  one_split: bool = False, programs: int | None = None,
                  compute_units: int = 0, itemsize: int = 2,
                  ) -> tuple[int | None, int, int | None] | None:  # fmt: skip
    """(block_n, num_warps, num_stages or None for the planner's) of a GQA head block of 32 or 64
    rows (qlen x heads a kv head, or the shared-prefix cascade's stacked members), else None
    (the 16-row rules apply). One warpgroup, and on uniform splits 4,096 scores an iteration:
    128-key blocks at 32 rows, 64 at 64 rows and at head dims up to 64, fewer where the head dim
    passes 128 (two stages of K and V stay within 128 KB of shared memory) or where a split
    would hold fewer than 4 blocks (32 keys at least: the pipeline needs blocks to overlap;
    llama3-70b-tp8 x qlen 4, 1 x 32,768 on 256 splits of 128 keys: 11.7 us on 32-key blocks,
    13.0 on one 128-key block); the balanced kernel's block_n is `gqa_balanced_tile`'s (None
    here). On the H200 (docs/perf.md session 26, the GQA cascade's stacked pass, 8 x 131,072 and
    the 6-group mix) these took llama3-8b (32 rows) 250.7 -> 231.1 us and 596.9 -> 478.7,
    gpt-oss (64 rows, head dim 64) 238.9 -> 139.5 and 475.4 -> 304.6, llama3-70b-tp8 (64 rows)
    70.6 -> 60.4 and 123.6 -> 105.0, against the MLA-sized 32-key blocks on 8 warps (64 rows) or
    4. At 32 rows and head dim 64 (gpt-oss at qlen 4), 64-key blocks against 128 (session 39,
    default plans): 64 / 128 x 4k 179.4 -> 170.2 / 362.3 -> 341.8 us, 256 x 1k 198.7 -> 182.6,
    32 x 16k 408.6 -> 355.6, 8 x 64k 411.6 -> 357.5; at head dim 128 (qwen-64-8 at qlen 4,
    llama3-8b at qlen 8) the same cap lost 3-39% (64 x 4k 290.8 -> 403.3), so 128 keys stay
    there; on one split (the build that writes the output itself) 3 stages, not 2, ran 6-12%
    faster (qwen-64-8 at qlen 4: 64 x 4k 281.3 -> 264.6 us, 128 x 4k 562.4 -> 525.4, 256 x 1k
    310.6 -> 282.2; llama3-8b at qlen 8 64 x 4k 282.3 -> 264.5), and 1% slower on 2 and 8 splits
    (32 x 16k 577.2 -> 583.3), which keep 2. The same held at 64 rows and head dim 64 (gpt-oss
    at qlen 8, session 40): one split 3-5% faster on 3 stages (64 x 1k 48.4 -> 46.0 us, 256 x
    1k 194.6 -> 188.6, 128 x 4k 376.6 -> 362.4), 2 and 8 splits 3% slower (32 x 16k 371.3 ->
    380.4). one_split: the plan has one uniform split.

    Where `programs` (the launch's, on a device whose tiles were measured) is given, a 2-stage
    split keeps 2 blocks at least instead of 4 where the wider block does not add a wave to
    the launch (`wider_block_fits`). H200 (docs/perf.md session 42): 3 blocks where it adds
    no wave right in 61 of 61 timed plans (calls 1-3), llama3-70b-tp8 at qlen 4 32 x 2,000
    20.4 -> 17.1 us (32 -> 64 keys, 256 programs), 48 x 2,000 26.5 -> 23.5, gpt-oss at qlen 4
    12 x 2,000 36.9 -> 27.8, qwen-64-8 at qlen 4 6 x 2,000 29.3 -> 26.8 (768 programs: 2 waves
    of either); where it adds one, the wider block ran 5-19% slower: llama3-70b-tp8 at qlen 4
    64 x 2,000 30.8 -> 33.7 (512 programs: one wave of 32-key blocks, 1.3 of 64), qwen-64-8 at
    qlen 8 2 x 4,000 21.8 -> 25.9. 2 blocks (calls 4-5): splits of 128-190 keys on 64-key
    blocks 5.6-21.6% faster in 18 of 20 plans and within 1.1% in 2 (llama3-70b-tp8 at qlen 4
    16 x 700 12.5 -> 10.8, gpt-oss at qlen 4 24 x 700 27.8 -> 21.8); splits of 256-380 on
    128-key blocks (32 rows at head dim 128) faster in 12 of 15 (20 x 1,000 11.7 -> 10.9, 40 x
    700 14.5 -> 13.0, 16 x 3,000 16.0 -> 14.7), within 0.8% in 2, slower in one: 2 x 32,768
    on 128 splits 16.2 -> 17.4 (+7.4%)."""
    if block_h < 2 * MIN_DOT:
        return None
    if balanced:
        return None, 4, None
    keys = min(GQA_WIDE_TILE_SCORES // block_h, GQA_WIDE_TILE_KEY_ELEMENTS // head_dim)
    if head_dim <= GQA_WIDE_TILE_SMALL_HEAD_DIM:
        keys = min(keys, GQA_WIDE_TILE_SMALL_HEAD_KEYS)
    deep = one_split and (block_h, next_pow2(head_dim)) in GQA_WIDE_TILE_DEEP
    narrow, wide = (max(2 * MIN_DOT, min(keys, prev_pow2(max(1, split_keys // blocks))))
                    for blocks in (GQA_WIDE_TILE_MIN_BLOCKS, GQA_WIDE_TILE_FEW_BLOCKS))  # fmt: skip
    held = _residency(GQA_WIDE_TILE_RESIDENCY, block_h, head_dim, itemsize)
    if wide > narrow and not deep and programs is not None and held:
        keys = wide if wider_block_fits(held, narrow, wide, programs, compute_units) else narrow
        return keys, 4, None
    return narrow, 4, GQA_WIDE_TILE_DEEP_STAGES if deep else None


def wider_block_fits(held: dict, narrow: int, wide: int, programs: int, compute_units: int
                     ) -> bool:  # fmt: skip
    """Whether a launch of `programs` takes no more waves on `wide`-key blocks than on `narrow`
    ones, `held` giving the programs an SM holds by key block (a wave: that many an SM)."""
    if narrow not in held or wide not in held or compute_units < 1:
        return False
    waves = {n: -(-programs // (held[n] * compute_units)) for n in (narrow, wide)}
    return waves[wide] <= waves[narrow]


GQA_BALANCED_BLOCK_BYTES = 32768  # K + V of one key block: 64 keys at head dim 128 in bf16
GQA_BALANCED_WIDE_BLOCK_N = 64  # the most keys a block of a 32- or 64-row balanced program
GQA_BALANCED_STAGES = 3  # two blocks in flight beside the one the dots use
GQA_BALANCED_MAX_WAVES = 2  # the grid: at most twice the wave `resident_programs_per_sm` counts


def gqa_balanced_tile(block_h: int, head_dim: int, itemsize: int) -> tuple[int, int, bool]:
    """(block_n, num_stages, page_prefetch) of a balanced GQA program: key blocks of 32 KB of
    K and V (64 keys at head dim 128, 128 at 64), at most 64 keys on tiles of 32 and 64
    rows, 3 stages, page ids a block ahead. H200 (docs/perf.md session 28, every combination
    of programs x block_n x stages x prefetch; with `gqa_balanced_programs`' grid, against 2
    stages without prefetch on one wave, the defaults before). 16 rows (llama3-8b, gpt-oss,
    llama3-70b-tp8 at qlen 1, ragged and one-long batches): within 2.4% of each batch's best
    combination; llama3-8b 240.1 -> 179.4 us ragged, 305.0 -> 243.5 one-long; gpt-oss
    111.4 -> 100.5, 183.3 -> 136.9; llama3-70b-tp8 42.0 -> 34.5, 52.8 -> 43.6; three stages
    of 64 KB blocks lost 10-60% (past ~70 KB of shared memory a program, fewer fit an SM).
    32 and 64 rows (qlen 4 and 8; 32-key blocks before): within 4.3% of the best, gpt-oss
    qlen 4 200.3 -> 128.4 / 320.4 -> 199.0 (128-key blocks 4-6% slower than 64),
    llama3-70b-tp8 qlen 4 49.3 -> 45.4 / 64.8 -> 62.0, llama3-8b qlen 8 288.7 -> 233.4 /
    456.4 -> 363.6, gpt-oss qlen 8 ragged 182.7 -> 138.9, llama3-70b-tp8 qlen 8 ragged 63.2
    -> 47.1."""
    block_n, stages, prefetch = gqa_long_split_tile(head_dim, itemsize)
    if block_h > MIN_DOT:
        block_n = min(block_n, GQA_BALANCED_WIDE_BLOCK_N)
    return block_n, stages, prefetch


def gqa_long_split_tile(head_dim: int, itemsize: int) -> tuple[int, int, bool]:
    """(block_n, num_stages, page_prefetch) of long uniform GQA splits
    (`gqa_long_split_count`): the balanced tile's 32 KB key blocks, 3 stages and page ids a
    block ahead, at every row height (the balanced tile's 64-key cap at 32 and 64 rows does
    not apply: gpt-oss at qlen 4, 65,536 x 1 on 32 splits, 45.2 us on 128-key blocks, 58.1 on
    64; docs/perf.md session 30)."""
    keys = GQA_BALANCED_BLOCK_BYTES // (2 * next_pow2(head_dim) * itemsize)
    return min(256, max(MIN_DOT, prev_pow2(max(1, keys)))), GQA_BALANCED_STAGES, True


# Programs of the balanced tile an H200 SM holds at once, by (rows, head dim), in 16-bit types
# (`tools/inspect_gqa.py`, sm_90, checked by tests/test_gqa_compiled.py): 16 rows 156 registers
# and 70 KB of shared memory; 32 rows 194-196 registers at head dim 128, 128 registers and 40 KB
# at 64; 64 rows 255 registers and 112 KB at 128.
GQA_BALANCED_RESIDENCY = {(16, 64): 3, (16, 128): 3, (32, 64): 4, (32, 128): 2, (64, 64): 3,
                          (64, 128): 2}  # fmt: skip


def gqa_balanced_residency(block_h: int, head_dim: int, itemsize: int) -> int | None:
    """Programs of `gqa_balanced_tile`'s tile one SM holds (GQA_BALANCED_RESIDENCY), or None
    where it was not compiled (other head dims, 32-bit types)."""
    return _residency(GQA_BALANCED_RESIDENCY, block_h, head_dim, itemsize)


def _residency(table: dict, block_h: int, head_dim: int, itemsize: int) -> int | None:
    """`table`'s entry for a tile: the tables hold 16-bit builds, keyed by (rows, head dim
    padded to a power of two)."""
    if itemsize != 2:
        return None
    return table.get((block_h, next_pow2(head_dim)))


def gqa_balanced_programs(key_blocks: int, groups: int, wave_per_sm: int, compute_units: int,
                          min_blocks: int, batch: int, resident: int | None) -> int:  # fmt: skip
    """The balanced GQA grid's num_programs per kv head and head block (`groups` of them):
    enough that each program streams `min_blocks` (the device's `gqa_balanced_min_blocks`;
    10 on the H200) of the batch's `key_blocks` (per kv head), as whole programs an SM, from
    one to `GQA_BALANCED_MAX_WAVES` waves of `wave_per_sm`. H200 (session 28): llama3-8b
    and gpt-oss (8 kv heads, 4 an SM a wave) best at 8 an SM, 132 a kv head (1,349-3,575
    key blocks a kv head, 10-27 a program; 16 an SM from -1% to +6%); llama3-70b-tp8 (one
    kv head) at 2 an SM, 264 (10-13 blocks a program; 4 an SM lost 14-15%, 8 23-28%).

    Where that grid is between half a wave and one wave of the programs an SM holds
    (`resident`, `gqa_balanced_residency`), the launch fills exactly one: the kernel launches
    num_programs + `batch` programs a group (a share that crosses a request's end becomes
    two), so num_programs is the wave less the batch. H200 (session 29, llama3-70b-tp8): 32
    rows (2 an SM, 264 a wave) ragged 264 -> 256 programs 45.1 -> 39.0 us, one-long (48
    requests) 264 -> 216 62.5 -> 54.7 (520, two waves: 50.7 / 65.2); 16 rows (3 an SM, 396)
    ragged 264 -> 388 34.5 -> 33.9, one-long 264 -> 348 43.8 -> 41.6 (388 there, 436
    launched, past the wave: 44.9). Grids of several waves keep the rule above (llama3-8b
    qlen 8 at 2 an SM: whole launched waves 227.6 against 233.5 us ragged, 384.1 against
    363.5 one-long).

    Small batches (fewer than `min_blocks` blocks a program at one wave) take at least that
    wave, as far as their key blocks go (a block a program), and the fill only where it
    shrinks the grid by a third at most: a share that crosses a request's end becomes two, so
    where the batch is half the wave the fill doubles every share while the pieces it saves
    are short. And a grid of one group (one kv head and head block) whose batch is at most a
    third of the wave is one launched wave however many blocks it has. H200 (docs/perf.md
    session 35, v0.2.36 -> v0.2.37): llama3-70b-tp8, 4-64 requests of 100-65,536 keys, 132
    programs (one an SM) -> 332-392, -9 to -25% (48 of 100-4,000 29.5 -> 23.3 us); 327,600
    keys beside 47 short ones 660 -> 348, 76.6 -> 66.3 (qlen 4, 32 rows: 660 -> 216, 105.3 ->
    85.3); 16 of 16k-48k 792 -> 380, 82.2 -> 72.6. At 8 kv heads, 32 requests of 100-2,000
    keys 17 programs a kv head (the fill from 33) -> 49: llama3-8b 54.4 -> 44.2, gpt-oss 37.3
    -> 30.2; 16 of 500-8,000 keep the fill (gpt-oss 33 programs 56.6 us, 49 59.2). Not taken:
    one wave for 128 and 256 requests at qlen 4 (84.6 -> 90.2, 108.9 -> 114.6), and at 8 kv
    heads a wave of 3 an SM for larger batches (8 an SM measured best, session 35 call 3)."""
    programs = max(1, key_blocks // min_blocks)
    per_sm = min(GQA_BALANCED_MAX_WAVES * wave_per_sm, programs * groups // compute_units)
    programs = max(1, max(1, per_sm) * compute_units // groups)
    if resident is None:
        return programs
    wave = resident * compute_units // groups
    programs = max(programs, min(wave, key_blocks))
    if groups == 1 and 3 * batch <= wave:
        programs = min(programs, wave)  # then filled: one launched wave
    if wave // 2 <= programs <= wave and 3 * (wave - batch) >= 2 * programs:
        return min(wave - batch, max(programs, key_blocks))  # grown, a block a program at most
    return programs


def gqa_balanced_grid(lengths: Sequence[int] | None, keys: int, batch: int, groups: int,
                      block_h: int, head_dim: int, itemsize: int, wave_per_sm: int,
                      compute_units: int, min_blocks: int) -> int:  # fmt: skip
    """num_programs of a balanced GQA plan on `gqa_balanced_tile` (per kv head and head block,
    `groups` of them): `gqa_balanced_programs` over the batch's key blocks of that tile, each
    request's `lengths` (or `keys` each, where unknown) clipped to `keys`."""
    block_n = gqa_balanced_tile(block_h, head_dim, itemsize)[0]
    if lengths:  # with a window a request reads only the keys it can see
        key_blocks = as_host_lengths(lengths).clipped(keys).key_blocks(block_n)
    else:
        key_blocks = batch * (-(-keys // block_n))
    resident = gqa_balanced_residency(block_h, head_dim, itemsize)
    return gqa_balanced_programs(key_blocks, groups, wave_per_sm, compute_units, min_blocks,
                                 batch, resident)  # fmt: skip


# Programs of `gqa_long_split_tile`'s uniform kernel an H200 SM holds, by (rows, head dim), in
# 16-bit types: the fewest of the models' builds (`tools/inspect_gqa.py --batch uniform`, sm_90,
# checked by tests/test_gqa_compiled.py, which allows the compile more). 16 rows: 128-164
# registers, 70 KB of shared memory; 32 rows: 2 an SM, the GPU's one-split builds (168-196
# registers, 2-3 an SM: docs/perf.md session 46; the long-split compile at head dim 128 holds 3
# since v0.2.55 reads values at the keys' row offsets, and the planner's rules at 3 ran 6%
# slower on the plans it moved); 64 rows: 186-230 registers, 104-112 KB.
GQA_LONG_SPLIT_RESIDENCY = {(16, 64): 3, (16, 128): 3, (32, 64): 2, (32, 128): 2, (64, 64): 2,
                            (64, 128): 2}  # fmt: skip
GQA_UNIFORM_MIN_BLOCKS = 8  # key blocks a uniform split streams before the long-split tile pays
GQA_LONG_SPLIT_MAX_BYTES = 4 << 20  # K + V of a split past which the uniform tile streams as well


GQA_SHARED_OFFSETS_THIN_32 = 1.5  # programs an SM a 32-row one split needs for them


def gqa_kv_offsets_shared(balanced: bool, head_dim: int, block_h: int, one_split: bool,
                          programs: int = 0, compute_units: int = 0) -> bool:  # fmt: skip
    """Whether GQA stage 1 reads a key block's values at its keys' row offsets, computed once,
    where the key and value caches share strides (`KV_SAME_STRIDES`): on the balanced schedule,
    and on uniform splits from head dim 128 at 32-64 rows or on one split, but a 32-row one
    split only where its launch (`programs` over `compute_units` SMs) holds 1.5 programs an SM.
    H200 (docs/perf.md session 46), against two sets of offsets: balanced 23 of 24 special
    batches faster (geomean 0.973; gpt-oss qlen 8 one-long 194.8 -> 180.5 us, llama3-8b qlen 8
    ragged 212.7 -> 204.2); uniform at head dim 128 on one split or 32-64 rows mostly 1-9%
    faster (qwen-64-8 qlen 4 31 x 1,296 49.7 -> 46.6). The 32-row one split at 8 kv heads
    spills 2 registers with them: from 1.6 programs an SM 2.5-7% faster, under 1.1 4.9-6.9%
    slower (qwen-64-8 qlen 4 12 x 600 16.0 -> 17.1), between level to +4%. Several 16-row
    splits ran 0.5-2.6% slower (llama3-70b-tp8 8 x 131,072 sharing, plain, 95.8 -> 100.7), and
    uniform head dim 64 up to 4.4%, where the GPU's 32-row one-split build takes 196 registers
    (2 an SM) against 136 (3)."""
    if balanced:
        return True
    if next_pow2(head_dim) < 128:
        return False
    if one_split and block_h == 32:
        return programs >= GQA_SHARED_OFFSETS_THIN_32 * compute_units
    return block_h >= 32 or one_split


def gqa_long_split_residency(block_h: int, head_dim: int, itemsize: int) -> int | None:
    """Programs of the long-split tile one SM holds (GQA_LONG_SPLIT_RESIDENCY), or None where
    it was not compiled (other head dims, 32-bit types)."""
    return _residency(GQA_LONG_SPLIT_RESIDENCY, block_h, head_dim, itemsize)


def gqa_long_split_count(num_splits: int, keys: int, programs_a_split: int,
                         resident: int | None, compute_units: int, block_n: int,
                         key_bytes: int, may_halve: bool,
                         min_blocks: int = GQA_UNIFORM_MIN_BLOCKS) -> int | None:  # fmt: skip
    """The split count at which uniform GQA splits take `gqa_long_split_tile`'s tile, or None
    where they keep the uniform tile (2 stages, no page ids ahead) and `num_splits`. The
    launch (`num_splits` x `programs_a_split`: requests x kv heads x head blocks) must fit one
    wave of what an SM holds of that tile (`resident`); where it does not and the split count
    is the planner's (`may_halve`), the count halves until it does. Each split of the longest
    request (`keys`) must then stream at least 8 blocks of `block_n` keys (`min_blocks`; the
    one split `gqa_one_split_pays` chose takes the tile however short) and at most 4 MiB of K
    and V (`key_bytes` a key).

    H200 (docs/perf.md sessions 29 and 30, v0.2.31 against v0.2.30; the defaults launch ~512
    programs, the tile holds 2-3 an SM, so the launch halves to 256): llama3-70b-tp8 at batch
    1 (256 programs, no halving) 131,072 x 1 28.8 -> 24.2 us at 16 rows, 30.9 -> 26.8 at 32,
    34.3 -> 29.7 at 64; on half the splits 131,072 x 2 41.7 -> 39.4 (16 rows) and 54.8 -> 44.6
    (32), 65,536 x 4 63.9 -> 46.0 (64); llama3-8b 131,072 x 2 258.9 -> 245.8, 65,536 x 1 at 32
    rows 87.7 -> 82.4; gpt-oss at 32 rows 65,536 x 1 62.8 -> 45.2 and 131,072 x 2 213.7 ->
    167.2, at 64 rows 131,072 x 1 99.9 -> 91.9; lost: 16 rows at batch 1, gpt-oss 131,072 x 1
    71.8 -> 73.7, llama3-8b 262,144 x 1 254.8 -> 257.0. Left out: splits of 4 blocks
    (llama3-70b-tp8 65,536 x 1 13.6 -> 13.4) and of 8-16 MiB (131,072 x 8 halved: llama3-8b
    1,026 -> 1,065 us at qlen 4, gpt-oss 518 -> 583-660 at qlen 1), where 512 uniform programs
    already stream at ~90% of the ceiling."""
    if resident is None:
        return None
    wave = resident * compute_units
    splits = num_splits
    while may_halve and splits > 1 and splits * programs_a_split > wave:
        splits //= 2
    split_keys = -(-keys // splits)
    fits = splits * programs_a_split <= wave
    long_enough = split_keys >= min_blocks * block_n
    short_enough = split_keys * key_bytes <= GQA_LONG_SPLIT_MAX_BYTES
    return splits if fits and long_enough and short_enough else None


# A uniform GQA split's K and V bytes against the fp32 partials it writes (and the merge reads
# back): at least this many times more, where the cap leaves the launch a program an SM.
GQA_SPLIT_KV_OVER_PARTIALS = 8


def gqa_partials_split_cap(keys: int, page_keys: int, group_rows: int, itemsize: int,
                           partial_itemsize: int, batch: int, compute_units: int
                           ) -> int:  # fmt: skip
    """The most default uniform splits of a GQA launch of one kv head and head block: each
    split of the longest request (`keys`, counted in whole planner pages of `page_keys`, as
    the fill rule counts them) reads at least 8 times the bytes of K and V (2 x `itemsize` a
    key and head dim) that its rows (`group_rows`) write as partials (`partial_itemsize`
    each), so that the merge's traffic stays small beside stage 1's; but never below the
    count whose launch (`batch` programs a split) reaches a program an SM (`compute_units`),
    as a power of two. The fill rule counts programs, not partial bytes: at 32-64 rows it
    split 16k keys 128 ways, each split writing half of what it reads.

    H200 (docs/perf.md session 41, llama3-70b-tp8, v0.2.44 -> v0.2.45 and pinned counts):
    qlen 8 4 x 16,384 23.3 -> 16.5 us (128 -> 32 splits), 8 x 8,192 23.0 -> 17.4, 16 x 4,096
    21.9 -> 17.2, 1 x 32,768 13.7 -> 12.4 (256 -> 128; 64, the cap alone, 14.8: half the SMs
    idle); qlen 4 4 x 16,384 19.1 -> 16.1, 8 x 8,192 19.3 -> 16.1; slower at qlen 4 32 x
    2,000 18.6 -> 20.2 (8 splits of 250 keys take 32-key blocks: `gqa_wide_tile`'s 4 blocks a
    split; on 64-key blocks 17.3). Over 118 batches of pinned counts (4 models, qlen 1-8;
    `call3/cap_rules.py`) the default's geometric mean over each batch's best fell from 1.034
    to 1.019. At 8 kv heads the cap was mixed: 32 rows
    7-10% faster (llama3-8b qlen 8 8 x 1,024 18.8 -> 17.4 us), 64 rows at head dim 64 6-9%
    slower (gpt-oss qlen 8 8 x 2,048 18.4 -> 19.5, 16 x 1,024 18.7 -> 20.0), so it applies
    at one kv head only. Whole pages: keys counted as they are, 2,000 at 16-32 rows capped a
    power of two lower (2,000 / 256 = 7.8 -> 4) and lost 5-6% (qlen 4 48 x 2,000 27.9 us
    against 26.6 on 8; qlen 2 32 x 2,000 14.4 against 13.6 on 16)."""
    pages = -(-keys // page_keys)
    split_partials = GQA_SPLIT_KV_OVER_PARTIALS * group_rows * partial_itemsize
    cap = prev_pow2(max(1, pages * page_keys * 2 * itemsize // split_partials))
    return max(cap, prev_pow2(max(1, compute_units // batch)))


# One uniform split, by (rows, head dim), at any number of kv heads: the fewest programs, as a
# share of the SMs (one split lost below it: gpt-oss at qlen 8 8 x 1,024, 64 programs, 12.0 -> 13.7
# us; at qlen 4 10 x 1,024, 80 programs, 12.4 -> 13.7); the most programs an SM: a wave of the
# build the one split runs (64 rows at head dim 64: the deep 64-key build, 4; 32 rows: the
# long-split tile, 2), at 64 rows and head dim 128 one and a half waves of its builds' 2 (one
# split faster there: qwen-64-8 at qlen 8 48 x 384, 384 programs, 47.4 -> 37.7 us; 40 x 1,024
# 78.2 -> 77.7); and the most K and V bytes a program streams (one split lost past them:
# gpt-oss at qlen 4 12 x 2,048, 512 KiB, 25.0 -> 26.6 us; llama3-8b at qlen 8 16 x 1,024, 512
# KiB, 27.8 -> 29.4; qwen-64-8 at qlen 8 12 x 2,048, 1 MiB, 37.1 -> 37.9; 48 x 2,048, 1 MiB
# at 1.45 waves, 10% slower; docs/perf.md session 43).
# 16 rows (session 44): 0.7 of the SMs, a wave of the long-split tile's 3, 512 KiB at head dim
# 64 and 384 at 128 (gpt-oss at qlen 1 8 x 1,024, 64 programs, 9.0 -> 11.0 us; llama3-8b at
# qlen 1 12 x 2,048, 1 MiB, 31.8 -> 40.9; at head dim 128 and 512 KiB level on average over 8
# batches, -4.0 to +5.2%: qwen-64-8 at qlen 1 18 x 1,024 27.1 -> 28.5).
# Since session 45 the bytes rise with the share of the SMs in steps (fill, most bytes): a
# thinner launch takes one split only where its programs are shorter, as the splits it would
# take instead fit more of a wave. Below 0.7-0.75 of the SMs (docs/perf.md session 45, 80-96
# programs against the planner's default): one split 8-25% faster at 128-192 KiB; at 16 rows
# level at 256 KiB at head dim 64, 4-6% slower at 225 KiB at head dim 128 below 0.7 of the SMs
# and 5-7% faster at 210-320 KiB from 0.7 (93-98 programs), 2-7% slower there at 350-384 KiB;
# ragged lengths take the first step of several at most at GQA_ONE_SPLIT_THIN_RAGGED. Ragged,
# one split ran 5.6-42.4% faster than the balanced schedule in 20 of 20 batches and 2.8-24.7%
# slower than 8 uniform splits in 7 of 7 (calls 3-5 and 8): at 16 rows and head dim 64 the
# planner's alternative turns from the first to the second at about 900 keys (the fill rule's
# 8 splits), where the cap sits.
GQA_ONE_SPLIT_TILES = {
    (16, 64): (3, ((0.6, 256 << 10), (0.75, 512 << 10))),
    (16, 128): (3, ((0.6, 192 << 10), (0.7, 320 << 10), (0.75, 384 << 10))),
    (32, 64): (2, ((0.6, 192 << 10), (0.7, 384 << 10))),
    (32, 128): (2, ((0.6, 192 << 10), (0.7, 384 << 10))),
    (64, 64): (4, ((0.6, 512 << 10),)),
    (64, 128): (3, ((0.6, 512 << 10),)),
}  # (programs an SM at most, steps)
GQA_ONE_SPLIT_THIN_RAGGED = 224 << 10  # 896 keys at head dim 64


def gqa_one_split_pays(programs: int, keys: int, block_h: int, head_dim: int, itemsize: int,
                       compute_units: int, ragged: bool = False) -> bool:  # fmt: skip
    """Whether a uniform GQA launch runs fastest on one split (any number of kv heads): its
    `programs` (requests x kv heads x head blocks) give at least 0.6 of the SMs
    (`compute_units`) a program and at most 2-4, and each streams at most so many bytes of K
    and V (`keys`, the longest request's, of `head_dim` in `itemsize` bytes), a cap that
    rises with the share of the SMs (GQA_ONE_SPLIT_TILES): 512 KiB at 64 rows; at 32 rows 192
    KiB from 0.6, 384 from 0.7; at 16 rows and head dim 64 256 KiB from 0.6 (224 where
    `ragged`), 512 from 0.75; at 16 rows and head dim 128 192 KiB from 0.6, 320 from 0.7,
    384 from 0.75. Such programs are short: a second split
    halves them but adds the merge's launch and its wait for the partials, which one split
    writes as the output itself. Within a wave of the long-split tile the one split takes it
    however short (`gqa_tile_for`'s `short_split_keys`): two 32 KB blocks in flight a
    program, where the wide tile's deep build has two of 16 KB.

    H200 (docs/perf.md session 43, the default before against one split, 2 rounds). 64 rows on
    the deep build (v0.2.48): of 38 changed plans timed, all faster, by 0.4-40%: gpt-oss at qlen
    8 12 x 1,024 18.6 -> 13.6 us (8 splits), 48 x 2,048 81.6 -> 70.0, 44 x 900 46.0 -> 35.7;
    qwen-64-8 at qlen 8 16 x 1,024 29.2 -> 23.5, 12 x 900 33.3 -> 20.0. On the long-split tile
    (v0.2.49, calls 5-6: of 39 held-out changed plans, 37 faster, by 1.1-45.5%, one level):
    gpt-oss at qlen 8 13 x 600 14.1 -> 9.7 (4 splits), 32 x 600 17.8 -> 14.1 (one split on the
    deep build); qwen-64-8 at qlen 8 14 x 200 11.8 -> 8.7; 32 rows: gpt-oss at qlen 4 28 x 512
    18.5 -> 11.3, 30 x 900 29.3 -> 22.0; qwen-64-8 at qlen 4 28 x 384 28.8 -> 15.7; llama3-8b at
    qlen 8 30 x 384 26.4 -> 16.9, 14 x 500 17.4 -> 13.5. Slower: gpt-oss at qlen 8 18 x 300 9.0
    -> 9.6 (3 blocks of 128 keys, the last a third full, against 5 of 64), and at qlen 4 10 x
    1,024 12.4 -> 13.7 (80 programs: 32 rows now need 0.7 of the SMs). Past the wave the second
    wave's programs run alone (qwen-64-8 at qlen 8 48 x 2,048, 384 programs at 2 an SM: one
    split 10% slower; gpt-oss at qlen 4 40 x 1,024, 320 programs on the long-split tile, 32.8 ->
    37.8). Ragged batches (call 7, against the balanced schedule or the fill rule's count): 11
    of 12 faster, by 5.7-40.9% (gpt-oss at qlen 8 32 x 100-1,000 31.6 -> 19.3; qwen-64-8 at qlen
    8 32 x 100-600 37.9 -> 22.4; llama3-8b at qlen 8 32 x 100-600 35.5 -> 23.0), gpt-oss at qlen
    8 12 x 500-2,000 3.9% slower; held out (call 8, v0.2.50 against v0.2.49), 12 of 13 faster,
    by 0.9-34.1% (gpt-oss at qlen 8 40 x 100-800 34.4 -> 23.6, at qlen 4 32 x 100-700 22.6 ->
    14.9; qwen-64-8 at qlen 8 49 x 512, 1.5 waves, 56.3 -> 46.9), gpt-oss at qlen 8 20 x
    50-2,000 1.5% slower.

    16 rows (session 44, the fill rule's 2-8 splits or the balanced schedule against one
    split on the long-split tile). Call 1: 128-256 programs at up to 512 KiB 1.3-35% faster
    in 13 of 13 (gpt-oss at qlen 1 32 x 256 10.1 -> 6.6 us, 16 x 512 10.2 -> 7.3, 24 x 768
    15.7 -> 12.2; llama3-8b at qlen 1 24 x 512 20.6 -> 15.9, at qlen 4 24 x 768 30.3 -> 24.3;
    qwen-64-8 at qlen 1 24 x 512 21.2 -> 16.2). Held out (call 2): at head dim 64 10 of 11
    faster, by 4.4-35.5% (gpt-oss at qlen 1 28 x 640 16.9 -> 10.9, 48 x 256 12.5 -> 8.2, 13 x
    1,024 12.9 -> 11.2; ragged, from the balanced schedule, at qlen 2 30 x 50-800 19.7 ->
    13.0, at qlen 1 24 x 100-1,500 21.7 -> 20.2), 18 x 900 1.4% slower; at head dim 128 and
    up to 450 KiB 7 of 7 faster, by 1.3-31% (llama3-8b at qlen 1 28 x 400 20.0 -> 13.8, at
    qlen 4 13 x 900 22.3 -> 20.4; qwen-64-8 at qlen 2 22 x 600 23.1 -> 20.0), at 500-512 KiB
    level (8 batches, -4.0 to +5.2%; ragged llama3-8b at qlen 1 20 x 100-1,000 22.2 -> 23.6):
    hence 384 KiB there.

    One kv head (llama3-70b-tp8, session 44 call 4, 96-200 requests, where the default was
    the fill rule's 2-4 splits under the partials cap): within the same bounds 9 of 9 faster
    or level, by 0-35.7% (qlen 1 200 x 300 14.2 -> 10.6 us, 128 x 768 19.9 -> 16.9, 96 x 512
    level; qlen 2 160 x 700 26.0 -> 21.4; qlen 4 200 x 384 23.5 -> 15.1; qlen 8 96 x 1,024
    24.2 -> 21.9); outside them, qlen 1 100 x 100-1,500 (750 KiB, ragged) 31.5% slower and 80
    x 512 (0.6 of the SMs) 3.8%. Held out (call 5), 11 of 12 changed plans faster, by
    3.5-31.1% (qlen 1 300 x 256 16.7 -> 11.5; ragged qlen 2 140 x 100-600 20.9 -> 14.8, qlen
    8 100 x 100-1,000 27.2 -> 19.6), qlen 1 96 x 768 5.6% slower (96 programs are the edge at
    every kv-head count). Over 160 seeded random batches of the four models (call 6) the
    session's rules changed 27 plans of v0.2.50, 26 faster by 2.3-52.1%, one level.

    Thin launches (session 45 call 2, 80-96 programs, the fill rule's 2-8 splits against one
    split): at 16 rows one split 8-25% faster at 128-192 KiB (gpt-oss at qlen 1 10 x 512 8.1 ->
    7.0 us, 12 x 768 10.4 -> 9.2; qwen-64-8 at qlen 1 11 x 256 9.4 -> 7.1; llama3-70b-tp8 at
    qlen 1 88 x 384 10.5 -> 9.1), -10 to +4% at 256 KiB (llama3-70b-tp8 80 x 512 10.7 -> 11.1,
    gpt-oss 12 x 1,024 12.6 -> 11.3), 3-29% slower at 384 KiB below 96 programs and at head
    dim 128 (gpt-oss 10 x 1,536 11.9 -> 15.3; llama3-70b-tp8 96 x 768 14.4 -> 15.1, qwen-64-8
    12 x 768 14.5 -> 15.5); at 32 rows (gpt-oss at qlen 4) 1-13% faster at 128-192 KiB (10 x
    512 9.5 -> 8.4) and mixed at 256 KiB (10 x 1,024 12.6 -> 13.9, 11 x 1,024 15.4 -> 13.8).
    Held out (call 3, v0.2.53's default against one split, or one split against the fill
    rule from 0.7 to 0.75 of the SMs): 16 rows faster by 3.4-23.8% at 150-225 KiB at head dim
    64 and 150-200 KiB at 128 (gpt-oss at qlen 1 10 x 600 9.6 -> 8.1; llama3-8b at qlen 2 10 x
    300 10.5 -> 8.0; llama3-70b-tp8 at qlen 1 84 x 300 10.3 -> 8.1), but at head dim 128 and
    225 KiB slower (qwen-64-8 at qlen 2 11 x 450 +3.7%, llama3-70b-tp8 at qlen 2 90 x 450
    +5.6%), and ragged at head dim 64 (gpt-oss at qlen 1 11 x 200-1,000 9.4 -> 11.2, against
    8 uniform splits); ragged from the balanced schedule faster (llama3-70b-tp8 at qlen 1 82
    x 100-500 12.0 -> 10.8; gpt-oss at qlen 1 12 x 242-770, 192.5 KiB, call 4: 11.9 -> 10.2);
    93-98 programs at 16 rows back on the fill rule at 300-450 KiB level or faster (-3.2 to
    +0.7%, qwen-64-8 at qlen 2 12 x 640 +4.6%); 32 rows faster by 0.9-14.9% (gpt-oss at qlen 4
    11 x 640 11.4 -> 9.7, ragged 10 x 300-750 13.0 -> 11.1). At 32 rows and head dim 128
    (llama3-8b at qlen 8, qwen-64-8 at qlen 4; fitted, call 3) one split 10.7-22.8% faster at
    128-192 KiB (10 x 256 10.4 -> 8.3, 11 x 384 12.1 -> 10.8; ragged 11 x 200-380 14.4 ->
    10.7), level at 256 KiB (10 x 512 +3.9%, 11 x 512 0.0%). Held out (call 4, v0.2.53's
    default against the rules above but for the ragged cap): 13 targeted changed plans
    faster by 3.4-31.7% (llama3-8b at qlen 8 11 x 192 10.4 -> 7.1; llama3-70b-tp8 at qlen 1 86
    x 100-380 11.8 -> 8.9); of 24 seeded random changed plans 17 faster by 2.8-33.3% (gpt-oss
    at qlen 2 10 x 153 7.2 -> 4.8, at qlen 1 12 x 121-1,461 15.5 -> 11.6), 4 within 2%, 3
    slower: gpt-oss 12 x 242-770 (above), and at 96 programs and head dim 128 past 256 KiB
    (llama3-8b at qlen 4 12 x 531 12.1 -> 12.8, qwen-64-8 at qlen 1 12 x 563 12.0 -> 12.6: at
    0.7-0.75 of the SMs and head dim 128 one split's edge lies near 300 KiB)."""
    tile = _residency(GQA_ONE_SPLIT_TILES, block_h, head_dim, itemsize)
    if tile is None or programs > tile[0] * compute_units:
        return False
    steps = tile[1]
    reached = [most for fill, most in steps if programs >= fill * compute_units]
    if not reached:
        return False
    most_bytes = reached[-1]
    if ragged and len(reached) == 1 < len(steps):  # the first of several steps only
        most_bytes = min(most_bytes, GQA_ONE_SPLIT_THIN_RAGGED)
    return keys * 2 * head_dim * itemsize <= most_bytes


GQA_SHORT_SPLIT_FEW_BLOCKS = 2  # long-split blocks a short one split halves at any height
GQA_SHORT_SPLIT_TALL_BLOCKS = 4  # ... and at 64 rows


def gqa_short_split_block(keys: int, block_n: int, block_h: int) -> int:
    """The long-split tile's key block for a one split of `keys` (`gqa_one_split_pays`) at
    `block_h` rows: half its `block_n` where the half blocks pad fewer keys (the last block
    at most half full) and the split holds at most 2 blocks (at 64 rows 4), else `block_n`.
    Three stages hold two blocks in flight beside the one the dots use: a split of 2 blocks
    leaves the pipeline idle, one of 3-4 half blocks keeps it busy.

    H200 (docs/perf.md sessions 44-45), the long-split block against its half. 64 rows at
    head dim 64 (gpt-oss at qlen 8), 128 -> 64 keys: 18 x 300 9.6 -> 9.2 us, 20 x 320 9.8 ->
    9.3, 30 x 300 10.1 -> 9.5, held out 14 x 300 7.2 -> 6.9; slower where the last 128-key
    block is more than half full (24 x 256 7.8 -> 8.3, 26 x 330 9.9 -> 10.5). At head dim 128
    (qwen-64-8 at qlen 8), 64 -> 32 keys: 16 x 140 7.6 -> 6.5. Splits of 2 blocks at 16 rows
    (session 45 call 1): gpt-oss at qlen 1 16 x 140 5.2 -> 5.0, 20 x 180 6.2 -> 5.8, at qlen 2
    40 x 135 7.7 -> 7.0; qwen-64-8 at qlen 2 16 x 70 5.1 -> 4.7; 32 rows, qwen-64-8 at qlen 4
    20 x 75 7.7 -> 7.2; gpt-oss at qlen 4 level in call 1 (16 x 140 +1.7%, 30 x 150 -2.6%),
    then 2.6-5.4% faster in 6 of 6 (calls 2 and 8: 28 x 135 7.8 -> 7.4, 33 x 190 7.8 ->
    7.4). Splits of 3-4 blocks below 64 rows ran slower on half blocks however empty their
    last block (gpt-oss at qlen 1 14 x 400 +6.8%, at qlen 4 20 x 400 +12.5%; llama3-8b at
    qlen 1 24 x 200 +5.5%)."""
    half = block_n // 2
    blocks = -(-keys // block_n)
    pads_less = -(-keys // half) * half < blocks * block_n
    most = GQA_SHORT_SPLIT_TALL_BLOCKS if block_h >= 64 else GQA_SHORT_SPLIT_FEW_BLOCKS
    return half if half >= 2 * MIN_DOT and blocks <= most and pads_less else block_n


def gqa_tile_for(balanced: bool, block_h: int, head_dim: int, itemsize: int, num_splits: int,
                 keys: int, programs_a_split: int, compute_units: int, may_halve: bool,
                 short_split_keys: int | None = None,
                 ) -> tuple[tuple[int, int, bool] | None, int, int | None]:  # fmt: skip
    """The GQA tile a plan takes where the caller left its block shape to the planner on a
    measured device: (tile, num_splits, resident). Balanced programs take
    `gqa_balanced_tile` (resident: `gqa_balanced_residency`, for their grid); uniform splits
    take `gqa_long_split_tile` where `gqa_long_split_count` gives them a split count, which
    replaces `num_splits`, splits of any length where `short_split_keys` is given (the one
    split of `gqa_one_split_pays`, its longest request's keys: `gqa_short_split_block` sizes
    its blocks); else the tile is None (the uniform tile's own rules apply)."""
    if balanced:
        tile = gqa_balanced_tile(block_h, head_dim, itemsize)
        return tile, num_splits, gqa_balanced_residency(block_h, head_dim, itemsize)
    tile = gqa_long_split_tile(head_dim, itemsize)
    short_splits = short_split_keys is not None
    if short_splits:
        tile = (gqa_short_split_block(short_split_keys, tile[0], block_h), *tile[1:])
    min_blocks = 1 if short_splits else GQA_UNIFORM_MIN_BLOCKS
    splits = gqa_long_split_count(num_splits, keys, programs_a_split,
                                  gqa_long_split_residency(block_h, head_dim, itemsize),
                                  compute_units, tile[0], 2 * head_dim * itemsize,
                                  may_halve, min_blocks)  # fmt: skip
    if splits is None:
        return None, num_splits, None
    return tile, splits, None
