"""The GPU's global nanosecond timer from Triton kernels, for the tools that record when
programs start and end (tools/kernel_timeline.py). NVIDIA only; never called by default. The
Gluon kernels, which cannot call Triton's functions, have their own
(`mla_warp_specialized_loop.global_time`)."""

import triton
import triton.language as tl


@triton.jit
def global_time():
    """%globaltimer: the same nanosecond clock on every SM."""
    return tl.inline_asm_elementwise("mov.u64 $0, %globaltimer;", "=l", [], dtype=tl.int64,
                                     is_pure=False, pack=1)  # fmt: skip


@triton.jit
def stamp(times_ptr, index, ENABLED: tl.constexpr):
    """Store the time at times_ptr[index] when ENABLED (a compile-time choice)."""
    if ENABLED:
        tl.store(times_ptr + index, global_time())
