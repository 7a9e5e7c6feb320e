"""Compile the GQA stage-1 kernel that the planner picks for a batch, for a GPU target without a
GPU, and report what the compiler made of it: registers, spills, shared memory, and how many of
its programs fit an SM at once beside the grid (the waves the launch takes).

    python tools/inspect_gqa.py                                  # session 28's batches, qlen 1
    python tools/inspect_gqa.py --model gpt-oss --qlen 4 --batch ragged
    python tools/inspect_gqa.py --batch uniform --qlen 1 4 8       # the long-split tiles
    python tools/inspect_gqa.py --model llama3-8b --knobs block_n=128 num_stages=2
    python tools/inspect_gqa.py --model gpt-oss --qlen 4 --batch 28:261-843  # N:KEYS or N:LO-HI

Plans for the H200 preset on the "meta" device (no allocation); uses the ptxas and cuobjdump
inside Triton's wheel (tools/inspect_kernel.py), sm_90 by default.
"""

import argparse
import json
import os
import re
import sys
from pathlib import Path

os.environ["TRITON_INTERPRET"] = "0"  # compile for real, even on a machine without a GPU

import torch
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

sys.path.insert(0, str(Path(__file__).resolve().parent))
from checkout_src import SRC, behind_pythonpath

sys.path.insert(behind_pythonpath(), SRC)
from gqa_plan_snapshot import spread_of
from inspect_kernel import loop_bodies, registers_and_stack, sass_of

import splitkv
from splitkv.bench.shapes import GQA_MODELS, GQA_ONE_LONG, GQA_RAGGED
from splitkv.gqa_tile_rules import gqa_kv_offsets_shared
from splitkv.kernels.gqa_split import gqa_balanced_kernel, gqa_split_kernel

# "uniform": two requests of 131,072 keys, which every model's default plans on half its
# splits with the long-split tile (gqa_tile_rules.gqa_long_split_count); "many": 64 of 4,096,
# one split each on the uniform tile (at 32 and 64 rows `gqa_wide_tile`'s).
BATCHES = {"ragged": list(GQA_RAGGED), "one-long": list(GQA_ONE_LONG), "uniform": [131072] * 2,
           "many": [4096] * 64}  # fmt: skip
SM_REGISTERS, SM_SHARED, SM_THREADS = 65536, 233472, 2048  # an H100 / H200 SM (sm_90)
POINTERS = ("q_ptr", "k_ptr", "v_ptr", "page_table_ptr", "seq_lens_ptr", "partial_o_ptr",
            "partial_lse_ptr")  # fmt: skip
INTS = ("window_left", "batch", "num_pages", "max_pages", "num_programs", "num_splits",
        "stride_q_batch", "stride_q_pos", "stride_q_head", "stride_k_page", "stride_k_slot",
        "stride_k_head", "stride_v_page", "stride_v_slot", "stride_v_head",
        "stride_table_batch")  # fmt: skip
# What the launcher's arguments divide by 16 for these shapes (pointers, and strides of caches
# whose rows are 16-element multiples), as Triton specialises them.
ALIGNED = (*POINTERS, "piece_ranges_ptr", "stride_q_batch", "stride_q_pos", "stride_q_head",
           "stride_k_page", "stride_k_slot", "stride_k_head", "stride_v_page", "stride_v_slot",
           "stride_v_head")  # fmt: skip
# And where the build writes the output (out [batch, qlen, heads, head dim], lse [batch, qlen,
# heads], sinks [heads]; the launcher's build keys on the H200 show them so).
OUTPUT_ALIGNED = ("out_ptr", "lse_ptr", "sinks_ptr", "stride_out_batch", "stride_out_pos",
                  "stride_out_head", "stride_lse_batch", "stride_lse_pos")  # fmt: skip


