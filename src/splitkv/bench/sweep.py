"""Run shapes x providers x trials: check each against the reference, then time it by CUDA-graph
replay, rotating input copies when one copy would sit in L2.

A trial is a named set of knobs (`Trial("serial merge", {"merge_block_s": 1, ...})`): splitkv
runs every trial given; a peer runs its own split counts and keeps its best.
"""

from __future__ import annotations

import concurrent.futures
import math
import multiprocessing
import platform
import shlex
import sys
from collections.abc import Callable
from dataclasses import dataclass, field

import torch
import triton

import splitkv
from splitkv.bench.ceilings import matmul_flops_per_s, read_ceiling_bytes_per_s
from splitkv.bench.providers import PEER_SPLITS, PROVIDERS, Unsupported, missing_reason
from splitkv.bench.shapes import DTYPES, BenchShape
from splitkv.testing import TOLERANCES, GqaCase, random_gqa_case, random_mla_case, relative_error
from splitkv.timing import cuda_graph_times_us

L2_MULTIPLE = 4  # rotate copies until one replay reads at least 4x the L2
MAX_COPIES = 32
PEER_SEARCH_REP_MS = 20  # the peer's split counts are searched quickly, its best timed fully
DEVICE = "cuda"  # where the benchmark inputs live (a test points it at the CPU)


@dataclass(frozen=True)
class Trial:
    name: str
    knobs: dict = field(default_factory=dict)  # plan_decode overrides, num_splits included


DEFAULT_TRIALS = (Trial("default"),)


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
    trials: tuple[Trial, ...] | list[Trial] = DEFAULT_TRIALS,
    measure_merge: bool = False,
    rep_ms: int = 100,
    progress: Callable[[str], None] = print,
    checkpoint: Callable[[list[dict]], None] | None = None,
) -> list[dict]:
    """One row per (shape, provider, trial); `measure_merge` adds stage 2's own time to
    splitkv's rows. `checkpoint(rows)` runs after each shape, so a run cut short still leaves
    its results."""
    rows = []
    l2_bytes = torch.cuda.get_device_properties(0).L2_cache_size
    missing = {p: missing_reason(p) for p in providers}
    for index, shape in enumerate(shapes):
        progress(f"[{index + 1}/{len(shapes)}] {shape.describe()}")
        copies = min(MAX_COPIES, max(1, math.ceil(L2_MULTIPLE * l2_bytes / shape.unique_bytes)))
        cases = build_cases(shape, index, copies)
        ref_out = reference_out(cases[0])
        for provider in providers:
            base = _row_base(shape, provider, copies)
            if missing[provider]:
                rows.append({**base, "status": "missing: " + missing[provider]})
                continue
            if provider.startswith("splitkv"):
                for trial in trials if provider == "splitkv" else DEFAULT_TRIALS:
                    row = _measure(
                        provider,
                        cases,
                        trial.knobs,
                        ref_out,
                        shape,
                        ceilings,
                        rep_ms,
                        measure_merge,
                    )
                    rows.append({**base, "variant": trial.name, **row})
                    progress("    " + _summary(rows[-1]))
            else:
                rows.append(
                    {
                        **base,
                        "variant": "best split count",
                        **_best_peer_row(provider, cases, ref_out, shape, index, ceilings, rep_ms),
                    }
                )
                progress("    " + _summary(rows[-1]))
        del cases
        torch.cuda.empty_cache()
        if checkpoint is not None:
            checkpoint(rows)
    return rows


