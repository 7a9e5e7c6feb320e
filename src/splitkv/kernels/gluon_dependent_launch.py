"""Programmatic dependent launch (Hopper and later) from the Gluon kernels: `dependent_launch.py`
for Gluon, whose kernels cannot call Triton's helpers. A kernel launched with `launch_pdl` may
start once the kernel ahead of it in the stream releases it (or ends), and must wait before it
reads what that kernel writes or writes what that kernel reads."""

from triton.experimental import gluon
from triton.experimental.gluon import language as gl


@gluon.jit
def release_dependents():
    """Let the next kernel in the stream start launching (it still waits for our writes)."""
    gl.inline_asm_elementwise("griddepcontrol.launch_dependents; // $0", "=r", [],
                              dtype=gl.int32, is_pure=False, pack=1)  # fmt: skip


@gluon.jit
def wait_for_kernel_ahead():
    """Block until the kernel ahead in the stream has finished and its writes are visible (at
    once when this kernel was not launched as its dependent)."""
    gl.inline_asm_elementwise("griddepcontrol.wait; // $0", "=r", [], dtype=gl.int32,
                              is_pure=False, pack=1)  # fmt: skip
