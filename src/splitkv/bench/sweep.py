"""Run shapes x providers: check each provider against the reference, then time it by CUDA-graph
replay, rotating input copies when one copy would sit in L2."""

from __future__ import annotations

import concurrent.futures
import math
import multiprocessing
import platform
import shlex
import sys
from collections.abc import Callable

import torch
import triton

import splitkv
from splitkv.bench.ceilings import matmul_flops_per_s, read_ceiling_bytes_per_s
from splitkv.bench.providers import PEER_SPLITS, PROVIDERS, Unsupported, missing_reason
from splitkv.bench.shapes import DTYPES, BenchShape
from splitkv.testing import TOLERANCES, random_mla_case, relative_error
from splitkv.timing import cuda_graph_times_us

L2_MULTIPLE = 4  # rotate copies until one replay reads at least 4x the L2
MAX_COPIES = 32


def environment() -> dict:
    props = torch.cuda.get_device_properties(0)
    return {
        "gpu": props.name,
        "sms": props.multi_processor_count,
        "splitkv": splitkv.__version__,
        "torch": torch.__version__,
        "triton": triton.__version__,
        "cuda": torch.version.cuda,
        "python": platform.python_version(),
        "command": "splitkv " + shlex.join(sys.argv[1:]) if sys.argv else "",
    }


def measure_ceilings() -> dict:
    return {
        "read_bytes_per_s": read_ceiling_bytes_per_s(),
        "matmul_flops_per_s": matmul_flops_per_s(),
    }


def run_shapes(
    shapes: list[BenchShape],
    providers: list[str],
    ceilings: dict,
    *,
    splits: list[int | None] | None = None,
    plan_knobs: dict | None = None,
    rep_ms: int = 100,
    progress: Callable[[str], None] = print,
    checkpoint: Callable[[list[dict]], None] | None = None,
) -> list[dict]:
    """One row per (shape, provider[, splits]); the Triton peer keeps its best split count.
    `checkpoint(rows)` runs after each shape, so a run cut short still leaves its results."""
    rows = []
    l2_bytes = torch.cuda.get_device_properties(0).L2_cache_size
    missing = {p: missing_reason(p) for p in providers}
    for index, shape in enumerate(shapes):
        progress(f"[{index + 1}/{len(shapes)}] {shape.describe()}")
        copies = min(MAX_COPIES, max(1, math.ceil(L2_MULTIPLE * l2_bytes / shape.bytes_read)))
        cases = _build_cases(shape, index, copies)
        ref_out, _ = splitkv.reference.mla_decode(*cases[0].args)
        for provider in providers:
            base = _row_base(shape, provider, copies)
            if missing[provider]:
                rows.append({**base, "status": "missing: " + missing[provider]})
                continue
            trials = (splits or [None]) if provider == "splitkv" else list(PEER_SPLITS)
            best = None
            for n in trials:
                if provider != "splitkv" and cases[0].kv_cache.numel() >= 2**31:
                    # A peer with 32-bit offsets can fault here, which poisons the process's
                    # CUDA context: run it in a child process and report what happens.
                    row = _time_in_child(provider, shape, index, n, ceilings, rep_ms)
                else:
                    knobs = plan_knobs if provider == "splitkv" else None
                    row = _time_provider(
                        provider, cases, n, ref_out, shape, ceilings, rep_ms, knobs
                    )
                row = {**base, **row}
                if provider == "splitkv":
                    rows.append(row)
                    progress("    " + _summary(row))
                elif best is None or row.get("p50_us", math.inf) < best.get("p50_us", math.inf):
                    best = row
                if row["status"].startswith("crashed"):
                    break
            if best is not None:
                rows.append(best)
                progress("    " + _summary(best))
        del cases
        torch.cuda.empty_cache()
        if checkpoint is not None:
            checkpoint(rows)
    return rows


def _build_cases(shape: BenchShape, index: int, copies: int) -> list:
    return [
        random_mla_case(
            shape.lengths,
            shape.heads,
            qlen=shape.qlen,
            page_size=shape.page_size,
            dtype=DTYPES[shape.dtype],
            device="cuda",
            contiguous=True,
            spare_pages=0,
            seed=index * 97 + c,
        )
        for c in range(copies)
    ]


