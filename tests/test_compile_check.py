"""tools/compile_check.py: every kernel that a GPU's plans launch for the tool's cases (Gluon's MLA
kernels on Hopper, the Triton split, balanced and merge kernels, the cascade's and
merge_states') compiles for that GPU through Triton's own launch path, on the installed Triton,
without a GPU: the H200 (sm_90), B200 (sm_100), A100 (sm_80), MI300X (gfx942) and MI355X
(gfx950)."""

import subprocess
import sys
from pathlib import Path

import pytest

from splitkv.warp_specialized import gluon_available

TOOL = Path(__file__).resolve().parents[1] / "tools" / "compile_check.py"


@pytest.mark.parametrize("target", ["sm_90", "sm_100", "sm_80", "gfx942", "gfx950"])
def test_every_launch_of_the_cases_compiles(target):
    done = subprocess.run([sys.executable, str(TOOL), "--target", target], capture_output=True,
                          text=True, timeout=900)  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    lines = done.stdout.splitlines()
    assert lines[-1].endswith(" 0 failed"), lines[-1]
    launched = " ".join(lines)
    kernels = ["gqa_split_kernel", "gqa_balanced_kernel", "merge_splits_kernel",
               "merge_prefix_kernel", "merge_states_kernel", "mla_balanced_kernel"]  # fmt: skip
    if target == "sm_90" and gluon_available():  # Hopper on Triton 3.6: MLA on Gluon
        kernels += ["mla_warp_specialized_kernel", "mla_warp_specialized_loop_kernel"]
    else:
        kernels += ["mla_split_kernel"]
    for kernel in kernels:
        assert kernel in launched