def _best_peer_row(provider, cases, ref_out, shape, index, ceilings, rep_ms) -> dict:
    """Search the peer's split counts with short timings, then time its best fully."""
    if cases[0].key_pool.numel() >= 2**31:
        # A peer with 32-bit offsets can fault here, which poisons the process's CUDA
        # context: run it in a child process and report what happens.
        return _measure_in_child(provider, shape, index, {"num_splits": 32}, ceilings, rep_ms)
    best = None
    for splits in PEER_SPLITS:
        row = _measure(
            provider,
            cases,
            {"num_splits": splits},
            ref_out,
            shape,
            ceilings,
            PEER_SEARCH_REP_MS,
            False,
        )
        if row["status"] != "ok":
            return row
        if best is None or row["p50_us"] < best["p50_us"]:
            best = row
    return _measure(
        provider, cases, {"num_splits": best["num_splits"]}, ref_out, shape, ceilings, rep_ms, False
    )


def build_cases(shape: BenchShape, index: int = 0, copies: int = 1) -> list:
    """`copies` random input sets of `shape` on the benchmark's device, seeded by the shape's
    `index` in a run (so every provider sees the same inputs)."""
    common = {
        "qlen": shape.qlen,
        "page_size": shape.page_size,
        "dtype": DTYPES[shape.dtype],
        "device": DEVICE,
        "contiguous": True,
        "spare_pages": 0,
    }
    if shape.kind == "gqa":
        return [
            random_gqa_case(
                shape.lengths,
                shape.heads,
                shape.kv_heads,
                shape.head_dim,
                sinks=shape.sinks,
                shared_prefix=shape.shared_prefix,
                prefix_groups=shape.prefix_groups,
                seed=index * 97 + c,
                **common,
            )
            for c in range(copies)
        ]
    return [
        random_mla_case(
            shape.lengths,
            shape.heads,
            shared_prefix=shape.shared_prefix,
            prefix_groups=shape.prefix_groups,
            seed=index * 97 + c,
            **common,
        )
        for c in range(copies)
    ]


def reference_out(case) -> torch.Tensor:
    """The fp32 reference's output for a benchmark case of either kind."""
    if isinstance(case, GqaCase):
        return splitkv.reference.gqa_decode(*case.args, sinks=case.sinks)[0]
    return splitkv.reference.mla_decode(*case.args)[0]


def _measure_in_child(provider, shape, index, knobs, ceilings, rep_ms) -> dict:
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(1, mp_context=context) as pool:
        future = pool.submit(_child_measurement, provider, shape, index, knobs, ceilings, rep_ms)
        try:
            return future.result()
        except concurrent.futures.process.BrokenProcessPool as error:
            return {"status": f"crashed: the process died ({error})", **knobs}


def _child_measurement(provider, shape, index, knobs, ceilings, rep_ms) -> dict:
    cases = build_cases(shape, index, 1)
    ref_out = reference_out(cases[0])
    return _measure(provider, cases, knobs, ref_out, shape, ceilings, rep_ms, False)


def _measure(provider, cases, knobs, ref_out, shape, ceilings, rep_ms, measure_merge) -> dict:
    try:
        prepared = [PROVIDERS[provider](c, **knobs) for c in cases]
    except (Unsupported, ValueError) as why:  # a knob this shape cannot take is a result
        return {"status": f"unsupported: {why}"}
    except torch.OutOfMemoryError:
        return {"status": "out of memory"}
    try:
        prepared[0].run()
        torch.cuda.synchronize()
    except Exception as error:  # a peer that crashes is a result, not a harness failure
        message = f"crashed: {type(error).__name__}: {error}"[:300]
        return {"status": message, "num_splits": prepared[0].num_splits}
    out, _ = prepared[0].result()
    error = relative_error(out, ref_out)
    status = "ok" if error <= TOLERANCES[out.dtype] else f"wrong: relative error {error:.2e}"
    result = {
        "num_splits": prepared[0].num_splits,
        "schedule": prepared[0].schedule,
        "rel_error": error,
        "status": status,
    }
    if status != "ok":
        return result
    p20, p50, p80 = _per_call_times([p.run for p in prepared], rep_ms)
    gbps = shape.bytes_read / (p50 * 1e-6) / 1e9
    tflops = shape.flops / (p50 * 1e-6) / 1e12
    result.update(
        p20_us=p20,
        p50_us=p50,
        p80_us=p80,
        gb_per_s=gbps,
        tflop_per_s=tflops,
        frac_read_ceiling=gbps * 1e9 / ceilings["read_bytes_per_s"],
        unique_frac_read_ceiling=shape.unique_bytes / (p50 * 1e-6) / ceilings["read_bytes_per_s"],
        frac_matmul=tflops * 1e12 / ceilings["matmul_flops_per_s"],
    )
    if measure_merge and prepared[0].merge_run is not None:
        _, merge_p50, _ = _per_call_times([p.merge_run for p in prepared], rep_ms)
        result.update(merge_p50_us=merge_p50, merge_share=merge_p50 / p50)
    if measure_merge and prepared[0].stage1_run is not None:
        # What the merge adds to the call: it overlaps stage 1's tail, so less than alone.
        _, stage1_p50, _ = _per_call_times([p.stage1_run for p in prepared], rep_ms)
        result.update(stage1_p50_us=stage1_p50, merge_added_share=1 - stage1_p50 / p50)
    return result


