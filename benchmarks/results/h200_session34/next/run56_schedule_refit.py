"""The ragged MLA batches whose default schedule the session-34 refit of the schedule model
changes (balanced -> uniform) and that session 34's first run did not time: each timed on
uniform splits and on the balanced schedule (CUDA-graph medians in us, one round each,
alternating), with correctness of both against the fp32 reference on the first copy."""

import json
import os

import torch

import splitkv
from splitkv.bench.shapes import BenchShape
from splitkv.bench.sweep import _build_cases
from splitkv.timing import cuda_graph_times_us

CASES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "schedule_refit_rest.json")
FIELDS = ("schedule", "num_splits", "num_programs", "program_loop", "warp_specialized")


def median_us(fn) -> float:
    fn()
    torch.cuda.synchronize()
    return round(cuda_graph_times_us(fn, rep_ms=40)[1], 1)


def measure(entry: dict) -> dict:
    lengths = entry["seq_lens"]
    shape = BenchShape(entry["heads"], max(lengths), len(lengths), entry["qlen"],
                       seq_lens=tuple(lengths))  # fmt: skip
    case = _build_cases(shape, 0, 1)[0]
    columns = case.args[2].shape[1]
    row = {"heads": shape.heads, "qlen": shape.qlen, "batch": shape.batch,
           "longest": max(lengths), "keys": sum(lengths)}  # fmt: skip
    reference = splitkv.reference.mla_decode(*case.args)[0].float()
    for schedule in ("uniform", "balanced"):
        plan = splitkv.plan_decode(shape.batch, columns * 64, shape.heads, qlen=shape.qlen,
                                   page_size=64, device="cuda", seq_lens=lengths,
                                   schedule=schedule)  # fmt: skip
        row[f"plan_{schedule}"] = {f: getattr(plan, f) for f in FIELDS}
        out = splitkv.mla_decode(*case.args, plan=plan)[0].float()
        row[f"err_{schedule}"] = round((out - reference).abs().max().item(), 5)
        row[schedule] = median_us(lambda p=plan: splitkv.mla_decode(*case.args, plan=p))
    return row


def main() -> None:
    rows = []
    path = os.path.join(os.environ.get("STEP_OUT", "."), "schedule_refit.json")
    with open(CASES) as f:
        entries = json.load(f)
    for entry in entries:
        rows.append(measure(entry))
        print(json.dumps(rows[-1]), flush=True)
        with open(path, "w") as f:
            json.dump(rows, f, indent=1)


main()
