"""The MLA shared-prefix cascade's launches timed one by one beside the whole call, so that a
change in the cascade's time can be put on one of them (CUDA-graph medians, BENCH.md's inputs).

    python tools/cascade_phases.py                     # issue 5's mix and 8 x 327,600, 12 heads
    python tools/cascade_phases.py --heads 16 --shapes mix
    python tools/cascade_phases.py --small             # CPU: a small mix, each phase run once
    PYTHONPATH=.old_src/v56/src python tools/cascade_phases.py --kernels   # any tree's kernels

Each phase runs on what the phases before it left (the same tensors the call makes), so the
phases' sum less the whole call is what the call spends between them (in a graph: nothing
but the launch gaps). Phases:
- suffix rows: `suffix_rows` (each request's shifted table row and cut length, whether it
  takes part, each chunk's member taking part);
- stacked rows: `stacked_rows` (the chunks' query rows and their table rows, two gathers);
- suffix decode / prefix decode: the two decodes on the cascade's own plans;
- merge: `merge_prefix_states`;
and beside them the plain decode of the same batch on its own plan. With --small the phases
run once on the CPU's interpreter and their composed output is compared with the whole call's.
With --kernels the whole call runs eagerly under torch's profiler instead, and each kernel's
GPU time a call is printed: that mode uses the public API only, so it times an older tree's
cascade (PYTHONPATH=<tree>/src) launch by launch for a side-by-side.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

import torch

import splitkv
from splitkv.bench.shapes import prefix_mix_shape, shared_prefix_shape
from splitkv.testing import random_mla_case
from splitkv.timing import cuda_graph_times_us


def cascade_case(lengths, heads: int, page_size: int, dtype, device, *, shared_prefix: int = 0,
                 prefix_groups=()):  # fmt: skip
    """A shared-prefix batch's inputs laid out as the benchmark's (`bench.sweep.build_cases`)."""
    return random_mla_case(list(lengths), heads, shared_prefix=shared_prefix,
                           prefix_groups=prefix_groups, page_size=page_size, dtype=dtype,
                           device=device, contiguous=True, spare_pages=0, seed=0)  # fmt: skip


def phase_calls(case, page_size: int) -> dict[str, Callable[[], object]]:
    """The whole cascade, its phases in order (each on its predecessors' outputs, made once
    here), and the plain decode, as callables."""
    # The cascade's internals, imported here: --kernels runs older trees that lack some.
    from splitkv.mla import _check_call, decode_checked
    from splitkv.prefix import merge_prefix_states, stacked_rows, suffix_rows

    q, kv, table, lens = case.args
    qlen, heads = q.shape[1], q.shape[2]
    prefix = prefix_plan_for(case, page_size)
    rows = prefix.rows_for(qlen, heads)
    if rows is None:
        raise SystemExit("this batch decodes plainly (no prefix pass): nothing to split")
    call = _check_call(q, kv, table, lens, None, None, None, None)
    suffix_plan, prefix_plan = prefix.plans_for(q, table.shape[1], rows)
    plain_plan = splitkv.plan_decode(q.shape[0], table.shape[1] * page_size, heads, qlen=qlen,
                                     page_size=page_size, dtype=q.dtype, device=q.device,
                                     seq_lens=lens.tolist())  # fmt: skip
    suffix_table, suffix_lens, takes_part = suffix_rows(table, lens, prefix, qlen, rows)
    stacked, chunk_table = stacked_rows(q, table, rows)
    stacked_call = call._replace(batch=rows.num_chunks, qlen=1, num_heads=rows.width)
    suffix_out, suffix_lse = decode_checked(suffix_plan, q, call, suffix_table, suffix_lens)
    chunk_args = (prefix_plan, stacked, stacked_call, chunk_table, rows.lens)
    chunk_out, chunk_lse = decode_checked(*chunk_args)
    flat = chunk_out.view(-1, chunk_out.shape[-1]), chunk_lse.view(-1)
    return {
        "whole cascade": lambda: splitkv.mla_decode_shared_prefix(q, kv, table, lens, prefix),
        "suffix rows": lambda: suffix_rows(table, lens, prefix, qlen, rows),
        "stacked rows": lambda: stacked_rows(q, table, rows),
        "suffix decode": lambda: decode_checked(suffix_plan, q, call, suffix_table, suffix_lens),
        "prefix decode": lambda: decode_checked(*chunk_args),
        "merge": lambda: merge_prefix_states(*flat, rows, takes_part, suffix_out, suffix_lse),
        "plain decode": lambda: splitkv.mla_decode(q, kv, table, lens, plan=plain_plan),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--heads", type=int, default=12)
    parser.add_argument("--shapes", nargs="+", choices=["mix", "8x327600"],
                        default=["mix", "8x327600"])  # fmt: skip
    parser.add_argument("--rep-ms", type=int, default=200)
    parser.add_argument("--small", action="store_true",
                        help="a small mix on the CPU, each phase run once")  # fmt: skip
    parser.add_argument("--kernels", action="store_true",
                        help="each kernel's GPU time a call, under torch's profiler")  # fmt: skip
    parser.add_argument("--calls", type=int, default=50, help="with --kernels")
    args = parser.parse_args()
    if args.small:
        small(args.heads)
        return
    for name in args.shapes:
        shape = (prefix_mix_shape if name == "mix" else shared_prefix_shape)(args.heads)
        case = cascade_case(shape.lengths, args.heads, shape.page_size, torch.bfloat16, "cuda",
                            shared_prefix=shape.shared_prefix,
                            prefix_groups=shape.prefix_groups or ())  # fmt: skip
        if args.kernels:
            print(f"{shape.label}, {args.heads} heads, splitkv {splitkv.__version__}")
            print(kernel_times(whole_call(case, shape.page_size), "cuda", args.calls))
            continue
        calls = phase_calls(case, shape.page_size)
        print(f"{shape.label}, {args.heads} heads (CUDA-graph p50, us)")
        total = 0.0
        for phase, call in calls.items():
            p50 = cuda_graph_times_us(call, args.rep_ms)[1]
            if phase not in ("whole cascade", "plain decode"):
                total += p50
            print(f"  {phase:16s} {p50:9.1f}")
        print(f"  {'sum of phases':16s} {total:9.1f}")


def prefix_plan_for(case, page_size: int) -> splitkv.SharedPrefixPlan:
    """The case's groups as a prefix plan with its rows built for the case's shape (public
    API only)."""
    q, _, table, _ = case.args
    groups = [(list(members), tokens // page_size) for members, tokens in case.sharing]
    return splitkv.plan_shared_prefix(groups, q.shape[0], table.shape[1], page_size, q.device,
                                      num_heads=q.shape[2], qlen=q.shape[1])  # fmt: skip


def whole_call(case, page_size: int) -> Callable[[], object]:
    """The cascade call on a prefix plan built for it (public API only)."""
    prefix = prefix_plan_for(case, page_size)
    return lambda: splitkv.mla_decode_shared_prefix(*case.args, prefix)


def kernel_times(call: Callable[[], object], device: str, calls: int) -> str:
    """Each kernel's (each CPU op's, on a CPU) time a call, `calls` calls after a warm-up,
    under torch's profiler: one line a kernel, longest first."""
    from torch.profiler import ProfilerActivity, profile

    on_gpu = device == "cuda"
    call()
    if on_gpu:
        torch.cuda.synchronize()
    activity = ProfilerActivity.CUDA if on_gpu else ProfilerActivity.CPU
    with profile(activities=[activity]) as run:
        for _ in range(calls):
            call()
        if on_gpu:
            torch.cuda.synchronize()
    rows = []
    for event in run.key_averages():
        total = event.self_device_time_total if on_gpu else event.self_cpu_time_total
        if total > 0:
            rows.append((total / calls, event.count / calls, event.key))
    rows.sort(reverse=True)
    lines = [f"  {us:9.2f} us  x{count:4.1f}  {name[:90]}" for us, count, name in rows]
    lines.append(f"  {sum(r[0] for r in rows):9.2f} us  in all")
    return "\n".join(lines)


def small(heads: int) -> None:
    """Each phase once on a small mix (the interpreter), the composed output against the call's."""
    lengths = [70, 90, 40, 75, 100, 33]
    groups = (((0, 1, 2), 32), ((3, 4), 48))  # request 2 ends inside its group's prefix
    case = cascade_case(lengths, heads, 16, torch.float16, "cpu", prefix_groups=groups)
    calls = phase_calls(case, 16)
    outputs = {phase: call() for phase, call in calls.items()}
    whole, merged = outputs["whole cascade"][0], outputs["merge"][0]
    print(kernel_times(whole_call(case, 16), "cpu", 2).splitlines()[-1].strip(), "(CPU ops)")
    print(f"phases run: {', '.join(outputs)}; merge equals the whole call: "
          f"{torch.equal(whole, merged)}")  # fmt: skip


if __name__ == "__main__":
    main()