def compile_plan(plan, arch: int = 90, maxnreg: int | None = None, sinks: bool = False,
                 generic_splits: bool = False, constexprs: dict | None = None,
                 programs: int = 0, compute_units: int = 132):  # fmt: skip
    """The stage-1 kernel `gqa._launch` builds for `plan` (no window, no cap; a uniform plan
    with `whole_pieces` writes the output rows and lse itself, with the model's `sinks`);
    `maxnreg`: with ptxas's register cap (not a plan knob: what a cap would cost in spills);
    `generic_splits`: one split's build with num_splits an int, as `do_not_specialize` would
    compile it; `programs`: the launch's grid, on `compute_units` SMs."""
    elem = {torch.bfloat16: "bf16", torch.float16: "fp16", torch.float32: "fp32"}[plan.dtype]
    balanced = plan.schedule == "balanced"
    kernel = gqa_balanced_kernel if balanced else gqa_split_kernel
    types = {name: "*i32" if name in ("page_table_ptr", "seq_lens_ptr") else f"*{elem}"
             for name in POINTERS}  # fmt: skip
    types.update(partial_o_ptr="*fp32", partial_lse_ptr="*fp32", scale="fp32", logit_cap="fp32")
    types.update({name: "i32" for name in INTS})
    constants = {
        "NUM_Q_HEADS": plan.num_heads, "NUM_KV_HEADS": plan.num_kv_heads, "QLEN": plan.qlen,
        "HEAD_DIM": plan.head_dim_v, "BLOCK_D": triton.next_power_of_2(plan.head_dim_v),
        "PAGE_SIZE": plan.page_size, "BLOCK_H": plan.block_h, "BLOCK_N": plan.block_n,
        "PREFETCH_PAGE": plan.page_prefetch, "HAS_WINDOW": False, "HAS_CAP": False,
        "RELEASE_MERGE": plan.dependent_launch,
        # As the launcher's for caches of one layout (the bench's, one tensor's two halves).
        "KV_PACK": plan.kv_pack,
        "KV_SAME_STRIDES": gqa_kv_offsets_shared(balanced, plan.tile_head_dim, plan.block_h,
                                                 not balanced and plan.whole_pieces, programs,
                                                 compute_units),
    }  # fmt: skip
    constants.update(constexprs or {})
    if balanced:
        constants["BLOCK_B"] = plan.block_b
        types["piece_ranges_ptr"] = "*i32"
    else:
        constants["SPLIT_MAJOR"] = plan.grid_order == "split_major"
    if not balanced and plan.whole_pieces:
        # As the launcher's build: no merge to release, the lse's head stride 1 (Triton makes
        # an int equal to 1 a constant).
        constants.update(ONE_SPLIT_OUTPUT=True, WRITE_LSE=True, HAS_SINKS=sinks,
                         RELEASE_MERGE=False, stride_lse_head=1)  # fmt: skip
        types.update(out_ptr=f"*{elem}", lse_ptr="*fp32", sinks_ptr="*fp32")
        types.update({f"stride_{t}_{d}": "i32" for t in ("out", "lse")
                      for d in ("batch", "pos", "head")})  # fmt: skip
    if not balanced and plan.num_splits == 1 and not generic_splits:
        # Specialised as a constant, as Triton does at launch: one split's build takes up to
        # 21 more registers than the generic one (docs/perf.md session 39).
        constants["num_splits"] = 1
    signature = {name: types[name] for name in kernel.arg_names
                 if name in types and name not in constants}  # fmt: skip
    signature.update({name: "constexpr" for name in constants})
    aligned = ALIGNED + OUTPUT_ALIGNED if "out_ptr" in signature else ALIGNED
    attrs = {(kernel.arg_names.index(name),): [["tt.divisibility", 16]]
             for name in aligned if name in signature}  # fmt: skip
    source = ASTSource(kernel, signature, constants, attrs)
    options = {"num_warps": plan.split_num_warps, "num_stages": plan.split_num_stages}
    if maxnreg:
        options["maxnreg"] = maxnreg
    return triton.compile(source, target=GPUTarget("cuda", arch, 32), options=options)


