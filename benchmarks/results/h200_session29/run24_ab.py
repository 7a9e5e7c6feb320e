"""v0.2.29's launched-wave grid for one kv head (llama3-70b-tp8) against v0.2.28's 264
programs at qlen 1, 2, 4 and 8, and its uniform batches on their default uniform plan against
the balanced schedule (the balanced tile and grid), two rounds alternating; every default
checked against the fp32 reference."""

import json
import os

import torch

import splitkv
from splitkv.bench.ceilings import read_ceiling_bytes_per_s
from splitkv.bench.shapes import gqa_shapes, gqa_special_shapes
from splitkv.bench.sweep import _build_cases
from splitkv.testing import check_against_reference
from splitkv.timing import cuda_graph_times_us

MODEL = "llama3-70b-tp8"


def shapes():
    for qlen in (1, 2, 4, 8):
        for shape in gqa_special_shapes(models=(MODEL,), qlen=qlen):
            yield qlen, shape, {"v0.2.28": {"num_programs": 264}}
    for context, batch in ((32768, 1), (131072, 1), (32768, 8), (131072, 8)):
        for shape in gqa_shapes(models=(MODEL,), contexts=(context,), batches=(batch,),
                                qlens=(1,)):  # fmt: skip
            yield 1, shape, {"balanced": {"schedule": "balanced"}}


def main():
    ceiling = read_ceiling_bytes_per_s()
    rows = [{"ceiling_TBps": ceiling / 1e12}]
    print(json.dumps(rows[0]), flush=True)
    for qlen, shape, others in shapes():
        case = _build_cases(shape, 0, 1)[0]
        lengths = list(shape.lengths)
        common = dict(qlen=qlen, page_size=shape.page_size, kind="gqa",
                      num_kv_heads=shape.kv_heads, head_dim=shape.head_dim,
                      dtype=torch.bfloat16, device="cuda", seq_lens=lengths)  # fmt: skip
        plans = {"default": splitkv.plan_decode(len(lengths), max(lengths), shape.heads, **common)}
        for name, knobs in others.items():
            plans[name] = splitkv.plan_decode(len(lengths), max(lengths), shape.heads, **common,
                                              **knobs)  # fmt: skip
        ref = splitkv.reference.gqa_decode(*case.args, sinks=case.sinks)
        label = shape.label or f"{shape.context}x{shape.batch}"
        row = {"model": MODEL, "label": label, "qlen": qlen}
        for round_ in (1, 2):
            for name, plan in plans.items() if round_ == 1 else reversed(plans.items()):

                def run(plan=plan, case=case):
                    return splitkv.gqa_decode(*case.args, plan=plan, sinks=case.sinks)

                out, lse = run()
                torch.cuda.synchronize()
                check_against_reference(out, lse, *ref)
                p50 = cuda_graph_times_us(run, rep_ms=60)[1]
                fields = {"schedule": plan.schedule, "num_programs": plan.num_programs,
                          "num_splits": plan.num_splits, "p50_us": []}  # fmt: skip
                entry = row.setdefault(name, fields)
                entry["p50_us"].append(round(p50, 1))
        for name in plans:
            row[name]["pct_ceiling"] = round(
                100 * shape.bytes_read / (min(row[name]["p50_us"]) * 1e-6) / ceiling, 1
            )
        rows.append(row)
        print(json.dumps(row), flush=True)
        with open(os.path.join(os.environ.get("STEP_OUT", "."), "ab.json"), "w") as f:
            json.dump(rows, f, indent=1)


main()
