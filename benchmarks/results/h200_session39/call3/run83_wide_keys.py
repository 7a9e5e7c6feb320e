"""Session 39, call 3: the uniform GQA wide tile's key block at 32 rows, 64 keys (v0.2.42's
`GQA_WIDE_TILE_MAX_KEYS`) against 128 (v0.2.41, the cap patched to 256), on the default plans
(auto schedule) of 32-row batches (gpt-oss and qwen-64-8 at qlen 4, llama3-8b at qlen 8), 3
stages at 64 keys, llama3-8b's shared-prefix cascade (its stacked pass: 32 rows) and the
64-row gpt-oss qlen 8 batch (unchanged: 64 keys both). One JSON line a batch: CUDA-graph
medians in us, and the plan's (schedule, splits, block_n, stages). Then the registers of the
builds. Run from the repository root:
    PYTHONPATH=$PWD/src python3 run83_wide_keys.py"""

import json
import os

import torch

import splitkv.gqa_tile_rules as rules
from splitkv.bench.providers import prepare_splitkv, prepare_splitkv_prefix
from splitkv.bench.shapes import gqa_batch, gqa_prefix_shapes
from splitkv.bench.sweep import build_cases
from splitkv.kernels.gqa_split import gqa_split_kernel
from splitkv.timing import cuda_graph_times_us

BATCHES = [("gpt-oss", 4, n, k) for n, k in ((64, 4096), (128, 4096), (256, 1024), (32, 16384),
                                              (8, 65536))]  # fmt: skip
BATCHES += [("qwen-64-8", 4, n, k) for n, k in ((64, 4096), (128, 4096), (256, 1024),
                                                (32, 16384), (8, 65536))]  # fmt: skip
BATCHES += [("llama3-8b", 8, 64, 4096), ("llama3-8b", 8, 32, 16384), ("gpt-oss", 8, 64, 4096)]
RAGGED = [("gpt-oss", 4, 128, 2044), ("qwen-64-8", 4, 128, 2048), ("qwen-64-8", 4, 64, 2000)]
CALL1 = "benchmarks/results/h200_session38/call1/gqa_schedules.jsonl"


def median_us(fn) -> float:
    return round(cuda_graph_times_us(fn, rep_ms=20)[1], 1)


def plan_of(case, cap: int) -> list:
    import splitkv

    rules.GQA_WIDE_TILE_MAX_KEYS = cap
    batch, qlen, heads, dim = case.q.shape
    pool = case.key_pool
    p = splitkv.plan_decode(batch, case.page_table.shape[1] * pool.shape[1], heads, qlen=qlen,
                            page_size=pool.shape[1], kind="gqa", num_kv_heads=pool.shape[2],
                            head_dim=dim, dtype=case.q.dtype, device=case.q.device,
                            seq_lens=case.seq_lens)  # fmt: skip
    return [p.schedule, p.num_splits, p.block_n, p.split_num_stages]


def batch_rows():
    lengths = {}
    with open(CALL1) as f:
        for e in map(json.loads, f):
            lengths[(e["model"], e["qlen"], e["batch"], max(e["lengths"]))] = e["lengths"]
    shapes = [(f"{m} {q} {n} {k}", gqa_batch(m, [k] * n, q)) for m, q, n, k in BATCHES]
    shapes += [(f"{m} {q} {n} up to {k}", gqa_batch(m, lengths[(m, q, n, k)], q))
               for m, q, n, k in RAGGED]  # fmt: skip
    for name, shape in shapes:
        case = build_cases(shape)[0]
        row = {"batch": name, "plan 64": plan_of(case, 64), "plan 128": plan_of(case, 256)}
        three = {"num_stages": 3}  # pinned: the planner's GQA tile rules step aside
        for label, cap, knobs in (("64", 64, {}), ("128", 256, {}), ("64 x 3", 64, three),
                                  ("64", 64, {}), ("128", 256, {})):  # fmt: skip
            rules.GQA_WIDE_TILE_MAX_KEYS = cap
            prep = prepare_splitkv(case, **knobs)
            prep.run()
            row.setdefault(label, []).append(median_us(prep.run))
        yield row
        del case
        torch.cuda.empty_cache()


def cascade_rows():
    for shape in gqa_prefix_shapes(models=("llama3-8b",)):
        case = build_cases(shape)[0]
        row = {"batch": "llama3-8b " + shape.describe()[:60]}
        for label, cap in (("64", 64), ("128", 256), ("64", 64), ("128", 256)):
            rules.GQA_WIDE_TILE_MAX_KEYS = cap
            prep = prepare_splitkv_prefix(case)
            prep.run()
            row.setdefault(label, []).append(median_us(prep.run))
        yield row
        del case
        torch.cuda.empty_cache()


def builds():
    for caches in gqa_split_kernel.device_caches.values():
        for key, kernel in caches[0].items():
            kernel._init_handles()
            yield {"regs": kernel.n_regs, "spills": kernel.n_spills,
                   "stages": kernel.metadata.num_stages, "shared": kernel.metadata.shared,
                   "key": str(key)[-700:]}  # fmt: skip


def main() -> None:
    where = os.environ.get("STEP_OUT", ".")
    with open(os.path.join(where, "wide_keys.jsonl"), "w") as out:
        for row in [*batch_rows(), *cascade_rows()]:
            print(json.dumps(row), flush=True)
            out.write(json.dumps(row) + "\n")
    with open(os.path.join(where, "builds.jsonl"), "w") as out:
        for build in builds():
            print({k: v for k, v in build.items() if k != "key"}, flush=True)
            out.write(json.dumps(build) + "\n")


main()
