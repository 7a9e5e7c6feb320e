"""The device's ceilings, measured in the same run as the kernels (BENCH.md): the streaming read
rate of a simple Triton kernel over >= 4 GiB, and the dense bf16 matmul rate."""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from splitkv.timing import cuda_graph_times_us

READ_BYTES = 4 << 30  # far past L2, so the read comes from HBM
MATMUL_N = 8192


@triton.jit
def _stream_read_kernel(x_ptr, sums_ptr, BLOCK: tl.constexpr, ITERS: tl.constexpr):
    base = tl.program_id(0).to(tl.int64) * BLOCK * ITERS
    acc = tl.zeros([BLOCK], tl.float32)
    for i in range(ITERS):
        acc += tl.load(x_ptr + base + i * BLOCK + tl.arange(0, BLOCK)).to(tl.float32)
    tl.store(sums_ptr + tl.program_id(0), tl.sum(acc))


def read_ceiling_bytes_per_s(device: torch.device | str = "cuda") -> float:
    """The best of a few block shapes of a streaming-read kernel over 4 GiB of random bf16."""
    data = torch.randn(READ_BYTES // 2, dtype=torch.bfloat16, device=device)
    best = 0.0
    for block, iters, warps in ((4096, 16, 8), (8192, 8, 8), (2048, 32, 4), (16384, 4, 16)):
        programs = data.numel() // (block * iters)
        sums = torch.empty(programs, device=device)

        def run(block=block, iters=iters, warps=warps, programs=programs, sums=sums):
            _stream_read_kernel[(programs,)](data, sums, BLOCK=block, ITERS=iters, num_warps=warps)

        run()
        _, p50, _ = cuda_graph_times_us(run, rep_ms=100)
        best = max(best, READ_BYTES / (p50 * 1e-6))
    return best


def matmul_flops_per_s(device: torch.device | str = "cuda") -> float:
    """Dense bf16 matmul rate, 8192^3 on random data through torch."""
    a = torch.randn(MATMUL_N, MATMUL_N, dtype=torch.bfloat16, device=device)
    b = torch.randn(MATMUL_N, MATMUL_N, dtype=torch.bfloat16, device=device)
    c = torch.empty_like(a)
    run = lambda: torch.matmul(a, b, out=c)
    run()
    _, p50, _ = cuda_graph_times_us(run, rep_ms=100)
    return 2 * MATMUL_N**3 / (p50 * 1e-6)
