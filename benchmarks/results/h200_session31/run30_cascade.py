"""The GQA shared-prefix cascade's two pass plans crossed (session 31): the stacked prefix
pass on v0.2.31's default (uniform at the longest prefix), on the chunks' own lengths (the
planner's auto choice), on the balanced schedule, and on v0.2.30's plan; the suffix pass on
uniform splits at the table's width (default) or the balanced schedule. Each variant's output
is checked against the plain kernel."""

import json
import os

import torch

import splitkv
import splitkv.prefix_gqa as prefix_gqa
from splitkv.bench.ceilings import read_ceiling_bytes_per_s
from splitkv.bench.shapes import gqa_prefix_shapes
from splitkv.bench.sweep import _build_cases
from splitkv.timing import cuda_graph_times_us

MODELS = tuple(os.environ.get("MODELS", "gpt-oss llama3-8b llama3-70b-tp8").split())
# v0.2.30's stacked plans (num_splits, block_n; 2 stages, no prefetch): tools run on the CPU.
V0230 = {("gpt-oss", "48"): (16, 64), ("gpt-oss", "8x"): (64, 64),
         ("llama3-8b", "48"): (16, 128), ("llama3-8b", "8x"): (64, 128),
         ("llama3-70b-tp8", "48"): (128, 64), ("llama3-70b-tp8", "8x"): (256, 64)}  # fmt: skip
PLAN_FIELDS = ("schedule", "num_splits", "num_programs", "block_h", "block_n",
               "split_num_stages", "page_prefetch")  # fmt: skip
ORIGINAL = prefix_gqa.plan_decode
SEEN = {}


def patched(stacked_knobs, suffix_knobs):
    def plan(*args, **kw):
        is_suffix = "qlen" in kw
        kw.update(suffix_knobs if is_suffix else stacked_knobs)
        p = ORIGINAL(*args, **kw)
        SEEN["suffix" if is_suffix else "stacked"] = {k: getattr(p, k) for k in PLAN_FIELDS}
        return p

    return plan


def main():
    ceiling = read_ceiling_bytes_per_s()
    results = [{"ceiling_TBps": ceiling / 1e12}]
    print(json.dumps(results[0]), flush=True)
    step_out = os.environ.get("STEP_OUT", ".")
    for shape in gqa_prefix_shapes(models=MODELS):
        case = _build_cases(shape, 0, 1)[0]
        plain, _ = splitkv.gqa_decode(*case.args, sinks=case.sinks)
        batch, page_size = case.q.shape[0], case.k_cache.shape[1]
        groups = [(list(m), tokens // page_size) for m, tokens in case.sharing]
        chunk_lens = None
        splits, block_n = V0230[(shape.model, shape.label[:2])]
        variants = [
            ("v0.2.31", {}, {}),
            ("stacked lens", "LENS", {}),
            ("stacked balanced", {"schedule": "balanced"}, {}),
            (
                "stacked v0.2.30",
                {"num_splits": splits, "block_n": block_n, "num_stages": 2, "page_prefetch": False},
                {},
            ),
            ("suffix balanced", {}, {"schedule": "balanced"}),
            ("stacked lens + suffix balanced", "LENS", {"schedule": "balanced"}),
        ]
        for name, stacked, suffix in variants:
            row = {"model": shape.model, "label": shape.label, "variant": name}
            try:
                if stacked == "LENS":
                    stacked = {"seq_lens": chunk_lens}
                prefix = splitkv.plan_shared_prefix(groups, batch, case.page_table.shape[1],
                                                    page_size, case.q.device)  # fmt: skip
                prefix_gqa.plan_decode = patched(stacked, suffix)

                def run(case=case, prefix=prefix):
                    return splitkv.gqa_decode_shared_prefix(*case.args, prefix, sinks=case.sinks)

                out, _ = run()
                torch.cuda.synchronize()
                if chunk_lens is None:
                    rows = next(r for r in prefix.rows.values() if r is not None)
                    chunk_lens = rows.lens.tolist()
                _, p50, _ = cuda_graph_times_us(run, rep_ms=60)
                row.update(p50_us=round(p50, 1),
                           max_diff_vs_plain=(out.float() - plain.float()).abs().max().item(),
                           **dict(SEEN))  # fmt: skip
            except Exception as e:
                row["error"] = repr(e)[:300]
            finally:
                prefix_gqa.plan_decode = ORIGINAL
            results.append(row)
            print(json.dumps(row), flush=True)
            with open(os.path.join(step_out, "cascade_plans.json"), "w") as f:
                json.dump(results, f, indent=1)


main()
