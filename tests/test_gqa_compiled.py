"""What the compiler makes of the balanced GQA stage 1 that the planner picks, for the H200
(sm_90), without a GPU (tools/inspect_gqa.py, in its own process): the session-28 rule rests on
3 programs an SM at 16 rows (~70 KB of shared memory, ~156 registers) and on no spills, and the
session-29 grid on the residency table `gqa_balanced_residency` keeps, and the session-30 long
uniform splits on `gqa_long_split_residency`'s."""

import os
import subprocess
import sys

import pytest
from test_compiled_kernel import compiled_all

from splitkv.gqa_tile_rules import (
    GQA_WIDE_TILE_RESIDENCY,
    gqa_balanced_residency,
    gqa_long_split_residency,
)

# Registers, spills and residency as Triton 3.6 compiles the tiles (3.4 and 3.9 differ).
pytestmark = pytest.mark.triton_3_6


def test_balanced_defaults_fit_three_an_sm_without_spills():
    rows = compiled_all("--model", "llama3-8b", "gpt-oss", "--qlen", "1", "8", "--batch",
                        "ragged", tool="inspect_gqa.py")  # fmt: skip
    by = {(r["model"], r["qlen"]): r for r in rows}
    for row in rows:
        assert row["schedule"] == "balanced" and row["stages"] == 3 and row["prefetch"], row
        assert row["stack_bytes"] == 0, row
    for model in ("llama3-8b", "gpt-oss"):
        narrow = by[(model, 1)]
        assert narrow["block_h"] == 16 and narrow["per_sm"] == 3, narrow
        assert narrow["shared_kb"] <= 72, narrow
    assert by[("llama3-8b", 8)]["block_h"] == 32 and by[("gpt-oss", 8)]["block_h"] == 64


def test_residency_table_matches_the_compiled_tiles():
    # The tiles of every row height at both head dims (gpt-oss 64, llama3-70b-tp8 128; 16-row
    # tiles at both in the test above).
    rows = compiled_all("--model", "gpt-oss", "--qlen", "4", "--batch", "ragged",
                        tool="inspect_gqa.py")  # fmt: skip
    rows += compiled_all("--model", "llama3-70b-tp8", "--qlen", "1", "4", "8", "--batch",
                         "ragged", tool="inspect_gqa.py")  # fmt: skip
    for row in rows:
        head_dim = 64 if row["model"] == "gpt-oss" else 128
        assert row["per_sm"] == gqa_balanced_residency(row["block_h"], head_dim, 2), row
        assert row["stack_bytes"] == 0, row


def test_long_split_residency_matches_the_compiled_tiles():
    # Uniform splits on the long-split tile (3 stages, page ids ahead) at 16, 32 and 64 rows,
    # head dims 64 and 128: the planner halves their splits until the launch fits a wave of
    # what the table says an SM holds, the fewest of the models' builds.
    rows = compiled_all("--model", "llama3-8b", "gpt-oss", "llama3-70b-tp8", "--qlen", "1", "4",
                        "8", "--batch", "uniform", tool="inspect_gqa.py")  # fmt: skip
    assert len(rows) == 9
    fewest = {}
    for row in rows:
        head_dim = 64 if row["model"] == "gpt-oss" else 128
        assert (row["schedule"], row["stages"], row["prefetch"]) == ("uniform", 3, True), row
        assert row["waves"] <= 1 and row["stack_bytes"] == 0, row
        key = (row["block_h"], head_dim)
        fewest[key] = min(fewest.get(key, row["per_sm"]), row["per_sm"])
    for (block_h, head_dim), per_sm in fewest.items():
        table = gqa_long_split_residency(block_h, head_dim, 2)
        if (block_h, head_dim) == (32, 128):
            # Values at the keys' row offsets (v0.2.55) compile this tile to 3 an SM; the
            # table keeps the 2 of the GPU's 32-row one-split builds (docs/perf.md session 46).
            assert (table, per_sm) == (2, 3), (block_h, head_dim)
        else:
            assert table == per_sm, (block_h, head_dim)


def test_the_wide_tile_at_head_dim_64_holds_four_an_sm():
    # gpt-oss at qlen 4 (32 rows) on one uniform split: 128-key blocks held it to 2-3 programs
    # an SM on the H200 (142-177 registers); the 64-key blocks `gqa_wide_tile` takes there
    # compiled to 100-124 (docs/perf.md, session 39).
    (row,) = compiled_all("--model", "gpt-oss", "--qlen", "4", "--batch", "many",
                          tool="inspect_gqa.py")  # fmt: skip
    assert (row["schedule"], row["block_h"], row["block_n"]) == ("uniform", 32, 64), row
    assert row["per_sm"] >= 4 and row["stack_bytes"] == 0, row


