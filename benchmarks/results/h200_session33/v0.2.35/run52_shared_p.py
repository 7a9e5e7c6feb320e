"""The 64-row column-splitting consumer's P (`SHARED_P`, kernels/mla_warp_specialized.py,
session 33): 0 through a layout conversion into registers (the default), 1 from a shared
buffer, 2 that and a lazy maximum. First correctness of each against the float32 reference
on fresh random inputs (scores that rise along the context and a late spike included), then
12 heads x qlen 4 (issue 5's batches) and uniform 64-row batches, two rounds alternating,
CUDA-graph medians in us."""

import json
import os
import sys

import torch

import splitkv
import splitkv.warp_specialized as ws
from splitkv import reference
from splitkv.bench.shapes import RAGGED, BenchShape
from splitkv.bench.sweep import _build_cases
from splitkv.testing import check_against_reference, random_mla_case
from splitkv.timing import cuda_graph_times_us

ONE_LONG = (327600, *(1 + (4095 * i) // 46 for i in range(47)))
OUT = os.environ.get("STEP_OUT", ".")
MODES = (0, 1, 2)


def rising_keys(case, steepness: float, spike: bool) -> None:
    """Each request's key row t scaled by 1 + steepness * t / length; with spike, the row 5
    before the end set to 3x head 0's query."""
    q, cache, table, lens = case.q, case.kv_cache, case.page_table, case.seq_lens.tolist()
    page = cache.shape[1]
    for b, n in enumerate(lens):
        pos = torch.arange(n, device=cache.device)
        pages, slots = table[b, pos // page].long(), pos % page
        scale = (1 + steepness * pos.float() / max(n, 1)).to(cache.dtype)
        cache[pages, slots] = cache[pages, slots] * scale[:, None]
        if spike and n > 5:
            cache[pages[n - 5], slots[n - 5]] = 3 * q[b, 0, 0]


def correctness() -> list:
    rows = []
    cases = [
        ([1, 63, 64, 65, 700, 4097, 20000], 12, 4, 4.0, True),
        ([3000, 40000], 16, 4, 8.0, False),
        ([2048] * 6 + [9000], 64, 1, 4.0, True),
        ([1, 2, 3, 130], 12, 4, 0.0, False),
    ]
    for lens, heads, qlen, steep, spike in cases:
        for dtype in (torch.bfloat16, torch.float16):
            case = random_mla_case(lens, heads, qlen=qlen, dtype=dtype, device="cuda", seed=11)
            rising_keys(case, steep, spike)
            args = (case.q, case.kv_cache, case.page_table, case.seq_lens)
            want, want_lse = reference.mla_decode(*args)
            row = {"lens": lens[:8], "heads": heads, "qlen": qlen, "dtype": str(dtype)}
            for mode in MODES:
                ws.SHARED_P = mode
                for schedule in ("uniform", "balanced"):
                    plan = splitkv.plan_decode(
                        len(lens), case.page_table.shape[1] * 64, heads, qlen=qlen,
                        dtype=dtype, device="cuda", seq_lens=lens, schedule=schedule,
                    )  # fmt: skip
                    name = f"p{mode}_{schedule}"
                    row[f"{name}_block_h"] = plan.block_h if plan.warp_specialized else 0
                    for _ in range(3):  # a race would not show every time
                        out, lse = splitkv.mla_decode(*args, plan=plan)
                        try:
                            row[name] = check_against_reference(out, lse, want, want_lse)
                        except AssertionError as e:
                            row[name] = f"FAIL {e}"
                            break
            ws.SHARED_P = 0
            print(json.dumps(row), flush=True)
            rows.append(row)
    return rows


def median_us(fn) -> float:
    fn()
    torch.cuda.synchronize()
    return round(cuda_graph_times_us(fn, rep_ms=40)[1], 1)


def timing() -> list:
    shapes = [BenchShape(12, max(x), len(x), 4, seq_lens=tuple(x)) for x in (RAGGED, ONE_LONG)]
    shapes += [BenchShape(12, 32768, 16, 4), BenchShape(16, 32768, 16, 4),
               BenchShape(64, 8192, 16), BenchShape(64, 65536, 4)]  # fmt: skip
    rows = []
    for shape in shapes:
        case = _build_cases(shape, 0, 1)[0]
        plan = splitkv.plan_decode(shape.batch, case.args[2].shape[1] * 64, shape.heads,
                                   qlen=shape.qlen, device="cuda",
                                   seq_lens=list(shape.lengths))  # fmt: skip
        row = {"shape": shape.describe(), "bytes": shape.bytes_read, "block_h": plan.block_h,
               "alternate": plan.alternate_blocks, "schedule": plan.schedule,
               "num_splits": plan.num_splits}  # fmt: skip
        for _ in range(2):
            for mode in MODES:
                ws.SHARED_P = mode
                fn = lambda c=case, p=plan: splitkv.mla_decode(*c.args, plan=p)
                row.setdefault(f"p{mode}", []).append(median_us(fn))
        ws.SHARED_P = 0
        print(json.dumps(row), flush=True)
        rows.append(row)
    return rows


def main() -> None:
    path = os.path.join(OUT, "shared_p.json")
    result = {"correctness": [] if "--timing" in sys.argv else correctness()}
    with open(path, "w") as f:
        json.dump(result, f, indent=1)
    result["timing"] = timing()
    with open(path, "w") as f:
        json.dump(result, f, indent=1)


main()
