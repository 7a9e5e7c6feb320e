"""Programmatic dependent launch (Hopper and later): the merge is launched while stage 1 still
runs, so its launch latency hides behind stage 1's last programs; its programs then wait at
`wait_for_prior_grid` until stage 1's writes are complete and visible. Both helpers compile to
nothing when disabled (the interpreter, AMD, pre-Hopper NVIDIA)."""

import triton
import triton.language as tl
from triton.language.extra.cuda import gdc_launch_dependents, gdc_wait


@triton.jit
def release_dependent_grid(ENABLED: tl.constexpr):
    """Let the next kernel in the stream start launching (it still waits for our writes)."""
    if ENABLED:
        gdc_launch_dependents()


@triton.jit
def wait_for_prior_grid(ENABLED: tl.constexpr):
    """Block until the previous kernel in the stream has finished and its writes are visible."""
    if ENABLED:
        gdc_wait()
