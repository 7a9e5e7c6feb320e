"""Session 37, call 2: where the balanced GQA schedule's time beyond stage 1 goes on batches
of many short requests (llama3-8b 48 x up to 4k at qlen 4: stage 1 133.8 us by ncu, the call
162 us), and the merge's slicing knobs crossed. One JSON line per (model, schedule, knobs):
CUDA-graph medians in us of the whole call, stage 1 alone and the merge alone."""

import json
import os
import sys

import torch

import splitkv
from splitkv.bench.providers import prepare_splitkv
from splitkv.bench.shapes import GQA_MODELS, BenchShape, _gqa_fields
from splitkv.bench.sweep import _build_cases
from splitkv.timing import cuda_graph_times_us

MERGES = [{}] + [
    {"merge_d_split": d, "merge_num_warps": w, "merge_block_s": s}
    for d, w, s in [(1, 4, 8), (1, 2, 8), (1, 1, 8), (2, 2, 8), (2, 1, 8), (4, 1, 8),
                    (8, 1, 8), (1, 4, 16), (2, 2, 16), (1, 4, 64)]
]  # fmt: skip
SCHEDULES = [{"schedule": "balanced"}, {"schedule": "balanced", "num_programs": 264},
             {"schedule": "uniform"}, {"schedule": "uniform", "num_splits": 4}]  # fmt: skip


def median_us(fn) -> float:
    return round(cuda_graph_times_us(fn, rep_ms=25)[1], 1)


def main() -> None:
    with open("short_batch_lengths.json") as f:
        batches = json.load(f)
    batches["llama3-70b-tp8"] = batches["llama3-8b"]
    qlens = [int(q) for q in sys.argv[1:]] or [4]
    out_path = os.path.join(os.environ.get("STEP_OUT", "."), "gqa_merge.jsonl")
    with open(out_path, "w") as out:
        for qlen in qlens:
            for model, lengths in batches.items():
                heads = GQA_MODELS[model][0]
                shape = BenchShape(heads, max(lengths), len(lengths), qlen,
                                   seq_lens=tuple(lengths), **_gqa_fields(model, 16))  # fmt: skip
                case = _build_cases(shape, 0, 1)[0]
                reference = splitkv.reference.gqa_decode(*case.args, sinks=case.sinks)[0].float()
                for sched in SCHEDULES:
                    for merge in MERGES if sched["schedule"] == "balanced" else [{}]:
                        prep = prepare_splitkv(case, **sched, **merge)
                        prep.run()
                        err = (prep.result()[0].float() - reference).abs().max().item()
                        row = {"model": model, "qlen": qlen, **sched, **merge,
                               "plan": prep.schedule, "err": round(err, 5),
                               "call": [median_us(prep.run) for _ in "ab"],
                               "stage1": median_us(prep.stage1_run)}  # fmt: skip
                        if prep.merge_run is not None:
                            row["merge"] = median_us(prep.merge_run)
                        print(json.dumps(row), flush=True)
                        out.write(json.dumps(row) + "\n")
                        torch.cuda.synchronize()


main()
