"""Session 38, call 2: the schedule model weighing the balanced plan's own grid (v0.2.41).
(1) The batches whose default plan it changes in tools/gqa_plan_snapshot.py's grid (mha-32
256 x 100-500, 32 x 100-2,000 and 48 x 100-4,000; llama3-8b 256 x 100-500; gpt-oss 256 x
100-500 at qlen 4 and 8), at page size 16, on both schedules and the default; (2) call 1's
138 batches on the default only (call 1 timed both schedules). One JSON line a batch:
CUDA-graph medians in us. Stops starting batches of (2) after `budget_s` seconds."""

import json
import os
import sys
import time

import torch

from splitkv.bench.providers import prepare_splitkv
from splitkv.bench.shapes import gqa_batch
from splitkv.bench.sweep import build_cases
from splitkv.timing import cuda_graph_times_us

CALL1 = "benchmarks/results/h200_session38/call1/gqa_schedules.jsonl"


def spread(n: int, lo: int, hi: int) -> list[int]:
    return [lo + (hi - lo) * i // (n - 1) for i in range(n)]


SHORT = ((256, 100, 500), (32, 100, 2000), (48, 100, 4000))
CHANGED = [("mha-32", q, spread(*b)) for q in (1, 2, 4, 8) for b in SHORT]
CHANGED += [("llama3-8b", q, spread(256, 100, 500)) for q in (1, 2, 4, 8)]
CHANGED += [("gpt-oss", q, spread(256, 100, 500)) for q in (4, 8)]


def median_us(fn) -> float:
    return round(cuda_graph_times_us(fn, rep_ms=10)[1], 1)


def main() -> None:
    budget_s = float(sys.argv[1])
    out_dir = os.environ.get("STEP_OUT", ".")
    with open(os.path.join(out_dir, "changed_plans.jsonl"), "w") as f:
        for model, qlen, lengths in CHANGED:
            case = build_cases(gqa_batch(model, lengths, qlen))[0]
            row = {"model": model, "qlen": qlen, "batch": len(lengths), "longest": max(lengths)}
            for schedule in ("auto", "uniform", "balanced"):
                prep = prepare_splitkv(case, schedule=schedule)
                prep.run()
                row[schedule] = median_us(prep.run)
                if schedule == "auto":
                    row["auto_is"] = prep.schedule
            print(json.dumps(row), flush=True)
            f.write(json.dumps(row) + "\n")
    start = time.time()
    with open(CALL1) as calls:
        entries = [json.loads(line) for line in calls]
    with open(os.path.join(out_dir, "auto_138.jsonl"), "w") as f:
        for e in entries:
            if time.time() - start > budget_s:
                break
            case = build_cases(gqa_batch(e["model"], e["lengths"], e["qlen"]))[0]
            prep = prepare_splitkv(case)
            prep.run()
            row = {k: e[k] for k in ("model", "qlen", "batch")}
            row.update(longest=max(e["lengths"]), auto_is=prep.schedule, auto=median_us(prep.run),
                       call1=[e["uniform"][0], e["balanced"][0]])  # fmt: skip
            print(json.dumps(row), flush=True)
            f.write(json.dumps(row) + "\n")
            del case
            torch.cuda.empty_cache()


main()
