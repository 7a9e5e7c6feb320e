"""The balanced GQA default (session 28's rule) against v0.2.26's (2 stages, no prefetch, one
wave of programs; 64-key blocks at 16 rows, 32 at 32 and 64), same cases, at the qlens of
QLENS (default 1 2), each default checked against the fp32 reference."""

import json
import os

import torch

import splitkv
from splitkv.bench.ceilings import read_ceiling_bytes_per_s
from splitkv.bench.shapes import gqa_special_shapes
from splitkv.bench.sweep import _build_cases
from splitkv.testing import check_against_reference
from splitkv.timing import cuda_graph_times_us

FIELDS = ("num_programs", "block_n", "split_num_stages", "page_prefetch", "split_num_warps")


def main():
    ceiling = read_ceiling_bytes_per_s()
    rows = [{"ceiling_TBps": ceiling / 1e12}]
    print(json.dumps(rows[0]), flush=True)
    for qlen in [int(q) for q in os.environ.get("QLENS", "1 2").split()]:
        shapes = gqa_special_shapes(models=("llama3-8b", "gpt-oss", "llama3-70b-tp8"), qlen=qlen)
        for shape in shapes:
            case = _build_cases(shape, 0, 1)[0]
            lengths = list(shape.lengths)
            common = dict(qlen=qlen, page_size=shape.page_size, kind="gqa",
                          num_kv_heads=shape.kv_heads, head_dim=shape.head_dim,
                          dtype=torch.bfloat16, device="cuda", seq_lens=lengths)  # fmt: skip
            new = splitkv.plan_decode(len(lengths), max(lengths), shape.heads, **common)
            wave = splitkv.plan_decode(len(lengths), max(lengths), shape.heads, **common,
                                       schedule="uniform").num_programs  # fmt: skip
            old = splitkv.plan_decode(len(lengths), max(lengths), shape.heads, **common,
                                      schedule="balanced", num_programs=wave,
                                      block_n=64 if new.block_h == 16 else 32, num_stages=2,
                                      page_prefetch=False)  # fmt: skip
            row = {"model": shape.model, "label": shape.label, "qlen": qlen,
                   "schedule": new.schedule}  # fmt: skip
            outs = []
            for name, plan in (("new", new), ("old", old)):

                def run(plan=plan, case=case):
                    return splitkv.gqa_decode(*case.args, plan=plan, sinks=case.sinks)

                out, lse = run()
                torch.cuda.synchronize()
                outs.append(out.float())
                if name == "new":
                    ref = splitkv.reference.gqa_decode(*case.args, sinks=case.sinks)
                    check_against_reference(out, lse, *ref)
                p50 = cuda_graph_times_us(run, rep_ms=100)[1]
                row[name] = {
                    "p50_us": round(p50, 1),
                    "pct_ceiling": round(100 * shape.bytes_read / (p50 * 1e-6) / ceiling, 1),
                    **{k: getattr(plan, k) for k in FIELDS},
                }
            row["max_diff"] = (outs[0] - outs[1]).abs().max().item()
            row["ratio"] = round(row["new"]["p50_us"] / row["old"]["p50_us"], 3)
            rows.append(row)
            print(json.dumps(row), flush=True)
            with open(os.path.join(os.environ.get("STEP_OUT", "."), "ab.json"), "w") as f:
                json.dump(rows, f, indent=1)


main()
