"""Programmatic dependent launch (Hopper and later): the merge is launched while stage 1 still
runs, so its launch latency hides behind stage 1's last programs; its programs then wait at
`wait_for_prior_grid` until stage 1's writes are complete and visible. Both helpers compile to
nothing when disabled (the interpreter, AMD, pre-Hopper NVIDIA).

The PTX is issued here rather than through `triton.language.extra.cuda`'s `gdc_wait` and
`gdc_launch_dependents`, which Triton 3.4 cannot compile (they take the builder argument its
code generator no longer passes) and which earlier releases lack: the same two instructions,
on every Triton splitkv supports (`tools/compile_check.py`)."""

import triton
import triton.language as tl


@triton.jit
def release_dependent_grid(ENABLED: tl.constexpr):
    """Let the next kernel in the stream start launching (it still waits for our writes)."""
    if ENABLED:
        tl.inline_asm_elementwise("griddepcontrol.launch_dependents; // dummy $0", "=r", [],
                                  dtype=tl.int32, is_pure=False, pack=1)  # fmt: skip


@triton.jit
def wait_for_prior_grid(ENABLED: tl.constexpr):
    """Block until the previous kernel in the stream has finished and its writes are visible."""
    if ENABLED:
        tl.inline_asm_elementwise("griddepcontrol.wait; // dummy $0", "=r", [], dtype=tl.int32,
                                  is_pure=False, pack=1)  # fmt: skip
