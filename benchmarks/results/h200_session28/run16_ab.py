"""GQA tiles of 32 and 64 rows: the v0.2.26 defaults against the v0.2.25 knobs, same cases."""

import json
import os

import torch

import splitkv
from splitkv.bench.shapes import GQA_MODELS
from splitkv.testing import random_gqa_case
from splitkv.timing import cuda_graph_times_us

RAGGED = [1, 63, 64, 65, 4096, 4097, 32768, 131072]
shapes = []
for model in ("llama3-8b", "gpt-oss", "llama3-70b-tp8"):
    for qlen in (4, 8):
        for lengths in ([32768], [32768] * 8, [131072] * 4, RAGGED):
            shapes.append((model, qlen, lengths))
rows = []
for model, qlen, lengths in shapes:
    heads, kv, d, sinks = GQA_MODELS[model]
    if (heads // kv) * qlen < 32:
        continue
    case = random_gqa_case(
        lengths,
        heads,
        kv,
        d,
        qlen=qlen,
        page_size=16,
        sinks=sinks,
        dtype=torch.bfloat16,
        device="cuda",
        contiguous=True,
        spare_pages=0,
    )
    common = dict(
        qlen=qlen,
        page_size=16,
        kind="gqa",
        num_kv_heads=kv,
        head_dim=d,
        dtype=torch.bfloat16,
        device="cuda",
        seq_lens=lengths,
    )
    new = splitkv.plan_decode(len(lengths), max(lengths), heads, **common)
    old_warps = 8 if new.block_h >= 64 else 4
    old_bn = (
        new.block_n
        if new.schedule == "balanced"
        else (128 if (d <= 64 and new.block_h == 16) else 32)
    )
    knobs = dict(num_warps=old_warps, block_n=old_bn)
    if new.schedule == "balanced":
        knobs["num_programs"] = new.num_programs
    else:
        knobs["num_splits"] = new.num_splits
    old = splitkv.plan_decode(len(lengths), max(lengths), heads, **common, **knobs)
    res = {
        "model": model,
        "qlen": qlen,
        "lengths": lengths if len(set(lengths)) > 1 else f"{len(lengths)}x{lengths[0]}",
        "schedule": new.schedule,
        "block_h": new.block_h,
        "splits": new.num_splits,
    }
    outs = []
    for name, plan in (("new", new), ("old", old)):

        def fn(case=case, plan=plan):
            return splitkv.gqa_decode(*case.args, plan=plan, sinks=case.sinks)

        out, _ = fn()
        outs.append(out.float())
        res[name] = {
            "block_n": plan.block_n,
            "warps": plan.split_num_warps,
            "p50_us": round(cuda_graph_times_us(fn, rep_ms=60)[1], 1),
        }
    res["max_diff"] = (outs[0] - outs[1]).abs().max().item()
    res["ratio"] = round(res["new"]["p50_us"] / res["old"]["p50_us"], 3)
    rows.append(res)
    print(json.dumps(res), flush=True)
with open(os.path.join(os.environ.get("STEP_OUT", "."), "ab.json"), "w") as f:
    json.dump(rows, f, indent=1)