def _time_in_child(provider, shape, index, num_splits, ceilings, rep_ms) -> dict:
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(1, mp_context=context) as pool:
        future = pool.submit(
            _child_measurement, provider, shape, index, num_splits, ceilings, rep_ms
        )
        try:
            return future.result()
        except concurrent.futures.process.BrokenProcessPool as error:
            return {"status": f"crashed: the process died ({error})", "num_splits": num_splits}


def _child_measurement(provider, shape, index, num_splits, ceilings, rep_ms) -> dict:
    cases = _build_cases(shape, index, 1)
    ref_out, _ = splitkv.reference.mla_decode(*cases[0].args)
    return _time_provider(provider, cases, num_splits, ref_out, shape, ceilings, rep_ms, None)


def _time_provider(provider, cases, num_splits, ref_out, shape, ceilings, rep_ms, plan_knobs):
    try:
        prepare = PROVIDERS[provider]
        prepared = [
            prepare(c, num_splits, **plan_knobs) if plan_knobs else prepare(c, num_splits)
            for c in cases
        ]
    except Unsupported as why:
        return {"status": f"unsupported: {why}"}
    except torch.OutOfMemoryError:
        return {"status": "out of memory"}
    try:
        prepared[0].run()
        torch.cuda.synchronize()
    except Exception as error:  # a peer that crashes is a result, not a harness failure
        return {
            "status": f"crashed: {type(error).__name__}: {error}"[:300],
            "num_splits": prepared[0].num_splits,
        }
    out, _ = prepared[0].result()
    error = relative_error(out, ref_out)
    status = "ok" if error <= TOLERANCES[out.dtype] else f"wrong: relative error {error:.2e}"
    result = {"num_splits": prepared[0].num_splits, "rel_error": error, "status": status}
    if status != "ok":
        return result
    p20, p50, p80 = (
        t / len(cases)
        for t in cuda_graph_times_us(lambda: [p.run() for p in prepared], rep_ms=rep_ms)
    )
    gbps = shape.bytes_read / (p50 * 1e-6) / 1e9
    tflops = shape.flops / (p50 * 1e-6) / 1e12
    return {
        **result,
        "p20_us": p20,
        "p50_us": p50,
        "p80_us": p80,
        "gb_per_s": gbps,
        "tflop_per_s": tflops,
        "frac_read_ceiling": gbps * 1e9 / ceilings["read_bytes_per_s"],
        "frac_matmul": tflops * 1e12 / ceilings["matmul_flops_per_s"],
    }


def _row_base(shape: BenchShape, provider: str, copies: int) -> dict:
    command = (
        f"splitkv bench --heads {shape.heads} --context {shape.context} --batch {shape.batch} "
        f"--qlen {shape.qlen} --page-size {shape.page_size} --dtype {shape.dtype} "
        f"--providers {provider}"
    )
    if shape.label:
        command = f"splitkv bench --special --heads {shape.heads} --providers {provider}"
    return {
        "provider": provider,
        "label": shape.label,
        "heads": shape.heads,
        "context": shape.context,
        "batch": shape.batch,
        "qlen": shape.qlen,
        "page_size": shape.page_size,
        "dtype": shape.dtype,
        "bytes_read": shape.bytes_read,
        "flops": shape.flops,
        "input_copies": copies,
        "command": command,
    }


def _summary(row: dict) -> str:
    if row.get("status") != "ok":
        return f"{row['provider']:12} {row.get('status')}"
    return (
        f"{row['provider']:12} splits {row['num_splits']:>4}  p50 {row['p50_us']:9.1f} us  "
        f"{row['gb_per_s']:6.0f} GB/s ({row['frac_read_ceiling']:5.1%} of read ceiling)  "
        f"{row['tflop_per_s']:6.1f} TFLOP/s ({row['frac_matmul']:5.1%} of matmul)"
    )
