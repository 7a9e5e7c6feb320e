"""tools/mla_plan_snapshot.py and tools/plan_random_snapshot.py: the snapshots a planner change
is checked against are the same from run to run (seeded), and the MLA one's diff names what
changed."""

import json
import subprocess
import sys
from pathlib import Path

TOOL = Path(__file__).resolve().parents[1] / "tools" / "mla_plan_snapshot.py"
RANDOM_TOOL = TOOL.with_name("plan_random_snapshot.py")


def test_snapshot_is_reproducible_and_its_diff_names_changes(tmp_path):
    first, second = tmp_path / "first.json", tmp_path / "second.json"
    subprocess.run([sys.executable, str(TOOL), str(first)], check=True, capture_output=True)
    rows = json.loads(first.read_text())
    assert len(rows) == 720 and {"schedule", "num_splits"} <= set(rows[0]["plan"])
    rows[0]["plan"]["num_splits"] += 1  # as if a change had moved one plan
    first.write_text(json.dumps(rows))
    done = subprocess.run([sys.executable, str(TOOL), str(second), "--diff", str(first)],
                          check=True, capture_output=True, text=True)  # fmt: skip
    assert done.stdout.strip().endswith("1 of 720 plans changed"), done.stdout


def test_random_snapshot_is_reproducible_with_plans_and_refusals(tmp_path):
    files = [tmp_path / "a.jsonl", tmp_path / "b.jsonl"]
    for out in files:
        subprocess.run([sys.executable, str(RANDOM_TOOL), str(out), "--count", "300"],
                       check=True, capture_output=True)  # fmt: skip
    assert files[0].read_text() == files[1].read_text()
    rows = [json.loads(line)[1] for line in files[0].read_text().splitlines()]
    plans = [row for row in rows if isinstance(row, dict)]
    assert len(rows) == 300 and 0 < len(plans) < 300
    assert {"mla", "gqa"} == {plan["kind"] for plan in plans}
    # Every preset with tunables of its own, and the CPU.
    devices = {plan["device_name"].split()[0] for plan in plans}  # "cpu (Triton interpreter)"
    assert devices == {"h200", "h100", "mi355x", "cpu"}
    assert all("partial_o" in plan["workspace"] for plan in plans)
