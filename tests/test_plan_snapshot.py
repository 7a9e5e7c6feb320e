"""tools/mla_plan_snapshot.py: the snapshot a planner change is checked against is the same
from run to run (seeded lengths), and its diff names what changed."""

import json
import subprocess
import sys
from pathlib import Path

TOOL = Path(__file__).resolve().parents[1] / "tools" / "mla_plan_snapshot.py"


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
