"""The uniform GQA split count against its tile's real waves (splitkv/gqa_uniform_waves.py):
halved where the fill rule's launch passes one wave of the tabled tiles' residency by a tail,
kept within a wave, past 1.75 waves, on the taller tiles at head dim 128, ragged lengths and a
caller's count."""

import torch

import splitkv
from splitkv.bench.shapes import GQA_MODELS
from splitkv.gqa_uniform_waves import (
    equal_lengths,
    gqa_uniform_residency,
    gqa_uniform_split_count,
)

H200 = splitkv.DeviceSpec.preset("h200")


def test_a_launch_past_one_wave_by_a_tail_halves_once():
    # 660 programs a wave (5 an SM, 132 SMs).
    assert gqa_uniform_split_count(16, 48, 5, 132) == 8  # 768 programs, 1.16 waves
    assert gqa_uniform_split_count(8, 112, 5, 132) == 4  # 896, 1.36
    assert gqa_uniform_split_count(16, 40, 5, 132) == 16  # 640 fit one wave
    assert gqa_uniform_split_count(16, 64, 4, 132) == 16  # 1,024 on 528: 1.94 waves
    assert gqa_uniform_split_count(2, 352, 5, 132) == 1  # 704 on 660
    assert gqa_uniform_split_count(1, 900, 5, 132) == 1  # one split stays
    assert gqa_uniform_split_count(16, 48, None, 132) == 16  # a tile not tabled


def test_the_residency_table_keys_the_builds():
    assert gqa_uniform_residency(16, 128, 1, 8, 2) == 5  # llama3-8b, qwen-64-8, mha-32
    assert gqa_uniform_residency(16, 128, 1, 1, 2) == 4  # llama3-70b-tp8
    assert gqa_uniform_residency(16, 64, 1, 8, 2) == 4  # gpt-oss unpacked
    assert gqa_uniform_residency(16, 64, 2, 8, 2) == 4  # gpt-oss packed
    assert gqa_uniform_residency(32, 64, 1, 8, 2) == 5  # gpt-oss at qlen 4
    assert gqa_uniform_residency(32, 128, 1, 8, 2) is None  # 2 an SM: not tabled
    assert gqa_uniform_residency(64, 64, 1, 8, 2) == 4  # gpt-oss at qlen 8
    assert gqa_uniform_residency(64, 128, 1, 8, 2) is None
    assert gqa_uniform_residency(16, 128, 1, 8, 4) is None


def test_lengths_given_and_equal():
    assert equal_lengths([7]) and equal_lengths([7, 7, 7])
    assert not equal_lengths([7, 8])
    assert not equal_lengths([])  # a CUDA graph's plan: its replays' lengths are not known


def plan(model, qlen, batch, keys, lengths=None, **knobs):
    heads, kv_heads, head_dim, _ = GQA_MODELS[model]
    return splitkv.plan_decode(batch, keys, heads, qlen=qlen, kind="gqa", num_kv_heads=kv_heads,
                               head_dim=head_dim, page_size=16, dtype=torch.bfloat16,
                               device="meta", device_spec=H200, seq_lens=lengths,
                               **knobs)  # fmt: skip


def test_the_planner_halves_launches_past_one_wave_of_the_16_row_tile():
    # H200 (docs/perf.md session 51): 6 x 65,536 463.2 -> 364.7 us on 8 splits, not 16.
    halved = plan("llama3-8b", 1, 6, 65552, [65536] * 6)
    assert (halved.num_splits, halved.split_num_stages, halved.block_h) == (8, 2, 16)
    # Lengths not given (a CUDA graph's plan, replayed with ragged lengths): the fill rule's
    # count, whose programs stream the longest request in the most pieces.
    assert plan("llama3-8b", 1, 6, 65552).num_splits == 16
    # 640 programs fit a wave of 5 an SM: 16 splits stay (half ran 7% slower).
    assert plan("llama3-8b", 1, 5, 65552, [65536] * 5).num_splits == 16
    # gpt-oss packs two kv heads a program (4 an SM): 640 programs pass a wave of 528.
    packed = plan("gpt-oss", 1, 10, 83344, [83317] * 10)
    assert (packed.kv_pack, packed.num_splits) == (2, 8)


def test_gpt_oss_at_qlen_4_halves_past_one_wave_of_its_32_row_tile():
    # 5 an SM at head dim 64 (H200, docs/perf.md session 40: 48 x 4,000 on one split 153.8 ->
    # 140.8 us, 48 x 2,048 80.6 -> 74.9): 768 programs on 2 splits are 1.16 waves of 660.
    one = plan("gpt-oss", 4, 48, 4016, [4000] * 48)
    assert (one.block_h, one.num_splits, one.whole_pieces) == (32, 1, True)
    # 640 programs fit a wave: 2 splits stay (one split lost 41%).
    assert plan("gpt-oss", 4, 40, 4016, [4000] * 40).num_splits == 2


def test_gpt_oss_at_qlen_8_halves_past_one_wave_of_its_64_row_tile():
    # 4 an SM (H100, docs/perf.md session 56: 42 x 4,000 166.4 -> 141.3 us on one split, 18 x
    # 32,768 568.1 -> 512.6 on 2): 672 programs on 2 splits are 1.27 waves of 528.
    one = plan("gpt-oss", 8, 42, 4016, [4000] * 42)
    assert (one.block_h, one.num_splits, one.whole_pieces) == (64, 1, True)
    assert plan("gpt-oss", 8, 18, 32784, [32768] * 18).num_splits == 2
    # 512 programs fit a wave: 4 splits stay (2 lost 17.5%).
    assert plan("gpt-oss", 8, 16, 32784, [32768] * 16).num_splits == 4


def test_ragged_tall_and_pinned_launches_keep_their_splits():
    ragged = plan("llama3-8b", 1, 6, 65552, [65536] * 5 + [60000])
    assert ragged.schedule != "uniform" or ragged.num_splits == 16
    # qwen-64-8 at qlen 4: 32-row tiles, 2 an SM, their launches take 2-4 waves.
    assert plan("qwen-64-8", 4, 6, 65552, [65536] * 6).num_splits == 16
    assert plan("llama3-8b", 1, 6, 65552, [65536] * 6, num_splits=16).num_splits == 16
