"""Ragged MLA batches whose schedule the planner's model decides differently once it weighs the
Gluon kernels that run (`schedule_model_fix.patch`, session 32): each timed with the default
plan, uniform splits and the balanced schedule (CUDA-graph medians in us, two rounds
alternating), so the rule is chosen from measurements. The first 40 cases
(`ragged_schedule_cases.json`) are those of `tools/mla_plan_snapshot.py`'s 720 batches (12-128
heads, qlen 1-4, 2-128 requests of random lengths up to 1k-68k) whose plans the patch changes
(29 on the 16- and 32-row keys-as-rows tile, 11 on the 64-row tile); the last 12 are
serving-like batches (lengths 1 to 4k-32k, 12-128 heads) as a check of the default."""

import json
import os

import torch

import splitkv
from splitkv.bench.shapes import BenchShape
from splitkv.bench.sweep import _build_cases
from splitkv.timing import cuda_graph_times_us

CASES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ragged_schedule_cases.json")
FIELDS = ("schedule", "num_splits", "num_programs", "program_loop", "warp_specialized")


def median_us(fn) -> float:
    fn()
    torch.cuda.synchronize()
    return round(cuda_graph_times_us(fn, rep_ms=60)[1], 1)


def measure(entry: dict) -> dict:
    lengths = entry["seq_lens"]
    shape = BenchShape(entry["heads"], max(lengths), len(lengths), entry["qlen"],
                       seq_lens=tuple(lengths))  # fmt: skip
    case = _build_cases(shape, 0, 1)[0]
    columns = case.args[2].shape[1]
    calls, row = {}, {"heads": shape.heads, "qlen": shape.qlen, "batch": shape.batch,
                      "longest": max(lengths), "keys": sum(lengths)}  # fmt: skip
    for schedule in ("auto", "uniform", "balanced"):
        plan = splitkv.plan_decode(shape.batch, columns * 64, shape.heads, qlen=shape.qlen,
                                   page_size=64, device="cuda", seq_lens=lengths,
                                   schedule=schedule)  # fmt: skip
        row[f"plan_{schedule}"] = {f: getattr(plan, f) for f in FIELDS}
        calls[schedule] = lambda p=plan: splitkv.mla_decode(*case.args, plan=p)
    for _ in range(2):
        for schedule, fn in calls.items():
            row.setdefault(schedule, []).append(median_us(fn))
    return row


def main() -> None:
    rows = []
    path = os.path.join(os.environ.get("STEP_OUT", "."), "ragged_schedule.json")
    with open(CASES) as f:
        entries = json.load(f)
    for entry in entries:
        rows.append(measure(entry))
        print(json.dumps(rows[-1]), flush=True)
        with open(path, "w") as f:
            json.dump(rows, f, indent=1)


main()
