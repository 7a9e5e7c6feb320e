"""Session 38, call 5: call 2's GQA merges at qlen 4 on the final v0.2.41 kernels (the rows
kernel in its own file, one-row programs as at HEAD): the default (merge_rows by the rule)
and merge_rows=1, balanced; CUDA-graph medians in us of the whole call and the merge."""

import json

from splitkv.bench.providers import prepare_splitkv
from splitkv.bench.shapes import gqa_batch
from splitkv.bench.sweep import build_cases
from splitkv.timing import cuda_graph_times_us

PICKS = {("gpt-oss", 4, 48, 1933), ("gpt-oss", 4, 128, 2044), ("qwen-64-8", 4, 64, 2000)}
with open("benchmarks/results/h200_session38/call1/gqa_schedules.jsonl") as f:
    for e in map(json.loads, f):
        key = (e["model"], e["qlen"], e["batch"], max(e["lengths"]))
        if key not in PICKS:
            continue
        case = build_cases(gqa_batch(e["model"], e["lengths"], e["qlen"]))[0]
        row = {"batch": " ".join(map(str, key))}
        for name, knobs in {"default": {}, "rows1": {"merge_rows": 1}}.items():
            prep = prepare_splitkv(case, schedule="balanced", **knobs)
            prep.run()
            row[name] = [round(cuda_graph_times_us(fn, rep_ms=20)[1], 1)
                         for fn in (prep.run, prep.merge_run)]  # fmt: skip
        print(json.dumps(row), flush=True)