def test_one_split_at_head_dim_128_takes_the_3_stage_build_that_does_not_spill():
    # 32 rows at head dim 128 on one split (llama3-8b at qlen 8): the 2-stage build, with
    # num_splits = 1 a constant as Triton compiles it, took 255 registers and spilled (the
    # H200's build: 255, 16-18 spilled values); the 3 stages the planner gives it compile to
    # ~200 without, and ran 6-12% faster (docs/perf.md, session 39). With values read at the
    # keys' row offsets (v0.2.55) the 2-stage build fits without spills and 3 stages still run
    # 0.4-1.2% faster on 128-key blocks, 20-27% on 64 (session 46).
    (row,) = compiled_all("--model", "llama3-8b", "--qlen", "8", "--batch", "many",
                          tool="inspect_gqa.py")  # fmt: skip
    assert (row["block_h"], row["block_n"], row["stages"]) == (32, 128, 3), row
    assert row["stack_bytes"] == 0, row


def test_one_split_uniform_tiles_fill_the_waves_the_fill_rule_counts():
    # The planner sizes uniform GQA launches in waves of 4 programs an SM (a GQA key block
    # moves 32 KB: `resident_programs_per_sm`); a build holding 3 fills them unevenly: 512
    # programs are 1.29 waves of 3, against 1.94 of 2, and ran 1.28-1.39x slower (H200,
    # docs/perf.md session 39). The default one-split builds, as Triton compiles them at
    # launch, hold 4 or 2, at 16, 32 and 64 rows and head dims 64 and 128.
    rows = compiled_all("--model", "gpt-oss", "qwen-64-8", "llama3-8b", "--qlen", "1", "4", "8",
                        "--batch", "many", tool="inspect_gqa.py")  # fmt: skip
    assert len(rows) == 9
    for row in rows:
        assert row["schedule"] == "uniform" and row["per_sm"] in (2, 4), row
        assert row["stack_bytes"] == 0, row


def test_a_run_time_split_start_costs_the_key_loop_nothing():
    # A split starting at a run-time key (every build but one split's, where it is a constant
    # 0) used to pay a signed remainder and division a key for its slots and page ids: the
    # generic loop took 522 instructions against 475 (sm_90, gpt-oss at qlen 4), and ran
    # 5-12% slower. Slots as low bits and page ids as the block start's plus a pattern
    # (kernels/paged.py, v0.2.44) took it to 436; the H200 ran split GQA batches 2-10%
    # faster (docs/perf.md session 40).
    args = ("--model", "gpt-oss", "--qlen", "4", "--batch", "many")
    (one,) = compiled_all(*args, tool="inspect_gqa.py")
    (generic,) = compiled_all(*args, "--generic-splits", tool="inspect_gqa.py")
    assert one["loop_instructions"] > 0, one
    assert generic["loop_instructions"] <= one["loop_instructions"], (generic, one)


