"""tools/wave_model.py: the partial-wave model's arithmetic, its fit on session 51's recorded
runs, and its predictions from plans compiled without a GPU."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CALL1 = ROOT / "benchmarks" / "results" / "h200_session51" / "call1" / "logs" / "half.txt"


def run_tool(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "tools" / "wave_model.py"), *args],
                          capture_output=True, text=True, timeout=600)  # fmt: skip


def test_whole_waves_run_at_the_full_rate_and_a_short_tail_costs_c():
    # In a process of its own: the tool compiles for real, so it turns the interpreter off as
    # it is imported (`tools/inspect_gqa.py`), which this process's other tests need on.
    checks = """
import sys
sys.path.insert(0, sys.argv[1])
from wave_model import modelled, wave_time
assert wave_time(2.0, 0.5) == 2.0 and modelled(2.0, 0.5) == 1.0
assert wave_time(1.1, 0.5) == 1.5  # a tail of 0.1 takes half a wave
assert wave_time(1.8, 0.5) == 1.8  # a tail past c takes its own share
assert wave_time(0.25, 0.5) == 0.5  # one partial wave: at most 1/c times as fast
assert modelled(0.25, 0.5) == 2.0
"""
    done = subprocess.run([sys.executable, "-c", checks, str(ROOT / "tools")],
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr[-800:]


@pytest.mark.triton_3_6
def test_the_fit_on_call_1_reproduces_its_directions():
    done = run_tool("--fit", str(CALL1))
    assert done.returncode == 0, done.stderr[-800:]
    best = re.search(r"rms\s+([\d.]+)% over (\d+) pairs", done.stdout)
    assert best and float(best.group(1)) < 7 and best.group(2) == "23", done.stdout[:400]
    rows = [line for line in done.stdout.splitlines() if " measured " in line]
    assert len(rows) == 23 and not [r for r in rows if r.endswith("direction")], rows


@pytest.mark.triton_3_6
def test_predictions_name_waves_and_the_fastest_variant():
    # llama3-8b 6 x 65,536 at qlen 1: 16 splits are 768 programs on the 16-row tile's 660 a
    # wave (1.16 waves), 8 splits one wave of longer programs.
    done = run_tool("--batch", "llama3-8b:1:6:65536", "--variant", "double",
                    "num_splits=@planned*2")  # fmt: skip
    assert done.returncode == 0, done.stderr[-800:]
    (row,) = [json.loads(line) for line in done.stdout.splitlines()]
    assert row["planned"]["plan"][1] == 8 and row["planned"]["waves"] == 0.58, row
    assert row["double"]["waves"] == 1.16 and row["double"]["ratio"] > 1.2, row
    assert row["fastest"] == "planned"


@pytest.mark.triton_3_6
def test_a_curve_fits_a_c_for_each_build():
    # Session 40's call 6 at 2 splits across its batches, one c a build.
    calls = ROOT / "benchmarks" / "results" / "h200_session40" / "call6" / "splits.jsonl"
    done = run_tool("--fit", str(calls), "--curve", "2 splits", "--per-tile")
    assert done.returncode == 0, done.stderr[-800:]
    assert re.search(r"rms\s+[\d.]+% over 9 pairs\n    \d+ rows hd \d+", done.stdout), done.stdout


@pytest.mark.triton_3_6
def test_the_h100_constants_fit_its_own_curve():
    # Session 56's llama3-8b curve on the H100 (8 uniform splits, 0.24-3.7 waves): the H200's
    # constants miss it by more than the H100's own (c 0.3 on the 16-row tile).
    curve = ROOT / "benchmarks" / "results" / "h100_session56" / "run165" / "logs"
    rms = {}
    for gpu in ("h200", "h100"):
        done = run_tool("--fit", str(curve / "curve_l8.jsonl"), "--curve", "s8", "--gpu", gpu)
        assert done.returncode == 0, done.stderr[-800:]
        rms[gpu] = float(re.search(r"rms\s+([\d.]+)%", done.stdout).group(1))  # the first line
    assert rms["h100"] < 5 < rms["h200"], rms
