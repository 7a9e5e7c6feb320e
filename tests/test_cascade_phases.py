"""tools/cascade_phases.py: its phases, each run on what the ones before it left, compose to the
whole cascade call's output (so the GPU timings it prints are of the call's own launches)."""

import os
import subprocess
import sys
from pathlib import Path

import numpy
import pytest

TOOL = Path(__file__).resolve().parents[1] / "tools" / "cascade_phases.py"


# The device's image has NumPy 2.4, which Triton 3.6's interpreter cannot run on
# (pyproject.toml's test extra pins numpy < 2.4; session 55, run162).
INTERPRETER_RUNS = tuple(int(part) for part in numpy.__version__.split(".")[:2]) < (2, 4)


@pytest.mark.skipif(not INTERPRETER_RUNS, reason="Triton 3.6's interpreter needs numpy < 2.4")
def test_the_phases_compose_to_the_whole_call():
    # The small mix runs on the CPU, so on the interpreter even where a GPU is present.
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    done = subprocess.run([sys.executable, str(TOOL), "--small", "--heads", "4"], env=env,
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stdout[-1000:] + done.stderr[-1000:]
    assert done.stdout.strip().endswith("merge equals the whole call: True"), done.stdout
