"""How splitkv times a decode step: CUDA-graph replay medians (BENCH.md)."""

from __future__ import annotations

from collections.abc import Callable


def cuda_graph_times_us(fn: Callable[[], object], rep_ms: int = 200) -> tuple[float, float, float]:
    """p20, p50, p80 of `fn` replayed in a CUDA graph, in microseconds."""
    import triton.testing

    p20, p50, p80 = triton.testing.do_bench_cudagraph(fn, rep=rep_ms, quantiles=[0.2, 0.5, 0.8])
    return p20 * 1e3, p50 * 1e3, p80 * 1e3
