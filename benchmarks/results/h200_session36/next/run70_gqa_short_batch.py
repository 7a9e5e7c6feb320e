"""Session 37 (prepared in session 36): where llama3-8b and gpt-oss 48 x up to 4k at qlen 4
lose their time (2.9 and 1.9 TB/s on both schedules, call 1-2), timed on grids around the
planner's: uniform at 1, 2, 4 and 8 splits, balanced at 33-264 programs a kv head. If every
grid stays within 10% of the default, the loss is a per-block or per-piece cost of these
short requests, not the grid. One JSON line per (model, grid): CUDA-graph median in us."""

import json
import os

import torch

import splitkv
from splitkv.bench.shapes import GQA_MODELS, BenchShape, _gqa_fields
from splitkv.bench.sweep import _build_cases
from splitkv.timing import cuda_graph_times_us

HERE = os.path.dirname(os.path.abspath(__file__))
GRIDS = [("auto", {})] + [(f"uniform_{s}", {"num_splits": s}) for s in (1, 2, 4, 8)]
GRIDS += [(f"balanced_{p}", {"num_programs": p}) for p in (33, 66, 99, 132, 198, 264)]


def main() -> None:
    with open(os.path.join(HERE, "short_batch_lengths.json")) as f:
        batches = json.load(f)
    path = os.path.join(os.environ.get("STEP_OUT", "."), "short_batch_grids.jsonl")
    with open(path, "w") as out:
        for model, lengths in batches.items():
            heads, kv_heads, dim, _ = GQA_MODELS[model]
            shape = BenchShape(heads, max(lengths), len(lengths), 4, seq_lens=tuple(lengths),
                               **_gqa_fields(model, 16))  # fmt: skip
            case = _build_cases(shape, 0, 1)[0]
            columns = case.args[3].shape[1]
            reference = splitkv.reference.gqa_decode(*case.args, sinks=case.sinks)[0].float()
            for label, knobs in GRIDS:
                plan = splitkv.plan_decode(len(lengths), columns * 16, heads, qlen=4,
                                           page_size=16, device="cuda", kind="gqa",
                                           num_kv_heads=kv_heads, head_dim=dim,
                                           seq_lens=lengths, **knobs)  # fmt: skip
                run = lambda p=plan, c=case: splitkv.gqa_decode(*c.args, plan=p, sinks=c.sinks)
                err = (run()[0].float() - reference).abs().max().item()
                torch.cuda.synchronize()
                times = [round(cuda_graph_times_us(run, rep_ms=30)[1], 1) for _ in "ab"]
                row = {"model": model, "grid": label, "schedule": plan.schedule,
                       "plan": [plan.num_splits, plan.num_programs, plan.block_n],
                       "err": round(err, 5), "us": times}  # fmt: skip
                print(json.dumps(row), flush=True)
                out.write(json.dumps(row) + "\n")


main()
