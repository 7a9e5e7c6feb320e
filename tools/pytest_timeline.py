"""Each pytest-xdist worker's timeline: when each test started and ended, on which worker.

The CPU suite's wall time is set by whichever worker finishes last, not by the sum of its
tests (docs/perf.md session 59): before trimming tests, see whether the workers sit idle.

    PYTHONPATH=tools python -m pytest -p pytest_timeline   # writes /tmp/pytest_timeline/gw*.jsonl
    python tools/pytest_timeline.py                       # each worker's busy time and last tests

$PYTEST_TIMELINE_DIR moves the folder (cleared by hand between runs: the plugin appends).
"""

import json
import os
import sys
import time
from collections import defaultdict
from pathlib import Path

import pytest

FOLDER = Path(os.environ.get("PYTEST_TIMELINE_DIR", "/tmp/pytest_timeline"))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    start = time.time()
    yield
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    FOLDER.mkdir(parents=True, exist_ok=True)
    with open(FOLDER / f"{worker}.jsonl", "a") as log:
        log.write(json.dumps({"id": item.nodeid, "start": start, "end": time.time()}) + "\n")


def main() -> None:
    runs = {
        path.stem: [json.loads(line) for line in path.read_text().splitlines()]
        for path in FOLDER.glob("*.jsonl")
    }
    if not runs:
        sys.exit(f"no timeline in {FOLDER}")
    t0 = min(r["start"] for rows in runs.values() for r in rows)
    for worker, rows in sorted(runs.items()):
        busy = sum(r["end"] - r["start"] for r in rows)
        last = max(r["end"] for r in rows) - t0
        print(f"{worker}: {len(rows)} tests, busy {busy:.0f} s, last end {last:.0f} s")
    per_test = defaultdict(float)
    for rows in runs.values():
        for r in rows:
            per_test[r["id"].split("[")[0]] += r["end"] - r["start"]
    print("slowest tests (all their cases, s):")
    for name, seconds in sorted(per_test.items(), key=lambda kv: -kv[1])[:15]:
        print(f"  {seconds:6.1f}  {name}")


if __name__ == "__main__":
    main()
