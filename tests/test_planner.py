"""The planner is plain Python: seed 001's table, its exceptions and the plan's knobs, testable
without the devices it plans for."""

import dataclasses
import functools
import itertools

import pytest
import torch

import splitkv
from splitkv import DeviceSpec, num_partitions
from splitkv.bench.shapes import GQA_ONE_LONG, GQA_RAGGED  # the bench's ragged GQA batches
from splitkv.plan_rules import (
    default_merge_d_split,
    merge_rows_for,
    narrow_merge_rows,
    narrow_rows_merge_slicing,
    one_wave_merge_slicing,
    wide_merge_slicing,
)

MI355X = DeviceSpec.preset("mi355x")
H200 = DeviceSpec.preset("h200")

# Seed 001's Phase-0 sweep, MLA-style at 64 heads on MI355X.
SEED_001_TABLE = [
    (1, 131072, 128),
    (2, 65536, 64),
    (2, 80000, 64),
    (2, 131072, 128),
    (8, 80000, 32),
    (8, 131072, 32),
    (16, 131072, 16),
]


@pytest.mark.parametrize("batch,num_keys,expected", SEED_001_TABLE)
def test_seed_001_table(batch, num_keys, expected):
    assert num_partitions(batch, num_keys, 64, MI355X, is_mla=True) == expected


def test_presets():
    for name in ("h100", "h200", "b200", "mi300x", "mi355x"):
        spec = DeviceSpec.preset(name)
        assert spec.compute_units > 0 and spec.l2_bytes > 0 and spec.hbm_bytes_per_s > 0
    assert MI355X.l2_domains == 8 and H200.l2_domains == 1 and H200.compute_units == 132
    assert DeviceSpec.preset("MI355X") == MI355X
    with pytest.raises(ValueError, match=r"^name: expected one of"):
        DeviceSpec.preset("a100")


def test_cpu_spec():
    spec = DeviceSpec.from_torch("cpu")
    assert spec.compute_units >= 1 and spec.l2_domains == 1


@pytest.mark.gpu
def test_spec_read_off_the_gpu():
    spec = DeviceSpec.from_torch(torch.device("cuda"))
    props = torch.cuda.get_device_properties(0)
    assert spec.compute_units == props.multi_processor_count
    if "H200" in props.name:
        assert spec.hbm_bytes_per_s == H200.hbm_bytes_per_s


def test_small_head_counts_take_two_waves():
    # 16 rows on MI355X at batch 4: one program per request and split; two waves = 128 splits,
    # where 32 rows (no exception) stop at one wave (64).
    assert num_partitions(4, 32768, 16, MI355X, is_mla=True) == 128
    assert num_partitions(4, 32768, 32, MI355X, is_mla=True) == 64
    # Batch 1: two waves (512) clamp to the merge's cap.
    assert num_partitions(1, 131072, 12, MI355X, is_mla=True) == 256


def test_short_contexts_are_page_limited():
    # 8192 keys are 32 planner pages: never more splits than pages.
    assert num_partitions(1, 8192, 64, MI355X, is_mla=True) == 32
    assert num_partitions(1, 1, 64, MI355X, is_mla=True) == 1
    assert num_partitions(3, 0, 12, H200, is_mla=True) == 1


def test_mha_branch():
    # Low occupancy: wave-aligned like MLA, capped at 64.
    assert num_partitions(1, 131072, 8, MI355X) == 64
    # A single kv head splits on a finer floor (128 keys) and takes two waves.
    assert num_partitions(4, 4096, 1, MI355X) == 32
    assert num_partitions(4, 4096, 2, MI355X) == 16
    # High occupancy (one partition fills the GPU): few partitions.
    assert num_partitions(64, 131072, 8, MI355X) == 1
    assert num_partitions(40, 131072, 8, MI355X) == 1
    # 16 kv heads at batch 8 are 128 programs: two waves are 4 splits.
    assert num_partitions(8, 131072, 16, MI355X) == 4
    # From a full unsplit wave with >= 8 pages: pages // 8 splits, capped at 32 from batch 8.
    assert num_partitions(16, 131072, 16, MI355X) == 32
    assert num_partitions(16, 8192, 16, MI355X) == 4


@pytest.mark.parametrize("spec", [MI355X, H200, DeviceSpec.preset("b200")], ids=lambda s: s.name)
@pytest.mark.parametrize("is_mla", [True, False])
def test_result_is_a_bounded_power_of_two(spec, is_mla):
    cap = spec.tunables.max_splits if is_mla else spec.tunables.mha_max_splits
    for batch in (1, 2, 3, 7, 8, 48, 128, 1000):
        for heads in (1, 8, 12, 16, 64, 128, 1024):
            for keys in (1, 255, 4097, 68096, 327600, 10**7):
                n = num_partitions(batch, keys, heads, spec, is_mla=is_mla)
                assert 1 <= n <= cap and n & (n - 1) == 0, (batch, heads, keys, n)


def test_device_argument_forms():
    assert num_partitions(2, 131072, 64, "mi355x", is_mla=True) == 128
    assert num_partitions(2, 4096, 16, "cpu", is_mla=True) >= 1
    with pytest.raises(TypeError, match=r"^device: expected"):
        num_partitions(2, 4096, 16, 42, is_mla=True)


@pytest.mark.parametrize(
    "kwargs,argument",
    [
        ({"batch_size": 0}, "batch_size"),
        ({"num_keys": -1}, "num_keys"),
        ({"heads_per_group": 0}, "heads_per_group"),
        ({"batch_size": 2.5}, "batch_size"),
    ],
)
def test_num_partitions_rejects_bad_arguments(kwargs, argument):
    args = {"batch_size": 2, "num_keys": 1024, "heads_per_group": 16, "device": H200}
    args.update(kwargs)
    with pytest.raises(ValueError, match=rf"^{argument}: expected"):
        num_partitions(**args)


def test_plan_knobs_follow_the_design():
    plan = splitkv.plan_decode(8, 68096, 16, device="cpu", device_spec=H200, dtype=torch.float16)
    assert plan.num_splits == num_partitions(8, 68096, 16, H200, is_mla=True)
    assert plan.grid_order == "split_major"  # one L2 domain: always valid
    assert plan.block_h == 16 and plan.num_head_blocks == 1
    assert plan.merge_block_s == min(256, plan.num_splits)
    assert plan.workspace.partial_o.shape == (8, 16, plan.num_splits, 512)
    wide = splitkv.plan_decode(2, 4096, 128, qlen=2, device="cpu", device_spec=H200)
    assert wide.block_h == 64 and wide.num_head_blocks == 4
    odd = splitkv.plan_decode(1, 4096, 12, qlen=3, device="cpu", device_spec=H200)
    assert odd.block_h == 64 and odd.num_head_blocks == 1  # 36 rows in one block


def test_split_major_only_where_splits_align_with_l2_domains():
    aligned = splitkv.plan_decode(8, 65536, 12, device="cpu", device_spec=MI355X, num_splits=32)
    assert aligned.grid_order == "split_major"
    unaligned = splitkv.plan_decode(8, 65536, 12, device="cpu", device_spec=MI355X, num_splits=10)
    assert unaligned.grid_order == "batch_major"


@pytest.mark.parametrize(
    "knobs,slicing",
    [
        # 96 rows (batch 8 x 12 heads): one warp a program fits one wave of 16 slices.
        ({"num_splits": 2}, (16, 1)),  # [2, 32] tiles
        ({"num_splits": 16}, (16, 1)),  # [16, 32]
        ({"num_splits": 32}, (16, 1)),  # [32, 64] on 2 warps, halved
        ({"num_splits": 128}, (8, 4)),  # [128, 64]: 2 warps on 16 slices would be two waves
        ({"num_splits": 256}, (8, 4)),
        ({"num_programs": 216}, (16, 1)),  # balanced: 27 partials a row on average at batch 8
        ({"num_programs": 216, "seq_lens": [65536] + [64] * 47, "batch": 48}, (8, 1)),
        ({"num_splits": 256, "merge_num_warps": 8}, (8, 8)),
        ({"num_splits": 32, "merge_d_split": 8}, (8, 2)),
    ],
)
def test_merge_warps_follow_the_tile(knobs, slicing):
    knobs = dict(knobs)
    batch = knobs.pop("batch", 8)
    plan = splitkv.plan_decode(batch, 65536, 12, device="meta",
                               device_spec=DeviceSpec.preset("h200"), **knobs)  # fmt: skip
    assert (plan.merge_d_split, plan.merge_num_warps) == slicing


