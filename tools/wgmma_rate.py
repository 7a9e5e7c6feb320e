"""How fast Hopper's wgmma multiplies at each N, with the operands where splitkv's 64-row MLA
tile keeps them: the evidence for what bounds that tile (docs/perf.md, session 21).

The alternating consumers (kernels/mla_alternate_blocks.py) score 32-key blocks: S = Q K^T is
m64n32k16 with Q (A) and K (B) both read from shared memory, 3 KB of operands for 32K
multiply-adds. If shared memory feeds wgmma 128 bytes a clock per SM while the tensor cores do
1,024 dense bf16 multiply-adds a clock, that instruction waits on its operands (24 clocks
against 16): two thirds of the rate that N >= 64 reaches. This kernel measures it: every
program (one per SM) holds A [64 x warpgroups, K] and B [N, K] in shared memory and issues
`chain` wgmma of m64nNkK per warpgroup on one accumulator, waits, and repeats; the rate is
2 x rows x N x K x chain x reps x programs flops over the kernel's time.

    python tools/wgmma_rate.py            # compile every variant for sm_90 (no GPU) and list
                                          # their wgmma
    python tools/wgmma_rate.py --run      # on a GPU: time them beside torch's 8192^3 matmul
"""

from __future__ import annotations

import argparse
import json
import os
import sys

os.environ.setdefault("TRITON_INTERPRET", "0")  # Gluon compiles for real; no interpreter

import torch
import triton
from triton.backends.compiler import GPUTarget
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import (
    fence_async_shared,
    warpgroup_mma,
    warpgroup_mma_wait,
)

K_WIDTH = 256  # one shared tile's columns (the MLA tile's latent halves are this wide)


