"""One-split plans with and without Triton's specialisation of `num_splits == 1` (session 32's
next run). Triton compiles an int argument equal to 1 as a constant; at batch 1 that build of
the uniform GQA stage 1 was 2-5% slower (v0.2.33 unspecialised `batch`). Compiled on the CPU
(sm_90), the one-split build takes fewer registers: gpt-oss 110 against 114, llama3-8b 111
against 122, llama3-70b-tp8 154 against 156. Times the default stage 1 against copies built
with `do_not_specialize=["num_splits"]`, two rounds alternating, CUDA-graph medians in us, and
checks the copies' outputs against the default's."""

import json
import os

import torch
import triton
from triton.experimental import gluon

import splitkv
import splitkv.gqa
import splitkv.kernels.mla_warp_specialized as mla_ws
import splitkv.mla
from splitkv.bench.shapes import BenchShape, gqa_shapes
from splitkv.bench.sweep import _build_cases
from splitkv.timing import cuda_graph_times_us

STAGE1 = ((splitkv.gqa, "gqa_split_kernel", triton.jit), (splitkv.mla, "mla_split_kernel",
          triton.jit), (mla_ws, "mla_warp_specialized_kernel", gluon.jit))  # fmt: skip
DEFAULT = {(m, n): getattr(m, n) for m, n, _ in STAGE1}


def unspecialised(kernel, jit):
    """A copy of `kernel` that also leaves `num_splits` unspecialised (gqa_split_kernel already
    leaves `batch` so, v0.2.33: the copy keeps that)."""
    return jit(do_not_specialize=["num_splits", *kernel.do_not_specialize])(kernel.fn)


UNSPECIALISED = {(m, n): unspecialised(getattr(m, n), jit) for m, n, jit in STAGE1}


def use(kernels: dict) -> None:
    for (module, name), kernel in kernels.items():
        setattr(module, name, kernel)


def shapes() -> list[BenchShape]:
    out = gqa_shapes(models=("gpt-oss", "llama3-8b"), contexts=(4096,), batches=(128, 256))
    out += gqa_shapes(models=("llama3-70b-tp8",), contexts=(4096,), batches=(256,))
    return out + [BenchShape(h, 8192, 128) for h in (12, 128)]


def call_for(shape):
    case = _build_cases(shape, 0, 1)[0]
    common = {"page_size": shape.page_size, "dtype": case.args[0].dtype, "device": "cuda"}
    if shape.kind == "gqa":
        plan = splitkv.plan_decode(shape.batch, shape.context, shape.heads, kind="gqa",
                                   num_kv_heads=shape.kv_heads, head_dim=shape.head_dim,
                                   **common)  # fmt: skip
        return plan, lambda: splitkv.gqa_decode(*case.args, plan=plan, sinks=case.sinks)
    plan = splitkv.plan_decode(shape.batch, shape.context, shape.heads, **common)
    return plan, lambda: splitkv.mla_decode(*case.args, plan=plan)


def median_us(fn) -> float:
    fn()
    torch.cuda.synchronize()
    return round(cuda_graph_times_us(fn, rep_ms=80)[1], 2)


def measure(shape) -> dict:
    plan, fn = call_for(shape)
    row = {"shape": shape.describe(), "num_splits": plan.num_splits, "schedule": plan.schedule}
    use(DEFAULT)
    expected = fn()[0].float()
    use(UNSPECIALISED)
    row["max_abs_diff"] = float((fn()[0].float() - expected).abs().max())
    for _ in range(2):
        for name, kernels in (("default", DEFAULT), ("unspecialised", UNSPECIALISED)):
            use(kernels)
            row.setdefault(name, []).append(median_us(fn))
    use(DEFAULT)
    return row


def main() -> None:
    rows = []
    path = os.path.join(os.environ.get("STEP_OUT", "."), "one_split_specialisation.json")
    for shape in shapes():
        rows.append(measure(shape))
        print(json.dumps(rows[-1]), flush=True)
        with open(path, "w") as f:
            json.dump(rows, f, indent=1)


main()
