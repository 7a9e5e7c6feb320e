"""The ragged GQA batches whose default schedule `gqa_model_uniform_splits.patch` moves from
uniform to balanced (the schedule model weighing the uniform plan's own split count, after the
long-split tile halves it), timed on both schedules at the planner's default grids; then
batches of many short requests at one kv head whose balanced grid v0.2.37 moved without a
measurement, on v0.2.36's grid and the default. Two rounds, with each output's largest
difference from the fp32 reference. CUDA-graph medians in us."""

import json
import os

import torch

import splitkv
from splitkv.bench.shapes import GQA_MODELS, BenchShape, _gqa_fields
from splitkv.bench.sweep import _build_cases
from splitkv.timing import cuda_graph_times_us

CASES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gqa_model_cases.json")


def median_us(fn) -> float:
    fn()
    torch.cuda.synchronize()
    return round(cuda_graph_times_us(fn, rep_ms=30)[1], 1)


def measure(entry: dict) -> dict:
    model, qlen, lengths = entry["model"], entry["qlen"], entry["seq_lens"]
    heads, kv_heads, dim, _ = GQA_MODELS[model]
    shape = BenchShape(heads, max(lengths), len(lengths), qlen, seq_lens=tuple(lengths),
                       **_gqa_fields(model, 16))  # fmt: skip
    case = _build_cases(shape, 0, 1)[0]
    columns = case.args[3].shape[1]
    reference = splitkv.reference.gqa_decode(*case.args, sinks=case.sinks)[0].float()
    row = {"model": model, "qlen": qlen, "batch": len(lengths), "longest": max(lengths),
           "keys": sum(lengths)}  # fmt: skip
    common = dict(qlen=qlen, page_size=16, device="cuda", kind="gqa", num_kv_heads=kv_heads,
                  head_dim=dim, seq_lens=lengths)  # fmt: skip
    if "v0_2_36_programs" in entry:
        knobs = {"v0.2.36": {"schedule": "balanced", "num_programs": entry["v0_2_36_programs"]},
                 "v0.2.37": {}}  # fmt: skip
    else:
        knobs = {"uniform": {"schedule": "uniform"}, "balanced": {"schedule": "balanced"}}
    plans = {}
    for schedule, knob in knobs.items():
        plans[schedule] = splitkv.plan_decode(len(lengths), columns * 16, heads,
                                              **{**common, **knob})  # fmt: skip
        plan = plans[schedule]
        row[f"plan_{schedule}"] = [plan.num_splits, plan.num_programs, plan.block_n]
        out = splitkv.gqa_decode(*case.args, plan=plan, sinks=case.sinks)[0].float()
        row[f"err_{schedule}"] = round((out - reference).abs().max().item(), 5)
    for _ in range(2):
        for schedule, plan in plans.items():
            run = lambda p=plan, c=case: splitkv.gqa_decode(*c.args, plan=p, sinks=c.sinks)
            row.setdefault(schedule, []).append(median_us(run))
    return row


def main() -> None:
    rows = []
    path = os.path.join(os.environ.get("STEP_OUT", "."), "gqa_model_cases.json")
    with open(CASES) as f:
        groups = json.load(f)
    for entry in groups["schedule_model"] + groups["grid_floor"]:
        rows.append(measure(entry))
        print(json.dumps(rows[-1]), flush=True)
        with open(path, "w") as f:
            json.dump(rows, f, indent=1)


main()
