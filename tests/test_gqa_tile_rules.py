"""The GQA tile rules as functions of their inputs, without a plan around them: where uniform
splits take the long-split tile, how far the planner's split count halves for it, the cap a kv
head's partials put on it, and which builds read values at the keys' row offsets."""

import torch

import splitkv
from splitkv.gqa_tile_rules import (
    GQA_LONG_SPLIT_MAX_BYTES,
    GQA_UNIFORM_MIN_BLOCKS,
    gqa_kv_offsets_shared,
    gqa_long_split_count,
    gqa_long_split_residency,
    gqa_long_split_tile,
    gqa_one_split_pays,
    gqa_partials_split_cap,
    gqa_short_split_block,
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


def cap(keys, rows, batch, itemsize=2, partial_itemsize=4):
    return gqa_partials_split_cap(keys, 128, rows, itemsize, partial_itemsize, batch, 132)


def test_splits_read_8_times_the_partials_they_write():
    assert cap(16384, 64, 4) == 32  # 512 keys a split: 128 KB of K + V, 16 KB of partials
    assert cap(16384, 32, 4) == 64
    assert cap(16384, 64, 4, partial_itemsize=2) == 64  # bf16 partials weigh half
    assert cap(16384, 64, 4, itemsize=4) == 64  # fp32 K + V weigh twice
    assert cap(131072, 8, 1) == 2048  # 8 rows: far above any count the fill rule makes


def test_the_cap_counts_whole_planner_pages():
    assert cap(2000, 32, 48) == 8  # 16 pages of 128 keys: 2,048 / 256, not 2,000 / 256 = 7.8
    assert cap(2048, 32, 48) == 8
    assert cap(1900, 32, 48) == 4  # 15 pages


def test_the_cap_keeps_a_program_an_sm():
    assert cap(32768, 64, 1) == 128  # the cap alone says 64: 64 programs on 132 SMs
    assert cap(4096, 64, 1) == 128
    assert cap(4096, 64, 200) == 8  # 200 programs a split: the cap alone


def plan(batch, keys, qlen, heads=8, kv_heads=1, lengths=None, head_dim=128, **knobs):
    # `lengths`: the requests' (default `keys` each); `keys` is the table's width.
    return splitkv.plan_decode(batch, keys, heads, qlen=qlen, kind="gqa", num_kv_heads=kv_heads,
                               head_dim=head_dim, page_size=16, dtype=torch.bfloat16,
                               device="meta",
                               device_spec=splitkv.DeviceSpec.preset("h200"),
                               seq_lens=lengths or [keys] * batch, **knobs)  # fmt: skip


def test_the_planner_caps_one_kv_heads_tall_splits_only():
    # llama3-70b-tp8 (8 heads, one kv head) at qlen 8: 64 rows, one head block.
    assert plan(4, 16384, 8).num_splits == 32  # the fill rule alone: 128
    assert plan(4, 16384, 4).num_splits == 64
    assert plan(4, 16384, 1).num_splits == 128  # 8 rows: not capped
    assert plan(4, 16384, 8, num_splits=128).num_splits == 128  # a caller's count stands
    # 8 kv heads keep the fill rule's count (the cap was mixed there).
    assert plan(8, 1024, 8, heads=32, kv_heads=8).num_splits == 8


def wide(split_keys, programs, head_dim=128, rows=32, **kwargs):
    return gqa_wide_tile(rows, head_dim, False, split_keys, programs=programs, compute_units=132,
                         **kwargs)[0]  # fmt: skip


def test_the_wide_tile_keeps_2_blocks_a_split_where_that_adds_no_wave():
    # 250 keys a split: 32-key blocks at 4 a split, 64 at 2. 32 rows at head dim 128 hold 4 an
    # SM on 32-key blocks and 3 on 64 (H200, 132 SMs: waves of 528 and 396).
    assert wide(250, 384) == 64  # one wave of either
    assert wide(250, 512) == 32  # one wave of 32-key blocks, two of 64
    assert wide(250, 768) == 64  # two of either
    assert wide(250, 1000) == 32  # two of 32-key blocks, three of 64
    assert wide(500, 256) == 128 and wide(500, 300) == 64  # 128 keys hold 2 an SM
    assert wide(160, 384) == 64 and wide(256, 200) == 128  # 2 blocks a split (32 and 64 at 4)
    assert wide(127, 100) == 32  # 2 blocks of 32 keys
    assert wide(250, 5000, head_dim=64) == 64  # 5 an SM either way
    assert wide(250, 512, rows=64) == 32 and wide(250, 256, rows=64) == 64
    # Without the launch (an unmeasured device), in 32-bit types, or on one 3-stage split: 4.
    assert gqa_wide_tile(32, 128, False, 250) == (32, 4, None)
    assert wide(250, 384, itemsize=4) == 32
    assert gqa_wide_tile(32, 128, False, 500, True, programs=8, compute_units=132) == (64, 4, 3)


def test_the_planner_gives_the_wide_tile_its_launch():
    # llama3-70b-tp8 at qlen 4: 8 splits of 2,000 keys; 256 programs at 32 requests, 512 at 64.
    assert plan(32, 2000, 4).block_n == 64
    assert plan(64, 2000, 4).block_n == 32


def one_split(programs, keys, rows=64, head_dim=64):
    return gqa_one_split_pays(programs, keys, rows, head_dim, 2, 132)


def test_one_split_where_its_launch_fills_the_sms_within_a_wave():
    # 64 rows at head dim 64 (gpt-oss at qlen 8): the deep build holds 4 an SM.
    assert one_split(80, 300) and one_split(80, 1024) and one_split(528, 2048)
    assert not one_split(64, 1024)  # 8 requests: under 0.6 of the SMs a program each
    assert not one_split(529, 1024)  # past the wave
    assert not one_split(128, 2049)  # past 512 KiB of K and V a program
    # 64 rows at head dim 128 (qwen-64-8 at qlen 8): 1.5 waves of 2 an SM, 1,024 keys at most.
    assert one_split(396, 1024, head_dim=128) and not one_split(397, 1024, head_dim=128)
    assert not one_split(128, 1025, head_dim=128)
    # 32 rows: 0.7 of the SMs to a wave of the long-split tile (2 an SM), 384 KiB at most.
    assert one_split(264, 1536, rows=32) and not one_split(265, 1024, rows=32)
    assert one_split(93, 1024, rows=32) and not one_split(92, 1024, rows=32)
    assert not one_split(128, 1537, rows=32)
    assert one_split(128, 768, rows=32, head_dim=128)
    assert not one_split(128, 769, rows=32, head_dim=128)
    # ... thinner launches from 0.6 of the SMs at 192 KiB at most.
    assert one_split(80, 768, rows=32) and not one_split(80, 769, rows=32)
    assert not one_split(79, 512, rows=32)
    assert one_split(80, 384, rows=32, head_dim=128)  # and at head dim 128
    assert not one_split(80, 385, rows=32, head_dim=128)
    # 16 rows: 0.75 of the SMs to a wave of the long-split tile (3 an SM), 512 KiB at most;
    # thinner launches from 0.6 of the SMs at 256 KiB at most.
    assert one_split(99, 2048, rows=16) and not one_split(98, 1025, rows=16)
    assert one_split(80, 1024, rows=16) and not one_split(79, 512, rows=16)
    # At head dim 128: 192 KiB from 0.6 of the SMs, 320 from 0.7, 384 from 0.75.
    assert one_split(92, 384, rows=16, head_dim=128)
    assert not one_split(92, 385, rows=16, head_dim=128)
    assert one_split(96, 640, rows=16, head_dim=128)
    assert not one_split(96, 641, rows=16, head_dim=128)
    assert not one_split(96, 768, rows=16, head_dim=128)  # 384 KiB: 5-7% slower there
    assert one_split(99, 768, rows=16, head_dim=128)
    # Ragged thin launches: 224 KiB at most (8 uniform splits won at 250 KiB).
    assert not gqa_one_split_pays(80, 1024, 16, 64, 2, 132, ragged=True)
    assert gqa_one_split_pays(80, 896, 16, 64, 2, 132, ragged=True)
    assert gqa_one_split_pays(99, 1024, 16, 64, 2, 132, ragged=True)  # not thin
    assert gqa_one_split_pays(80, 384, 16, 128, 2, 132, ragged=True)
    assert gqa_one_split_pays(80, 768, 32, 64, 2, 132, ragged=True)
    assert one_split(396, 768, rows=16, head_dim=128)  # 384 KiB at head dim 128
    assert not one_split(397, 256, rows=16) and not one_split(128, 2049, rows=16)
    assert not one_split(128, 769, rows=16, head_dim=128)
    # Not measured: 32-bit types.
    assert not gqa_one_split_pays(128, 1024, 64, 64, 4, 132)


def test_a_short_one_split_halves_its_block_where_that_pads_fewer_keys():
    assert gqa_short_split_block(300, 128, 64) == 64  # 5 blocks of 64 keys, not 3 of 128
    assert gqa_short_split_block(320, 128, 64) == 64  # the last 128-key block half full
    assert gqa_short_split_block(200, 128, 64) == 128  # 256 keys either way: fewer blocks
    assert gqa_short_split_block(256, 128, 64) == 128
    assert gqa_short_split_block(600, 128, 64) == 128  # past 4 blocks
    assert gqa_short_split_block(140, 64, 64) == 32  # head dim 128: 64-key blocks halve too
    assert gqa_short_split_block(300, 64, 64) == 64  # 5 blocks of 64 keys: past 4
    # Below 64 rows a split of at most 2 blocks halves them (3 stages: 2 blocks in flight).
    assert gqa_short_split_block(140, 128, 16) == 64  # 3 blocks of 64, not 2 of 128
    assert gqa_short_split_block(70, 64, 32) == 32  # head dim 128
    assert gqa_short_split_block(50, 128, 16) == 64  # one block: the half pads fewer keys
    assert gqa_short_split_block(200, 128, 16) == 128  # 256 keys either way
    assert gqa_short_split_block(300, 128, 32) == 128  # 3 blocks: slower on 5 half blocks
    assert gqa_short_split_block(20, 32, 16) == 32  # 16-key blocks: not measured


def test_the_planner_takes_one_split_at_several_kv_heads():
    qwen_64_8 = {"heads": 64, "kv_heads": 8}  # head dim 128, 64 rows at qlen 8
    assert plan(12, 1024, 8, **qwen_64_8).num_splits == 1  # the fill rule alone: 2
    assert plan(8, 1024, 8, **qwen_64_8).num_splits == 8  # 64 programs
    assert plan(12, 1024, 8, num_splits=4, **qwen_64_8).num_splits == 4  # a caller's count
    assert plan(12, 1024, 8, **qwen_64_8).whole_pieces  # one split writes the output
    # Within a wave of the long-split tile the one split takes it however short (4 blocks of
    # 64 keys at head dim 128, 3 stages, page ids ahead).
    short = plan(12, 256, 8, **qwen_64_8)
    assert (short.num_splits, short.block_n, short.split_num_stages) == (1, 64, 3)
    assert short.page_prefetch
    assert plan(40, 256, 8, **qwen_64_8).num_splits == 1  # 320 programs: 1.2 waves of 2 an SM
    assert plan(52, 256, 8, **qwen_64_8).num_splits > 1  # 416: past 1.5 waves

    # Ragged lengths: uniform, one split, where the longest request's program is short.
    short = plan(32, 2048, 8, lengths=[1024, 100] * 16, **qwen_64_8)
    assert (short.schedule, short.num_splits) == ("uniform", 1)
    long = plan(32, 2048, 8, lengths=[1025, 100] * 16, **qwen_64_8)  # past 512 KiB a program
    assert long.num_splits > 1 or long.schedule == "balanced"
    balanced = plan(32, 2048, 8, lengths=[1024, 100] * 16, schedule="balanced", **qwen_64_8)
    assert balanced.schedule == "balanced"  # the caller's
    # One kv head (llama3-70b-tp8): one split within the same bounds, else its cap.
    assert plan(128, 1024, 8).num_splits == 1
    assert plan(64, 1024, 8).num_splits > 1  # 64 programs


def test_the_planner_takes_one_split_at_16_rows():
    gpt_oss = {"heads": 64, "kv_heads": 8, "head_dim": 64}  # 8 rows a kv head at qlen 1
    assert plan(16, 1024, 1, **gpt_oss).num_splits == 1  # the fill rule alone: 4
    assert plan(8, 1024, 1, **gpt_oss).num_splits > 1  # 64 programs
    llama3_8b = {"heads": 32, "kv_heads": 8}  # head dim 128, 16 rows a kv head at qlen 4
    one = plan(24, 768, 4, **llama3_8b)
    assert (one.block_h, one.num_splits, one.block_n, one.split_num_stages) == (16, 1, 64, 3)
    assert plan(16, 1024, 4, **llama3_8b).num_splits > 1  # 512 KiB a program


def test_a_short_one_split_takes_half_blocks_where_they_pad_fewer_keys():
    gpt_oss = {"heads": 64, "kv_heads": 8, "head_dim": 64}  # 64 rows a kv head at qlen 8
    assert plan(18, 300, 8, **gpt_oss).block_n == 64
    assert plan(16, 256, 8, **gpt_oss).block_n == 128
    ragged = plan(18, 2048, 8, lengths=[300, 100] * 9, **gpt_oss)  # the longest request's
    assert (ragged.num_splits, ragged.block_n) == (1, 64)
    # Below 64 rows a split of at most 2 blocks (v0.2.53): gpt-oss at qlen 1, llama3-8b at qlen 1.
    assert plan(16, 140, 1, **gpt_oss).block_n == 64  # 3 blocks of 64, not 2 of 128
    assert plan(16, 300, 1, **gpt_oss).block_n == 128  # 3 blocks of 128: kept
    assert plan(24, 80, 1, heads=32, kv_heads=8).block_n == 32  # head dim 128: 64 -> 32 keys


def test_thin_launches_take_one_split_only_over_short_programs():
    gpt_oss = {"heads": 64, "kv_heads": 8, "head_dim": 64}  # 8 rows a kv head at qlen 1
    # 10 requests: 80 programs, 0.6 of the SMs; 256 KiB a program at most (1,024 keys).
    assert plan(10, 1024, 1, **gpt_oss).num_splits == 1
    assert plan(10, 1040, 1, **gpt_oss).num_splits > 1
    # Ragged, 224 KiB (896 keys) at most: the balanced schedule's batches, not 8 splits'.
    ragged = plan(10, 2048, 1, lengths=[880, 200] * 5, **gpt_oss)
    assert (ragged.schedule, ragged.num_splits) == ("uniform", 1)
    wider = plan(10, 2048, 1, lengths=[960, 100] * 5, **gpt_oss)
    assert wider.num_splits > 1
    # One kv head at head dim 128 (llama3-70b-tp8): 192 KiB from 0.6 of the SMs, 320 from 0.7.
    assert plan(88, 384, 1, heads=8).num_splits == 1
    assert plan(88, 400, 1, heads=8).num_splits > 1
    assert plan(96, 640, 1, heads=8).num_splits == 1
    assert plan(96, 768, 1, heads=8).num_splits > 1


def test_values_at_the_keys_offsets_where_the_builds_ran_faster():
    # balanced everywhere; uniform from head dim 128 on one split or 32-64 rows; not several
    # 16-row splits (0.5-2.6% slower), nor uniform at head dim 64 (docs/perf.md session 46).
    # The uniform 32-row one split decides on its launch (below).
    for head_dim in (64, 128):
        for block_h in (16, 32, 64):
            assert gqa_kv_offsets_shared(True, head_dim, block_h, False)
    assert gqa_kv_offsets_shared(False, 128, 16, True)
    assert gqa_kv_offsets_shared(False, 96, 32, False)  # 96 pads to the 128-wide tile
    assert gqa_kv_offsets_shared(False, 256, 64, False)
    assert not gqa_kv_offsets_shared(False, 128, 16, False)
    assert not gqa_kv_offsets_shared(False, 64, 32, True)
    assert not gqa_kv_offsets_shared(False, 64, 16, True)
    # A 32-row one split (its build spills 2 registers with them) from 1.5 programs an SM.
    assert gqa_kv_offsets_shared(False, 128, 32, True, 198, 132)
    assert not gqa_kv_offsets_shared(False, 128, 32, True, 197, 132)
    assert gqa_kv_offsets_shared(False, 128, 64, True, 72, 132)
