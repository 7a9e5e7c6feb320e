"""Batch-1 decode with and without Triton's specialisation of `batch == 1` (session 32).

Triton compiles an int argument equal to 1 as a constant. At batch 1 the stage-1 kernels are
therefore a different build from batch 2's: ncu of gpt-oss (`call1/steps/ncu_gptoss_b1/`) gave
126 registers at 131,072 x 1 against 114 at 65,536 x 2, and the same build difference shows
compile-only on the CPU. This times the default (specialised) stage 1 against copies built with
`do_not_specialize=["batch"]`, two rounds alternating, each a CUDA-graph median in us, and
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

# (module, name, jit): the stage-1 kernels a batch-1 call may launch
STAGE1 = ((splitkv.gqa, "gqa_split_kernel", triton.jit), (splitkv.mla, "mla_split_kernel",
          triton.jit), (mla_ws, "mla_warp_specialized_kernel", gluon.jit))  # fmt: skip
DEFAULT = {(m, n): getattr(m, n) for m, n, _ in STAGE1}
UNSPECIALISED = {(m, n): jit(do_not_specialize=["batch"])(getattr(m, n).fn) for m, n, jit in STAGE1}


def use(kernels: dict) -> None:
    for (module, name), kernel in kernels.items():
        setattr(module, name, kernel)


def shapes() -> list[BenchShape]:
    out = []
    for model in ("gpt-oss", "llama3-8b", "llama3-70b-tp8"):
        out += gqa_shapes(models=(model,), contexts=(32768, 131072, 262144), batches=(1,))
    out += gqa_shapes(models=("gpt-oss",), contexts=(65536,), batches=(2,))  # control
    out += [BenchShape(12, n, 1) for n in (8192, 65536, 327600)]
    out += [BenchShape(128, n, 1) for n in (8192, 65536)]
    return out


def call_for(shape):
    case = _build_cases(shape, 0, 1)[0]
    if shape.kind == "gqa":
        plan = splitkv.plan_decode(shape.batch, shape.context, shape.heads, kind="gqa",
                                   num_kv_heads=shape.kv_heads, head_dim=shape.head_dim,
                                   page_size=shape.page_size, dtype=case.args[0].dtype,
                                   device="cuda")  # fmt: skip
        return lambda: splitkv.gqa_decode(*case.args, plan=plan, sinks=case.sinks)
    plan = splitkv.plan_decode(shape.batch, shape.context, shape.heads,
                               page_size=shape.page_size, device="cuda")  # fmt: skip
    return lambda: splitkv.mla_decode(*case.args, plan=plan)


def median_us(fn) -> float:
    fn()
    torch.cuda.synchronize()
    return round(cuda_graph_times_us(fn, rep_ms=80)[1], 2)


def measure(shape) -> dict:
    fn = call_for(shape)
    row = {"shape": shape.describe(), "default": [], "unspecialised": []}
    use(DEFAULT)
    expected = fn()[0].float()
    use(UNSPECIALISED)
    row["max_abs_diff"] = float((fn()[0].float() - expected).abs().max())
    for _ in range(2):
        for name, kernels in (("default", DEFAULT), ("unspecialised", UNSPECIALISED)):
            use(kernels)
            row[name].append(median_us(fn))
    use(DEFAULT)
    return row


def main() -> None:
    rows = []
    path = os.path.join(os.environ.get("STEP_OUT", "."), "batch1_specialisation.json")
    for shape in shapes():
        rows.append(measure(shape))
        print(json.dumps(rows[-1]), flush=True)
        with open(path, "w") as f:
            json.dump(rows, f, indent=1)


main()
