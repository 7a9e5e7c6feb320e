"""Session 38, call 4, under compute-sanitizer: the merge of several rows a program
(merge_rows_kernel) on explicit and default plans, checked against the reference, then with
corrupt lengths and page ids (tests/gpu_memcheck.py's new cases, alone: the whole file ran
past the device time left)."""

import sys

import torch

sys.path.insert(0, "tests")
from gpu_memcheck import gqa_decode_corrupt

import splitkv
from splitkv.testing import check_against_reference, random_gqa_case

RAGGED = [1, 63, 700, 3000, 5]
CASES = [
    ((64, 8, 64), RAGGED, {"schedule": "balanced", "merge_rows": 8}),
    ((32, 8, 128), RAGGED, {"schedule": "uniform", "num_splits": 4, "merge_rows": 4}),
    ((64, 8, 64), [40 + 41 * i for i in range(48)], {"qlen": 4}),  # the default's rows
    ((32, 8, 128), [30 + 80 * i for i in range(48)], {"qlen": 4}),
]
for (q_heads, kv_heads, dim), lengths, knobs in CASES:
    qlen = knobs.get("qlen", 1)
    gqa = random_gqa_case(lengths, q_heads, kv_heads, dim, page_size=16, sinks=True, qlen=qlen,
                          dtype=torch.bfloat16, device="cuda")  # fmt: skip
    plan = splitkv.plan_decode(len(lengths), max(lengths), q_heads, kind="gqa", page_size=16,
                               num_kv_heads=kv_heads, head_dim=dim, device="cuda",
                               seq_lens=lengths, **knobs)  # fmt: skip
    print(plan.schedule, plan.num_splits, plan.merge_rows, flush=True)
    out, lse = splitkv.gqa_decode(*gqa.args, plan=plan, sinks=gqa.sinks)
    check_against_reference(out, lse, *splitkv.reference.gqa_decode(*gqa.args, sinks=gqa.sinks))
    gqa_decode_corrupt(gqa, plan, {(3, 0): 1 << 30, (2, -1): -5}, {0: 1 << 30, 4: -2})
torch.cuda.synchronize()
print("merge_rows memcheck: all calls finished")
