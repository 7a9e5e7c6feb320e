"""The GQA tile rules as functions of their inputs, without a plan around them: where uniform
splits take the long-split tile, and how far the planner's split count halves for it."""

from splitkv.gqa_tile_rules import (
    GQA_LONG_SPLIT_MAX_BYTES,
    GQA_UNIFORM_MIN_BLOCKS,
    gqa_long_split_count,
    gqa_long_split_residency,
    gqa_long_split_tile,
    gqa_tile_for,
    gqa_wide_tile,
)

KEY_BYTES = 2 * 128 * 2  # K + V of a key at head dim 128 in bf16


def count(num_splits, keys, programs_a_split, resident=3, may_halve=True, block_n=64):
    return gqa_long_split_count(num_splits, keys, programs_a_split, resident, 132, block_n,
                                KEY_BYTES, may_halve)  # fmt: skip


def test_a_launch_within_the_wave_keeps_its_splits():
    assert count(256, 131072, 1) == 256  # 256 programs, 8 blocks a split
    assert count(256, 131072, 1, resident=2) == 256  # 264 a wave


def test_a_launch_past_the_wave_halves_until_it_fits():
    assert count(64, 131072, 8) == 32  # 512 -> 256 programs of 4,096 keys
    assert count(256, 131072, 2) == 128
    assert count(1024, 262144, 1, resident=2) == 256  # halved twice: 1,024 -> 512 -> 256


def test_a_callers_count_is_not_halved():
    assert count(64, 131072, 8, may_halve=False) is None
    assert count(32, 131072, 8, may_halve=False) == 32


def test_splits_must_stream_8_blocks_and_at_most_4_mib():
    shortest = GQA_UNIFORM_MIN_BLOCKS * 64
    assert count(256, 256 * shortest, 1) == 256
    assert count(256, 256 * shortest - 256, 1) is None  # 7.9 blocks a split
    longest = GQA_LONG_SPLIT_MAX_BYTES // KEY_BYTES  # 8,192 keys
    assert count(8, 4 * longest, 64) == 4  # 512 -> 256 programs of 8,192 keys
    assert count(8, 4 * longest + 4, 64) is None  # a key past 4 MiB a split
    assert count(8, 131072 * 2, 32) is None  # 256 programs of 32,768 keys: 16 MiB


def test_an_unmeasured_tile_keeps_the_uniform_one():
    assert count(64, 131072, 8, resident=None) is None
    assert gqa_long_split_residency(16, 128, 4) is None  # fp32
    assert gqa_long_split_residency(16, 256, 2) is None  # head dim 256
    assert gqa_long_split_residency(32, 96, 2) == gqa_long_split_residency(32, 128, 2)


def test_the_long_split_tile_moves_32_kb_a_block_at_every_height():
    assert gqa_long_split_tile(128, 2) == (64, 3, True)
    assert gqa_long_split_tile(64, 2) == (128, 3, True)  # no 64-key cap at 32 and 64 rows
    # Balanced programs keep theirs (capped at 64 keys past 16 rows) and their residency.
    assert gqa_tile_for(True, 32, 64, 2, 64, 131072, 8, 132, True) == ((64, 3, True), 64, 4)
    # Uniform splits: the long-split tile on the count it allows, or none and the count kept.
    assert gqa_tile_for(False, 32, 64, 2, 64, 131072, 8, 132, True) == ((128, 3, True), 32, None)
    assert gqa_tile_for(False, 16, 128, 2, 8, 131072, 64, 132, True) == (None, 8, None)


def test_the_wide_tile_takes_64_keys_at_head_dim_64_and_128_on_3_stages_at_128():
    # H200, session 39: 32 rows of gpt-oss (head dim 64) 5-13% faster on 64-key blocks than
    # on 128; 32 rows at head dim 128 3-39% slower, so they keep 128, on 3 stages where one
    # split writes the output (-6 to -12%; 1% slower on more splits, which keep 2).
    assert gqa_wide_tile(32, 64, False, 65536) == (64, 4, None)
    assert gqa_wide_tile(32, 128, False, 65536, one_split=True) == (128, 4, 3)
    assert gqa_wide_tile(32, 128, False, 65536) == (128, 4, None)
    assert gqa_wide_tile(32, 64, False, 65536, one_split=True) == (64, 4, None)
    assert gqa_wide_tile(64, 64, False, 65536) == (64, 4, None)  # 4,096 scores: 64 already
    # 64 rows at head dim 64 (gpt-oss at qlen 8) on one split: 3-5% faster on 3 stages
    # (session 40); on 2 and 8 splits 3% slower.
    assert gqa_wide_tile(64, 64, False, 65536, one_split=True) == (64, 4, 3)
    assert gqa_wide_tile(64, 128, False, 65536, True) == (64, 4, None)  # 64 rows: unmeasured
    assert gqa_wide_tile(32, 256, False, 65536, True) == (64, 4, None)  # 3 x 64 KB: no room
    assert gqa_wide_tile(32, 64, False, 128) == (32, 4, None)  # 4 blocks a split bound it
    assert gqa_wide_tile(32, 64, True, 65536) == (None, 4, None)  # the balanced tile's rule
