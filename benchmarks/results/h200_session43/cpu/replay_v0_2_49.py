"""Session 43, CPU only: every batch timed in calls 1-6, planned by this tree's planner
(`tools/gqa_plan_ab.py --plans-only`), matched to the variant of its run timed with the same
plan; prints each plan it changes against the default of that run, and a summary. Run from
the repository root:

    python benchmarks/results/h200_session43/cpu/replay_v0_2_49.py
"""

import json
import math
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[4]
RESULTS = Path(__file__).resolve().parents[1]
RUNS = ((1, "ab"), (2, "ab"), (3, "ab"), (4, "long_hd64"), (4, "long_hd128"), (5, "ab"), (6, "ab"))


def main() -> None:
    rows = []
    for call, name in RUNS:
        for line in (RESULTS / f"call{call}" / f"{name}.jsonl").read_text().splitlines():
            rows.append({**json.loads(line), "call": call})
    batches = sorted({row["batch"].replace(" ", ":") for row in rows})
    command = [sys.executable, str(ROOT / "tools/gqa_plan_ab.py"), "--plans-only", "--batch"]
    out = subprocess.run([*command, *batches], capture_output=True, text=True, check=True)
    plans = {}
    for line in out.stdout.splitlines():
        if line.startswith("{"):
            row = json.loads(line)
            plans[row["batch"]] = row["plan planned"]
    ratios, left, untimed = [], 0, 0
    for row in rows:
        sides = [k[5:] for k in row if k.startswith("plan ") and row[k] == plans[row["batch"]]]
        if not sides:
            untimed += 1
            continue
        if "planned" in sides:
            left += 1
            continue
        before, after = min(row["planned"]), min(row[sides[0]])
        ratios.append(after / before)
        change = 100 * (after / before - 1)
        print(f"call{row['call']} {row['batch']:24s} {before:6.1f} -> {after:6.1f} {change:+6.1f}%")
    geomean = math.exp(sum(map(math.log, ratios)) / len(ratios))
    print(f"{len(ratios)} changed: {sum(r < 1 for r in ratios)} faster, "
          f"{sum(r > 1 for r in ratios)} slower, geometric mean {geomean:.3f}; "
          f"{left} left on their run's default; {untimed} whose plan no variant timed")  # fmt: skip


if __name__ == "__main__":
    main()