def test_program_loop_plans():
    h200 = DeviceSpec.preset("h200")
    # The Triton tiles' rules (the Gluon kernels' own: tests/test_warp_specialized.py).
    plan = functools.partial(splitkv.plan_decode, 48, 8192, 12, device="meta", device_spec=h200,
                             warp_specialized=False)  # fmt: skip
    # One program per schedule program: the default grid is one wave of programs (two 16-row
    # programs per SM), not one wave of launched pieces (num_programs + batch).
    assert plan(schedule="balanced", program_loop=True).num_programs == 264
    assert plan(schedule="balanced").num_programs == 264 - 48
    # Default: on for the 32- and 64-row tiles (qlen 2 and 4 at 12 heads), off for 16 rows.
    assert not plan(schedule="balanced").program_loop
    assert plan(schedule="balanced", qlen=2).program_loop
    assert plan(schedule="balanced", qlen=4).program_loop
    assert not plan(qlen=4).program_loop  # uniform splits
    for knobs, error in (
        ({"program_loop": True}, ValueError),  # uniform splits have no pieces
        ({"schedule": "balanced", "program_loop": 1}, TypeError),
        ({"schedule": "balanced", "program_loop": True, "kind": "gqa", "num_kv_heads": 2,
          "head_dim": 128}, ValueError),
    ):  # fmt: skip
        with pytest.raises(error, match=r"^program_loop: "):
            plan(**knobs)


@pytest.mark.triton_3_6
def test_merge_streams_where_a_row_merges_in_one_tile():
    plan = functools.partial(splitkv.plan_decode, 4, 8192, 12, page_size=64, device="meta",
                             device_spec=H200)  # fmt: skip
    assert not plan().merge_streams and plan().workspace.split_flags is None  # opt-in
    streams = plan(num_splits=8, merge_streams=True)
    rows, slices = 12, streams.merge_d_split
    assert streams.workspace.split_flags.shape == (4, rows, slices, 8)
    # "auto" takes uniform splits for it, even where it would run the program loop.
    long_batch = functools.partial(splitkv.plan_decode, 8, 68096, 12, page_size=64,
                                   device="meta", device_spec=H200)  # fmt: skip
    assert long_batch().schedule == "balanced"
    assert long_batch(merge_streams=True).schedule == "uniform"
    for knobs, error in (
        ({"schedule": "balanced"}, ValueError),  # pieces, not splits
        ({"num_splits": 8, "merge_block_s": 4}, ValueError),  # two tiles a row
        ({"num_splits": 8, "merge_d_split": 8}, None),
        ({"kind": "gqa", "num_kv_heads": 2, "head_dim": 128}, ValueError),
        ({"merge_streams": 1}, TypeError),
    ):  # fmt: skip
        knobs = {"merge_streams": True, **knobs}
        if error is None:
            assert plan(**knobs).merge_streams
            continue
        with pytest.raises(error, match=r"^merge_streams: "):
            plan(**knobs)


def test_merge_d_split_backs_off():
    assert default_merge_d_split(512) == 8
    assert default_merge_d_split(64) == 4  # 8 slices would be 8 columns
    assert default_merge_d_split(48) == 2  # 4 slices would be 12 columns
    assert default_merge_d_split(20) == 1  # 20 does not split into slices of 16


def test_one_wave_merges_take_narrow_slices():
    # 16 slices and half the warps while rows x 16 x warps fits 12 warps an SM (H200: 1,584).
    assert one_wave_merge_slicing(512, 8, 4, 12, 132) == (16, 2)  # batch 1, 128 splits
    assert one_wave_merge_slicing(512, 8, 1, 96, 132) == (16, 1)  # 1,536 programs
    assert one_wave_merge_slicing(512, 8, 1, 192, 132) == (8, 1)  # 3,072: two waves
    assert one_wave_merge_slicing(128, 8, 1, 12, 132) == (8, 1)  # 8-column slices: no
    plan = functools.partial(splitkv.plan_decode, page_size=64, dtype=torch.bfloat16,
                             device="meta", device_spec=H200)  # fmt: skip
    narrow = plan(1, 8192, 12)
    assert (narrow.merge_d_split, narrow.merge_num_warps) == (16, 2)
    assert plan(8, 68096, 12, qlen=2).merge_d_split == 8  # 192 rows
    # Either knob given: the other follows its own rule, no halving.
    assert plan(1, 8192, 12, merge_num_warps=4).merge_d_split == 8
    assert plan(1, 8192, 12, merge_d_split=16).merge_num_warps == 4


def test_uniform_merges_of_several_waves_take_wide_slices():
    # Half the slices on twice the warps (up to 4) while rows x slices passes 32 programs an
    # SM (H200: 4,224).
    assert wide_merge_slicing(8, 1, 6144, 132) == (1, 4)  # 128 heads x 48: 49,152
    assert wide_merge_slicing(8, 1, 2048, 132) == (2, 4)  # 128 heads x 16
    assert wide_merge_slicing(8, 1, 1024, 132) == (4, 2)  # 128 heads x 8: 8,192
    assert wide_merge_slicing(16, 2, 12, 132) == (16, 2)  # batch 1: one wave already
    assert wide_merge_slicing(1, 4, 10**6, 132) == (1, 4)  # nothing left to halve
    plan = functools.partial(splitkv.plan_decode, page_size=64, dtype=torch.bfloat16,
                             device="meta", device_spec=H200)  # fmt: skip
    wide = plan(48, 8192, 128)
    assert wide.schedule == "uniform" and (wide.merge_d_split, wide.merge_num_warps) == (1, 4)
    # The balanced merge keeps its slices (wider lost there), as do forced knobs.
    loop = plan(48, 8192, 128, schedule="balanced")
    assert (loop.merge_d_split, loop.merge_num_warps) == (8, 1)
    assert plan(48, 8192, 128, merge_d_split=8).merge_d_split == 8


