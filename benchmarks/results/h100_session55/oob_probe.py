"""Session 55: run160's item (c) died on its last batch (gpt-oss qlen 4, 48 x 4,000, planned
without lengths) with a device-side index assert in a torch kernel. This probe makes that
batch's inputs as the tool does and runs each of its three plans (the graph's uniform plan,
one split, balanced) eagerly and from a CUDA graph, against the fp32 reference: run it under
compute-sanitizer (PYTORCH_NO_CUDA_MEMORY_CACHING=1) to find any out-of-bounds access.

    PYTHONPATH=src python benchmarks/results/h100_session55/oob_probe.py [--lengths 4000]
"""

import argparse

import torch

import splitkv
from splitkv.bench.shapes import gqa_batch
from splitkv.bench.sweep import build_cases
from splitkv.testing import capture_cuda_graph, check_against_reference

parser = argparse.ArgumentParser()
parser.add_argument("--lengths", type=int, nargs="+", default=[4000])
parser.add_argument("--requests", type=int, default=48)
parser.add_argument("--model", default="gpt-oss")
parser.add_argument("--qlen", type=int, default=4)
args = parser.parse_args()
lengths = (args.lengths * args.requests)[: args.requests]
case = build_cases(gqa_batch(args.model, lengths, args.qlen))[0]
batch, qlen, heads, dim = case.q.shape
page_size = case.key_pool.shape[1]
keys = case.page_table.shape[1] * page_size
kv_heads = case.key_pool.shape[2]
ref = splitkv.reference.gqa_decode(*case.args, sinks=case.sinks)
shape = dict(qlen=qlen, page_size=page_size, kind="gqa", num_kv_heads=kv_heads, head_dim=dim,
             dtype=case.q.dtype, device="cuda")  # fmt: skip
for name, knobs in (("graph plan", {}), ("one split", {"num_splits": 1}),
                    ("balanced", {"schedule": "balanced"})):  # fmt: skip
    plan = splitkv.plan_decode(batch, keys, heads, **shape, **knobs)
    fields = (plan.schedule, plan.num_splits, plan.num_programs, plan.block_n, plan.kv_pack,
              plan.whole_pieces, plan.dependent_launch, plan.early_start)  # fmt: skip
    out = torch.empty(batch, qlen, heads, dim, dtype=case.q.dtype, device="cuda")
    lse = torch.empty(batch, qlen, heads, device="cuda")
    # (Bound now: the graph is captured and replayed within this iteration.)
    step = lambda plan=plan, out=out, lse=lse: splitkv.gqa_decode(
        *case.args, plan=plan, out=out, lse=lse, sinks=case.sinks
    )
    step()
    torch.cuda.synchronize()
    eager = check_against_reference(out, lse, *ref)
    graph = capture_cuda_graph(step)
    out.fill_(float("nan"))
    for _ in range(3):
        graph.replay()
    torch.cuda.synchronize()
    replayed = check_against_reference(out, lse, *ref)
    print(f"{name:10s} {fields} eager {eager:.2e} replayed {replayed:.2e}", flush=True)
print("probe: all plans finished")