def stage_1_specialises_not(name: str) -> bool:
    """Whether the compiled uniform GQA stage 1 lists this argument in do_not_specialize."""
    code = ("from splitkv.kernels.gqa_split import gqa_split_kernel as k; "
            f"print(k.arg_names.index('{name}') in k.do_not_specialize "
            f"or '{name}' in k.do_not_specialize)")  # fmt: skip
    env = {**os.environ, "TRITON_INTERPRET": "0"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr[-500:]
    return done.stdout.strip() == "True"


def test_one_split_keeps_its_own_build():
    # num_splits equal to 1 compiles as a constant: that build took up to 21 more registers
    # and still ran 5-12% faster than the generic one on the H200 (qwen-64-8 q4 64 x 4k 278.6
    # against 303.5 us, gpt-oss q4 128 x 4k 352.7 against 395.1; docs/perf.md session 40).
    assert not stage_1_specialises_not("num_splits")


def test_uniform_stage_1_compiles_one_build_for_every_batch():
    # Triton compiles an int argument equal to 1 as a constant; that build of the uniform GQA
    # stage 1 streamed 2-5% slower at batch 1 on the H200 (docs/perf.md, session 32).
    assert stage_1_specialises_not("batch")


def test_wide_tile_residency_matches_the_compiled_tiles():
    # The 2-stage wide tiles on 16 splits (num_splits specialised as the GPU's launches do) at
    # 32 and 64 rows, head dims 64 and 128, on each key block the table lists: it holds the
    # fewest of the models' builds an SM (gqa_wide_tile takes 3 blocks a split by it).
    fewest = {}
    for block_n in (32, 64, 128):
        rows = compiled_all("--model", "llama3-70b-tp8", "llama3-8b", "qwen-64-8", "gpt-oss",
                            "--qlen", "4", "8", "--batch", "many", "--knobs", f"block_n={block_n}",
                            "num_stages=2", "num_splits=16", tool="inspect_gqa.py")  # fmt: skip
        for row in rows:
            head_dim = 64 if row["model"] == "gpt-oss" else 128
            key = (row["block_h"], head_dim)
            if row["block_h"] >= 32 and block_n in GQA_WIDE_TILE_RESIDENCY[key]:
                assert row["block_n"] == block_n and row["stages"] == 2, row
                assert row["stack_bytes"] == 0, row
                fewest[key, block_n] = min(fewest.get((key, block_n), 99), row["per_sm"])
    listed = {(k, n): held for k, by in GQA_WIDE_TILE_RESIDENCY.items() for n, held in by.items()}
    assert fewest == listed


def test_one_splits_keep_their_residency_with_values_at_the_keys_offsets():
    # The GPU's one-split builds (`tools/gqa_plan_ab.py --builds`, docs/perf.md session 46),
    # which the CPU compile of the same batch reproduces: gpt-oss at qlen 4 (32 rows, head dim
    # 64, 128-key blocks) takes 136 registers, 3 an SM, and 196 (2) with the values read at the
    # keys' row offsets, so head dim 64 keeps its own; qwen-64-8 at qlen 4 (head dim 128) gains
    # a program an SM with them (180 -> 168 registers, 2 -> 3) and ran 4-7% faster.
    rows = compiled_all("--model", "gpt-oss", "qwen-64-8", "--qlen", "4", "--batch",
                        "28:261-843", tool="inspect_gqa.py")  # fmt: skip
    by = {row["model"]: row for row in rows}
    for row in rows:
        assert (row["schedule"], row["block_h"], row["stages"]) == ("uniform", 32, 3), row
    assert by["gpt-oss"]["per_sm"] == 3 and by["gpt-oss"]["stack_bytes"] == 0, by["gpt-oss"]
    assert by["qwen-64-8"]["per_sm"] == 3, by["qwen-64-8"]


def test_the_uniform_tiles_hold_what_the_wave_rule_counts():
    # splitkv/gqa_uniform_waves.py halves the fill rule's splits where their launch passes a
    # wave of the uniform tile (2 stages, several splits) by its real residency: at 16 rows 96
    # registers at head dim 128 (5 an SM), 109-113 at head dim 64, packed or on one kv head
    # (4); gpt-oss's 32 rows at qlen 4 (5) and 64 rows at qlen 8 (107 registers: 4, as the
    # H100 compiled it in docs/perf.md session 56). H200 (session 51): llama3-8b 6 x 65,536
    # 463.2 -> 364.7 us halved. (mha-32's 36 requests take one split: a build of its own,
    # which the rule leaves alone.)
    rows = compiled_all("--model", "llama3-8b", "qwen-64-8", "gpt-oss", "llama3-70b-tp8",
                        "--qlen", "1", "--batch", "10:83317", "36:65540",
                        tool="inspect_gqa.py")  # fmt: skip
    rows += compiled_all("--model", "mha-32", "--qlen", "1", "--batch", "10:83317",
                         tool="inspect_gqa.py")  # fmt: skip
    rows += compiled_all("--model", "gpt-oss", "--qlen", "4", "--batch", "40:4000",
                         tool="inspect_gqa.py")  # fmt: skip
    rows += compiled_all("--model", "gpt-oss", "--qlen", "8", "--batch", "28:32768",
                         tool="inspect_gqa.py")  # fmt: skip
    held = {("llama3-8b", 16): 5, ("qwen-64-8", 16): 5, ("mha-32", 16): 5, ("gpt-oss", 16): 4,
            ("llama3-70b-tp8", 16): 4, ("gpt-oss", 32): 5, ("gpt-oss", 64): 4}  # fmt: skip
    seen = set()
    for row in rows:
        if (row["schedule"], row["stages"]) != ("uniform", 2):
            continue
        key = (row["model"], row["block_h"])
        assert row["per_sm"] == held[key] and row["stack_bytes"] == 0, row
        seen.add(key)
    assert seen == set(held), seen
