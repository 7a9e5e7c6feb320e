"""Session 39, call 5: v0.2.42's 3 stages on the 32-row uniform GQA tile at head dim 128
(`GQA_WIDE_TILE_DEEP_STAGES`) against 2 (the constant patched to None: the planner's 2), on
the default plans. One JSON line a batch: CUDA-graph medians in us, two rounds, and the plan
(schedule, splits, block_h, block_n, stages). Run from the repository root:
    PYTHONPATH=$PWD/src python3 run85_deep_stages.py"""

import json
import os

import torch

import splitkv
import splitkv.gqa_tile_rules as rules
from splitkv.bench.providers import prepare_splitkv
from splitkv.bench.shapes import gqa_batch
from splitkv.bench.sweep import build_cases
from splitkv.timing import cuda_graph_times_us

BATCHES = [("qwen-64-8", 4, 64, 4096), ("qwen-64-8", 4, 128, 4096), ("qwen-64-8", 4, 256, 1024),
           ("qwen-64-8", 4, 32, 16384), ("qwen-64-8", 4, 8, 65536), ("llama3-8b", 8, 64, 4096),
           ("llama3-8b", 8, 128, 4096), ("llama3-8b", 8, 32, 16384),
           ("llama3-70b-tp8", 4, 128, 4096)]  # fmt: skip
# Callers' split counts, which keep the uniform tile where the planner's would take the
# long-split one (its 32-row plans that change at llama3-70b-tp8 x qlen 4).
PINNED = [("llama3-70b-tp8", 4, 1, 32768, 256), ("llama3-70b-tp8", 4, 16, 8000, 32),
          ("llama3-70b-tp8", 4, 8, 131072, 64)]  # fmt: skip
PLAN = splitkv.plan_decode
SEEN = {}


def plan_seen(*args, **kwargs):
    SEEN["plan"] = PLAN(*args, **kwargs)
    return SEEN["plan"]


splitkv.plan_decode = plan_seen


def median_us(fn) -> float:
    return round(cuda_graph_times_us(fn, rep_ms=20)[1], 1)


def main() -> None:
    where = os.environ.get("STEP_OUT", ".")
    with open(os.path.join(where, "deep_stages.jsonl"), "w") as out:
        for model, qlen, n, keys, *splits in [*BATCHES, *PINNED]:
            case = build_cases(gqa_batch(model, [keys] * n, qlen))[0]
            knobs = {"num_splits": splits[0]} if splits else {}
            row = {"batch": f"{model} {qlen} {n} {keys}", **knobs}
            for label, stages in (("3 stages", 3), ("2 stages", None)) * 2:
                rules.GQA_WIDE_TILE_DEEP_STAGES = stages
                prep = prepare_splitkv(case, **knobs)
                prep.run()
                row.setdefault(label, []).append(median_us(prep.run))
                p = SEEN["plan"]
                row["plan " + label] = [p.schedule, p.num_splits, p.block_h, p.block_n,
                                        p.split_num_stages]  # fmt: skip
            print(json.dumps(row), flush=True)
            out.write(json.dumps(row) + "\n")
            del case
            torch.cuda.empty_cache()


main()
