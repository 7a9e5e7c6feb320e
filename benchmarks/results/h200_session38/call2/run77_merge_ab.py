"""Session 38, call 2: the merge of several rows a program (v0.2.41 `merge_rows`) against
HEAD (run under PYTHONPATH=.old_src/src) on the same inputs: MLA 12 heads' ragged and
one-long batches at qlen 1, 2 and 4 (one row a program in both: the kernel's rows as a
tile dimension must cost nothing there), and GQA batches from call 1 on the balanced
schedule (the default's merge_rows, and merge_rows=1 where this build has the knob). One
JSON line a batch: CUDA-graph medians in us of the whole call and of the merge alone."""

import inspect
import json
import os
import sys

import torch

import splitkv
from splitkv.bench.providers import prepare_splitkv
from splitkv.bench.shapes import gqa_batch, special_shapes
from splitkv.bench.sweep import build_cases
from splitkv.timing import cuda_graph_times_us

CALL1 = "benchmarks/results/h200_session38/call1/gqa_schedules.jsonl"
GQA_PICKS = {  # (model, qlen, batch, longest) of call 1's batches
    ("gpt-oss", 4, 48, 1933), ("gpt-oss", 4, 128, 2044), ("gpt-oss", 4, 32, 4064),
    ("llama3-8b", 4, 64, 2012), ("llama3-8b", 4, 48, 3866), ("llama3-8b", 1, 128, 4095),
    ("qwen-64-8", 4, 64, 2000), ("qwen-64-8", 4, 48, 4089), ("gpt-oss", 1, 64, 4090),
    ("qwen-64-8", 4, 128, 16079), ("llama3-8b", 4, 16, 3584),
}  # fmt: skip
HAS_ROWS = "merge_rows" in inspect.signature(splitkv.plan_decode).parameters


def median_us(fn) -> float | None:
    return None if fn is None else round(cuda_graph_times_us(fn, rep_ms=20)[1], 1)


def time_case(label: str, case, variants: dict) -> dict:
    row = {"label": label}
    for name, knobs in variants.items():
        prep = prepare_splitkv(case, **knobs)
        prep.run()
        torch.cuda.synchronize()
        row[name] = [median_us(prep.run), median_us(prep.merge_run)]
    return row


def main() -> None:
    tag = sys.argv[1]
    path = os.path.join(os.environ.get("STEP_OUT", "."), f"merge_ab_{tag}.jsonl")
    with open(path, "w") as f:
        for qlen in (1, 2, 4):
            for shape in special_shapes(12, "bf16", qlen):
                if not shape.label.startswith(("ragged", "1x327600")):
                    continue
                row = time_case(shape.label, build_cases(shape)[0], {"default": {}})
                print(json.dumps(row), flush=True)
                f.write(json.dumps(row) + "\n")
        with open(CALL1) as calls:
            entries = [json.loads(line) for line in calls]
        for e in entries:
            key = (e["model"], e["qlen"], e["batch"], max(e["lengths"]))
            if key not in GQA_PICKS:
                continue
            case = build_cases(gqa_batch(e["model"], e["lengths"], e["qlen"]))[0]
            variants = {"default": {"schedule": "balanced"}}
            if HAS_ROWS:
                variants["rows1"] = {"schedule": "balanced", "merge_rows": 1}
            row = time_case(" ".join(map(str, key)), case, variants)
            print(json.dumps(row), flush=True)
            f.write(json.dumps(row) + "\n")
            del case
            torch.cuda.empty_cache()


main()
