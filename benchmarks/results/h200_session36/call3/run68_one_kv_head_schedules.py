"""The 80 seeded ragged llama3-70b-tp8 batches of `gqa_ragged_plan_snapshot.py` (qlen 1 and 4,
2-128 requests, longest 4k-131k, lengths from a 40th of the longest to it; one kv head) timed
on both schedules at the planner's grids, for the schedule model's one-kv-head choice (session
36). One JSON line per batch: the plans, CUDA-graph medians in us, and on the first 8 the
largest difference from the fp32 reference. Stops starting batches after `budget_s` seconds."""

import json
import os
import random
import sys
import time

import torch

import splitkv
from splitkv.bench.shapes import GQA_MODELS, BenchShape, _gqa_fields
from splitkv.bench.sweep import _build_cases
from splitkv.timing import cuda_graph_times_us

HERE = os.path.dirname(os.path.abspath(__file__))
MODEL = "llama3-70b-tp8"


def measure(qlen: int, lengths: list[int], check: bool) -> dict:
    heads, kv_heads, dim, _ = GQA_MODELS[MODEL]
    shape = BenchShape(heads, max(lengths), len(lengths), qlen, seq_lens=tuple(lengths),
                       **_gqa_fields(MODEL, 16))  # fmt: skip
    case = _build_cases(shape, 0, 1)[0]
    columns = case.args[3].shape[1]
    row = {"qlen": qlen, "batch": len(lengths), "longest": max(lengths), "keys": sum(lengths)}
    reference = None
    if check:
        reference = splitkv.reference.gqa_decode(*case.args, sinks=case.sinks)[0].float()
    for schedule in ("uniform", "balanced"):
        plan = splitkv.plan_decode(len(lengths), columns * 16, heads, qlen=qlen, page_size=16,
                                   device="cuda", kind="gqa", num_kv_heads=kv_heads,
                                   head_dim=dim, seq_lens=lengths, schedule=schedule)  # fmt: skip
        row[f"plan_{schedule}"] = [plan.num_splits, plan.num_programs, plan.block_n]
        run = lambda p=plan: splitkv.gqa_decode(*case.args, plan=p, sinks=case.sinks)
        out = run()[0]
        if reference is not None:
            row[f"err_{schedule}"] = round((out.float() - reference).abs().max().item(), 5)
        torch.cuda.synchronize()
        row[schedule] = round(cuda_graph_times_us(run, rep_ms=20)[1], 1)
    return row


def main() -> None:
    budget_s, start = float(sys.argv[1]), time.time()
    with open(os.path.join(HERE, "one_kv_head_cases.json")) as f:
        entries = json.load(f)
    random.Random(1).shuffle(entries)  # a cut run still covers every size
    path = os.path.join(os.environ.get("STEP_OUT", "."), "one_kv_head_schedules.jsonl")
    with open(path, "w") as f:
        for index, entry in enumerate(entries):
            if time.time() - start > budget_s:
                break
            row = measure(entry["qlen"], entry["seq_lens"], index < 8)
            row.update({k: entry[k] for k in ("plan_v0_2_37", "plan_patched")})
            print(json.dumps(row), flush=True)
            f.write(json.dumps(row) + "\n")
            f.flush()
            torch.cuda.empty_cache()


main()