@gluon.jit
def wgmma_rate_kernel(a_ptr, b_ptr, out_ptr, reps, N: gl.constexpr, K: gl.constexpr,
                      CHAIN: gl.constexpr, A_IN_REGISTERS: gl.constexpr):  # fmt: skip
    """A [rows, K] and B [N, K] (row-major bf16) into shared memory, then reps x CHAIN
    wgmma of A B^T on one accumulator per warpgroup; the accumulator to out so nothing folds
    away. rows = 64 a warpgroup; A from registers with A_IN_REGISTERS."""
    ROWS: gl.constexpr = 16 * gl.num_warps()
    dtype: gl.constexpr = a_ptr.dtype.element_ty
    blocked: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [gl.num_warps(), 1], [1, 0])
    cols = gl.arange(0, K, gl.SliceLayout(0, blocked))
    a_rows = gl.arange(0, ROWS, gl.SliceLayout(1, blocked))
    b_rows = gl.arange(0, N, gl.SliceLayout(1, blocked))
    a_smem = gl.allocate_shared_memory(
        dtype,
        [ROWS, K],
        gl.NVMMASharedLayout.get_default_for([ROWS, K], dtype),
        gl.load(a_ptr + a_rows[:, None] * K + cols[None, :]),
    )
    b_smem = gl.allocate_shared_memory(
        dtype,
        [N, K],
        gl.NVMMASharedLayout.get_default_for([N, K], dtype),
        gl.load(b_ptr + b_rows[:, None] * K + cols[None, :]),
    )
    fence_async_shared()
    gl.thread_barrier()
    acc_layout: gl.constexpr = gl.NVMMADistributedLayout(
        version=[3, 0], warps_per_cta=[gl.num_warps() // 4 * 4, 1], instr_shape=[16, N, 16]
    )
    acc = gl.zeros([ROWS, N], gl.float32, acc_layout)
    if A_IN_REGISTERS:
        a = a_smem.load(gl.DotOperandLayout(operand_index=0, parent=acc_layout, k_width=2))
    else:
        a = a_smem
    for _ in range(reps):
        for _c in gl.static_range(CHAIN):
            acc = warpgroup_mma(a, b_smem.permute((1, 0)), acc, is_async=True)
        acc = warpgroup_mma_wait(num_outstanding=0, deps=(acc,))
    out_rows = gl.arange(0, ROWS, gl.SliceLayout(1, acc_layout))
    out_cols = gl.arange(0, N, gl.SliceLayout(0, acc_layout))
    offsets = (gl.program_id(0) * ROWS + out_rows[:, None]) * N + out_cols[None, :]
    gl.store(out_ptr + offsets, acc)


# (N, warpgroups, A in registers): the 64-row tile's S (N = 32, both operands in shared
# memory, two warpgroups), its P V's shape (N = 256, from registers and from shared memory),
# the steps between, and the keys-as-rows tile's N = 16 (12 heads at qlen 1; N = 32 at qlen 2).
VARIANTS = [(n, 2, False) for n in (16, 32, 64, 128, 256)] + [(32, 2, True), (256, 2, True)]


def variant_name(n: int, groups: int, a_in_registers: bool) -> str:
    return f"m64n{n}k16 x{groups} warpgroups, A from {'registers' if a_in_registers else 'shared'}"


def compile_only(arch: int) -> list[dict]:
    """Every variant compiled for sm_`arch` without a GPU: its wgmma and waits in the SASS."""
    from triton.experimental.gluon._runtime import GluonASTSource

    rows = []
    for n, groups, in_regs in VARIANTS:
        signature = {"a_ptr": "*bf16", "b_ptr": "*bf16", "out_ptr": "*fp32", "reps": "i32",
                     "N": "constexpr", "K": "constexpr", "CHAIN": "constexpr",
                     "A_IN_REGISTERS": "constexpr"}  # fmt: skip
        constants = {"N": n, "K": K_WIDTH, "CHAIN": 4, "A_IN_REGISTERS": in_regs}
        source = GluonASTSource(wgmma_rate_kernel, signature, constants, {})
        kernel = triton.compile(source, target=GPUTarget("cuda", arch, 32),
                                options={"num_warps": 4 * groups})  # fmt: skip
        ptx = kernel.asm["ptx"]
        rows.append({"variant": variant_name(n, groups, in_regs),
                     "wgmma": ptx.count("wgmma.mma_async"),
                     "waits": ptx.count("wgmma.wait_group")})  # fmt: skip
    return rows


def timed(fn, reps: int = 20) -> float:
    """Median seconds of fn over reps runs, after one warm-up."""
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) / 1000)
    return sorted(times)[len(times) // 2]


def run(reps: int) -> dict:
    """Every variant's rate on this GPU beside torch's bf16 8192^3 matmul."""
    programs = torch.cuda.get_device_properties(0).multi_processor_count
    x = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    matmul = 2 * 8192**3 / timed(lambda: x @ x) / 1e12
    rows = []
    for n, groups, in_regs in VARIANTS:
        a = torch.randn(64 * groups, K_WIDTH, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(n, K_WIDTH, device="cuda", dtype=torch.bfloat16)
        out = torch.empty(programs, 64 * groups, n, device="cuda", dtype=torch.float32)

        def launch(a=a, b=b, out=out, n=n, groups=groups, in_regs=in_regs):
            wgmma_rate_kernel[(programs,)](a, b, out, reps, N=n, K=K_WIDTH, CHAIN=4,
                                           A_IN_REGISTERS=in_regs,
                                           num_warps=4 * groups)  # fmt: skip

        launch()
        want = (a.float() @ b.float().T) * reps * 4
        error = ((out[0] - want).abs().max() / want.abs().max()).item()
        seconds = timed(launch)
        flops = 2 * 64 * groups * n * K_WIDTH * 4 * reps * programs
        rate = flops / seconds / 1e12
        rows.append({"variant": variant_name(n, groups, in_regs), "n": n,
                     "a_in_registers": in_regs, "us": round(seconds * 1e6, 1),
                     "tflops": round(rate, 1), "of_matmul": round(rate / matmul, 3),
                     "rel_error": error})  # fmt: skip
        print(json.dumps(rows[-1]), flush=True)
    return {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
            "triton": triton.__version__, "matmul_tflops": round(matmul, 1),
            "reps": reps, "programs": programs, "rows": rows}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", action="store_true", help="time on this machine's GPU")
    parser.add_argument("--reps", type=int, default=1024, help="waits a program")
    parser.add_argument("--out", help="write the run's JSON here")
    parser.add_argument("--arch", type=int, default=90)
    parser.add_argument("--json", action="store_true", help="(the default) one JSON object a line")
    args = parser.parse_args()
    if not args.run:
        for row in compile_only(args.arch):
            print(json.dumps(row))
        return
    result = run(args.reps)
    print(json.dumps({k: v for k, v in result.items() if k != "rows"}))
    if args.out:
        with open(args.out, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
