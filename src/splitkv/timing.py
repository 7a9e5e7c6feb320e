"""How splitkv times a decode step: CUDA-graph replay medians (BENCH.md), and the bytes it must
read, for effective bandwidth."""

from __future__ import annotations

from collections.abc import Callable

import torch


def cuda_graph_times_us(fn: Callable[[], object], rep_ms: int = 200) -> tuple[float, float, float]:
    """p20, p50, p80 of `fn` replayed in a CUDA graph, in microseconds."""
    import triton.testing

    p20, p50, p80 = triton.testing.do_bench_cudagraph(fn, rep=rep_ms, quantiles=[0.2, 0.5, 0.8])
    return p20 * 1e3, p50 * 1e3, p80 * 1e3


def mla_bytes_read(
    seq_lens: list[int], num_heads: int, qlen: int, dtype: torch.dtype, head_dim_qk: int = 576
) -> int:
    """Bytes that must be read once: every attended KV row, plus q."""
    size = torch.empty((), dtype=dtype).element_size()
    kv = sum(seq_lens) * head_dim_qk * size
    q = len(seq_lens) * qlen * num_heads * head_dim_qk * size
    return kv + q
