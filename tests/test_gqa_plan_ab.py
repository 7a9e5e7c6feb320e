"""tools/gqa_plan_ab.py: a variant replaces stage 1's tile fields on the plan the planner made
and nothing else, and a field outside the tile is refused before anything runs."""

import json
import subprocess
import sys
from pathlib import Path

TOOL = Path(__file__).resolve().parents[1] / "tools" / "gqa_plan_ab.py"


def run_tool(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(TOOL), *args], capture_output=True, text=True,
                          timeout=120)  # fmt: skip


def test_a_variant_replaces_only_the_fields_it_names():
    done = run_tool("--batch", "qwen-64-8:4:64:4096", "--variant", "2 stages",
                    "split_num_stages=2", "--variant", "64 keys", "block_n=64",
                    "--plans-only")  # fmt: skip
    assert done.returncode == 0, done.stderr[-500:]
    (row,) = [json.loads(line) for line in done.stdout.splitlines()]
    # schedule, splits, block_h, block_n, stages, whole_pieces, kv_pack
    planned = row["plan planned"]
    assert planned == ["uniform", 1, 32, 128, 3, True, 1]  # session 39's one-split tile
    assert row["plan 2 stages"] == [*planned[:4], 2, True, 1]
    assert row["plan 64 keys"] == [*planned[:3], 64, *planned[4:]]


def test_named_batches_and_packed_kv_heads():
    # Issue 5's batches by name; kv_pack plans the call anew (two kv heads a program).
    done = run_tool("--batch", "gpt-oss:1:ragged", "gpt-oss:1:one-long", "--variant", "pack 1",
                    "kv_pack=1", "--variant", "pack 2", "kv_pack=2", "--plans-only")  # fmt: skip
    assert done.returncode == 0, done.stderr[-500:]
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    assert [row["batch"] for row in rows] == ["gpt-oss 1 ragged", "gpt-oss 1 one-long"]
    for row in rows:
        assert row["plan pack 1"][-1] == 1 and row["plan pack 2"][-1] == 2, row


def test_a_window_plans_every_batch_with_it():
    # gpt-oss's sliding-window layers: 128 requests of the last 128 keys pack two kv heads a
    # program (one round of programs against two unpacked); 64 requests do not.
    done = run_tool("--batch", "gpt-oss:1:128:4096", "gpt-oss:1:64:4096", "--window-left",
                    "127", "--plans-only")  # fmt: skip
    assert done.returncode == 0, done.stderr[-500:]
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    assert [row["window_left"] for row in rows] == [127, 127]
    assert [row["plan planned"][-1] for row in rows] == [2, 1], rows


def test_a_field_outside_the_tile_is_refused():
    # The workspace's fields (merge_rows here) are the plan's; num_splits is a planner knob.
    done = run_tool("--batch", "gpt-oss:1:8:4096", "--variant", "x", "merge_rows=4",
                    "--plans-only")  # fmt: skip
    assert done.returncode == 2 and "merge_rows" in done.stderr, done.stderr[-500:]
    done = run_tool("--batch", "gpt-oss:4:48:4000", "--variant", "one split", "num_splits=1",
                    "--plans-only")  # fmt: skip
    assert done.returncode == 0, done.stderr[-500:]
    (row,) = [json.loads(line) for line in done.stdout.splitlines()]
    assert row["plan one split"][1] == 1, row
    done = run_tool("--batch", "nobody:1:8:4096", "--plans-only")
    assert done.returncode == 2 and "unknown model" in done.stderr, done.stderr[-500:]


def test_a_variant_may_plan_16_row_head_blocks():
    # block_h is a planner knob for MLA only; the tool replaces the rule for that plan alone.
    done = run_tool("--batch", "gpt-oss:4:64:4096", "--variant", "16 rows", "block_h=16",
                    "--plans-only")  # fmt: skip
    assert done.returncode == 0, done.stderr[-500:]
    (row,) = [json.loads(line) for line in done.stdout.splitlines()]
    assert row["plan planned"][2] == 32 and row["plan 16 rows"][2] == 16, row


def test_a_batch_may_be_ragged():
    done = run_tool("--batch", "llama3-70b-tp8:4:32:100-2000", "llama3-70b-tp8:4:32:2000",
                    "--plans-only")  # fmt: skip
    assert done.returncode == 0, done.stderr[-500:]
    ragged, uniform = [json.loads(line) for line in done.stdout.splitlines()]
    assert ragged["batch"] == "llama3-70b-tp8 4 32 100-2000"
    assert ragged["plan planned"][0] == "balanced" and uniform["plan planned"][0] == "uniform"


