"""Session 66: does Gluon (Triton 3.6) take a 48-column wgmma accumulator? Compiles a one-wgmma
kernel for sm_90 on the CPU at N = 64 and N = 48:

    python benchmarks/results/session66/probe_48_columns.py

Result: 64 compiles (m64n64k16); 48 fails, "shape must have power-of-2 and non-zero dimensions".
"""

import os
import re

os.environ["TRITON_INTERPRET"] = "0"  # compile for real, even on a machine without a GPU

import triton
from triton.backends.compiler import GPUTarget
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon._runtime import GluonASTSource
from triton.experimental.gluon.language.nvidia.hopper import (
    warpgroup_mma,
    warpgroup_mma_wait,
)


@gluon.jit
def one_wgmma(out_ptr, N: gl.constexpr):
    acc_layout: gl.constexpr = gl.NVMMADistributedLayout(
        version=[3, 0], warps_per_cta=[4, 1], instr_shape=[16, N, 16]
    )
    a = gl.allocate_shared_memory(
        gl.float16, [64, 64], gl.NVMMASharedLayout.get_default_for([64, 64], gl.float16)
    )
    b = gl.allocate_shared_memory(
        gl.float16, [64, N], gl.NVMMASharedLayout.get_default_for([64, N], gl.float16)
    )
    acc = gl.zeros([64, N], gl.float32, acc_layout)
    acc = warpgroup_mma(a, b, acc, is_async=True)
    acc = warpgroup_mma_wait(num_outstanding=0, deps=(acc,))
    rows = gl.arange(0, 64, layout=gl.SliceLayout(1, acc_layout))
    cols = gl.arange(0, N, layout=gl.SliceLayout(0, acc_layout))
    gl.store(out_ptr + rows[:, None] * N + cols[None, :], acc)


for columns in (64, 48):
    source = GluonASTSource(
        fn=one_wgmma, signature={"out_ptr": "*fp32", "N": "constexpr"}, constexprs={"N": columns}
    )
    try:
        kernel = triton.compile(source, target=GPUTarget("cuda", 90, 32), options={"num_warps": 4})
        wgmmas = sorted(set(re.findall(r"wgmma\.mma_async\S*", kernel.asm["ptx"])))
        print(columns, "compiles:", wgmmas)
    except Exception as error:  # the compiler wraps the front end's error
        print(columns, "fails:", repr(error.__cause__ or error)[:300])
