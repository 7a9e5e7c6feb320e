"""When each kernel of back-to-back `mla_decode` calls starts and ends, from the profiler's
kernel trace (CUPTI) of a CUDA graph replay: which stage got slower when a knob changes, and
how far the next call's stage 1 overlaps the merge ahead (`early_start`). Needs a GPU.

    python tools/kernel_timeline.py --heads 128 --seq-lens 8192 --batch 8
    python tools/kernel_timeline.py --shape one-long --qlen 2 --no-early-start --out results/
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import statistics
import tempfile
from pathlib import Path

import torch

import splitkv
from splitkv import warp_specialized as ws
from splitkv.bench.shapes import special_shapes
from splitkv.bench.sweep import L2_MULTIPLE
from splitkv.mla import merge_follows, merge_programs, merge_workspace, mla_stage_one
from splitkv.testing import random_mla_case

SHAPES = {"ragged": "ragged", "one-long": "1x327600"}
# Input copies rotate as in the benchmark (L2_MULTIPLE), up to 8 (the benchmark's cap is 32;
# session 14's timelines ran with 8).
MAX_COPIES = 8
# Merge knobs a run may pin (an A/B of the merge's tiling: the planner's default otherwise).
MERGE_KNOBS = ("merge_long_partials", "merge_rows", "merge_block_s", "merge_d_split",
               "merge_num_warps")  # fmt: skip


def kernel_events(trace_path: Path) -> list[dict]:
    """The trace's GPU kernels in start order: name, start and end (us)."""
    events = json.loads(trace_path.read_text())["traceEvents"]
    kernels = [e for e in events if e.get("cat") == "kernel"]
    kernels.sort(key=lambda e: e["ts"])
    return [{"name": e["name"], "start": e["ts"], "end": e["ts"] + e["dur"]} for e in kernels]


def traced_kernels(run) -> list[dict]:
    """The kernels `run` launches, from the profiler's trace."""
    activities = [torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=activities) as profile:
        run()
        torch.cuda.synchronize()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "trace.json"
        profile.export_chrome_trace(str(path))
        return kernel_events(path)


def calls_of(kernels: list[dict]) -> list[dict]:
    """Pair each stage 1 with the merge after it: one call each."""
    calls, stage1 = [], None
    for k in kernels:
        if "merge" in k["name"]:
            if stage1 is not None:
                calls.append({"stage1": stage1, "merge": k})
            stage1 = None
        else:
            stage1 = k
    return calls


def summary(calls: list[dict]) -> dict:
    """Medians over consecutive calls (us): each kernel's span, how early the next stage 1
    starts before the merge ahead ends (its launch), its end after that merge's end, and the
    period (merge end to merge end)."""
    pairs = list(itertools.pairwise(calls))

    def median(values):
        return round(statistics.median(values), 2) if values else math.nan

    return {
        "calls": len(calls),
        "stage1_span": median([c["stage1"]["end"] - c["stage1"]["start"] for c in calls]),
        "merge_span": median([c["merge"]["end"] - c["merge"]["start"] for c in calls]),
        "merge_after_stage1": median([c["merge"]["end"] - c["stage1"]["end"] for c in calls]),
        "next_stage1_start_before_merge_end": median(
            [a["merge"]["end"] - b["stage1"]["start"] for a, b in pairs]
        ),
        "next_stage1_end_after_merge_end": median(
            [b["stage1"]["end"] - a["merge"]["end"] for a, b in pairs]
        ),
        "period": median([b["merge"]["end"] - a["merge"]["end"] for a, b in pairs]),
    }


def decode_call(lengths: list[int], args, seed: int, knobs: dict):
    """One input copy's call: stage 1 then the merge, as `mla_decode` launches them, the
    merge's program times (an int64 [merge programs, 3] tensor) where given."""
    case = random_mla_case(lengths, args.heads, qlen=args.qlen, page_size=args.page_size,
                           dtype=torch.bfloat16, device="cuda", contiguous=True,
                           spare_pages=0, seed=seed)  # fmt: skip
    batch, qlen, heads, _ = case.q.shape
    max_seq_len = case.page_table.shape[1] * args.page_size
    plan = splitkv.plan_decode(batch, max_seq_len, heads, qlen=qlen, page_size=args.page_size,
                               dtype=case.q.dtype, device="cuda", seq_lens=case.seq_lens,
                               **knobs)  # fmt: skip
    out = case.q.new_empty(batch, qlen, heads, plan.head_dim_v)
    lse = torch.empty(batch, qlen, heads, device="cuda")

    if not merge_follows(plan):
        raise SystemExit("this plan runs no merge (one split: stage 1 writes the output)")

    def call(times=None):
        mla_stage_one(*case.args, plan=plan, out=out, lse=lse)
        merge_workspace(plan, case.seq_lens, out, lse, max_seq_len=max_seq_len,
                        whole_pieces=plan.whole_pieces, program_times=times)  # fmt: skip

    call.merge_programs = merge_programs(plan, batch, qlen * heads) * plan.merge_d_split
    call.merge_d_split = plan.merge_d_split
    return call


def since_first_wait(times: torch.Tensor) -> torch.Tensor:
    """One call's merge stamps [programs, (start, wait's end, end)] in us from the first
    program past its wait (~ stage 1's end); NaN where a program left no stamp (returned
    early, before its end)."""
    t = times.double().cpu() / 1000
    return (t - t[:, 1].min()).where(t > 0, float("nan"))