def test_the_compare_tool_lines_up_runs_and_variants(tmp_path):
    compare = TOOL.parent / "gqa_ab_compare.py"
    old = {"batch": "x 4 8 2000", "planned": [20.0, 19.0], "plan planned": ["uniform", 8],
           "k64": [17.0], "plan k64": ["uniform", 8, 64]}  # fmt: skip
    new = {**old, "planned": [17.1, 17.3], "plan planned": ["uniform", 4]}
    (tmp_path / "old.jsonl").write_text(json.dumps(old) + "\n")
    (tmp_path / "new.jsonl").write_text(json.dumps(new) + "\n")
    done = subprocess.run([sys.executable, str(compare), str(tmp_path / "old.jsonl"),
                           str(tmp_path / "new.jsonl")], capture_output=True, text=True,
                          timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    line = done.stdout.splitlines()[1]
    assert "19.0" in line and "17.1" in line and "-10.0%" in line and "-> ['uniform', 4]" in line
    done = subprocess.run([sys.executable, str(compare), str(tmp_path / "old.jsonl"),
                           "--variants", "planned", "k64"], capture_output=True, text=True,
                          timeout=60)  # fmt: skip
    assert done.returncode == 0 and "-10.5%" in done.stdout, done.stdout + done.stderr
    plans = tmp_path / "plans.txt"
    new_plan = {"batch": "x 4 8 2000", "plan planned": ["uniform", 8, 64]}
    plans.write_text("compiling\n" + json.dumps(new_plan) + "\n")
    done = subprocess.run([sys.executable, str(compare), str(tmp_path / "old.jsonl"),
                           "--variants", "planned", "k64", "--plans", str(plans)],
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode == 0 and done.stdout.rstrip().endswith("= k64"), done.stdout


def test_a_knob_may_take_an_earlier_variants_field():
    # The packed launch on the unpacked plan's split count (next runs (session 47) item 3).
    done = run_tool("--batch", "gpt-oss:1:8:2048", "--variant", "p1", "kv_pack=1", "--variant",
                    "p2s", "kv_pack=2", "num_splits=@p1", "--plans-only")  # fmt: skip
    assert done.returncode == 0, done.stderr[-500:]
    (row,) = [json.loads(line) for line in done.stdout.splitlines()]
    assert row["plan planned"][1] == 16 and row["plan p1"][1] == 8, row
    assert row["plan p2s"][1] == 8 and row["plan p2s"][-1] == 2, row
    done = run_tool("--batch", "gpt-oss:1:8:2048", "--variant", "x", "num_splits=@later",
                    "--plans-only")  # fmt: skip
    assert done.returncode != 0 and "names no variant" in done.stderr, done.stderr[-500:]


def test_no_lengths_plans_as_a_cuda_graph_does():
    # Planned on the table's width alone: balanced (v0.2.65: a graph's replays are ragged
    # steps), and on uniform splits the fill rule's count (v0.2.61), where the batch's equal
    # lengths halve it.
    batch = "llama3-8b:1:24:32768"
    uniform = ("--variant", "uniform", "schedule=uniform")
    graph = run_tool("--batch", batch, "--plans-only", "--no-lengths", *uniform)
    given = run_tool("--batch", batch, "--plans-only")
    assert graph.returncode == 0 and given.returncode == 0, graph.stderr[-500:]
    assert json.loads(graph.stdout)["plan planned"][0] == "balanced"
    assert json.loads(graph.stdout)["plan uniform"][:2] == ["uniform", 4]
    assert json.loads(given.stdout)["plan planned"][:2] == ["uniform", 2]


def test_a_variant_may_plan_without_the_long_split_rule():
    # qwen-64-8 at qlen 4, 3 x 16,384: the long-split tile on 8 splits (H200 preset); without
    # the rule the fill rule's 32 splits on the uniform tile (run174's `off`), and the tile at
    # the long-split count (`u2`) takes the uniform tile's block through `@off`.
    done = run_tool("--batch", "qwen-64-8:4:3:16384", "--variant", "off", "long_split=False",
                    "--variant", "u2", "num_splits=@planned", "block_n=@off",
                    "split_num_stages=2", "--plans-only")  # fmt: skip
    assert done.returncode == 0, done.stderr[-500:]
    (row,) = [json.loads(line) for line in done.stdout.splitlines()]
    assert row["plan planned"][:5] == ["uniform", 8, 32, 64, 3], row
    assert row["plan off"][:5] == ["uniform", 32, 32, 128, 2], row
    assert row["plan u2"][:5] == ["uniform", 8, 32, 128, 2], row
