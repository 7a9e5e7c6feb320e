"""Host time of one decode call made with a plan: what a serving step outside CUDA graphs (eager
mode, batch sizes past the captured graphs) pays a layer before the GPU sees any work.

    python tools/call_host_time.py              # on this machine's device (CPU: stubbed only)
    python tools/call_host_time.py --repeat 9

Microseconds a call, best of --repeat rounds, for the call with a plan and its outputs given,
then for the same call without them (`no plan`: the plan made, or remembered, and the
workspace and outputs allocated each time):
- splitkv / no plan: the library's own host work (checks, plan check or planning, launch
  arguments), with Triton's launches replaced by no-ops. On a CPU device the plans given are
  the H200's, as on "meta" (the ones made per call are the interpreter's).
- call: the whole call with its launches, back to back, synced once a round (CUDA only; where
  the GPU's work is shorter than the host's, this is the host's time a call).
- gpu: the call with a plan as a CUDA-graph replay (p50; CUDA only): what the GPU takes, so a
  `call` above it is the host's bound. CUDA-graph replays pay none of the host's work.
A last line times the Gluon MLA kernel's bulk-copy descriptors, which the H200 path builds each
call.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from collections.abc import Callable, Iterator

import torch
import triton
from triton.runtime.interpreter import InterpretedFunction
from triton.runtime.jit import KernelInterface

import splitkv
from splitkv import warp_specialized
from splitkv.timing import cuda_graph_times_us

# (label, batch, keys, q heads, kv heads or None for MLA, head dim)
CASES = [
    ("gqa gpt-oss", 8, 4096, 64, 8, 64),
    ("gqa llama3-8b", 32, 4096, 32, 8, 128),
    ("mla 16 heads", 16, 4096, 16, None, 576),
    ("mla cascade", 8, 4096, 16, None, 576),  # shared prefix: the 8 share 3,072 keys
    ("gqa cascade", 8, 4096, 64, 8, 64),
]
SHARED_PAGES = 48
PAGE = 64


class _NoLaunch:
    """Stands in for a kernel: `kernel[grid](...)` does nothing."""

    def __getitem__(self, grid: object) -> Callable[..., None]:
        return lambda *args, **kwargs: None


@contextlib.contextmanager
def stubbed_launches() -> Iterator[None]:
    """Every Triton / Gluon kernel a splitkv module holds replaced by `_NoLaunch`, then put back."""
    saved = []
    for name, module in list(sys.modules.items()):
        if module is None or not name.startswith("splitkv"):
            continue
        for attr, value in list(vars(module).items()):
            # (Triton 3.4's interpreted kernels are not KernelInterfaces.)
            if isinstance(value, (KernelInterface, InterpretedFunction)):
                saved.append((module, attr, value))
                setattr(module, attr, _NoLaunch())
    try:
        yield
    finally:
        for module, attr, value in saved:
            setattr(module, attr, value)


def decode_calls(case: tuple, device: torch.device) -> tuple[Callable, Callable]:
    """The case's `gqa_decode` / `mla_decode` call with a plan and its outputs given, and the
    same call without them (planned and allocated each time; the cascades: given their groups
    instead of a prefix plan)."""
    label, batch, keys, heads, kv_heads, head_dim = case
    on_cpu = device.type == "cpu"
    dtype = torch.float16 if on_cpu else torch.bfloat16
    spec = splitkv.DeviceSpec.preset("h200") if on_cpu else None
    pages = batch * keys // PAGE
    table = torch.arange(pages, dtype=torch.int32, device=device).view(batch, -1)
    groups = [(list(range(batch)), SHARED_PAGES)]
    if "cascade" in label:
        table[:, :SHARED_PAGES] = table[0, :SHARED_PAGES]
        prefix = splitkv.plan_shared_prefix(groups, batch, table.shape[1], PAGE, device,
                                            num_heads=heads, num_kv_heads=kv_heads,
                                            device_spec=spec)  # fmt: skip
    lens = torch.full((batch,), keys, dtype=torch.int32, device=device)
    q = torch.randn(batch, 1, heads, head_dim, dtype=dtype, device=device)
    lse = torch.empty(batch, 1, heads, device=device)
    if kv_heads is None:
        kv = torch.randn(pages, PAGE, head_dim, dtype=dtype, device=device)
        plan = splitkv.plan_decode(batch, keys, heads, page_size=PAGE, dtype=dtype,
                                   device=device, device_spec=spec)  # fmt: skip
        out = torch.empty(batch, 1, heads, plan.head_dim_v, dtype=dtype, device=device)
        if "cascade" in label:
            shared = splitkv.mla_decode_shared_prefix
            return (lambda: shared(q, kv, table, lens, prefix),
                    lambda: shared(q, kv, table, lens, groups))  # fmt: skip
        return (lambda: splitkv.mla_decode(q, kv, table, lens, plan=plan, out=out, lse=lse),
                lambda: splitkv.mla_decode(q, kv, table, lens))  # fmt: skip
    k = torch.randn(pages, PAGE, kv_heads, head_dim, dtype=dtype, device=device)
    v = torch.randn_like(k)
    plan = splitkv.plan_decode(batch, keys, heads, kind="gqa", num_kv_heads=kv_heads,
                               head_dim=head_dim, page_size=PAGE, dtype=dtype, device=device,
                               device_spec=spec)  # fmt: skip
    out = torch.empty_like(q)
    if "cascade" in label:
        shared = splitkv.gqa_decode_shared_prefix
        return (lambda: shared(q, k, v, table, lens, prefix),
                lambda: shared(q, k, v, table, lens, groups))  # fmt: skip
    return (lambda: splitkv.gqa_decode(q, k, v, table, lens, plan=plan, out=out, lse=lse),
            lambda: splitkv.gqa_decode(q, k, v, table, lens))  # fmt: skip


def best_us(call: Callable[[], object], device: torch.device, calls: int, repeat: int) -> float:
    """Best of `repeat` rounds of `calls` calls, microseconds a call (synced after each round)."""
    call()
    best = float("inf")
    for _ in range(repeat):
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        start = time.perf_counter()
        for _ in range(calls):
            call()
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        best = min(best, time.perf_counter() - start)
    return best / calls * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    device = torch.device(args.device)
    print(f"{'case':16s} {'batch x keys':>13s} {'splitkv':>8s} {'call':>8s} {'no plan':>8s} "
          f"{'call':>8s} {'gpu':>8s}  (us a call)")  # fmt: skip
    for case in CASES:
        figures = []
        calls = decode_calls(case, device)
        for call in calls:
            if device.type == "cuda":
                whole = f"{best_us(call, device, args.calls, args.repeat):8.1f}"
            else:
                whole = f"{'-':>8s}"
            with stubbed_launches():
                figures += [f"{best_us(call, device, args.calls, args.repeat):8.1f}", whole]
        gpu = f"{cuda_graph_times_us(calls[0])[1]:8.1f}" if device.type == "cuda" else f"{'-':>8s}"
        print(f"{case[0]:16s} {f'{case[1]} x {case[2]}':>13s} {' '.join(figures)} {gpu}")
    print(descriptor_times(args.calls, args.repeat))


def descriptor_times(calls: int, repeat: int) -> str:
    """What MLA's Gluon stage 1 (the H200's) spends a call building its bulk-copy descriptors:
    the pool's (16 x 4,096 at page 64) and the queries' (16 heads), bf16, on CPU tensors (the
    descriptors are host objects). The tool's MLA cases above do not take that path on a CPU.
    Only where the Gluon kernels run (Triton 3.6: `warp_specialized.GLUON_TRITON`)."""
    if not warp_specialized.gluon_available():
        return f"gluon descriptors: none (no Gluon kernels on Triton {triton.__version__})"
    kv = torch.empty(16 * 4096 // PAGE, PAGE, 576, dtype=torch.bfloat16)
    q = torch.empty(16, 1, 16, 576, dtype=torch.bfloat16)
    cpu = torch.device("cpu")
    pool = best_us(lambda: warp_specialized.kv_row_descriptors(kv, PAGE, 64), cpu, calls, repeat)
    rows = best_us(lambda: warp_specialized.query_row_descriptors(q, 16), cpu, calls, repeat)
    return f"gluon descriptors: pool {pool:.1f} us, queries {rows:.1f} us a call"


if __name__ == "__main__":
    main()
