"""tools/fuzz_reference.py: its quick targets run and pass on a few seeded cases (the tool's
long runs are logged in docs/perf.md, session 48)."""

import subprocess
import sys
from pathlib import Path

TOOL = Path(__file__).resolve().parents[1] / "tools" / "fuzz_reference.py"


def test_quick_targets_pass():
    targets = ["merge", "gqa-bad", "gqa", "plan-memo"]
    done = subprocess.run([sys.executable, str(TOOL), *targets, "--count", "2"],
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stdout[-1000:] + done.stderr[-1000:]
    for target in targets:
        assert f"{target}: 0 of 2 failed" in done.stdout