def _per_call_times(calls: list[Callable[[], object]], rep_ms: int) -> tuple[float, ...]:
    """p20/p50/p80 of one call, replaying all input copies in one graph."""
    times = cuda_graph_times_us(lambda: [call() for call in calls], rep_ms=rep_ms)
    return tuple(t / len(calls) for t in times)


def _row_base(shape: BenchShape, provider: str, copies: int) -> dict:
    if shape.label:
        who = f"--heads {shape.heads}"
        if shape.kind == "gqa":
            who = f"--kind gqa --models {shape.model}"
        command = (
            f"splitkv bench {who} --special --qlen {shape.qlen} --page-size {shape.page_size} "
            f"--labels {shlex.quote(shape.label)} --dtype {shape.dtype} --providers {provider}"
        )
    elif shape.kind == "gqa":
        command = (
            f"splitkv bench --kind gqa --models {shape.model} --context {shape.context} "
            f"--batch {shape.batch} --qlen {shape.qlen} --page-size {shape.page_size} "
            f"--dtype {shape.dtype} --providers {provider}"
        )
    else:
        command = (
            f"splitkv bench --heads {shape.heads} --context {shape.context} "
            f"--batch {shape.batch} --qlen {shape.qlen} --page-size {shape.page_size} "
            f"--dtype {shape.dtype} --providers {provider}"
        )
    return {
        "provider": provider,
        "label": shape.label,
        "kind": shape.kind,
        "model": shape.model,
        "heads": shape.heads,
        "kv_heads": shape.kv_heads,
        "head_dim": shape.head_dim,
        "context": shape.context,
        "batch": shape.batch,
        "qlen": shape.qlen,
        "page_size": shape.page_size,
        "dtype": shape.dtype,
        "shared_prefix": shape.shared_prefix,
        "prefix_groups": [[list(m), t] for m, t in shape.prefix_groups],
        "bytes_read": shape.bytes_read,
        "unique_bytes": shape.unique_bytes,
        "flops": shape.flops,
        "input_copies": copies,
        "command": command,
    }


def _summary(row: dict) -> str:
    name = f"{row['provider']} [{row.get('variant', '')}]"
    if row.get("status") != "ok":
        return f"{name:28} {row.get('status')}"
    merge = f"  merge {row['merge_share']:5.1%}" if "merge_share" in row else ""
    if "merge_added_share" in row:
        merge += f" (adds {row['merge_added_share']:5.1%})"
    return (
        f"{name:28} splits {row['num_splits']:>4}  p50 {row['p50_us']:9.1f} us  "
        f"{row['gb_per_s']:6.0f} GB/s ({row['frac_read_ceiling']:5.1%} of read)  "
        f"{row['tflop_per_s']:6.1f} TFLOP/s ({row['frac_matmul']:5.1%} of matmul){merge}"
    )
