"""Small ragged GQA batches (the shared-prefix cascade's suffix passes and their like) on the
balanced schedule at 1-4 programs an SM, against uniform splits and the planner's default with
the lengths (session 35: llama3-70b-tp8's mix cascade lost 6 us with `seq_lens=`, its suffix
pass on 132 balanced programs, one an SM, against 768 uniform ones). CUDA-graph medians in us,
one round, with each output's largest difference from the fp32 reference."""

import json
import os
import random

import torch

import splitkv
from splitkv.bench.shapes import BenchShape, _gqa_fields
from splitkv.bench.sweep import _build_cases
from splitkv.timing import cuda_graph_times_us

FIELDS = ("schedule", "num_splits", "num_programs", "block_n", "split_num_stages")
MODELS = {"llama3-70b-tp8": 8, "llama3-8b": 32, "gpt-oss": 64}


def median_us(fn) -> float:
    fn()
    torch.cuda.synchronize()
    return round(cuda_graph_times_us(fn, rep_ms=30)[1], 1)


def batches() -> dict:
    rng = random.Random(35)
    out = {"mix suffixes": [100 + (3900 * i) // 47 for i in range(48)]}
    for n, lo, hi in ((8, 1000, 32000), (16, 500, 8000), (32, 100, 2000), (64, 100, 4000),
                      (4, 2000, 65536)):  # fmt: skip
        out[f"{n} x {lo}-{hi}"] = [rng.randint(lo, hi) for _ in range(n)]
    out["one-long"] = [327600, *(1 + (4095 * i) // 46 for i in range(47))]
    return out


def measure(model: str, name: str, lengths: list) -> dict:
    heads = MODELS[model]
    shape = BenchShape(heads, max(lengths), len(lengths), 1, seq_lens=tuple(lengths),
                       **_gqa_fields(model, 16))  # fmt: skip
    case = _build_cases(shape, 0, 1)[0]
    k, table = case.args[1], case.args[3]
    kv_heads, dim = k.shape[2], k.shape[3]
    reference = splitkv.reference.gqa_decode(*case.args, sinks=case.sinks)[0].float()
    row = {"model": model, "batch": name, "keys": sum(lengths)}
    common = dict(qlen=1, page_size=16, device="cuda", kind="gqa", num_kv_heads=kv_heads,
                  head_dim=dim, seq_lens=lengths)  # fmt: skip
    variants = {"blind": {"seq_lens": None}, "auto": {}, "uniform": {"schedule": "uniform"},
                "balanced": {"schedule": "balanced"}}  # fmt: skip
    for per_sm in (1, 2, 3, 4, 6):
        variants[f"balanced_{per_sm}_an_sm"] = {
            "schedule": "balanced",
            "num_programs": max(1, per_sm * 132 // kv_heads),
        }
    for label, knobs in variants.items():
        plan = splitkv.plan_decode(len(lengths), table.shape[1] * 16, heads,
                                   **{**common, **knobs})  # fmt: skip
        run = lambda p=plan: splitkv.gqa_decode(*case.args, plan=p, sinks=case.sinks)
        err = (run()[0].float() - reference).abs().max().item()
        row[label] = {
            "us": median_us(run),
            "err": round(err, 5),
            **{f: getattr(plan, f) for f in FIELDS},
        }
    return row


def main() -> None:
    rows = []
    path = os.path.join(os.environ.get("STEP_OUT", "."), "gqa_small_balanced.json")
    for name, lengths in batches().items():
        for model in MODELS:
            rows.append(measure(model, name, lengths))
            print(json.dumps({k: (v["us"] if isinstance(v, dict) else v)
                              for k, v in rows[-1].items()}), flush=True)  # fmt: skip
            with open(path, "w") as f:
                json.dump(rows, f, indent=1)


main()
