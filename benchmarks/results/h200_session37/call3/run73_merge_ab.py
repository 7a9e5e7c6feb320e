"""Session 37, call 3: the narrow-rows merge rule (`plan_rules.narrow_rows_merge_slicing`)
against the slicing it replaces, on the 43 GQA batches of merge_cases.json whose merge knobs
it moves (4 models x qlen 1 and 4 x 8 batch kinds; knobs from the CPU planner before and
after the change). Both plans pinned, two rounds alternating; one JSON line a batch: CUDA-graph
medians in us of the call and of the merge alone, old then new, and the new output's largest
difference from the fp32 reference."""

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


def pinned(merge: list[int]) -> dict:
    return dict(zip(("merge_d_split", "merge_num_warps", "merge_block_s"), merge, strict=True))


def main() -> None:
    with open("merge_cases.json") as f:
        cases = json.load(f)
    path = os.path.join(os.environ.get("STEP_OUT", "."), "merge_ab.jsonl")
    with open(path, "w") as out:
        for c in cases:
            lengths = c["lengths"]
            heads = GQA_MODELS[c["model"]][0]
            shape = BenchShape(heads, max(lengths), len(lengths), c["qlen"],
                               seq_lens=tuple(lengths), **_gqa_fields(c["model"], 16))  # fmt: skip
            case = _build_cases(shape, 0, 1)[0]
            kv_heads, dim = GQA_MODELS[c["model"]][1:3]
            plan = splitkv.plan_decode(len(lengths), max(lengths), heads, qlen=c["qlen"],
                                       kind="gqa", num_kv_heads=kv_heads, head_dim=dim,
                                       device="cuda", seq_lens=lengths)  # fmt: skip
            default = [plan.merge_d_split, plan.merge_num_warps, plan.merge_block_s]
            old = prepare_splitkv(case, **pinned(c["old_merge"]))
            new = prepare_splitkv(case, **pinned(c["merge"]))
            reference = splitkv.reference.gqa_decode(*case.args, sinks=case.sinks)[0].float()
            new.run()
            err = (new.result()[0].float() - reference).abs().max().item()
            row = {k: c[k] for k in ("model", "qlen", "label", "schedule", "old_merge", "merge")}
            row.update(plan=new.schedule, default_merge=default, err=round(err, 5),
                       old=[], new=[], old_merge_us=None, new_merge_us=None)  # fmt: skip
            for _ in "ab":
                row["old"].append(median_us(old.run))
                row["new"].append(median_us(new.run))
            if new.merge_run is not None:
                row["old_merge_us"] = median_us(old.merge_run)
                row["new_merge_us"] = median_us(new.merge_run)
            print(json.dumps(row), flush=True)
            out.write(json.dumps(row) + "\n")
            del case, reference
            torch.cuda.empty_cache()


main()
