"""v0.2.31: uniform GQA splits on the long-split tile (32 KB key blocks, 3 stages, page ids
ahead) at every row height, on half the planner's splits where the launch would pass one wave
of that tile, against v0.2.30's plan (its split count on the uniform tile: 2 stages, none
ahead), two rounds alternating; every plan checked against the fp32 reference."""

import json
import os

import torch

import splitkv
from splitkv.bench.ceilings import read_ceiling_bytes_per_s
from splitkv.bench.shapes import gqa_shapes
from splitkv.bench.sweep import _build_cases
from splitkv.testing import check_against_reference
from splitkv.timing import cuda_graph_times_us

# (model, qlen, context, batch, v0.2.30's num_splits and block_n)
CASES = [
    ("llama3-70b-tp8", 4, 131072, 1, 256, 128), ("llama3-70b-tp8", 8, 131072, 1, 256, 64),
    ("llama3-70b-tp8", 1, 131072, 2, 256, 64), ("llama3-70b-tp8", 4, 131072, 2, 256, 128),
    ("llama3-70b-tp8", 8, 65536, 4, 128, 64), ("llama3-70b-tp8", 1, 131072, 8, 64, 64),
    ("llama3-70b-tp8", 8, 32768, 8, 64, 64),
    ("llama3-8b", 1, 32768, 1, 64, 64), ("llama3-8b", 1, 131072, 2, 32, 64),
    ("llama3-8b", 1, 65536, 4, 16, 64), ("llama3-8b", 4, 32768, 8, 8, 64),
    ("llama3-8b", 8, 65536, 1, 64, 128), ("llama3-8b", 8, 32768, 8, 8, 128),
    ("llama3-8b", 1, 262144, 1, 64, 64),
    ("gpt-oss", 1, 131072, 1, 64, 128), ("gpt-oss", 1, 65536, 8, 8, 128),
    ("gpt-oss", 1, 131072, 4, 16, 128), ("gpt-oss", 4, 65536, 1, 64, 128),
    ("gpt-oss", 4, 131072, 2, 32, 128), ("gpt-oss", 8, 131072, 1, 64, 64),
]  # fmt: skip


def main():
    ceiling = read_ceiling_bytes_per_s()
    rows = [{"ceiling_TBps": ceiling / 1e12}]
    print(json.dumps(rows[0]), flush=True)
    for model, qlen, context, batch, old_splits, old_block_n in CASES:
        shape = gqa_shapes(models=(model,), contexts=(context,), batches=(batch,),
                           qlens=(qlen,))[0]  # fmt: skip
        case = _build_cases(shape, 0, 1)[0]
        lengths = list(shape.lengths)
        common = dict(qlen=qlen, page_size=shape.page_size, kind="gqa",
                      num_kv_heads=shape.kv_heads, head_dim=shape.head_dim,
                      dtype=torch.bfloat16, device="cuda", seq_lens=lengths)  # fmt: skip
        old = {"num_splits": old_splits, "block_n": old_block_n, "num_stages": 2,
               "page_prefetch": False}  # fmt: skip
        plans = {"default": splitkv.plan_decode(len(lengths), max(lengths), shape.heads, **common)}
        plans["v0.2.30"] = splitkv.plan_decode(len(lengths), max(lengths), shape.heads, **common,
                                               **old)  # fmt: skip
        ref = splitkv.reference.gqa_decode(*case.args, sinks=case.sinks)
        row = {"model": model, "label": f"{context}x{batch}", "qlen": qlen}
        for round_ in (1, 2):
            for name, plan in plans.items() if round_ == 1 else reversed(plans.items()):

                def run(plan=plan, case=case):
                    return splitkv.gqa_decode(*case.args, plan=plan, sinks=case.sinks)

                out, lse = run()
                torch.cuda.synchronize()
                check_against_reference(out, lse, *ref)
                p50 = cuda_graph_times_us(run, rep_ms=60)[1]
                fields = {"num_splits": plan.num_splits, "block_h": plan.block_h,
                          "block_n": plan.block_n, "stages": plan.split_num_stages,
                          "prefetch": plan.page_prefetch, "p50_us": []}  # fmt: skip
                entry = row.setdefault(name, fields)
                entry["p50_us"].append(round(p50, 1))
        for name in plans:
            row[name]["pct_ceiling"] = round(
                100 * shape.bytes_read / (min(row[name]["p50_us"]) * 1e-6) / ceiling, 1
            )
        del ref
        rows.append(row)
        print(json.dumps(row), flush=True)
        with open(os.path.join(os.environ.get("STEP_OUT", "."), "ab.json"), "w") as f:
            json.dump(rows, f, indent=1)


main()
