"""Session 39, call 4: the uniform GQA wide tile (32 and 64 rows) on 3 stages against the
planner's 2, everything else as planned (the plan's split_num_stages replaced after planning,
so the GQA tile rules still run). One JSON line a batch: CUDA-graph medians in us, two rounds.
Run from the repository root:
    PYTHONPATH=$PWD/src python3 run84_wide_stages.py"""

import dataclasses
import json
import os

import torch

import splitkv
from splitkv.bench.providers import prepare_splitkv
from splitkv.bench.shapes import gqa_batch
from splitkv.bench.sweep import build_cases
from splitkv.timing import cuda_graph_times_us

BATCHES = [("gpt-oss", 4, 64, 4096), ("gpt-oss", 4, 128, 4096), ("gpt-oss", 4, 256, 1024),
           ("gpt-oss", 4, 32, 16384), ("gpt-oss", 8, 64, 4096), ("gpt-oss", 8, 128, 4096),
           ("gpt-oss", 8, 32, 16384), ("llama3-70b-tp8", 8, 128, 4096),
           ("qwen-64-8", 4, 64, 4096), ("llama3-8b", 8, 64, 4096)]  # fmt: skip
PLAN = splitkv.plan_decode
STAGES = {"stages": None, "plan": None}


def plan_with_stages(*args, **kwargs):
    plan = PLAN(*args, **kwargs)
    if STAGES["stages"] is not None:
        plan = dataclasses.replace(plan, split_num_stages=STAGES["stages"])
    STAGES["plan"] = plan
    return plan


splitkv.plan_decode = plan_with_stages


def median_us(fn) -> float:
    return round(cuda_graph_times_us(fn, rep_ms=20)[1], 1)


def main() -> None:
    where = os.environ.get("STEP_OUT", ".")
    with open(os.path.join(where, "wide_stages.jsonl"), "w") as out:
        for model, qlen, n, keys in BATCHES:
            case = build_cases(gqa_batch(model, [keys] * n, qlen))[0]
            row = {"batch": f"{model} {qlen} {n} {keys}"}
            for label, stages in (("planned", None), ("3 stages", 3)) * 2:
                STAGES["stages"] = stages
                prep = prepare_splitkv(case)
                prep.run()
                row.setdefault(label, []).append(median_us(prep.run))
                p = STAGES["plan"]
                row["plan " + label] = [p.schedule, p.num_splits, p.block_h, p.block_n,
                                        p.split_num_stages]  # fmt: skip
            print(json.dumps(row), flush=True)
            out.write(json.dumps(row) + "\n")
            del case
            torch.cuda.empty_cache()


main()
