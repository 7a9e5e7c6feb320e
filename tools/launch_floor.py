"""The floor under a small decode step: what CUDA-graph replay charges for launching kernels
that do (almost) nothing, one after the other or as a programmatic dependent launch.

    python tools/launch_floor.py --out benchmarks/results/floor   # GPU only

Issue 3's batch-1 targets (8k x 1 <= 8 us) and its merge share (<= 5%) are bounded below by
these: a two-kernel step (stage 1, then the merge) pays two launches, however little they do.
Each measurement is the p50 of splitkv's own timing (CUDA-graph replays, `splitkv.timing`).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch
import triton
import triton.language as tl

from splitkv.kernels.dependent_launch import release_dependent_grid, wait_for_prior_grid
from splitkv.timing import cuda_graph_times_us


@triton.jit
def _touch_kernel(out_ptr, PDL_RELEASE: tl.constexpr, PDL_WAIT: tl.constexpr):
    """One store a program: a kernel whose time is its launch."""
    wait_for_prior_grid(PDL_WAIT)
    release_dependent_grid(PDL_RELEASE)
    tl.store(out_ptr + tl.program_id(0), 1.0)


def _p50(fn) -> float:
    fn()
    return cuda_graph_times_us(fn)[1]


def launch_floor(programs: int) -> dict[str, float]:
    """p50 us of one, two, and two dependent-launched do-nothing kernels of `programs` each."""
    out = torch.empty(programs, device="cuda")

    def touch(release=False, wait=False, pdl=False):
        _touch_kernel[(programs,)](out, PDL_RELEASE=release, PDL_WAIT=wait, num_warps=4,
                                   **({"launch_pdl": True} if pdl else {}))  # fmt: skip

    return {
        "one_kernel_us": _p50(touch),
        "two_kernels_us": _p50(lambda: (touch(), touch())),
        "two_kernels_dependent_launch_us": _p50(
            lambda: (touch(release=True), touch(wait=True, pdl=True))
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--programs", type=int, default=132)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results"))
    args = parser.parse_args()
    result = {
        "gpu": torch.cuda.get_device_name(),
        "torch": torch.__version__,
        "triton": triton.__version__,
        "launch": launch_floor(args.programs),
    }
    print(json.dumps(result, indent=1))
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "launch_floor.json").write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
