"""Session 35, call 6: llama3-70b-tp8 (one kv head) on larger ragged batches, the balanced
grid at the default (v0.2.37: 10 key blocks a program, up to 8 an SM) against 264 (2 an SM),
one wave of 3 an SM less the batch, 528 and 792 programs. CUDA-graph medians in us, two
rounds."""

import json
import os
import random

import torch

import splitkv
from splitkv.bench.shapes import GQA_ONE_LONG, BenchShape, _gqa_fields
from splitkv.bench.sweep import _build_cases
from splitkv.timing import cuda_graph_times_us


def median_us(fn) -> float:
    fn()
    torch.cuda.synchronize()
    return round(cuda_graph_times_us(fn, rep_ms=30)[1], 1)


def batches() -> dict:
    rng = random.Random(63)
    out = {"one-long 327600": [327600, *(1 + (4095 * i) // 46 for i in range(47))],
           "one-long 131072": list(GQA_ONE_LONG)}  # fmt: skip
    for n, lo, hi in ((48, 4000, 12000), (64, 1000, 8000), (128, 500, 4000), (16, 16000, 48000),
                      (256, 200, 2000)):  # fmt: skip
        out[f"{n} x {lo}-{hi}"] = [rng.randint(lo, hi) for _ in range(n)]
    return out


def measure(name: str, lengths: list) -> dict:
    shape = BenchShape(8, max(lengths), len(lengths), 1, seq_lens=tuple(lengths),
                       **_gqa_fields("llama3-70b-tp8", 16))  # fmt: skip
    case = _build_cases(shape, 0, 1)[0]
    table = case.args[3]
    reference = splitkv.reference.gqa_decode(*case.args)[0].float()
    common = dict(qlen=1, page_size=16, device="cuda", kind="gqa", num_kv_heads=1,
                  head_dim=128, seq_lens=lengths)  # fmt: skip
    plans = {"default": splitkv.plan_decode(len(lengths), table.shape[1] * 16, 8, **common)}
    for n in (264, 396 - len(lengths), 528, 792):
        if n > 0:
            plans[f"p{n}"] = splitkv.plan_decode(len(lengths), table.shape[1] * 16, 8,
                                                 schedule="balanced", num_programs=n,
                                                 **common)  # fmt: skip
    row = {"batch": name, "keys": sum(lengths), "default_grid": plans["default"].num_programs,
           "default_schedule": plans["default"].schedule}  # fmt: skip
    for label, plan in plans.items():
        out = splitkv.gqa_decode(*case.args, plan=plan)[0].float()
        row[f"err_{label}"] = round((out - reference).abs().max().item(), 5)
    for _ in range(2):
        for label, plan in plans.items():
            row.setdefault(label, []).append(
                median_us(lambda p=plan: splitkv.gqa_decode(*case.args, plan=p))
            )
    return row


def main() -> None:
    rows = []
    path = os.path.join(os.environ.get("STEP_OUT", "."), "gqa_one_head_large.json")
    for name, lengths in batches().items():
        rows.append(measure(name, lengths))
        print(json.dumps({k: v for k, v in rows[-1].items() if not k.startswith("err")}),
              flush=True)  # fmt: skip
        with open(path, "w") as f:
            json.dump(rows, f, indent=1)


main()