def residency(registers: int, shared: int, warps: int) -> dict:
    """Programs an SM holds at once, and what limits it (registers are allocated per warp in
    units of 256)."""
    per_warp = -(-registers * 32 // 256) * 256
    limits = {
        "registers": SM_REGISTERS // (per_warp * warps),
        "shared": SM_SHARED // max(shared, 1),
        "threads": SM_THREADS // (32 * warps),
    }
    limiter = min(limits, key=limits.get)
    return {"per_sm": limits[limiter], "limited_by": limiter}


def held_programs(paths) -> dict:
    """Programs an SM of each uniform stage-1 build in `tools/gqa_plan_ab.py --builds` files
    (the GPU's registers and shared memory), keyed by (q heads, head dim, qlen, block_h,
    block_n, stages, one split): the fewest where builds share a key."""
    held = {}
    for path in paths:
        for line in Path(path).read_text().splitlines():
            build = json.loads(line)
            consts = re.findall(r"\('constexpr', ([^)]*)\)", build["key"])
            one = consts[0] == "1"  # one split's build takes num_splits as a constant first
            q_heads, _, qlen, head_dim, _, _, block_h, block_n = map(int, consts[one:][:8])
            key = (q_heads, head_dim, qlen, block_h, block_n, build["stages"], one)
            fit = residency(build["regs"], build["shared"], build["warps"])["per_sm"]
            held[key] = min(held.get(key, fit), fit)
    return held


def batch_lengths(batch: str) -> list[int]:
    """A named batch (BATCHES), or N:KEYS / N:LO-HI (N requests, lengths evenly from LO to HI,
    as `tools/gqa_plan_ab.py --batch` spells them): the plans a device run's `--builds` list."""
    if batch in BATCHES:
        return BATCHES[batch]
    requests, _, keys = batch.partition(":")
    return spread_of(requests, keys)


def batch_name(text: str) -> str:
    """`--batch`'s type: the name, once its lengths parse."""
    try:
        batch_lengths(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"one of {sorted(BATCHES)}, N:KEYS or N:LO-HI, got "
                                         f"{text!r}") from None  # fmt: skip
    return text


def inspect(model: str, qlen: int, batch: str, knobs: dict, maxnreg: int | None = None,
            generic_splits: bool = False, constexprs: dict | None = None) -> dict:  # fmt: skip
    q_heads, kv_heads, head_dim = GQA_MODELS[model][:3]
    lengths = batch_lengths(batch)
    spec = splitkv.DeviceSpec.preset("h200")
    plan = splitkv.plan_decode(len(lengths), max(lengths), q_heads, qlen=qlen, kind="gqa",
                               num_kv_heads=kv_heads, head_dim=head_dim, page_size=16,
                               dtype=torch.bfloat16, device="meta", device_spec=spec,
                               seq_lens=lengths, **knobs)  # fmt: skip
    per_head = plan.num_programs + len(lengths) if plan.schedule == "balanced" else (
        plan.num_splits * len(lengths))  # fmt: skip
    grid = per_head * plan.programs_a_split
    kernel = compile_plan(plan, maxnreg=maxnreg, sinks=GQA_MODELS[model][3],
                          generic_splits=generic_splits, constexprs=constexprs, programs=grid,
                          compute_units=spec.compute_units)  # fmt: skip
    registers, stack = registers_and_stack(kernel)
    # The key loop: the longest backward branch's body (the epilogue's loops are short).
    loop = max((len(body) for body in loop_bodies(sass_of(kernel))), default=0)
    fit = residency(registers, kernel.metadata.shared, plan.split_num_warps)
    return {"model": model, "qlen": qlen, "batch": batch, "schedule": plan.schedule,
            "block_h": plan.block_h, "block_n": plan.block_n, "stages": plan.split_num_stages,
            "prefetch": plan.page_prefetch, "warps": plan.split_num_warps,
            "num_programs": plan.num_programs, "registers": registers, "stack_bytes": stack,
            "shared_kb": round(kernel.metadata.shared / 1024, 1), **fit, "grid": grid,
            "loop_instructions": loop,
            "waves": round(grid / (fit["per_sm"] * spec.compute_units), 2)}  # fmt: skip


def knob(text: str) -> tuple[str, object]:
    name, value = text.split("=", 1)
    return name, {"True": True, "False": False}.get(value, int(value) if value.isdigit() else value)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", nargs="+", default=["llama3-8b", "gpt-oss", "llama3-70b-tp8"],
                        choices=sorted(GQA_MODELS))  # fmt: skip
    parser.add_argument("--qlen", nargs="+", type=int, default=[1])
    parser.add_argument("--batch", nargs="+", type=batch_name, default=["one-long", "ragged"],
                        help=f"{', '.join(sorted(BATCHES))}, N:KEYS or N:LO-HI")  # fmt: skip
    parser.add_argument("--knobs", nargs="*", type=knob, default=[],
                        help="plan_decode knobs, NAME=VALUE")  # fmt: skip
    parser.add_argument("--constexprs", nargs="*", type=knob, default=[],
                        help="kernel compile-time arguments, NAME=VALUE")  # fmt: skip
    parser.add_argument("--maxnreg", type=int, default=None, help="cap registers per thread")
    parser.add_argument("--generic-splits", action="store_true",
                        help="one split's build with num_splits not a constant")  # fmt: skip
    parser.add_argument("--json", action="store_true", help="JSON lines (always)")
    args = parser.parse_args()
    for model in args.model:
        for qlen in args.qlen:
            for batch in args.batch:
                row = inspect(model, qlen, batch, dict(args.knobs), args.maxnreg,
                              args.generic_splits, dict(args.constexprs))  # fmt: skip
                print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