def test_narrow_rows_merge_in_fewer_slices_on_the_warps_their_tile_takes():
    # GQA rows (64-128 columns): half the slices while rows x slices passes one wave of 32
    # one-warp programs an SM (H200: 4,224), the tile's warps, at most 4,096 elements a warp.
    assert narrow_merge_rows(128) and narrow_merge_rows(64) and not narrow_merge_rows(512)
    assert narrow_rows_merge_slicing(128, 8, 64, 4, 6144, 132) == (1, 1, 32)  # llama3-8b
    assert narrow_rows_merge_slicing(64, 4, 64, 4, 12288, 132) == (1, 1, 64)  # gpt-oss
    assert narrow_rows_merge_slicing(128, 8, 64, 32, 2048, 132) == (2, 2, 64)  # 17 a row
    assert narrow_rows_merge_slicing(128, 8, 1, 1, 6144, 132) == (1, 1, 1)  # one split
    assert narrow_rows_merge_slicing(128, 8, 64, 4, 384, 132) == (8, 1, 64)  # one wave
    gqa = functools.partial(splitkv.plan_decode, kind="gqa", num_kv_heads=8, head_dim=128,
                            qlen=4, device="meta", device_spec=H200)  # fmt: skip
    lengths = [4096 * (i + 1) // 48 for i in range(48)]
    balanced = gqa(48, 4096, 32, seq_lens=lengths, schedule="balanced", merge_rows=1)
    merge = (balanced.merge_d_split, balanced.merge_num_warps, balanced.merge_block_s)
    assert merge == (1, 1, 32)
    uniform = gqa(48, 4096, 32, seq_lens=lengths, schedule="uniform", num_splits=1)
    assert (uniform.merge_d_split, uniform.merge_num_warps) == (1, 1)  # not the wide rule's 4
    # A pinned tile of partials stays; MLA's 512-column rows keep their slicing (their short
    # requests' rows 4 a program by default: the merge sized by partials, test_merge_by_length).
    assert gqa(48, 4096, 32, seq_lens=lengths, schedule="balanced",
               merge_block_s=64).merge_block_s == 64  # fmt: skip
    mla = splitkv.plan_decode(48, 8192, 12, qlen=4, device="meta", device_spec=H200,
                              seq_lens=lengths, schedule="balanced")  # fmt: skip
    assert mla.merge_d_split >= 8 and (mla.merge_long_partials, mla.merge_rows) == (16, 4)


def test_narrow_rows_merge_several_rows_a_program_past_a_wave():
    # GQA rows past one wave of one-row programs (H200: 4,224) fold 2-8 rows of a request a
    # program, each tile of partials within 4,096 elements a warp (docs/perf.md session 38).
    assert merge_rows_for(256, 6144, 32, 128, 1, 132) == (2, 16)  # llama3-8b 48 x qlen 4
    assert merge_rows_for(256, 12288, 64, 64, 1, 132) == (4, 16)  # gpt-oss 48 x qlen 4
    assert merge_rows_for(256, 32768, 64, 64, 1, 132) == (8, 8)  # gpt-oss 128 x qlen 4
    assert merge_rows_for(256, 65536, 64, 128, 1, 132) == (4, 16)  # the tile's bound at 128
    assert merge_rows_for(256, 4096, 64, 64, 1, 132) == (1, 64)  # within one wave
    assert merge_rows_for(12, 12288, 8, 64, 1, 132) == (4, 8)  # a divisor of the rows
    assert merge_rows_for(8, 12288, 4, 64, 1, 132) == (4, 4)  # uniform: 4 splits' tile
    gqa = functools.partial(splitkv.plan_decode, kind="gqa", num_kv_heads=8, head_dim=64,
                            qlen=4, device="meta", device_spec=H200)  # fmt: skip
    lengths = [2048 * (i + 1) // 48 for i in range(48)]
    balanced = gqa(48, 2048, 64, seq_lens=lengths, schedule="balanced")
    assert (balanced.merge_rows, balanced.merge_block_s) == (4, 16)
    assert gqa(48, 2048, 64, seq_lens=lengths, merge_rows=2, schedule="balanced").merge_rows == 2
    with pytest.raises(ValueError, match="merge_rows"):
        gqa(48, 2048, 64, merge_rows=3)
    with pytest.raises(ValueError, match="merge_rows"):
        gqa(48, 2048, 12, merge_rows=8, num_kv_heads=3, qlen=1)  # 12 rows a request
    with pytest.raises(ValueError, match="merge_rows"):
        gqa(48, 2048, 64, merge_rows=16)


def test_explicit_knobs_and_frozen_plan():
    plan = splitkv.plan_decode(
        2,
        4096,
        16,
        device="cpu",
        num_splits=5,
        grid_order="batch_major",
        merge_block_s=1,
        merge_d_split=1,
        block_n=16,
        num_warps=8,
        num_stages=3,
    )
    assert (plan.num_splits, plan.grid_order, plan.merge_block_s, plan.merge_d_split) == (
        5,
        "batch_major",
        1,
        1,
    )
    assert (plan.block_n, plan.split_num_warps, plan.split_num_stages) == (16, 8, 3)
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.num_splits = 3
    assert "num_splits=5" in repr(plan) and "merge_block_s=1" in repr(plan)


@pytest.mark.parametrize(
    "kwargs,argument,error",
    [
        ({"num_splits": 0}, "num_splits", ValueError),
        ({"num_splits": 257}, "num_splits", ValueError),
        ({"grid_order": "row_major"}, "grid_order", ValueError),
        ({"merge_block_s": 3}, "merge_block_s", ValueError),
        ({"merge_d_split": 3}, "merge_d_split", ValueError),
        ({"merge_num_warps": 3}, "merge_num_warps", ValueError),
        ({"merge_num_warps": 16}, "merge_num_warps", ValueError),
        ({"page_size": 0}, "page_size", ValueError),
        ({"page_size": 16385}, "page_size", ValueError),
        ({"qlen": 9}, "qlen", ValueError),
        ({"kind": "mha"}, "kind", ValueError),
        ({"kind": "gqa", "num_kv_heads": 3}, "num_kv_heads", ValueError),
        ({"kind": "gqa", "head_dim": 72}, "head_dim", ValueError),
        ({"num_kv_heads": 2}, "num_kv_heads", ValueError),
        ({"dtype": torch.int8}, "dtype", TypeError),
        ({"block_n": 24}, "block_n", ValueError),
        ({"num_heads": 0}, "num_heads", ValueError),
        ({"schedule": "fair"}, "schedule", ValueError),
        ({"seq_lens": [1, 2, 3]}, "seq_lens", ValueError),  # more lengths than batch_size
        ({"seq_lens": [4097]}, "seq_lens", ValueError),
        ({"seq_lens": [-1]}, "seq_lens", ValueError),
        ({"seq_lens": [1.5]}, "seq_lens", TypeError),
        ({"seq_lens": [7, True]}, "seq_lens", TypeError),  # past the plain-int fast path
        ({"seq_lens": [7, -2]}, "seq_lens", ValueError),
        ({"seq_lens": "12"}, "seq_lens", TypeError),
        ({"seq_lens": torch.ones(2)}, "seq_lens", TypeError),
    ],
)
def test_plan_decode_rejects_bad_arguments(kwargs, argument, error):
    args = {"batch_size": 2, "max_seq_len": 4096, "num_heads": 16, "device": "cpu"}
    args.update(kwargs)
    with pytest.raises(error, match=rf"^{argument}: expected"):
        splitkv.plan_decode(**args)


def test_h200_fill_rule_matches_its_sweep():
    # The best counts of the H200 sweep (benchmarks/results/h200_splits_v0.1.1.*): 16-row
    # programs run two per SM, so a wave is 264 of them; the rule takes the smallest power of
    # two that fills 90% of its last wave.
    assert num_partitions(48, 68096, 12, H200, is_mla=True) == 16  # 768 programs, not 384
    assert num_partitions(16, 327600, 12, H200, is_mla=True) == 16  # 256, not 128
    assert num_partitions(128, 8192, 12, H200, is_mla=True) == 2
    assert num_partitions(8, 68096, 12, H200, is_mla=True) == 32
    # Batch 1 at 8,192 keys: one 64-key block per split, 128 splits (fewer than a full wave).
    assert num_partitions(1, 8192, 12, H200, is_mla=True) == 128
    assert num_partitions(1, 327600, 12, H200, is_mla=True) == 256
    # 64-row programs (128 heads) run one per SM: a wave is 132.
    assert num_partitions(48, 8192, 128, H200, is_mla=True) == 4
    assert num_partitions(128, 8192, 128, H200, is_mla=True) == 1


def test_h200_page_prefetch_where_the_pipeline_ablation_measured_a_gain():
    def plan(batch, keys, heads, **kw):
        return splitkv.plan_decode(batch, keys, heads, device="meta", device_spec=H200,
                                   **{"warp_specialized": False, **kw})  # fmt: skip

    # 16 heads fill the 16-row tile: prefetch with 32-key blocks and 3 stages everywhere
    # (without bulk copies, which take 64-key blocks in 2 stages: the next test).
    full = plan(48, 327600, 16, kv_tma=False)
    assert (full.page_prefetch, full.block_n, full.split_num_stages) == (True, 32, 3)
    # 12 heads: only splits of 256 to 1,536 keys in one wave (batch 1: 256 splits of 1,280).
    assert plan(1, 327600, 12).page_prefetch
    assert not plan(48, 8192, 12).page_prefetch  # 768 programs: three waves
    assert plan(48, 8192, 16).page_prefetch  # a full tile
    # One-block splits never (batch 1 x 8k: 128 splits of 64 keys).
    assert not plan(1, 8192, 12).page_prefetch and not plan(1, 8192, 16).page_prefetch
    long_splits = plan(8, 68096, 12)  # 32 splits of 2,128 keys
    assert (long_splits.page_prefetch, long_splits.block_n, long_splits.split_num_stages) == (
        False,
        64,
        2,
    )
    assert not plan(8, 68096, 128).page_prefetch  # the 64-row tile: not measured to gain
    # GQA's long-split tile (uniform: without lengths the default is balanced, whose tile
    # takes page ids ahead).
    assert not plan(8, 68096, 32, kind="gqa", num_kv_heads=4, schedule="uniform").page_prefetch
    assert plan(8, 68096, 32, kind="gqa", num_kv_heads=4).page_prefetch
    assert plan(8, 68096, 12, page_prefetch=True, kv_tma=False).split_num_stages == 3
    assert not plan(1, 327600, 16, page_prefetch=False).page_prefetch
    # Devices without a measurement keep the single-buffered default.
    assert not splitkv.plan_decode(1, 327600, 16, device="meta", device_spec=MI355X).page_prefetch


@pytest.mark.parametrize("spec", [DeviceSpec.preset("h100"), H200], ids=["h100", "h200"])
def test_balanced_programs_without_bulk_copies_take_two_chains_and_no_look_ahead(spec):
    # H100 (docs/perf.md session 63, run203-run204): at pages 100 / 48 / 4, 16 rows 4-15% and
    # 32 rows 1.6-2.3x faster than one chain with page ids ahead (whose loop spills there).
    # The H200's fitted table predates the rule and takes it from NVIDIA's table.
    ragged = [1, 63, 64, 65, 4096, 4097, 65536, 327600]

    def plan(heads, page_size, qlen=1, **kw):
        kw = {"warp_specialized": False, **kw}
        return splitkv.plan_decode(len(ragged), max(ragged), heads, qlen=qlen,
                                   page_size=page_size, seq_lens=ragged, device="meta",
                                   device_spec=spec, **kw)  # fmt: skip

    assert spec.tunables.balanced_two_chains_rows == 32
    for heads, qlen, rows in [(12, 1, 16), (16, 1, 16), (12, 2, 32), (16, 2, 32)]:
        for page_size in (100, 48, 4):
            two = plan(heads, page_size, qlen)
            assert two.schedule == "balanced" and not two.kv_tma and two.block_h == rows
            tile = (two.latent_chains, two.page_prefetch, two.block_n, two.split_num_stages)
            assert tile == (2, False, 64, 2)
            pinned = plan(heads, page_size, qlen, page_prefetch=True)  # a caller's choice wins
            assert (pinned.latent_chains, pinned.page_prefetch) == (1, True)
            assert plan(heads, page_size, qlen, latent_chains=1).page_prefetch
    # Bulk copies (a page the block divides) keep theirs: two chains with page ids ahead.
    copies = plan(12, 64)
    assert (copies.kv_tma, copies.latent_chains, copies.page_prefetch) == (True, 2, True)
    # Without them at page 64 (as on GPUs without the copy engine), the rule: 1-2% faster.
    assert plan(12, 64, kv_tma=False).latent_chains == 2
    # The 64-row tile keeps one chain (two spill its wgmma accumulators).
    assert plan(12, 100, 4).latent_chains == 1


def test_uniform_32_row_splits_of_512_keys_stream_64_key_blocks():
    # H100 (docs/perf.md session 63, run209): 12 and 16 heads x qlen 2 at page 100, 8-16%
    # faster from 512 keys a split, 4% slower at 256. AMD's tables keep 32-key blocks.
    def plan(batch, keys, heads=12, spec=H200, **kw):
        return splitkv.plan_decode(batch, keys, heads, qlen=2, page_size=100,
                                   seq_lens=[keys] * batch, device="meta", device_spec=spec,
                                   warp_specialized=False, **kw)  # fmt: skip

    for spec in (H200, DeviceSpec.preset("h100")):
        for batch, keys, block_n in [(8, 8192, 32), (48, 8192, 64), (8, 68096, 64)]:
            uniform = plan(batch, keys, spec=spec)
            assert (uniform.schedule, uniform.block_h) == ("uniform", 32)
            assert (uniform.block_n, uniform.split_num_stages) == (block_n, 2), (batch, keys)
        assert plan(48, 8192, spec=spec, block_n=32).block_n == 32  # a caller's block stands
    assert plan(48, 8192, spec=MI355X).block_n == 32


def test_h200_bulk_copies_where_the_pipeline_ablation_measured_a_gain():
    def plan(batch, keys, heads, **kw):
        return splitkv.plan_decode(batch, keys, heads, device="meta", device_spec=H200,
                                   **{"warp_specialized": False, **kw})  # fmt: skip

    # 16-row uniform tiles with splits of 1,024 keys or more: 64-key blocks in 2 stages.
    for batch, keys, heads in ((8, 327600, 16), (1, 327600, 12), (8, 68096, 12), (48, 327600, 12)):
        tma = plan(batch, keys, heads)
        knobs = (tma.kv_tma, tma.block_n, tma.split_num_stages, tma.latent_chains)
        assert knobs == (True, 64, 2, 2), (batch, keys, heads)
    assert plan(8, 327600, 16).page_prefetch  # the prefetch rule is unchanged under TMA
    # Short splits (batch 1 x 68k: 256 of 266 keys; 8k x 48: 16 of 512) keep masked loads.
    assert not plan(1, 68096, 12).kv_tma and not plan(48, 8192, 12).kv_tma
    # Unmeasured or impossible: pages under a block, 32- and 64-row tiles, GQA, explicit
    # block sizes, one latent chain, a device without a measurement.
    for knobs in (
        {"page_size": 32},
        {"qlen": 2},
        {"block_n": 64},
        {"num_stages": 2},
        {"latent_chains": 1},
    ):
        assert not plan(8, 68096, 12, **knobs).kv_tma, knobs
    assert not plan(8, 68096, 128).kv_tma
    assert not plan(8, 68096, 32, kind="gqa", num_kv_heads=4).kv_tma
    assert not splitkv.plan_decode(8, 68096, 12, device="meta", device_spec=MI355X).kv_tma
    assert not plan(8, 68096, 12, dtype=torch.float32).kv_tma  # measured on 16-bit caches
    assert plan(8, 68096, 12, dtype=torch.float16).kv_tma
    assert plan(1, 68096, 12, kv_tma=True).kv_tma  # explicit wins


def test_h200_balanced_programs_take_bulk_copies_where_measured():
    def plan(lengths, **kw):
        return splitkv.plan_decode(len(lengths), max(lengths), 12, device="meta",
                                   device_spec=H200, seq_lens=lengths,
                                   **{"warp_specialized": False, **kw})  # fmt: skip

    # The ragged batch of the schedule ablation: ~1,850 keys per program (v0.2.4: 7.6% faster).
    ragged = plan([1, 63, 64, 65, 4096, 4097, 65536, 327600])
    knobs = (ragged.schedule, ragged.kv_tma, ragged.latent_chains, ragged.block_n)
    assert knobs == ("balanced", True, 2, 64) and ragged.split_num_stages == 2
    assert ragged.page_prefetch  # the balanced prefetch rule is unchanged under TMA
    # Programs of under tma_min_split_keys keys (8 x 300 over 256 programs) keep masked loads,
    # as do the 32- and 64-row tiles (qlen 2 and 4 lost 20-40% with TMA) and a caller's block
    # shape; those of 16 and 32 rows then run two chains without page ids ahead (session 63),
    # the 64-row tile one chain.
    for lengths, knobs, chains in (
        ([300] * 8, {"schedule": "balanced"}, 2),
        ([327600, *range(1, 4096, 89)], {"qlen": 2}, 2),
        ([327600, *range(1, 4096, 89)], {"qlen": 4}, 1),
        ([327600, 1, 2, 3], {"block_n": 64}, 2),
        ([327600, 1, 2, 3], {"kv_tma": False}, 2),
    ):
        short = plan(lengths, **knobs)
        assert short.schedule == "balanced" and not short.kv_tma, knobs
        assert short.latent_chains == chains and not short.page_prefetch, knobs
    assert plan([327600, 1, 2, 3], kv_tma=True).latent_chains == 2  # what TMA needs


def test_h200_balanced_grid_launches_whole_waves():
    def plan(lengths, **kw):
        return splitkv.plan_decode(len(lengths), max(lengths), 12, device="meta",
                                   device_spec=H200, seq_lens=lengths, schedule="balanced",
                                   **{"warp_specialized": False, **kw})  # fmt: skip

    # Stage 1 launches num_programs + batch programs: one wave of 264 for 16-row tiles.
    assert plan([1, 63, 64, 65, 4096, 4097, 65536, 327600]).num_programs == 256
    short = [327600, *range(1, 4096, 88)][:48]
    assert plan(short).num_programs == 216
    # The 64-row tile (qlen 4 x 12 heads) runs one per SM: two launched waves of 132 when
    # each piece is a program; one wave when each program walks its pieces (its default).
    assert plan(short, qlen=4, program_loop=False).num_programs == 216
    walk = plan(short, qlen=4)
    assert walk.program_loop and walk.num_programs == 132
    # A batch of a wave or more still gets at least half a wave of programs.
    assert plan([4096] * 300).num_programs == 2 * 264 - 300
    assert plan([4096] * 200).num_programs == 2 * 264 - 200
    # GQA: the uniform plan's wave is 66 programs per kv head; the balanced 16-row programs
    # take up to two waves (test_h200_gqa_balanced_tile_and_grid).
    gqa = functools.partial(splitkv.plan_decode, 8, 32768, 32, kind="gqa", num_kv_heads=8,
                            device="meta", device_spec=H200)  # fmt: skip
    assert gqa(schedule="uniform").num_programs == 66
    assert gqa(schedule="balanced").num_programs == 132


def test_h200_gqa_balanced_tile_and_grid():
    def plan(lengths, heads, kv_heads, head_dim, **kw):
        return splitkv.plan_decode(len(lengths), max(lengths), heads, kind="gqa",
                                   num_kv_heads=kv_heads, head_dim=head_dim, page_size=16,
                                   device="meta", device_spec=H200, seq_lens=lengths,
                                   **kw)  # fmt: skip

    def knobs(p):
        return (p.schedule, p.num_programs, p.block_n, p.split_num_stages, p.page_prefetch,
                p.split_num_warps)  # fmt: skip

    # 32 KB of K and V a key block, 3 stages, page ids ahead (docs/perf.md session 28); the
    # grid gives each program 10 key blocks, as whole programs an SM, 1 to 8 an SM.
    for lengths in (GQA_RAGGED, GQA_ONE_LONG):
        assert knobs(plan(lengths, 32, 8, 128)) == ("balanced", 132, 64, 3, True, 4)  # llama3-8b
        # gpt-oss unpacked; by default two kv heads a program (gqa_pack.py): a block of 64
        # keys x 128 columns, the same 32 KB, and a wave of programs over half the kv heads.
        assert knobs(plan(lengths, 64, 8, 64, kv_pack=1)) == ("balanced", 132, 128, 3, True, 4)
        assert knobs(plan(lengths, 64, 8, 64)) == ("balanced", 264, 64, 3, True, 4)
    # llama3-70b-tp8 (one kv head): 269 and 357 programs of 10 blocks would be 2 an SM, under
    # one wave of the 3 an SM its 16-row tile holds, so the launch (num_programs + batch)
    # fills that wave (docs/perf.md session 29).
    assert plan(GQA_RAGGED, 8, 1, 128).num_programs == 3 * 132 - len(GQA_RAGGED)
    assert plan(GQA_ONE_LONG, 8, 1, 128).num_programs == 3 * 132 - len(GQA_ONE_LONG)
    few = plan([5, 9, 3], 8, 1, 128, schedule="balanced")
    assert few.num_programs == 132  # few blocks: one an SM
    # Small batches take at least one wave of programs (session 35): the cascade's suffix
    # pass of 48 requests of 100-4,000 keys is 1,560 blocks, 132 programs by the 10 blocks
    # each, filled to the wave; at 8 kv heads, 32 requests would halve a wave of 49 to 17.
    suffixes = [100 + (3900 * i) // 47 for i in range(48)]
    assert plan(suffixes, 8, 1, 128).num_programs == 3 * 132 - 48
    small = [100 + (1900 * i) // 31 for i in range(32)]
    assert plan(small, 32, 8, 128).num_programs == 3 * 132 // 8
    # One kv head: a batch of up to a third of the wave launches one wave however long it is
    # (327,600 keys beside 47 short: 660 programs of 10 blocks before); 128 requests at 32
    # rows (a wave of 264) keep the 10-block grid.
    one_long = [327600, *GQA_ONE_LONG[1:]]
    assert plan(one_long, 8, 1, 128).num_programs == 3 * 132 - 48
    assert plan(one_long, 8, 1, 128, qlen=4).num_programs == 2 * 132 - 48
    assert plan([4000] * 64 + [500] * 64, 8, 1, 128, qlen=4).num_programs == 3 * 132
    assert plan(GQA_RAGGED, 32, 8, 256).block_n == 32
    assert plan(GQA_RAGGED, 32, 8, 128, dtype=torch.float32).block_n == 32
    assert plan(GQA_RAGGED, 32, 8, 96).block_n == 64  # the tile's 128 padded columns
    # qlen 2 still fits 16 rows at group 8; 32 and 64 rows take at most 64-key blocks.
    assert knobs(plan(GQA_RAGGED, 64, 8, 64, qlen=2))[2:5] == (128, 3, True)
    for qlen, rows in ((4, 32), (8, 64)):
        wide = plan(GQA_RAGGED, 64, 8, 64, qlen=qlen)
        assert (wide.block_h, *knobs(wide)[1:]) == (rows, 132, 64, 3, True, 4)
        # Two an SM at 32 and 64 rows: one wave of 264 launched.
        assert plan(GQA_RAGGED, 8, 1, 128, qlen=qlen).num_programs == 264 - len(GQA_RAGGED)
        assert plan(GQA_ONE_LONG, 8, 1, 128, qlen=qlen).num_programs == 264 - len(GQA_ONE_LONG)
    assert plan(GQA_RAGGED, 32, 8, 256, qlen=8).block_n == 32
    # MHA (one row a kv head, 32 kv heads): 8 an SM in all.
    assert plan(GQA_RAGGED, 32, 32, 128).num_programs == 8 * 132 // 32
    # What the caller pins stays pinned: a pinned prefetch keeps the rule's blocks and stages,
    # a pinned block shape keeps the tile before.
    assert knobs(plan(GQA_RAGGED, 32, 8, 128, page_prefetch=False))[2:5] == (64, 3, False)
    pinned = plan(GQA_RAGGED, 32, 8, 128, block_n=256)
    assert (pinned.block_n, pinned.split_num_stages, pinned.page_prefetch) == (256, 2, False)
    assert plan(GQA_RAGGED, 32, 8, 128, num_programs=7).num_programs == 7
    # A device without the measurement (gqa_balanced_min_blocks 0) keeps the tile before.
    amd = splitkv.plan_decode(8, 131072, 32, kind="gqa", num_kv_heads=8, page_size=16,
                              device="meta", device_spec=MI355X, seq_lens=GQA_RAGGED)  # fmt: skip
    assert (amd.schedule, amd.block_n, amd.split_num_stages, amd.page_prefetch) == (
        "balanced", 64, 2, False)  # fmt: skip

    # Uniform plans take the long-split tile where their launch fits one wave of it (2-3 an
    # SM), on half the planner's splits if need be, each split streaming 8 blocks to 4 MiB of
    # K and V (docs/perf.md sessions 29 and 30); elsewhere they keep the uniform tile.
    def tile(p):
        return p.schedule, p.num_splits, p.block_n, p.split_num_stages, p.page_prefetch

    for context in (131072, 262144):
        for qlen in (1, 2, 4, 8):  # 16, 32 and 64 rows: 256 programs, no halving
            assert tile(plan([context], 8, 1, 128, qlen=qlen)) == ("uniform", 256, 64, 3, True)
    assert tile(plan([65536], 8, 1, 128)) == ("uniform", 256, 64, 2, False)  # 4 blocks a split
    # 512 programs on the planner's splits: half of them, one wave of 256.
    assert tile(plan([131072] * 2, 8, 1, 128)) == ("uniform", 128, 64, 3, True)
    assert tile(plan([131072], 32, 8, 128)) == ("uniform", 32, 64, 3, True)  # 8 kv heads
    assert tile(plan([32768] * 8, 32, 8, 128)) == ("uniform", 4, 64, 3, True)
    assert tile(plan([65536], 64, 8, 64, qlen=4)) == ("uniform", 32, 128, 3, True)  # 32 rows
    assert tile(plan([131072], 64, 8, 64, qlen=8)) == ("uniform", 32, 128, 3, True)  # 64 rows
    # Splits of 16 MiB (and 8 at head dim 64) stream as well on the uniform tile.
    assert tile(plan([131072] * 8, 32, 8, 128)) == ("uniform", 8, 64, 2, False)
    assert tile(plan([131072] * 8, 64, 8, 64, kv_pack=1)) == ("uniform", 8, 128, 2, False)
    # gpt-oss packed two kv heads a program: twice the splits of half the programs each.
    assert tile(plan([131072] * 8, 64, 8, 64)) == ("uniform", 16, 64, 2, False)
    # A caller's split count is kept: the tile only where that launch fits the wave.
    assert tile(plan([131072] * 2, 8, 1, 128, num_splits=256)) == ("uniform", 256, 64, 2, False)
    assert tile(plan([131072] * 2, 8, 1, 128, num_splits=64)) == ("uniform", 64, 64, 3, True)
    pinned_tile = plan([131072], 8, 1, 128, page_prefetch=False)
    assert tile(pinned_tile) == ("uniform", 256, 64, 3, False)
    assert tile(plan([131072], 8, 1, 128, num_stages=2)) == ("uniform", 256, 64, 2, False)
    fp32 = plan([131072] * 2, 8, 1, 128, dtype=torch.float32)  # no residency measured
    assert tile(fp32) == ("uniform", 256, 64, 2, False)


@pytest.mark.triton_3_6
def test_auto_schedule_follows_the_lengths():
    def plan(lengths, **kw):
        return splitkv.plan_decode(
            len(lengths), max(lengths), 12, device="meta", device_spec=H200, seq_lens=lengths, **kw
        )

    # Equal lengths: uniform splits on the Triton tiles and for short requests; on Hopper's
    # keys-as-rows kernel a batch of long requests takes the program loop (all 132 SMs).
    assert plan([327600] * 8, warp_specialized=False).schedule == "uniform"
    assert plan([8192] * 8).schedule == "uniform"
    assert plan([327600]).schedule == "uniform"
    looped = plan([327600] * 8)
    assert (looped.schedule, looped.program_loop, looped.num_programs) == ("balanced", True, 132)
    assert plan([327600, *range(1, 4096, 88)][:48]).schedule == "balanced"
    assert plan([1, 63, 64, 65, 4096, 4097, 65536, 327600]).schedule == "balanced"
    assert plan([327600] + [64] * 7, schedule="uniform").schedule == "uniform"
    hinted = splitkv.plan_decode(
        4, 327600, 12, device="meta", device_spec=H200, seq_lens=torch.tensor([327600, 64, 64, 64])
    )
    assert hinted.schedule == "balanced"
    no_hint = splitkv.plan_decode(8, 8192, 12, device="meta", device_spec=H200)
    assert no_hint.schedule == "uniform"  # without lengths: nothing to balance
    long_bound = splitkv.plan_decode(8, 327600, 12, device="meta", device_spec=H200)
    assert long_bound.schedule == "balanced"  # the long-batch rule reads the bound
    # Equal lengths stay uniform even where the model's wave term favours balanced: one
    # 32k-token GQA request took 36 us balanced (1,056 programs for 512 blocks).
    one = splitkv.plan_decode(
        1, 32768, 8, kind="gqa", page_size=16, device="meta", device_spec=H200, seq_lens=[32768]
    )
    assert one.schedule == "uniform"
    # An explicit split count or grid names its schedule (a num_splits sweep times uniform).
    ragged = [327600] + [64] * 7
    assert plan(ragged, num_splits=4).schedule == "uniform"
    assert plan([327600] * 8, num_programs=264).schedule == "balanced"
    assert plan(ragged, num_splits=4, num_programs=264).schedule == "balanced"  # both: the model
    balanced = plan([327600] + [64] * 7)
    assert balanced.merge_block_s == 64  # 264 programs: a tile of 64 partials per iteration
    # The keys-as-rows kernel runs uniform splits on its own, smaller count (2 for 48 requests):
    # 48 requests of 100-4,000 keys would stream half the longest a program, against even
    # shares of ~750 keys on its program loop; the model weighs the plan that would run.
    suffixes = [100 + (3900 * i) // 47 for i in range(48)]
    assert plan(suffixes, schedule="uniform").num_splits == 2
    looped = plan(suffixes)
    assert (looped.schedule, looped.program_loop, looped.num_programs) == ("balanced", True, 132)
    assert balanced.workspace.partial_o.shape == (12, balanced.num_programs + 8, 512)


@pytest.mark.triton_3_6
def test_auto_schedule_weighs_the_balanced_schedules_fixed_cost():
    # Measured on the H200 (docs/perf.md session 34): small ragged batches stream faster on
    # the Gluon kernels' uniform splits, where the balanced schedule's prologue and longer
    # merge outweigh its evener shares; where its programs would get one key block or less it
    # would run on the Triton tile, 1.75x those splits' time (median, up to 2.3x).
    def plan(lengths, heads=12, qlen=1, **kw):
        return splitkv.plan_decode(len(lengths), max(lengths), heads, qlen=qlen, device="meta",
                                   device_spec=H200, seq_lens=lengths, **kw)  # fmt: skip

    two = plan([16227, 4651])  # 4 blocks a split against ~3.5 blocks a share plus the prologue
    assert (two.schedule, two.warp_specialized) == ("uniform", True)
    few = plan([3821, 3754, 2169, 996])  # 10,740 keys over 264 programs: 41 keys a share
    assert (few.schedule, few.warp_specialized) == ("uniform", True)
    assert not plan([3821, 3754, 2169, 996], schedule="balanced").warp_specialized
    many = plan([100 + (32000 * i) // 47 for i in range(48)])  # 48 requests up to 32k
    assert (many.schedule, many.program_loop) == ("balanced", True)
    wide = plan([4791, 4230], heads=128, qlen=4)  # 8 head blocks: splits of 19 blocks
    assert (wide.schedule, wide.program_loop) == ("balanced", True)
    # GQA keeps the rule it was measured with (sessions 27-28): no fixed cost.
    gqa = splitkv.plan_decode(5, 3000, 8, kind="gqa", num_kv_heads=1, head_dim=128,
                              page_size=1, device="meta", device_spec=H200,
                              seq_lens=[1, 63, 700, 3000, 5])  # fmt: skip
    assert gqa.schedule == "balanced"


def test_gqa_schedule_model_weighs_the_uniform_splits_that_run_on_one_kv_head():
    # The long-split tile halves the planner's uniform splits where their launch would pass a
    # wave of it; on one kv head the model weighs the count that runs. H200 (docs/perf.md
    # session 36): llama3-70b-tp8, 48 requests of 4k-12k keys, 8 splits run of the planner's
    # 16: uniform 66.6 us, balanced 58.7. At 8 kv heads the planner's count stays: llama3-8b,
    # 48 requests of up to 4k at qlen 4, uniform (one split) 152.5 us, balanced 163.0.
    def plan(heads, kv_heads, qlen, lengths):
        return splitkv.plan_decode(len(lengths), max(lengths), heads, qlen=qlen, kind="gqa",
                                   num_kv_heads=kv_heads, head_dim=128, page_size=16,
                                   device="meta", device_spec=H200, seq_lens=lengths)  # fmt: skip

    spread = [4000 + (8000 * i) // 47 for i in range(48)]  # v0.2.37: uniform, 8 splits
    one_head = plan(8, 1, 1, spread)
    assert (one_head.schedule, one_head.num_programs) == ("balanced", 348)
    assert plan(8, 1, 1, spread[:1] * 48).schedule == "uniform"  # equal lengths stay uniform
    # qlen 4, 48 requests of 2k-16k (measured: up to 16k, uniform 140.4 us, balanced 88.6).
    mtp = plan(8, 1, 4, [2000 + (14332 * i) // 47 for i in range(48)])
    assert (mtp.schedule, mtp.num_splits, mtp.num_programs) == ("balanced", 16, 216)


def test_gqa_schedule_model_weighs_the_balanced_grid_where_a_request_passes_a_share():
    # At 8 kv heads the balanced plan launches 132 programs a kv head where the model counted
    # the wave's 66; weighed where the longest request spans more than one share. H200
    # (docs/perf.md session 38, call 1's seeded batches): llama3-8b 128 x up to 16k uniform
    # 1,223.5 us, balanced 1,083.3; 256 x 100-500 (no request past a share) uniform 89.8,
    # balanced 120.4.
    def plan(lengths, qlen=1):
        return splitkv.plan_decode(len(lengths), max(lengths), 32, qlen=qlen, kind="gqa",
                                   num_kv_heads=8, head_dim=128, page_size=16, device="meta",
                                   device_spec=H200, seq_lens=lengths)  # fmt: skip

    def spread(n, lo, hi):
        return [lo + (hi - lo) * i // (n - 1) for i in range(n)]

    for lengths, qlen in ((spread(128, 400, 16384), 1), (spread(128, 100, 4096), 1),
                          (spread(128, 400, 16384), 4), (spread(48, 1600, 65536), 4)):  # fmt: skip
        balanced = plan(lengths, qlen)
        assert (balanced.schedule, balanced.num_programs) == ("balanced", 132)
    assert plan(spread(256, 100, 500)).schedule == "uniform"


def test_dependent_launch_where_the_device_has_it():
    hopper = splitkv.plan_decode(8, 4096, 16, device="meta", device_spec=H200)
    assert hopper.dependent_launch
    assert not splitkv.plan_decode(8, 4096, 16, device="meta", device_spec=MI355X).dependent_launch
    assert not splitkv.plan_decode(8, 4096, 16, device="cpu").dependent_launch  # interpreter
    off = splitkv.plan_decode(8, 4096, 16, device="meta", device_spec=H200, dependent_launch=False)
    assert not off.dependent_launch


def test_h200_mha_fill_rule_keeps_enough_gqa_programs_in_flight():
    # GQA programs at head dim 128 stream best about 4 per SM (512 on the H200): the uniform
    # num_splits sweep's best counts (docs/perf.md, v0.2.1, h200_tune_gqa_v0.2.1).
    assert num_partitions(32, 32768, 8, H200) == 2  # 32 x 8 kv heads x 2 = 512 programs
    assert num_partitions(8, 32768, 8, H200) == 8
    assert num_partitions(32, 32768, 32, H200) == 1  # MHA: 1,024 programs already
    assert num_partitions(32, 32768, 1, H200) == 16  # one kv head: best at 16 (134.5 us)
    assert num_partitions(1, 131072, 1, H200) == 256  # one kv head, batch 1: the cap binds
    assert num_partitions(1, 512, 8, H200) == 4  # a split keeps a 128-key planner page
    # Head dim 64 (gpt-oss) with its 128-key blocks: also 4 per SM (v0.2.2 sweep: best at
    # 64 / 8 / 4 splits for batch 1 / 8 / 32, h200_gqa_gptoss_splits_v0.2.2b); d 32: 16 per SM.
    assert num_partitions(1, 32768, 8, H200, head_dim=64) == 64
    assert num_partitions(8, 32768, 8, H200, head_dim=64) == 8
    assert num_partitions(32, 32768, 8, H200, head_dim=64) == 2
    assert num_partitions(8, 32768, 8, H200, head_dim=32) == 32


@pytest.mark.triton_3_6
def test_h200_mla_tiles_key_blocks():
    # The 64-row Gluon tile's alternating consumers take 32-key blocks; without them, 64.
    for heads, qlen in ((128, 1), (16, 8)):
        plan = splitkv.plan_decode(8, 68096, heads, qlen=qlen, device="meta", device_spec=H200)
        assert (plan.block_h, plan.block_n, plan.split_num_stages) == (64, 32, 2)
        two = splitkv.plan_decode(8, 68096, heads, qlen=qlen, device="meta", device_spec=H200,
                                  alternate_blocks=False)  # fmt: skip
        assert (two.block_h, two.block_n, two.split_num_stages) == (64, 64, 2)
    medium = splitkv.plan_decode(8, 68096, 12, qlen=2, device="meta", device_spec=H200,
                                 warp_specialized=False)  # fmt: skip
    assert (medium.block_h, medium.block_n) == (32, 64)  # long splits: 64 keys (session 63)
    gluon = splitkv.plan_decode(8, 68096, 12, qlen=2, device="meta", device_spec=H200)
    assert (gluon.block_h, gluon.block_n, gluon.warp_specialized) == (32, 64, True)
    # GQA's 32- and 64-row uniform tiles (the long-split tile set aside by a pinned stage
    # count): one warpgroup, 4,096 scores an iteration, 4 blocks a split (2 where the wider
    # block adds no wave to the launch).
    two = dict(kind="gqa", device="meta", device_spec=H200, num_stages=2)
    gqa = splitkv.plan_decode(8, 68096, 64, **two)
    assert (gqa.block_h, gqa.block_n, gqa.split_num_warps) == (64, 64, 4)
    gqa = splitkv.plan_decode(8, 68096, 32, **two)
    assert (gqa.block_h, gqa.block_n, gqa.split_num_warps) == (32, 128, 4)
    gqa = splitkv.plan_decode(1, 32768, 8, qlen=4, kind="gqa", num_splits=256, device="meta",
                              device_spec=H200)  # fmt: skip
    assert (gqa.num_splits, gqa.block_h, gqa.block_n) == (256, 32, 64)  # 128 keys a split
    gqa = splitkv.plan_decode(1, 32768, 32, qlen=4, kind="gqa", num_kv_heads=8, head_dim=256,
                              device="meta", device_spec=H200)  # fmt: skip
    assert (gqa.block_h, gqa.block_n) == (16, 64)  # 16 rows: the narrow tile's own rules
    wide_256 = splitkv.plan_decode(1, 32768, 64, qlen=4, kind="gqa", num_kv_heads=8,
                                   head_dim=256, device="meta", device_spec=H200)  # fmt: skip
    assert (wide_256.block_h, wide_256.block_n) == (32, 64)  # 64 x 256 elements a block
    # Head dim 64 (gpt-oss): 128-key blocks, the 32 KB of K + V that 64 keys are at d 128.
    oss = dict(kind="gqa", num_kv_heads=8, head_dim=64, device="meta", device_spec=H200)
    assert splitkv.plan_decode(8, 32768, 64, **oss, kv_pack=1).block_n == 128
    assert splitkv.plan_decode(8, 32768, 64, **oss).block_n == 64  # packed: 2 x 64 columns
    # The balanced 16-row programs' tile: 32 KB a block too (test_h200_gqa_balanced_tile_and_grid).
    assert splitkv.plan_decode(8, 32768, 64, **oss, schedule="balanced", kv_pack=1).block_n == 128
    assert splitkv.plan_decode(8, 32768, 64, **{**oss, "head_dim": 128}).block_n == 64


def test_programs_per_sm_follow_the_tile():
    # 16- and 32-row MLA tiles both run two per H200 SM (92 KB and 74 KB of shared memory; the
    # balanced schedule at qlen 2 measured 307 us with 264 programs vs 435 us with 132).
    assert num_partitions(8, 327600, 24, H200, is_mla=True) == 32  # as for 12 rows
    mtp = splitkv.plan_decode(48, 327600, 12, qlen=2, device="meta", device_spec=H200,
                              schedule="balanced", program_loop=False)  # fmt: skip
    assert (mtp.block_h, mtp.num_programs) == (32, 264 - 48)  # one launched wave
    # One 64-row program per SM, and two launched waves of them for the balanced schedule
    # (qlen 4: 434.7 us, beside 508.9 for one launched wave, v0.2.3).
    wide = splitkv.plan_decode(8, 327600, 128, device="meta", device_spec=H200, schedule="balanced",
                               program_loop=False)  # fmt: skip
    assert (wide.num_head_blocks, wide.num_programs) == (2, 2 * 66 - 8)
    mtp4 = splitkv.plan_decode(48, 327600, 12, qlen=4, device="meta", device_spec=H200,
                               schedule="balanced", program_loop=False)  # fmt: skip
    assert (mtp4.block_h, mtp4.num_programs) == (64, 2 * 132 - 48)
    given = splitkv.plan_decode(48, 327600, 12, qlen=4, device="meta", device_spec=H200,
                                num_programs=132)  # fmt: skip
    assert given.num_programs == 132  # the caller's grid stands
    # GQA: the MHA-style rule's residency (4 per SM at d 128) over the kv heads, one wave of
    # 66 a kv head; the balanced 16-row programs take up to two of those waves.
    gqa = splitkv.plan_decode(32, 32768, 32, kind="gqa", num_kv_heads=8, device="meta",
                              device_spec=H200, schedule="balanced")  # fmt: skip
    assert gqa.num_programs == 2 * 66


def test_program_loop_takes_long_uniform_batches():
    from splitkv.plan_rules import LOOP_MIN_KEYS, loop_streams_long_batch

    assert loop_streams_long_batch(8, LOOP_MIN_KEYS, [])
    assert not loop_streams_long_batch(1, 327600, [])  # batch 1: its merge folds 132
    assert not loop_streams_long_batch(8, LOOP_MIN_KEYS - 1, [])
    assert not loop_streams_long_batch(8, 327600, [8192] * 8)  # the lengths, not the bound
    assert not loop_streams_long_batch(8, 4096, [327600] * 8)  # a sliding window's keys
    # Pinning the schedule or the kernel keeps uniform splits.
    plan = functools.partial(splitkv.plan_decode, 8, 327600, 12, device="meta", device_spec=H200)
    assert plan(schedule="uniform").schedule == "uniform"
    assert plan(num_splits=16).schedule == "uniform"
    assert plan(program_loop=False).schedule == "uniform"
    assert plan(qlen=2).schedule == "uniform"  # 24 rows: the 32-row tile, 2% slower looped
    assert plan(qlen=4).schedule == "uniform"  # 48 rows: the 64-row tile, unmeasured


@pytest.mark.triton_3_6
def test_keys_as_rows_splits_fill_one_program_per_sm():
    # The keys-as-rows kernel holds one program per SM; its 16-row tiles take the H200 table's
    # own last-wave fill (0.7: 8k x 48 at 2 splits, 113.1 us against 119.3 at 8), its 32-row
    # tiles the general 0.9 (68k x 48 at qlen 2: 8 splits 898.8 us against 969.2 at 2).
    assert H200.tunables.keys_as_rows_wave_fill == 0.7
    assert num_partitions(48, 8192, 12, H200, is_mla=True, programs_per_sm=1) == 8
    assert num_partitions(48, 8192, 12, H200, is_mla=True, programs_per_sm=1, wave_fill=0.7) == 2

    def plan(batch, keys, **kw):
        return splitkv.plan_decode(batch, keys, 12, device="meta", device_spec=H200, **kw)

    assert [plan(b, 8192).num_splits for b in (1, 8, 24, 48, 96)] == [128, 16, 4, 2, 1]
    assert [plan(b, 8192, qlen=2).num_splits for b in (24, 48, 96)] == [16, 8, 4]
    assert plan(8, 327600, schedule="uniform").num_splits == 16
    # Without the table's value the rule falls back to wave_fill.
    plain = dataclasses.replace(
        H200, tunables=dataclasses.replace(H200.tunables, keys_as_rows_wave_fill=None)
    )
    assert splitkv.plan_decode(48, 8192, 12, device="meta", device_spec=plain).num_splits == 8


@pytest.mark.triton_3_6
@pytest.mark.parametrize("spec", [H200, DeviceSpec.preset("h100"), DeviceSpec.preset("b200")],
                         ids=["h200", "h100", "b200"])  # fmt: skip
def test_default_gluon_split_counts_are_powers_of_two(spec):
    for heads, qlen, keys, batch in itertools.product(
        (8, 12, 16, 32, 128), (1, 2, 4, 8), (100, 1024, 4096, 8192, 68096), (1, 2, 8)
    ):
        p = splitkv.plan_decode(batch, keys, heads, qlen=qlen, device="meta", device_spec=spec)
        if p.warp_specialized and p.schedule == "uniform":
            assert p.num_splits & (p.num_splits - 1) == 0, p
    # The partial-bytes cap (a request's fp32 partials within its key bytes: 36 splits at 128
    # rows x 8k) is rounded down; the caller's count stays (test_warp_specialized.py).
    mtp = splitkv.plan_decode(1, 8192, 16, qlen=8, device="meta", device_spec=H200)
    assert mtp.num_splits == 32


@pytest.mark.triton_3_6
def test_balanced_merge_tile_follows_the_rows_mean_partials():
    def plan(batch, **kw):
        return splitkv.plan_decode(batch, 327600, 12, device="meta", device_spec=H200,
                                   schedule="balanced", **kw)  # fmt: skip

    # Batch 1 folds all 132 programs' partials in one 256-row tile (three of 64 cost 6 us).
    assert (plan(1).num_programs, plan(1).merge_block_s) == (132, 256)
    assert plan(2).merge_block_s == 128  # 66 partials a row on average
    assert plan(8).merge_block_s == plan(48).merge_block_s == 64  # ragged batches' tile
    assert plan(1, num_programs=40).merge_block_s == 64  # never more than the grid's programs
    assert plan(1, num_programs=20).merge_block_s == 32
    assert plan(1, merge_block_s=16).merge_block_s == 16  # an explicit tile stays


@pytest.mark.triton_3_6
def test_long_equal_batches_on_the_program_loop_fold_a_32_partial_tile():
    def plan(batch, context=68096, **kw):
        return splitkv.plan_decode(batch, context, 12, device="meta", device_spec=H200, **kw)

    # The loop takes them from uniform splits (lengths equal or unknown): every row folds its
    # mean of 132 / batch partials or one more, so 32 where 64 would be half masked.
    assert plan(8).program_loop and plan(8).merge_block_s == 32  # 17-18 partials a row
    assert plan(8, seq_lens=[68096] * 8).merge_block_s == 32
    assert plan(16, 327600).merge_block_s == plan(48).merge_block_s == 32
    assert plan(4).merge_block_s == 64 and plan(2).merge_block_s == 128  # 34, 67 partials
    # A ragged batch (the balanced schedule chosen for its lengths) keeps the 64 tile.
    ragged = plan(8, seq_lens=[1, 63, 64, 65, 4096, 4097, 65536, 68096])
    assert ragged.schedule == "balanced" and ragged.merge_block_s == 64
    assert plan(8, schedule="balanced").merge_block_s == 64  # asked for: not assumed equal


def one_long_plan(heads, qlen=1, spec=H200, **kw):
    """The plan of issue 5's one-long batch (1 x 327,600 beside 47 of 100) on `spec`."""
    return splitkv.plan_decode(48, 327600, heads, qlen=qlen, device="meta", device_spec=spec,
                               seq_lens=[327600] + [100] * 47, **kw)  # fmt: skip


@pytest.mark.triton_3_6
def test_the_loops_piece_cost_follows_the_tile():
    # H200 (docs/perf.md session 23): the keys-as-rows consumers' 32-row blocks count a piece
    # as 4 key blocks (one-long 1-4 us faster, ragged within 0.8 us), the other tiles as 2 (in
    # 32-key units on the alternating consumers: 4).
    plan = one_long_plan
    assert [plan(h, q).piece_cost for h, q in ((12, 2), (16, 2), (32, 1))] == [4, 4, 4]
    assert plan(12).piece_cost == plan(12, 4).piece_cost == 2  # 16 rows, the 64-row tile
    assert plan(128).alternate_blocks and plan(128).piece_cost == 4
    assert plan(12, 2, piece_cost=3).piece_cost == 3
    assert plan(12, 2, program_loop=False).piece_cost == 0


@pytest.mark.triton_3_6
def test_the_h100_loop_counts_a_piece_as_4_blocks_on_64_rows():
    # H100 (docs/perf.md session 59, run178): cost 4 on the 64-row Gluon loop, 11 batches 1.3%
    # faster in the geomean, none slower; its other tiles keep the H200's costs.
    h100 = DeviceSpec.preset("h100")

    def plan(heads, qlen=1, spec=h100, **kw):
        return one_long_plan(heads, qlen, spec, **kw)

    wide = [(12, 4), (16, 4), (32, 2), (64, 1)]
    for heads, qlen in wide:
        loop = plan(heads, qlen)
        assert loop.program_loop and loop.warp_specialized and loop.block_h == 64
        assert not loop.keys_as_rows and not loop.alternate_blocks
        assert loop.piece_cost == 4
        assert plan(heads, qlen, spec=H200).piece_cost == 2
        assert plan(heads, qlen, piece_cost=2).piece_cost == 2  # a request still wins
        assert plan(heads, qlen, warp_specialized=False).piece_cost == 2  # the Triton loop
    assert plan(12, 2).piece_cost == 4 and plan(12).piece_cost == 2  # keys as rows: as the H200


@pytest.mark.triton_3_6
def test_the_h100_alternating_consumers_count_a_piece_as_4_blocks():
    # H100 (docs/perf.md session 60, run183): the same 4 blocks of 64 keys on the alternating
    # consumers (two 64-row head blocks a request), 8 of their 32-key blocks: 10 batches
    # 1.2-1.3% faster in the geomean than 4 units, none over 0.7% slower. The H200 keeps 4.
    h100 = DeviceSpec.preset("h100")
    for heads, qlen in [(128, 1), (64, 2), (32, 4)]:
        loop = one_long_plan(heads, qlen, h100)
        assert loop.alternate_blocks and loop.program_loop and loop.num_head_blocks == 2
        assert loop.piece_cost == 8
        assert one_long_plan(heads, qlen).piece_cost == 4  # the H200: 2 blocks of 64
        assert one_long_plan(heads, qlen, h100, piece_cost=4).piece_cost == 4
