"""The GQA cascade with its uniform stage 1 specialised on batch == 1 (v0.2.32's build) and not
(v0.2.33's), two rounds alternating: the whole call and its stacked prefix pass alone (one chunk,
a batch of 1, on 8 x 131,072 sharing 122,880), CUDA-graph medians in us (session 32)."""

import json
import os

import torch
import triton

import splitkv
import splitkv.gqa
from splitkv.bench.shapes import gqa_prefix_shapes
from splitkv.bench.sweep import _build_cases
from splitkv.timing import cuda_graph_times_us

BUILDS = {"unspecialised": splitkv.gqa.gqa_split_kernel,
          "specialised": triton.jit(splitkv.gqa.gqa_split_kernel.fn)}  # fmt: skip


def median_us(fn) -> float:
    fn()
    torch.cuda.synchronize()
    return round(cuda_graph_times_us(fn, rep_ms=80)[1], 1)


def measure(shape) -> dict:
    case = _build_cases(shape, 0, 1)[0]
    q, k, v, table, _ = case.args
    page_size = k.shape[1]
    groups = [(list(m), tokens // page_size) for m, tokens in case.sharing]
    prefix = splitkv.plan_shared_prefix(groups, q.shape[0], table.shape[1], page_size, q.device)
    splitkv.gqa_decode_shared_prefix(*case.args, prefix, sinks=case.sinks)
    ((_, stacked_plan),) = prefix.passes.values()
    rows = next(r for r in prefix.rows.values() if r is not None)
    stacked_q = q.reshape(-1, q.shape[-1])[rows.gather].view(rows.num_chunks, 1, rows.width, -1)
    chunk_table = table[rows.first]
    calls = {
        "cascade": lambda: splitkv.gqa_decode_shared_prefix(*case.args, prefix, sinks=case.sinks),
        "stacked": lambda: splitkv.gqa_decode(
            stacked_q, k, v, chunk_table, rows.lens, plan=stacked_plan
        ),
    }
    row = {"model": shape.model, "label": shape.label, "chunks": rows.num_chunks}
    for _ in range(2):
        for build, kernel in BUILDS.items():
            splitkv.gqa.gqa_split_kernel = kernel
            for name, fn in calls.items():
                row.setdefault(f"{name}_{build}", []).append(median_us(fn))
    splitkv.gqa.gqa_split_kernel = BUILDS["unspecialised"]
    return row


def main() -> None:
    rows = []
    path = os.path.join(os.environ.get("STEP_OUT", "."), "stacked_specialisation.json")
    for shape in gqa_prefix_shapes(models=("gpt-oss", "llama3-8b", "llama3-70b-tp8")):
        rows.append(measure(shape))
        print(json.dumps(rows[-1]), flush=True)
        with open(path, "w") as f:
            json.dump(rows, f, indent=1)


main()
