"""Session 38, call 1: seeded ragged GQA batches at 8 kv heads (llama3-8b, gpt-oss, qwen-64-8;
qlen 1 and 4; 8-128 requests; longest 2k-64k, lengths from a 40th of the longest to it) on
both schedules at v0.2.40: the whole call, stage 1 alone and the merge alone (CUDA-graph
medians, us), the plans, and what `schedule="auto"` picks. For weighing the merge in the
GQA schedule model ("Next runs (session 37)" item 1). Stops starting batches after
`budget_s` seconds; the batches are shuffled so a cut run still covers every size."""

import itertools
import json
import os
import random
import sys
import time

import torch

import splitkv
from splitkv.bench.providers import prepare_splitkv
from splitkv.bench.shapes import gqa_batch
from splitkv.bench.sweep import build_cases
from splitkv.timing import cuda_graph_times_us

MODELS = ("llama3-8b", "gpt-oss", "qwen-64-8")
BATCHES, LONGEST = (8, 16, 32, 48, 64, 128), (2048, 4096, 16384, 65536)
MAX_KEYS = 2_500_000  # keeps one batch's cache under ~10 GB and its set-up short


def batches() -> list[dict]:
    rng, out = random.Random(38), []
    for model, qlen, batch, longest in itertools.product(MODELS, (1, 4), BATCHES, LONGEST):
        lengths = [rng.randint(max(1, longest // 40), longest) for _ in range(batch)]
        if sum(lengths) <= MAX_KEYS:
            out.append({"model": model, "qlen": qlen, "lengths": lengths})
    random.Random(1).shuffle(out)
    return out


def median_us(fn) -> float | None:
    return None if fn is None else round(cuda_graph_times_us(fn, rep_ms=10)[1], 1)


def describe(plan) -> dict:
    return {"splits": plan.num_splits, "programs": plan.num_programs, "block_n": plan.block_n,
            "merge_block_s": plan.merge_block_s, "merge_d_split": plan.merge_d_split,
            "merge_num_warps": plan.merge_num_warps, "whole_pieces": plan.whole_pieces}  # fmt: skip


def main() -> None:
    budget_s, start = float(sys.argv[1]), time.time()
    path = os.path.join(os.environ.get("STEP_OUT", "."), "gqa_schedules.jsonl")
    with open(path, "w") as f:
        for index, entry in enumerate(batches()):
            if time.time() - start > budget_s:
                break
            case = build_cases(gqa_batch(entry["model"], entry["lengths"], entry["qlen"]))[0]
            row = dict(entry)
            row["keys"], row["batch"] = sum(entry["lengths"]), len(entry["lengths"])
            row["auto"] = prepare_splitkv(case).schedule
            check = index < 6
            reference = None
            if check:
                reference = splitkv.reference.gqa_decode(*case.args, sinks=case.sinks)[0].float()
            for schedule in ("uniform", "balanced"):
                prep = prepare_splitkv(case, schedule=schedule)
                prep.run()
                if reference is not None:
                    err = (prep.result()[0].float() - reference).abs().max().item()
                    row[f"err_{schedule}"] = round(err, 5)
                plan = splitkv.plan_decode(
                    row["batch"], case.page_table.shape[1] * 16, case.q.shape[2],
                    qlen=entry["qlen"], kind="gqa", num_kv_heads=case.key_pool.shape[2],
                    head_dim=case.q.shape[3], device="cuda", seq_lens=entry["lengths"],
                    schedule=schedule)  # fmt: skip
                row[f"plan_{schedule}"] = describe(plan)
                row[schedule] = [median_us(prep.run), median_us(prep.stage1_run),
                                 median_us(prep.merge_run)]  # fmt: skip
            del row["lengths"]
            row["lengths_seed_index"] = index
            row["lengths"] = entry["lengths"]
            print(json.dumps({k: v for k, v in row.items() if k != "lengths"}), flush=True)
            f.write(json.dumps(row) + "\n")
            f.flush()
            del case, reference
            torch.cuda.empty_cache()


main()
