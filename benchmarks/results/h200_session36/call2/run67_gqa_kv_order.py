"""A/B of the GQA stage-1 grid order (kv heads fastest, kv_head_fastest.patch) against the
committed order (kv heads slowest), on GQA models of 8 kv heads: issue 5's ragged and one-long
batches at qlen 1 and 4 (default plans), call 1's three 48- and 2-request qlen 4 batches on
both schedules, and uniform grids of several waves. Run once per source tree (PYTHONPATH);
writes one JSON line per case: plan, largest difference from the fp32 reference (first round),
CUDA-graph median in us."""

import json
import os
import sys

import torch

import splitkv
from splitkv.bench.shapes import GQA_MODELS, GQA_ONE_LONG, GQA_RAGGED, BenchShape, _gqa_fields
from splitkv.bench.sweep import _build_cases
from splitkv.timing import cuda_graph_times_us

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = ("llama3-8b", "gpt-oss", "qwen-64-8")


def cases() -> list[tuple[str, int, list[int], str]]:
    """(model, qlen, lengths, schedule) of every timed case."""
    out = []
    for model in MODELS:
        for qlen in (1, 4):
            out.append((model, qlen, list(GQA_RAGGED), "auto"))
            out.append((model, qlen, list(GQA_ONE_LONG), "auto"))
    with open(os.path.join(HERE, "gqa_model_cases.json")) as f:
        for entry in json.load(f)["schedule_model"]:
            if entry["model"] in MODELS:
                for schedule in ("uniform", "balanced"):
                    out.append((entry["model"], entry["qlen"], entry["seq_lens"], schedule))
    out.append(("llama3-8b", 1, [131072] * 8, "auto"))
    out.append(("gpt-oss", 1, [32768] * 32, "auto"))
    out.append(("llama3-8b", 4, [4096] * 32, "auto"))
    out.append(("qwen-64-8", 1, [8192] * 64, "auto"))
    return out


def measure(model: str, qlen: int, lengths: list[int], schedule: str, check: bool) -> dict:
    heads, kv_heads, dim, _ = GQA_MODELS[model]
    shape = BenchShape(heads, max(lengths), len(lengths), qlen, seq_lens=tuple(lengths),
                       **_gqa_fields(model, 16))  # fmt: skip
    case = _build_cases(shape, 0, 1)[0]
    columns = case.args[3].shape[1]
    plan = splitkv.plan_decode(len(lengths), columns * 16, heads, qlen=qlen, page_size=16,
                               device="cuda", kind="gqa", num_kv_heads=kv_heads, head_dim=dim,
                               seq_lens=lengths, schedule=schedule)  # fmt: skip
    row = {"model": model, "qlen": qlen, "batch": len(lengths), "longest": max(lengths),
           "keys": sum(lengths), "schedule": schedule,
           "plan": [plan.schedule, plan.num_splits, plan.num_programs, plan.block_n]}  # fmt: skip
    run = lambda: splitkv.gqa_decode(*case.args, plan=plan, sinks=case.sinks)
    if check:
        reference = splitkv.reference.gqa_decode(*case.args, sinks=case.sinks)[0].float()
        row["err"] = round((run()[0].float() - reference).abs().max().item(), 5)
        del reference
    run()
    torch.cuda.synchronize()
    row["us"] = round(cuda_graph_times_us(run, rep_ms=30)[1], 1)
    return row


def main() -> None:
    tag, check = sys.argv[1], sys.argv[2] == "check"
    print(splitkv.__file__, flush=True)
    path = os.path.join(os.environ.get("STEP_OUT", "."), f"kv_order_{tag}.jsonl")
    with open(path, "w") as f:
        for case in cases():
            row = {"tag": tag, **measure(*case, check)}
            print(json.dumps(row), flush=True)
            f.write(json.dumps(row) + "\n")
            f.flush()
            torch.cuda.empty_cache()


main()
