"""What `splitkv bench` computes and writes, checked without a GPU on made-up rows."""

import csv
import json

import pytest

from splitkv.bench.ablations import ABLATIONS, ablation_shapes
from splitkv.bench.report import write_results
from splitkv.bench.shapes import (
    BenchShape,
    gqa_prefix_shapes,
    gqa_special_shapes,
    grid_shapes,
    prefix_mix_shape,
    shared_prefix_shape,
    special_shapes,
)
from splitkv.bench.sweep import _row_base


def test_bytes_and_flops_of_a_shape():
    shape = BenchShape(heads=12, context=8192, batch=2)
    assert shape.bytes_read == (2 * 8192 + 2 * 12) * 576 * 2
    assert shape.flops == 2 * 8192 * 12 * (2 * 576 + 2 * 512)
    mtp = BenchShape(heads=1, context=10, batch=1, qlen=2)
    assert mtp.flops == (9 + 10) * (2 * 576 + 2 * 512)  # row 0 sees 9 keys, row 1 all 10


def test_shared_prefix_counts_unique_bytes_once():
    shape = shared_prefix_shape(12)
    assert shape.bytes_read == (8 * 327600 + 8 * 12) * 1152
    assert shape.unique_bytes == (327600 + 7 * (327600 - 308736) + 8 * 12) * 1152


def test_prefix_mix_counts_each_groups_prefix_once():
    mix = prefix_mix_shape(12)
    assert mix.batch == 48 and len(mix.prefix_groups) == 6
    assert min(mix.lengths) == 16384 + 100 and max(mix.lengths) == 65536 + 4000
    shared = sum(7 * prefix for _, prefix in mix.prefix_groups)
    assert mix.unique_bytes == (sum(mix.lengths) - shared + 48 * 12) * 1152


def test_standard_sweep_skips_shapes_over_40_gb():
    shapes = grid_shapes()
    assert len(shapes) == 42  # 45 minus 327600 x 128 at every head count
    assert all(s.bytes_read <= 40e9 for s in shapes)
    assert {s.label for s in special_shapes(12)} >= {"ragged", "prefix-boundary"}


def test_special_shapes_at_qlen_2_include_the_shared_prefixes_and_say_how_to_rerun():
    shapes = special_shapes(16, qlen=2)
    assert [s.label for s in shapes] == [
        "ragged qlen 2",
        "prefix-boundary qlen 2",
        "1x327600+47 short qlen 2",
        "8x327600 sharing 308736 qlen 2",
        "48 in 6 prefix groups qlen 2",
    ]
    assert {s.qlen for s in shapes} == {2} and shapes[3].shared_prefix == 308736
    command = _row_base(shapes[4], "splitkv-prefix", 1)["command"]
    assert command == (
        "splitkv bench --heads 16 --special --qlen 2 --page-size 64 "
        "--labels '48 in 6 prefix groups qlen 2' --dtype bf16 --providers splitkv-prefix"
    )


def test_special_shapes_at_other_page_sizes_keep_the_prefixes_their_pages_divide():
    # 308,736 shared keys are 6,432 pages of 48; the mix's 16,384 are not whole pages of 48.
    at_48 = special_shapes(12, page_size=48)
    assert [s.label for s in at_48][-1] == "8x327600 sharing 308736"
    assert {s.page_size for s in at_48} == {48}
    assert [s.label for s in special_shapes(12, page_size=528)] == [
        "ragged", "prefix-boundary", "1x327600+47 short"
    ]  # fmt: skip
    command = _row_base(at_48[0], "splitkv", 1)["command"]
    assert "--page-size 48 --labels ragged" in command


def test_gqa_special_shapes_are_ragged_batches_of_each_model():
    shapes = gqa_special_shapes(("llama3-8b", "gpt-oss"), qlen=2)
    assert [s.label for s in shapes] == ["ragged qlen 2", "1x131072+47 short qlen 2"] * 2
    one_long = shapes[1]
    assert one_long.kind == "gqa" and one_long.batch == 48 and one_long.qlen == 2
    assert max(one_long.lengths) == 131072 and sorted(one_long.lengths)[-2] == 4096
    assert one_long.bytes_read == (48 * 2 * 32 * 128 + sum(one_long.lengths) * 2 * 8 * 128) * 2
    assert shapes[3].sinks and shapes[3].head_dim == 64
    _, make_shapes, merge_time = ABLATIONS["gqa_schedule"]
    assert merge_time and {s.kind for s in make_shapes()} == {"gqa"}


def test_gqa_prefix_shapes_share_pages_within_groups():
    shared, mix = gqa_prefix_shapes(("llama3-8b",))
    assert shared.label == "8x131072 sharing 122880" and shared.kind == "gqa"
    per_token = 2 * 8 * 128 * 2  # K and V, 8 kv heads of 128, bf16
    assert shared.bytes_read - shared.unique_bytes == 7 * 122880 * per_token
    assert mix.batch == 48 and len(mix.prefix_groups) == 6 and mix.kv_heads == 8


def test_the_cli_offers_every_ablation():
    from splitkv.cli import ABLATION_CHOICES

    assert sorted(ABLATION_CHOICES) == sorted(ABLATIONS)


