"""Compile the merge (stage 2, kernels/merge.py) for a GPU target without a GPU and report what
one program runs: registers, and the instructions of its fold loop (one [BLOCK_S, BLOCK_D] tile
of partials an iteration), which on one warp set the long rows' serial chain.

    python tools/inspect_merge.py                        # the balanced default: 64 x 64, 1 warp
    python tools/inspect_merge.py --block-s 128 --warps 4 --uniform
    python tools/inspect_merge.py --head-dim 64 --heads 64 --qlen 4 --rows 8 --block-s 8
    python tools/inspect_merge.py --qlen 4 --rows 8 --block-s 16 --warps 4 --layouts
    python tools/inspect_merge.py --qlen 4 --rows 4 --long-partials 16   # merge_by_length

Uses the ptxas and cuobjdump that ship inside Triton's wheel; sm_90 (H100/H200) by default.
"""

import argparse
import json
import os
import re
import sys
from pathlib import Path

os.environ["TRITON_INTERPRET"] = "0"  # compile for real, even on a machine without a GPU

import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

sys.path.insert(0, str(Path(__file__).resolve().parent))
from checkout_src import SRC, behind_pythonpath

sys.path.insert(behind_pythonpath(), SRC)
from inspect_kernel import loop_bodies, registers_and_stack, sass_of

from splitkv.kernels.merge import merge_splits_kernel
from splitkv.kernels.merge_by_length import merge_by_length_kernel
from splitkv.kernels.merge_rows import merge_rows_kernel

POINTERS = {"partial_o_ptr": "*fp32", "partial_lse_ptr": "*fp32", "seq_lens_ptr": "*i32",
            "piece_ranges_ptr": "*i32", "out_ptr": "*bf16",
            "lse_ptr": "*fp32", "sinks_ptr": "*fp32", "split_flags_ptr": "*i32"}  # fmt: skip
ALIGNED = ("partial_o_ptr", "partial_lse_ptr", "out_ptr")  # as the launcher specialises them


def compile_merge(block_s: int, block_d: int, warps: int, heads: int, qlen: int, balanced: bool,
                  whole_pieces: bool, arch: int, merge_streams: bool = False,
                  head_dim: int = 512, rows: int = 1, long_partials: int = 0,
                  has_sinks: bool = False):  # fmt: skip
    """merge_splits_kernel as `mla.merge_workspace` launches it after a Gluon stage 1 (waiting
    for it, bfloat16 out, lse written; with merge_streams, polling its split flags instead);
    rows > 1, merge_rows_kernel; long_partials > 0 (balanced), merge_by_length_kernel;
    has_sinks, GQA's attention sinks (gpt-oss) in the output."""
    constants = {"NUM_HEADS": heads, "QLEN": qlen, "HEAD_DIM_V": head_dim, "SPLIT_BLOCK_N": 64,
                 "BLOCK_S": block_s, "BLOCK_D": block_d, "WRITE_LSE": True, "HAS_WINDOW": False,
                 "HAS_SINKS": has_sinks, "BALANCED": balanced,
                 "WAIT_FOR_STAGE_1": not merge_streams,
                 "WHOLE_PIECES": whole_pieces and balanced, "RELEASE_NEXT": False,
                 "program_times_ptr": None, "TIME_PROGRAMS": False,
                 "MERGE_STREAMS": merge_streams, "ROWS_PER_PROGRAM": rows}  # fmt: skip
    if not merge_streams:
        constants["split_flags_ptr"] = None
    kernel = merge_rows_kernel if rows > 1 else merge_splits_kernel
    if long_partials:
        for name in ("BALANCED", "split_flags_ptr", "MERGE_STREAMS"):
            constants.pop(name, None)
        constants.update(BLOCK_B=64, LONG_PARTIALS=long_partials)
        kernel = merge_by_length_kernel
    signature = {}
    for name in kernel.arg_names:
        if name in constants:
            signature[name] = "constexpr"
        else:
            signature[name] = POINTERS.get(name, "i32")
    attrs = {(kernel.arg_names.index(name),): [["tt.divisibility", 16]]
             for name in ALIGNED}  # fmt: skip
    source = ASTSource(kernel, signature, constants, attrs)
    return triton.compile(source, target=GPUTarget("cuda", arch, 32), options={"num_warps": warps})


def longest_loop(sass: list[tuple[int, str]]) -> list[str]:
    """The instructions of the longest backward branch's body (the fold loop)."""
    body = max(loop_bodies(sass), key=lambda b: b[-1][0] - b[0][0], default=[])
    return [ins for _, ins in body]


def report(kernel) -> dict:
    regs, stack = registers_and_stack(kernel)
    loop = longest_loop(sass_of(kernel))

    def count(opcode: str) -> int:
        return sum(1 for ins in loop if re.search(rf"\b{opcode}\b", ins))

    first_barrier = next((i for i, ins in enumerate(loop) if "BAR.SYNC" in ins), len(loop))
    loads_first = sum(1 for ins in loop[:first_barrier] if re.search(r"\bLDG\.E", ins))
    return {"registers": regs, "stack_bytes": stack, "shared_bytes": kernel.metadata.shared,
            "loop_instructions": len(loop), "loop_loads": count(r"LDG\.E(?:\.\d+)?"),
            "loads_before_barrier": loads_first,
            "loop_shuffles": count("SHFL.BFLY"), "loop_barriers": count("BAR.SYNC"),
            "loop_float_ops": sum(count(op) for op in ("FADD", "FMUL", "FFMA", "FSEL")),
            "loop_exp2": count("MUFU.EX2")}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--block-s", type=int, default=64, help="partials a tile")
    parser.add_argument("--block-d", type=int, default=64, help="columns a program")
    parser.add_argument("--warps", type=int, default=1)
    parser.add_argument("--heads", type=int, default=12)
    parser.add_argument("--qlen", type=int, default=1)
    parser.add_argument("--uniform", action="store_true", help="the uniform schedule's merge")
    parser.add_argument("--no-whole-pieces", action="store_true")
    parser.add_argument("--merge-streams", action="store_true",
                        help="--uniform: fold each split as its flag goes up")  # fmt: skip
    parser.add_argument("--head-dim", type=int, default=512, help="columns of a row")
    parser.add_argument("--rows", type=int, default=1, help="rows a program (merge_rows)")
    parser.add_argument("--long-partials", type=int, default=0,
                        help="merge_by_length_kernel: requests of more partials one row a "
                             "program, the rest --rows a program")  # fmt: skip
    parser.add_argument(
        "--layouts",
        action="store_true",
        help="also the TTGIR's blocked layouts (where the warps and lanes go)",
    )
    parser.add_argument("--arch", type=int, default=90)
    parser.add_argument("--json", action="store_true", help="(the output is always JSON)")
    args = parser.parse_args()
    kernel = compile_merge(args.block_s, args.block_d, args.warps, args.heads, args.qlen,
                           not args.uniform, not args.no_whole_pieces, args.arch,
                           args.merge_streams, args.head_dim, args.rows,
                           args.long_partials)  # fmt: skip
    row = {"block_s": args.block_s, "block_d": args.block_d, "warps": args.warps, "rows": args.rows,
           "long_partials": args.long_partials, "balanced": not args.uniform,
           **report(kernel)}  # fmt: skip
    if args.layouts:
        row["layouts"] = re.findall(r"^#blocked\d* = (.*)$", kernel.asm["ttgir"], re.MULTILINE)
    print(json.dumps(row))


if __name__ == "__main__":
    main()
