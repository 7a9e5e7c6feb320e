"""tools/compile_check.py: every kernel that the H200's plans launch for its cases (Gluon's MLA
kernels, the Triton split, balanced and merge kernels, the cascade's and merge_states') compiles
for sm_90 through Triton's own launch path, on the installed Triton, without a GPU."""

import subprocess
import sys
from pathlib import Path

from splitkv.warp_specialized import gluon_available

TOOL = Path(__file__).resolve().parents[1] / "tools" / "compile_check.py"


def test_every_launch_of_the_cases_compiles():
    done = subprocess.run([sys.executable, str(TOOL)], capture_output=True, text=True,
                          timeout=900)  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    lines = done.stdout.splitlines()
    assert lines[-1].endswith(" 0 failed"), lines[-1]
    launched = " ".join(lines)
    kernels = ["gqa_split_kernel", "gqa_balanced_kernel", "merge_splits_kernel",
               "merge_prefix_kernel", "merge_states_kernel", "mla_balanced_kernel"]  # fmt: skip
    if gluon_available():  # Triton 3.6: the H200's MLA plans take the Gluon kernels
        kernels += ["mla_warp_specialized_kernel", "mla_warp_specialized_loop_kernel"]
    else:
        kernels += ["mla_split_kernel"]
    for kernel in kernels:
        assert kernel in launched
