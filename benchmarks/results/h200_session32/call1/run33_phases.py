"""The GQA cascade's phases at v0.2.32 (session 31): the whole call, its suffix pass alone (the
kept plan: uniform splits at the table's width), the same pass on the balanced schedule, and
its stacked prefix pass alone, each a CUDA-graph median, for the three bench models."""

import json
import os

import torch

import splitkv
from splitkv.bench.shapes import gqa_prefix_shapes
from splitkv.bench.sweep import _build_cases
from splitkv.prefix import suffix_rows
from splitkv.timing import cuda_graph_times_us

FIELDS = ("schedule", "num_splits", "num_programs", "block_n", "split_num_stages")


def median_us(fn):
    fn()
    torch.cuda.synchronize()
    return round(cuda_graph_times_us(fn, rep_ms=60)[1], 1)


def phases(shape) -> dict:
    """One shape's phases, each a CUDA-graph median in us."""
    case = _build_cases(shape, 0, 1)[0]
    q, k, v, table, lens = case.args
    page_size = k.shape[1]
    groups = [(list(m), tokens // page_size) for m, tokens in case.sharing]
    prefix = splitkv.plan_shared_prefix(groups, q.shape[0], table.shape[1], page_size, q.device)
    row = {"model": shape.model, "label": shape.label}
    row["cascade_us"] = median_us(
        lambda: splitkv.gqa_decode_shared_prefix(*case.args, prefix, sinks=case.sinks)
    )
    ((suffix_plan, stacked_plan),) = prefix.passes.values()
    rows = next(r for r in prefix.rows.values() if r is not None)
    s_table, s_lens, _ = suffix_rows(table, lens, prefix, 1)
    row["suffix_lens_max"] = int(s_lens.max())
    row["suffix_us"] = median_us(
        lambda: splitkv.gqa_decode(q, k, v, s_table, s_lens, plan=suffix_plan, sinks=case.sinks)
    )
    balanced = splitkv.plan_decode(q.shape[0], table.shape[1] * page_size, q.shape[2],
                                   kind="gqa", num_kv_heads=k.shape[2], head_dim=k.shape[3],
                                   page_size=page_size, dtype=q.dtype, device=q.device,
                                   schedule="balanced")  # fmt: skip
    row["suffix_balanced_us"] = median_us(
        lambda: splitkv.gqa_decode(q, k, v, s_table, s_lens, plan=balanced, sinks=case.sinks)
    )
    # The suffix pass on a table cut to its longest possible suffix (every request here is in a
    # group, so no suffix is longer than the table's width less its group's prefix pages).
    width = table.shape[1] - min(pages for _, pages in groups)
    narrow = None
    try:
        narrow_table = s_table[:, :width].contiguous()
        narrow = splitkv.plan_decode(
            q.shape[0],
            width * page_size,
            q.shape[2],
            kind="gqa",
            num_kv_heads=k.shape[2],
            head_dim=k.shape[3],
            page_size=page_size,
            dtype=q.dtype,
            device=q.device,
        )
        row["suffix_narrow_width"] = width
        row["suffix_narrow_us"] = median_us(
            lambda: splitkv.gqa_decode(q, k, v, narrow_table, s_lens, plan=narrow, sinks=case.sinks)
        )
    except Exception as error:  # a measurement step: record it and go on to the other phases
        row["suffix_narrow_error"] = repr(error)
    stacked_q = q.reshape(-1, q.shape[-1])[rows.gather].view(rows.num_chunks, 1, rows.width, -1)
    chunk_table = table[rows.first]
    row["stacked_us"] = median_us(
        lambda: splitkv.gqa_decode(stacked_q, k, v, chunk_table, rows.lens, plan=stacked_plan)
    )
    row["plans"] = {name: {f: getattr(p, f) for f in FIELDS}
                    for name, p in (("suffix", suffix_plan), ("stacked", stacked_plan),
                                    ("suffix_balanced", balanced),
                                    ("suffix_narrow", narrow)) if p is not None}  # fmt: skip
    return row


def main():
    results = []
    step_out = os.environ.get("STEP_OUT", ".")
    for shape in gqa_prefix_shapes(models=("gpt-oss", "llama3-8b", "llama3-70b-tp8")):
        row = phases(shape)
        results.append(row)
        print(json.dumps(row), flush=True)
        with open(os.path.join(step_out, "cascade_phases.json"), "w") as f:
            json.dump(results, f, indent=1)


main()
