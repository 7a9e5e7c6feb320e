"""The shared-prefix cascades planned without and with the calls' lengths
(`plan_shared_prefix(seq_lens=)`, v0.2.34: the suffix pass planned on each request's keys after
its prefix), two rounds alternating, CUDA-graph medians in us, with both plans' suffix-pass
fields and the largest difference between the two outputs (session 32's next run)."""

import json
import os

import torch

import splitkv
from splitkv.bench.shapes import gqa_prefix_shapes, prefix_mix_shape, shared_prefix_shape
from splitkv.bench.sweep import _build_cases
from splitkv.testing import GqaCase
from splitkv.timing import cuda_graph_times_us

FIELDS = ("schedule", "num_splits", "num_programs", "block_h", "program_loop", "whole_pieces")


def median_us(fn) -> float:
    fn()
    torch.cuda.synchronize()
    return round(cuda_graph_times_us(fn, rep_ms=80)[1], 1)


def shapes() -> list:
    out = [make(12, qlen=q) for q in (1, 2) for make in (shared_prefix_shape, prefix_mix_shape)]
    return out + gqa_prefix_shapes(models=("gpt-oss", "llama3-8b", "llama3-70b-tp8"))


def measure(shape) -> dict:
    case = _build_cases(shape, 0, 1)[0]
    q, cache, table = case.args[0], case.args[1], case.args[-2]
    page_size = cache.shape[1]
    groups = [(list(m), tokens // page_size) for m, tokens in case.sharing]
    plans = {
        name: splitkv.plan_shared_prefix(
            groups, q.shape[0], table.shape[1], page_size, q.device, seq_lens=lengths
        )
        for name, lengths in (("blind", None), ("lengths", case.seq_lens.tolist()))
    }

    def call(prefix):
        if isinstance(case, GqaCase):
            return splitkv.gqa_decode_shared_prefix(*case.args, prefix, sinks=case.sinks)
        return splitkv.mla_decode_shared_prefix(*case.args, prefix)

    outs = {name: call(prefix)[0].float() for name, prefix in plans.items()}
    diff = float((outs["blind"] - outs["lengths"]).abs().max())
    row = {"shape": shape.describe(), "max_abs_diff": diff}
    for name, prefix in plans.items():
        ((suffix, _),) = prefix.passes.values()
        row[f"suffix_plan_{name}"] = {f: getattr(suffix, f) for f in FIELDS}
    for _ in range(2):
        for name, prefix in plans.items():
            row.setdefault(name, []).append(median_us(lambda p=prefix: call(p)))
    return row


def main() -> None:
    rows = []
    path = os.path.join(os.environ.get("STEP_OUT", "."), "cascade_lengths.json")
    for shape in shapes():
        rows.append(measure(shape))
        print(json.dumps(rows[-1]), flush=True)
        with open(path, "w") as f:
            json.dump(rows, f, indent=1)


main()
