"""The softmax's lazy variants (`LAZY_RESCALE`, session 33: the keys-as-rows consumer's lazy
maximum, kernels/mla_keys_as_rows.py; the 64-row tile's row sums at the end) against the
eager step, in one run: first correctness of both against the float32 reference on fresh
random inputs, including keys whose scores rise along the context (the maximum passes the
margin again and again) and a late key whose score dwarfs the rest (the rescale after P was
taken against the old maximum); then issue 5's batches at qlen 1, 2 and 4 and uniform
batches, two rounds alternating, CUDA-graph medians in us."""

import json
import os

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


def rising_keys(case, steepness: float, spike: bool) -> None:
    """Scale each request's key rows by 1 + steepness * position / length (scores rise along
    the context); with spike, the row 5 before the end becomes 3x head 0's query."""
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
        ([1, 63, 64, 65, 700, 4097, 20000], 12, 1, 0.0, False),
        ([1, 63, 64, 65, 700, 4097, 20000], 12, 2, 0.0, False),
        ([5000, 3, 129, 9000], 16, 2, 4.0, False),
        ([5000, 3, 129, 9000], 12, 1, 8.0, True),
        ([70000, 17], 16, 1, 2.0, True),
        ([2048] * 40, 12, 2, 4.0, True),
        ([1, 2, 3, 4], 12, 2, 0.0, False),
        ([1, 63, 64, 65, 700, 4097, 20000], 12, 4, 4.0, True),
        ([3000, 40000], 16, 4, 0.0, False),
    ]
    for lens, heads, qlen, steep, spike in cases:
        for dtype in (torch.bfloat16, torch.float16):
            case = random_mla_case(lens, heads, qlen=qlen, dtype=dtype, device="cuda", seed=7)
            if steep or spike:
                rising_keys(case, steep, spike)
            args = (case.q, case.kv_cache, case.page_table, case.seq_lens)
            want, want_lse = reference.mla_decode(*args)
            row = {
                "lens": lens[:8],
                "heads": heads,
                "qlen": qlen,
                "dtype": str(dtype),
                "steep": steep,
                "spike": spike,
            }
            got = {}
            for lazy in (False, True):
                ws.LAZY_RESCALE = lazy
                for schedule in ("uniform", "balanced"):
                    plan = splitkv.plan_decode(
                        len(lens),
                        case.page_table.shape[1] * 64,
                        heads,
                        qlen=qlen,
                        dtype=dtype,
                        device="cuda",
                        seq_lens=lens,
                        schedule=schedule,
                    )
                    out, lse = splitkv.mla_decode(*args, plan=plan)
                    name = f"{'lazy' if lazy else 'eager'}_{schedule}"
                    row[f"{name}_keys_as_rows"] = plan.keys_as_rows and plan.warp_specialized
                    try:
                        row[name] = check_against_reference(out, lse, want, want_lse)
                    except AssertionError as e:
                        row[name] = f"FAIL {e}"
                    got[name] = out.float()
            ws.LAZY_RESCALE = False
            for schedule in ("uniform", "balanced"):
                row[f"lazy_vs_eager_{schedule}"] = float(
                    (got[f"lazy_{schedule}"] - got[f"eager_{schedule}"]).abs().max()
                )
            print(json.dumps(row), flush=True)
            rows.append(row)
    return rows


def median_us(fn) -> float:
    fn()
    torch.cuda.synchronize()
    return round(cuda_graph_times_us(fn, rep_ms=40)[1], 1)


def timing() -> list:
    shapes = [
        BenchShape(12, max(x), len(x), q, seq_lens=tuple(x))
        for q in (1, 2, 4)
        for x in (RAGGED, ONE_LONG)
    ]
    shapes += [
        BenchShape(12, 8192, 48),
        BenchShape(12, 65536, 8, 2),
        BenchShape(16, 32768, 16, 2),
        BenchShape(12, 131072, 1),
        BenchShape(32, 16384, 32),
    ]
    rows = []
    for shape in shapes:
        case = _build_cases(shape, 0, 1)[0]
        plan = splitkv.plan_decode(shape.batch, case.args[2].shape[1] * 64, shape.heads,
                                   qlen=shape.qlen, device="cuda",
                                   seq_lens=list(shape.lengths))  # fmt: skip
        row = {
            "shape": shape.describe(),
            "bytes": shape.bytes_read,
            "block_h": plan.block_h,
            "keys_as_rows": plan.keys_as_rows,
            "schedule": plan.schedule,
            "num_splits": plan.num_splits,
        }
        for _ in range(2):
            for lazy in (False, True):
                ws.LAZY_RESCALE = lazy
                fn = lambda c=case, p=plan: splitkv.mla_decode(*c.args, plan=p)
                row.setdefault("lazy" if lazy else "eager", []).append(median_us(fn))
        ws.LAZY_RESCALE = False
        print(json.dumps(row), flush=True)
        rows.append(row)
    return rows


def main() -> None:
    import sys

    result = {"correctness": [] if "--timing" in sys.argv else correctness()}
    with open(os.path.join(OUT, "lazy.json"), "w") as f:
        json.dump(result, f, indent=1)
    result["timing"] = timing()
    with open(os.path.join(OUT, "lazy.json"), "w") as f:
        json.dump(result, f, indent=1)


main()
