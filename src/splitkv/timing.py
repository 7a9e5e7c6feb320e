"""How splitkv times a decode step: CUDA-graph replay medians (BENCH.md)."""

from __future__ import annotations

from collections.abc import Callable


def cuda_graph_times_us(fn: Callable[[], object], rep_ms: int = 200) -> tuple[float, float, float]:
    """p20, p50, p80 of `fn` replayed in a CUDA graph, in microseconds."""
    import torch
    import triton.testing

    # Triton runs `fn` (its warm-up calls, the capture, the replays) on a stream of its own,
    # which does not wait for the caller's: work still queued there would race fn's first
    # calls. Memory the caller's stream freed with its kernels still pending is handed to the
    # next allocation on that stream, such as fn's workspace, which fn then writes from the
    # other stream (session 55: a case's cache fill, still running, read its index tensors
    # after the memory had become a plan's workspace: a device-side index assert).
    torch.cuda.synchronize()
    p20, p50, p80 = triton.testing.do_bench_cudagraph(fn, rep=rep_ms, quantiles=[0.2, 0.5, 0.8])
    return p20 * 1e3, p50 * 1e3, p80 * 1e3