def merge_stamp_summary(stamps: list[torch.Tensor]) -> dict:
    """Medians over calls (`since_first_wait`): how many programs had started by then, when
    the last one starts, when the last ends, and how long a program runs from its start or
    its wait's end, whichever is later."""
    rows = []
    for times in stamps:
        start, waited, end = since_first_wait(times).unbind(1)
        ran = end - torch.maximum(start, waited)
        done = ~end.isnan()
        rows.append({"started_before": (start <= 0).double().mean().item(),
                     "last_start": start.max().item(), "last_end": end[done].max().item(),
                     "run_median": ran[done].median().item(), "run_max": ran[done].max().item(),
                     "programs": times.shape[0]})  # fmt: skip
    return {k: round(statistics.median(r[k] for r in rows), 3) for k in rows[0]}


def merge_tail(times: torch.Tensor, d_split: int, count: int = 24) -> list[dict]:
    """The merge programs that end last in one call (`since_first_wait`): their program (a
    query row in request x qlen x heads order where one row goes a program; else the grid's
    order: merge_rows rows a program, and with merge_long_partials the long slots' rows
    first), column slice, start, wait's end and end."""
    rel = since_first_wait(times)
    order = rel[:, 2].nan_to_num(-1.0).argsort(descending=True)[:count]
    return [{"program": int(p) // d_split, "slice": int(p) % d_split,
             "start": round(rel[p, 0].item(), 2), "waited": round(rel[p, 1].item(), 2),
             "end": round(rel[p, 2].item(), 2)} for p in order]  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", choices=sorted(SHAPES), help="a special batch (12 heads)")
    parser.add_argument("--seq-lens", type=int, nargs="+", help="the lengths instead")
    parser.add_argument("--batch", type=int, default=1, help="repeat --seq-lens this often")
    parser.add_argument("--heads", type=int, default=12)
    parser.add_argument("--qlen", type=int, default=1)
    parser.add_argument("--page-size", type=int, default=64)
    parser.add_argument("--calls", type=int, default=24, help="calls in the graph")
    parser.add_argument("--early-start", action=argparse.BooleanOptionalAction, default=None)
    parser.add_argument("--whole-pieces", action=argparse.BooleanOptionalAction, default=None)
    parser.add_argument("--merge-streams", action="store_true",
                        help="the plan's merge_streams (no wait in its merge)")  # fmt: skip
    for knob in MERGE_KNOBS:
        parser.add_argument(f"--{knob.replace('_', '-')}", type=int, default=None,
                            help=f"the plan's {knob}")  # fmt: skip
    parser.add_argument("--early-blocks", type=int, default=None,
                        help="warp_specialized.EARLY_BLOCKS for this run")  # fmt: skip
    parser.add_argument("--merge-stamps", action="store_true",
                        help="record each merge program's start, wait's end and end")  # fmt: skip
    parser.add_argument("--label", default="", help="a name for this run in the output")
    parser.add_argument("--out", default=None, help="folder for the timeline JSON")
    args = parser.parse_args()
    if args.shape:
        lengths = list(next(s for s in special_shapes(args.heads)
                            if s.label.startswith(SHAPES[args.shape])).seq_lens)  # fmt: skip
    else:
        lengths = (args.seq_lens or [8192]) * args.batch
    if args.early_blocks is not None:
        ws.EARLY_BLOCKS = args.early_blocks
    kv_bytes = sum(lengths) * 576 * 2
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    copies = min(MAX_COPIES, max(1, math.ceil(L2_MULTIPLE * l2 / kv_bytes)))
    knobs = {} if args.early_start is None else {"early_start": args.early_start}
    if args.whole_pieces is not None:
        knobs["whole_pieces"] = args.whole_pieces
    if args.merge_streams:
        knobs["merge_streams"] = True
    knobs.update({k: getattr(args, k) for k in MERGE_KNOBS if getattr(args, k) is not None})
    decode_calls = [decode_call(lengths, args, seed, knobs) for seed in range(copies)]
    stamps = None
    if args.merge_stamps:
        stamps = [torch.zeros(decode_calls[0].merge_programs, 3, dtype=torch.int64, device="cuda")
                  for _ in range(args.calls)]  # fmt: skip

    def run_all():
        for i in range(args.calls):
            decode_calls[i % copies](stamps[i] if stamps else None)

    run_all()
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        run_all()
    for _ in range(3):
        graph.replay()
    torch.cuda.synchronize()
    kernels = traced_kernels(graph.replay)
    source = "graph replay"
    if not kernels:  # a profiler that does not see into graphs: plain launches instead
        source = "stream launches"
        kernels = traced_kernels(run_all)
    if not kernels:
        raise SystemExit("the profiler recorded no kernels (CUPTI missing?)")
    origin = kernels[0]["start"]
    for k in kernels:
        k["start"], k["end"] = round(k["start"] - origin, 3), round(k["end"] - origin, 3)
    calls = calls_of(kernels)
    # The first call follows nothing of its own graph: leave it out.
    result = {"label": args.label, "lengths_head": lengths[:8], "batch": len(lengths),
              "heads": args.heads, "qlen": args.qlen, "copies": copies, "knobs": knobs,
              "early_blocks": ws.EARLY_BLOCKS, "source": source,
              "summary": summary(calls[1:]), "kernels": kernels}  # fmt: skip
    if stamps:
        result["merge_stamps"] = merge_stamp_summary(stamps[1:])
        result["merge_tail"] = merge_tail(stamps[-1], decode_calls[0].merge_d_split)
    print(f"{args.label or 'run'} ({source}): {json.dumps(result['summary'])}")
    if stamps:
        print(f"  merge programs: {json.dumps(result['merge_stamps'])}")
        print(f"  merge tail (last call): {json.dumps(result['merge_tail'][:6])}")
    for k in kernels[:8]:
        print(f"  {k['start']:9.2f} {k['end']:9.2f}  {k['name'][:60]}")
    if args.out:
        name = f"timeline_{args.label or 'run'}.json"
        Path(args.out).mkdir(parents=True, exist_ok=True)
        (Path(args.out) / name).write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