def test_an_ablation_keeps_its_shapes_of_any_head_count_unless_heads_narrow_them():
    import argparse

    from splitkv.cli import _bench_arguments, ablation_shapes_asked

    parser = argparse.ArgumentParser()
    _bench_arguments(parser)
    shapes = ABLATIONS["copy_rows_held_out"][1]()

    def asked(*argv):
        return ablation_shapes_asked(shapes, parser.parse_args(["--ablation", *argv]))

    # 12, 16, 32 and 64 heads: the 32 and 64 ones were dropped when --heads defaulted to
    # the sweep's 12 16 128 (session 62's run196).
    assert asked("copy_rows_held_out") == shapes and {s.heads for s in shapes} == {12, 16, 32, 64}
    assert {s.heads for s in asked("copy_rows_held_out", "--heads", "64")} == {64}
    assert [s.batch for s in asked("copy_rows_held_out", "--batch", "48")] == [48]


def test_ablations_cover_the_issue_shapes():
    # with the shared prefix: the 8 x 327,600 batch at 12 and 16 heads and the 6-group mix
    assert len(ablation_shapes()) == 20 and len(ablation_shapes(True)) == 23
    trials, _, merge_time = ABLATIONS["merge"]
    assert merge_time and trials[1].knobs == {"merge_block_s": 1, "merge_d_split": 1}
    trials, make_shapes, _ = ABLATIONS["schedule"]
    labels = {s.label for s in make_shapes()}
    assert {"ragged", "1x327600+47 short qlen 2", "1x327600+47 short qlen 4"} <= labels
    assert "48 in 6 prefix groups" not in labels  # shared pages: the grid-order ablation
    assert trials[1].knobs == {"schedule": "uniform"}
    assert trials[2].knobs == {"schedule": "balanced", "page_prefetch": False,
                               "program_loop": False}  # fmt: skip


@pytest.mark.triton_3_6
@pytest.mark.parametrize(
    "name,alternate", [("loop_piece_cost", False), ("loop_piece_cost_held_out", False),
                       ("alternate_piece_cost", True), ("alternate_piece_cost_held_out", True)],
)  # fmt: skip
def test_the_piece_cost_ablations_plan_the_tile_they_name(name, alternate):
    # Each trial's cost must reach the tile it is fitted for: the Gluon loop's 64-row head
    # blocks, one a request (alternate: two, on the alternating consumers), on the H100 preset
    # that takes the fit.
    import splitkv
    from splitkv.device import DeviceSpec

    trials, make_shapes, _ = ABLATIONS[name]
    for shape in make_shapes():
        plan = splitkv.plan_decode(
            shape.batch, shape.context, shape.heads, qlen=shape.qlen, seq_lens=shape.lengths,
            device="meta", device_spec=DeviceSpec.preset("h100"), **trials[-1].knobs,
        )  # fmt: skip
        assert plan.program_loop and plan.warp_specialized and plan.block_h == 64, shape.label
        assert not plan.keys_as_rows and plan.alternate_blocks == alternate, shape.label
        assert plan.num_head_blocks == (2 if alternate else 1), shape.label
        assert plan.piece_cost == trials[-1].knobs["piece_cost"]


@pytest.fixture
def result():
    ok = {
        "provider": "splitkv", "variant": "default", "label": "", "heads": 12, "context": 8192,
        "batch": 1, "qlen": 1, "page_size": 64, "dtype": "bf16", "num_splits": 128,
        "schedule": "uniform",
        "p20_us": 13.0, "p50_us": 13.3, "p80_us": 13.5, "gb_per_s": 710.0, "tflop_per_s": 16.1,
        "frac_read_ceiling": 0.151, "frac_matmul": 0.024, "merge_share": 0.2, "status": "ok",
        "flops": 1, "bytes_read": 1, "command": "splitkv bench ...",
    }  # fmt: skip
    missing = {**ok, "provider": "flashmla", "status": "missing: not importable"}
    env = {"gpu": "NVIDIA H200", "splitkv": "0", "torch": "2", "triton": "3", "cuda": "13",
           "command": "splitkv bench"}  # fmt: skip
    ceilings = {"read_bytes_per_s": 4.7e12, "matmul_flops_per_s": 6.7e14}
    return {"env": env, "ceilings": ceilings, "rows": [ok, missing]}


def test_results_are_written_as_json_csv_and_markdown(result, tmp_path):
    paths = write_results(result, tmp_path, "run")
    assert {p.suffix for p in paths} >= {".json", ".csv", ".md"}
    assert json.loads((tmp_path / "run.json").read_text())["rows"][0]["num_splits"] == 128
    rows = list(csv.DictReader((tmp_path / "run.csv").open()))
    assert rows[0]["gpu"] == "NVIDIA H200" and rows[1]["status"].startswith("missing")
    table = (tmp_path / "run.md").read_text()
    assert "| splitkv | default | 12 | 8192 x 1 | 1 | 128 | uniform | 13.3 (13.0-13.5)" in table
    assert "20.0%" in table and "missing: not importable" in table


def test_gqa_shapes_count_keys_and_values_per_kv_head():
    shape = BenchShape(32, 4096, 1, page_size=16, kind="gqa", kv_heads=8, head_dim=128)
    assert shape.bytes_read == (32 * 128 + 4096 * 2 * 8 * 128) * 2
    assert shape.flops == 4096 * 32 * 4 * 128
    from splitkv.bench.shapes import gqa_shapes

    shapes = gqa_shapes()
    assert {s.kv_heads for s in shapes} == {1, 8, 32} and all(s.page_size == 16 for s in shapes)
    assert all(s.bytes_read <= 40e9 for s in shapes)
