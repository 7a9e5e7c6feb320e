"""Session 37, call 4: GQA's one-split uniform plans with stage 1 writing the output rows
(`whole_pieces`, v0.2.40) against the same plan writing partials for the merge
(whole_pieces=False), on the batches of merge_cases.json (call 3) that plan one uniform split.
Two rounds alternating; one JSON line a batch: CUDA-graph medians in us, and both outputs'
largest difference from the fp32 reference."""

import json
import os

import torch

import splitkv
from splitkv.bench.providers import prepare_splitkv
from splitkv.bench.shapes import GQA_MODELS, BenchShape, _gqa_fields
from splitkv.bench.sweep import _build_cases
from splitkv.timing import cuda_graph_times_us


def median_us(fn) -> float:
    return round(cuda_graph_times_us(fn, rep_ms=25)[1], 1)


def main() -> None:
    with open("merge_cases.json") as f:
        cases = json.load(f)
    path = os.path.join(os.environ.get("STEP_OUT", "."), "one_split.jsonl")
    with open(path, "w") as out:
        for c in cases:
            if c["schedule"] != "uniform":
                continue
            lengths = c["lengths"]
            heads, kv_heads, dim, _ = GQA_MODELS[c["model"]]
            plan = splitkv.plan_decode(len(lengths), max(lengths), heads, qlen=c["qlen"],
                                       kind="gqa", num_kv_heads=kv_heads, head_dim=dim,
                                       device="cuda", seq_lens=lengths)  # fmt: skip
            if not plan.whole_pieces:
                continue
            shape = BenchShape(heads, max(lengths), len(lengths), c["qlen"],
                               seq_lens=tuple(lengths), **_gqa_fields(c["model"], 16))  # fmt: skip
            case = _build_cases(shape, 0, 1)[0]
            reference = splitkv.reference.gqa_decode(*case.args, sinks=case.sinks)[0].float()
            merged = prepare_splitkv(case, whole_pieces=False)
            direct = prepare_splitkv(case)
            errs = []
            for prep in (merged, direct):
                prep.run()
                errs.append(round((prep.result()[0].float() - reference).abs().max().item(), 5))
            row = {k: c[k] for k in ("model", "qlen", "label")}
            row.update(num_splits=plan.num_splits, err=errs, merged=[], direct=[])
            for _ in "ab":
                row["merged"].append(median_us(merged.run))
                row["direct"].append(median_us(direct.run))
            print(json.dumps(row), flush=True)
            out.write(json.dumps(row) + "\n")
            del case, reference
            torch.cuda.empty_cache()


main()
