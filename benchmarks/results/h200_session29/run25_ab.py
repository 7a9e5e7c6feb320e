"""v0.2.30: uniform GQA splits of one kv head taking the balanced tile (3 stages, page ids
ahead) where they launch one wave and stream 8 or more blocks each, against v0.2.29's uniform
tile (2 stages, none ahead), two rounds alternating; every plan checked against the fp32
reference."""

import json
import os

import torch

import splitkv
from splitkv.bench.ceilings import read_ceiling_bytes_per_s
from splitkv.bench.shapes import gqa_shapes
from splitkv.bench.sweep import _build_cases
from splitkv.testing import check_against_reference
from splitkv.timing import cuda_graph_times_us

MODEL = "llama3-70b-tp8"


def shapes():
    old = {"v0.2.29": {"block_n": 64, "num_stages": 2, "page_prefetch": False}}
    for qlen, context in ((1, 131072), (1, 262144), (2, 131072), (2, 262144), (1, 65536)):
        for shape in gqa_shapes(models=(MODEL,), contexts=(context,), batches=(1,),
                                qlens=(qlen,)):  # fmt: skip
            yield qlen, shape, old


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
