"""GQA ragged batches (qlen 1, 2): the balanced tile's knobs swept one at a time, beside the
uniform schedule and the read ceiling (session 27, next runs item 2)."""

import json
import os

import torch

import splitkv
from splitkv.bench.ceilings import read_ceiling_bytes_per_s
from splitkv.bench.shapes import gqa_special_shapes
from splitkv.bench.sweep import _build_cases
from splitkv.timing import cuda_graph_times_us

ceiling = read_ceiling_bytes_per_s()
print(json.dumps({"ceiling_TBps": round(ceiling / 1e12, 3)}), flush=True)
results = [{"ceiling_TBps": ceiling / 1e12}]
step_out = os.environ.get("STEP_OUT", ".")
QLENS = [int(q) for q in os.environ.get("QLENS", "1").split()]
for qlen in QLENS:
    for shape in gqa_special_shapes(models=("llama3-8b", "gpt-oss", "llama3-70b-tp8"), qlen=qlen):
        case = _build_cases(shape, 0, 1)[0]
        lengths = list(shape.lengths)
        common = dict(
            qlen=qlen,
            page_size=shape.page_size,
            kind="gqa",
            num_kv_heads=shape.kv_heads,
            head_dim=shape.head_dim,
            dtype=torch.bfloat16,
            device="cuda",
            seq_lens=lengths,
        )
        default = splitkv.plan_decode(len(lengths), max(lengths), shape.heads, **common)
        P = default.num_programs or 0
        configs = [("default", {}), ("uniform", {"schedule": "uniform"})]
        if default.schedule == "balanced":
            for f in (0.5, 2, 4):
                configs.append((f"programs x{f}", {"num_programs": max(1, int(P * f))}))
        for bn in (32, 64, 128, 256):
            if bn != default.block_n:
                configs.append((f"block_n {bn}", {"block_n": bn}))
        for nw in (2, 4, 8):
            if nw != default.split_num_warps:
                configs.append((f"warps {nw}", {"num_warps": nw}))
        for ns in (2, 3, 4, 5):
            if ns != default.split_num_stages:
                configs.append((f"stages {ns}", {"num_stages": ns}))
        configs.append(
            (f"prefetch {not default.page_prefetch}", {"page_prefetch": not default.page_prefetch})
        )
        for bn, ns in ((128, 3), (128, 4), (64, 4), (256, 3)):
            configs.append((f"block_n {bn} stages {ns}", {"block_n": bn, "num_stages": ns}))
        base = None
        for name, knobs in configs:
            row = {"model": shape.model, "label": shape.label, "qlen": qlen, "config": name}
            try:
                plan = splitkv.plan_decode(
                    len(lengths), max(lengths), shape.heads, **common, **knobs
                )
                run = lambda case=case, plan=plan: splitkv.gqa_decode(
                    *case.args, plan=plan, sinks=case.sinks
                )
                out, _ = run()
                torch.cuda.synchronize()
                if base is None:
                    base = out.float()
                _, p50, _ = cuda_graph_times_us(run, rep_ms=60)
                row.update(
                    p50_us=round(p50, 1),
                    pct_ceiling=round(100 * shape.bytes_read / (p50 * 1e-6) / ceiling, 1),
                    max_diff=(out.float() - base).abs().max().item(),
                    plan={
                        k: getattr(plan, k)
                        for k in (
                            "schedule",
                            "num_splits",
                            "num_programs",
                            "block_h",
                            "block_n",
                            "split_num_warps",
                            "split_num_stages",
                            "page_prefetch",
                        )
                    },
                )
            except Exception as e:
                row["error"] = repr(e)[:300]
            results.append(row)
            print(json.dumps(row), flush=True)
        with open(os.path.join(step_out, "gqa_knobs.json"), "w") as f:
            json.dump(results, f, indent=1)
