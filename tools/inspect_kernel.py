"""Compile the stage-1 MLA kernel for a GPU target without a GPU and report what the compiler
made of a configuration: shared memory, registers, spills, the matrix instructions, and how many
KV blocks the software pipeliner keeps in flight (buffers of the K tiles in the TTGIR).

    python tools/inspect_kernel.py                                # a few standard configurations
    python tools/inspect_kernel.py --block-h 16 --block-n 32 --warps 4 --stages 3 --prefetch
    python tools/inspect_kernel.py --warp-specialized --page-size 16 --heads 128  # the Gluon one

Uses the ptxas and cuobjdump that ship inside Triton's wheel; sm_90 (H100/H200) by default.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

os.environ["TRITON_INTERPRET"] = "0"  # compile for real, even on a machine without a GPU

import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

from checkout_src import SRC, behind_pythonpath

sys.path.insert(behind_pythonpath(), SRC)
from splitkv.kernels.mla_split import mla_balanced_kernel, mla_split_kernel

POINTERS = ("q_ptr", "kv_ptr", "page_table_ptr", "seq_lens_ptr", "partial_o_ptr", "partial_lse_ptr")
SCALARS = (
    "batch",
    "num_pages",
    "max_pages",
    "num_splits",
    "stride_q_batch",
    "stride_q_pos",
    "stride_q_head",
    "stride_kv_page",
    "stride_kv_slot",
    "stride_table_batch",
)
# Pointers and strides that are multiples of 16, as the launcher specialises them.
ALIGNED = ("q_ptr", "kv_ptr", "page_table_ptr", "seq_lens_ptr", "partial_o_ptr", "stride_q_batch",
           "stride_q_pos", "stride_q_head", "stride_kv_page", "stride_kv_slot")  # fmt: skip
STANDARD = [  # (block_h, block_n, warps, stages, prefetch)
    (16, 64, 4, 2, False), (16, 32, 4, 3, True), (16, 64, 4, 3, True), (64, 32, 8, 2, False),
]  # fmt: skip


def compile_split(
    block_h, block_n, warps, stages, prefetch, page_size=64, heads=16, arch=90, maxnreg=None,
    balanced_batch=0, latent_chains=1, kv_tma=False, program_loop=False, qlen=1,
):  # fmt: skip
    dtypes = {
        "q_ptr": "*bf16", "kv_ptr": "*bf16", "page_table_ptr": "*i32", "seq_lens_ptr": "*i32",
        "partial_o_ptr": "*fp32", "partial_lse_ptr": "*fp32",
    }  # fmt: skip
    signature = {name: dtypes[name] for name in POINTERS}
    signature["scale_log2"] = "fp32"
    signature.update({name: "i32" for name in SCALARS})
    constants = {
        "NUM_HEADS": heads, "QLEN": qlen, "HEAD_DIM_V": 512, "HEAD_DIM_PE": 64, "BLOCK_DV": 512,
        "BLOCK_DPE": 64, "PAGE_SIZE": page_size, "BLOCK_H": block_h, "BLOCK_N": block_n,
        "SPLIT_MAJOR": True, "PREFETCH_PAGE": prefetch,
    }  # fmt: skip
    constants["LATENT_CHAINS"] = latent_chains
    if kv_tma:  # host tensor descriptors: boxes of half the latent width and of the rope part
        signature["latent_desc"] = f"tensordesc<bf16[{block_n}, 256]>"
        signature["rope_desc"] = f"tensordesc<bf16[{block_n}, 64]>"
        constants["KV_TMA"] = True
    kernel = mla_split_kernel
    if balanced_batch:  # the balanced schedule's stage 1 (`num_programs` in place of splits)
        kernel = mla_balanced_kernel
        signature = {("num_programs" if k == "num_splits" else k): v for k, v in signature.items()}
        del constants["SPLIT_MAJOR"]
        constants["BLOCK_B"] = 1 << (balanced_batch - 1).bit_length()
        signature["piece_ranges_ptr"] = "*i32"
        if program_loop:  # one program per schedule program, walking its pieces
            constants["PROGRAM_LOOP"] = True
            constants["PIECE_COST"] = 0
    signature.update({name: "constexpr" for name in constants})
    attrs = {(kernel.arg_names.index(name),): [["tt.divisibility", 16]] for name in ALIGNED}
    source = ASTSource(kernel, signature, constants, attrs)
    options = {"num_warps": warps, "num_stages": stages}
    if maxnreg:
        options["maxnreg"] = maxnreg  # ptxas's register cap: more programs per SM
    return triton.compile(source, target=GPUTarget("cuda", arch, 32), options=options)


def compile_warp_specialized(page_size: int, heads: int, qlen: int, arch: int,
                             balanced_batch: int = 0, bf16_partials: bool = False,
                             block_q: int = 64, keys_as_rows: bool | None = None,
                             whole_pieces: bool = False, write_lse: bool = True,
                             early_start: bool = False,
                             consumer_groups: int | None = None,
                             merge_streams: int = 0,
                             alternate_blocks: bool = False):  # fmt: skip
    """The warp-specialized Gluon stage 1 (kernels/mla_warp_specialized.py) as the launcher
    builds it (splitkv/warp_specialized.py), bfloat16; with balanced_batch, its balanced
    program loop (kernels/mla_warp_specialized_loop.py) for batches of up to that many, with
    whole_pieces its one-piece requests' rows written to out (and lse with write_lse; the
    uniform kernel: every request's, as on one split); with
    early_start launched as a dependent of the kernel ahead (its prologue before the wait);
    consumer_groups: the plan's (default: as the planner gives a block_q block);
    merge_streams: the uniform kernel raising the merge's split flags for that many merge
    programs a row (0: off); alternate_blocks: the 64-row consumers taking turns
    (kernels/mla_alternate_blocks.py)."""
    import torch
    from triton.experimental.gluon._runtime import GluonASTSource
    from triton.runtime.jit import mangle_type

    from splitkv import warp_specialized as ws
    from splitkv.kernels.mla_warp_specialized import mla_warp_specialized_kernel
    from splitkv.kernels.mla_warp_specialized_loop import mla_warp_specialized_loop_kernel

    pool = torch.empty(max(4, ws.MIN_COPY_ROWS // page_size), page_size, ws.HEAD_DIM_QK,
                       dtype=torch.bfloat16)  # fmt: skip
    lat_desc, rope_desc = ws.kv_row_descriptors(pool, page_size)
    signature = {"q_ptr": "*bf16", "lat_desc": mangle_type(lat_desc),
                 "rope_desc": mangle_type(rope_desc), "page_table_ptr": "*i32",
                 "seq_lens_ptr": "*i32",
                 "partial_o_ptr": "*bf16" if bf16_partials else "*fp32",
                 "partial_lse_ptr": "*fp32", "scale_log2": "fp32"}  # fmt: skip
    for name in ("batch", "max_pages", "num_splits", "stride_q_batch", "stride_q_pos",
                 "stride_q_head", "stride_table_batch"):  # fmt: skip
        signature[name] = "i32"
    if keys_as_rows is None:
        keys_as_rows = block_q < ws.BLOCK_H
    constants = {"NUM_HEADS": heads, "QLEN": qlen, "BLOCK_Q": block_q,
                 "KEYS_AS_ROWS": keys_as_rows, "PAGE_SIZE": page_size,
                 "BLOCK_N": ws.BLOCK_N, "NUM_STAGES": ws.NUM_STAGES, "SPLIT_MAJOR": True,
                 "RELEASE_MERGE": True,
                 "EARLY_START": early_start, "EARLY_BLOCKS": ws.EARLY_BLOCKS}  # fmt: skip
    # The queries by bulk copies too, as for a contiguous q.
    q = torch.empty(2, qlen, heads, ws.HEAD_DIM_QK, dtype=torch.bfloat16)
    q_lat, q_rope = ws.query_row_descriptors(q, block_q)
    signature.update({"q_lat_desc": mangle_type(q_lat), "q_rope_desc": mangle_type(q_rope)})
    constants["QUERY_TMA"] = True
    if merge_streams:
        signature["split_flags_ptr"] = "*i32"
        constants.update({"MERGE_STREAMS": True, "D_SPLIT": merge_streams})
    if alternate_blocks:
        lat_desc, rope_desc = ws.kv_row_descriptors(pool, page_size, ws.ALTERNATE_BLOCK_N)
        signature.update({"lat_desc": mangle_type(lat_desc), "rope_desc": mangle_type(rope_desc)})
        constants.update({"ALTERNATE_BLOCKS": True, "BLOCK_N": ws.ALTERNATE_BLOCK_N,
                          "NUM_STAGES": ws.ALTERNATE_STAGES})  # fmt: skip
    if ws.gathers_keys(page_size):  # key rows gathered by the producer (kernels/gathered_keys.py)
        signature.update({"kv_ptr": "*bf16", "stride_kv_page": "i32", "stride_kv_slot": "i32",
                          "num_pages": "i32"})  # fmt: skip
        constants["GATHER_KEYS"] = True
    # Both kernels' outputs (written with whole_pieces: the loop's one-piece requests, or
    # every request of the uniform kernel on one split).
    signature.update({"out_ptr": "*bf16", "lse_ptr": "*fp32"})
    for name in ("stride_out_batch", "stride_out_pos", "stride_out_head",
                 "stride_lse_batch", "stride_lse_pos", "stride_lse_head"):  # fmt: skip
        signature[name] = "i32"
    whole = {"WRITE_LSE": whole_pieces and write_lse}
    kernel = mla_warp_specialized_kernel
    if balanced_batch:
        for name in ("num_splits", "SPLIT_MAJOR"):
            signature.pop(name, None)
            constants.pop(name, None)
        signature.update({"piece_ranges_ptr": "*i32", "num_programs": "i32"})
        constants.update({"WHOLE_PIECES": whole_pieces, **whole})
        constants["BLOCK_B"] = max(1 << (balanced_batch - 1).bit_length(), ws.MIN_BLOCK_B)
        constants["PIECE_COST"] = ws.PIECE_COST
        kernel = mla_warp_specialized_loop_kernel
    else:
        constants.update({"WHOLE_OUTPUT": whole_pieces, **whole})
    signature = {name: signature[name] for name in kernel.arg_names if name in signature}
    signature.update({name: "constexpr" for name in constants})
    # As the launcher specialises them: 16-byte aligned pointers, strides multiples of 16.
    aligned = ("q_ptr", "page_table_ptr", "seq_lens_ptr", "partial_o_ptr",
               "partial_lse_ptr", "piece_ranges_ptr", "stride_q_batch", "stride_q_pos",
               "stride_q_head", "kv_ptr", "stride_kv_page", "stride_kv_slot")  # fmt: skip
    attrs = {(kernel.arg_names.index(name),): [["tt.divisibility", 16]]
             for name in aligned if name in signature}  # fmt: skip
    source = GluonASTSource(kernel, signature, constants, attrs)
    target = GPUTarget("cuda", arch, 32)
    groups = consumer_groups or ws.num_warps_for(block_q) // ws.CONSUMER_WARPS
    if alternate_blocks:
        groups = 1  # the second consumer warpgroup is a partition of its own
    return triton.compile(source, target=target,
                          options={"num_warps": ws.CONSUMER_WARPS * groups})  # fmt: skip


def copies_before_wait(ptx: str) -> int | None:
    """Bulk copies the PTX issues before its first `griddepcontrol.wait` (early_start: the
    producer's early key blocks); None without a wait."""
    wait = ptx.find("griddepcontrol.wait")
    return None if wait < 0 else ptx[:wait].count("cp.async.bulk.tensor")


def cuobjdump(kernel, flag: str) -> str:
    """What the cuobjdump that ships inside Triton's wheel prints for the compiled kernel's
    cubin with `flag` (also used by tools/inspect_merge.py)."""
    tool = Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "cuobjdump"
    with tempfile.NamedTemporaryFile(suffix=".cubin") as cubin:
        cubin.write(kernel.asm["cubin"])
        cubin.flush()
        return subprocess.run([str(tool), flag, cubin.name], capture_output=True, text=True,
                              check=True).stdout  # fmt: skip


def registers_and_stack(kernel) -> tuple[int, int]:
    """Registers per thread and stack bytes of a compiled kernel (also used by
    tools/gluon_mla_probe.py)."""
    usage = cuobjdump(kernel, "--dump-resource-usage")
    regs, stack = re.search(r"REG:(\d+) STACK:(\d+)", usage).groups()
    return int(regs), int(stack)


def sass_of(kernel) -> list[tuple[int, str]]:
    """(address, instruction) of every SASS instruction of the compiled kernel (also used by
    tools/inspect_merge.py)."""
    text = cuobjdump(kernel, "-sass")
    pattern = re.compile(r"/\*([0-9a-f]{4,})\*/\s+([^;]+);")
    return [(int(m.group(1), 16), m.group(2).strip()) for m in pattern.finditer(text)]


BRANCH = re.compile(r"^(@!?U?P\w+\s+)?BRA\s+(?:`\(\.L_x_\d+\)|0x)([0-9a-f]+)")


def loop_bodies(sass: list[tuple[int, str]]) -> list[list[tuple[int, str]]]:
    """The body of every backward branch's loop, from its target to the branch (also used by
    tools/inspect_merge.py)."""
    bodies = []
    for address, instruction in sass:
        branch = BRANCH.search(instruction)
        if branch and int(branch.group(2), 16) < address:
            start = int(branch.group(2), 16)
            bodies.append([(a, ins) for a, ins in sass if start <= a <= address])
    return bodies


def block_loop(kernel) -> dict:
    """The key-block loop (the shortest loop whose body holds wgmma or mma.sync: a
    warp-specialized kernel's consumers, a Triton tile's block loop): its instructions, and
    those of its hot path, which steps over every forward conditional branch inside the loop
    as taken. Those branches skip rare work (a tail block's key zeroing) or a barrier's retry,
    so the hot path is what an ordinary block issues, roughly. Spills: local loads and stores
    in the loop."""
    loops = [
        b for b in loop_bodies(sass_of(kernel)) if any("HGMMA" in i or "HMMA" in i for _, i in b)
    ]
    if not loops:
        return {}
    body = min(loops, key=lambda b: b[-1][0] - b[0][0])
    end, hot, k = body[-1][0], [], 0
    while k < len(body):
        address, instruction = body[k]
        hot.append(instruction)
        branch = BRANCH.search(instruction)
        target = int(branch.group(2), 16) if branch and branch.group(1) else -1
        k += 1
        if address < target <= end:
            while k < len(body) and body[k][0] < target:
                k += 1

    def count(instructions, *opcodes):
        return sum(1 for ins in instructions if re.sub(r"^@!?U?P\w+\s+", "", ins).split(".")[0]
                   .split()[0] in opcodes)  # fmt: skip

    return {"loop_instructions": len(body), "loop_spills": count([i for _, i in body], "LDL",
            "STL"), "hot_instructions": len(hot), "hot_float_ops": count(hot, "FADD", "FMUL",
            "FFMA", "FMNMX", "FSEL", "FSETP"), "hot_exp2": sum("MUFU.EX2" in i for i in hot),
            "hot_barriers": count(hot, "BAR")}  # fmt: skip


def report(kernel) -> dict:
    regs, stack = registers_and_stack(kernel)
    ptx, ttgir = kernel.asm["ptx"], kernel.asm["ttgir"]
    buffers = re.findall(r"local_alloc : \(\) -> !ttg.memdesc<(\d+)x\d+x(?:512|256)x", ttgir)
    sass = [instruction for _, instruction in sass_of(kernel)]  # one cuobjdump run for both
    return {
        "shared_kb": round(kernel.metadata.shared / 1024, 1),
        "bulk_copies": ptx.count("cp.async.bulk.tensor"),
        # 16-byte copies of gathered key rows (kernels/gathered_keys.py), a warp's: 144 a
        # 64-key block over the producer's warps (36 each for four).
        "gathered_copies": sum(bool(re.search(r"\bLDGSTS\.", ins)) for ins in sass),
        "registers": regs,
        "stack_bytes": stack,
        "wgmma": ptx.count("wgmma.mma_async"),
        # Waits for wgmma in the SASS: one after every wgmma means ptxas serialized them (its
        # C7512 "Potential Performance Loss"; docs/perf.md v0.2.19).
        "wgmma_waits": sum("WARPGROUP.DEPBAR" in ins for ins in sass),
        "mma_sync": ptx.count("mma.sync"),
        "sass_instructions": len(sass),
        "release_atomics": len(re.findall(r"atom\.global\.gpu\.release", ptx)),
        "kv_blocks_in_flight": int(buffers[0]) if buffers else 0,
    }


def set_gather_ids_lead(lead: int) -> None:
    """Compile this process's kernels with the gathering producer's page ids `lead` blocks
    ahead: the module constant the kernels read when they compile (before the first)."""
    from triton.experimental.gluon import language as gl

    from splitkv.kernels import gathered_keys

    gathered_keys.GATHER_IDS_LEAD = gl.constexpr(lead)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--block-h", type=int)
    parser.add_argument("--block-n", type=int, default=64)
    parser.add_argument("--warps", type=int, default=4)
    parser.add_argument("--stages", type=int, default=2)
    parser.add_argument("--prefetch", action="store_true")
    parser.add_argument("--page-size", type=int, default=64)
    parser.add_argument("--heads", type=int, default=16, help="query heads (the row mask)")
    parser.add_argument("--maxnreg", type=int, default=None, help="cap registers per thread")
    parser.add_argument("--balanced-batch", type=int, default=0, help="the balanced kernel")
    parser.add_argument("--latent-chains", type=int, default=1, help="score-dot chains: 1 or 2")
    parser.add_argument("--kv-tma", action="store_true", help="key blocks by bulk copies")
    parser.add_argument(
        "--program-loop", action="store_true", help="balanced: one program per schedule program"
    )
    parser.add_argument(
        "--warp-specialized", action="store_true", help="the Gluon 64-row stage 1 instead"
    )
    parser.add_argument("--qlen", type=int, default=1, help="query positions a request")
    parser.add_argument("--bf16-partials", action="store_true",
                        help="--warp-specialized: partial_dtype=torch.bfloat16")  # fmt: skip
    parser.add_argument(
        "--block-q",
        type=int,
        default=64,
        help="--warp-specialized: rows a program (16, 32: keys as rows)",
    )
    parser.add_argument(
        "--keys-as-rows",
        action="store_true",
        help="--warp-specialized --block-q 64: the keys as wgmma's rows",
    )
    parser.add_argument("--whole-pieces", action="store_true",
                        help="--balanced-batch: one-piece requests to out / lse")  # fmt: skip
    parser.add_argument("--no-lse", action="store_true",
                        help="--whole-pieces: a call without lse (return_lse=False)")  # fmt: skip
    parser.add_argument("--early-start", action="store_true",
                        help="--warp-specialized: a dependent of the kernel ahead")  # fmt: skip
    parser.add_argument("--consumer-groups", type=int, default=None,
                        help="--warp-specialized: consumer warpgroups a head block")  # fmt: skip
    parser.add_argument("--merge-streams", type=int, default=0, metavar="D_SPLIT",
                        help="--warp-specialized: raise the merge's split flags for D_SPLIT "
                        "merge programs a row")  # fmt: skip
    parser.add_argument("--alternate-blocks", action="store_true",
                        help="--warp-specialized: the 64-row consumers taking turns")  # fmt: skip
    parser.add_argument("--gather-ids-lead", type=int, default=None, choices=(0, 1, 2),
                        help="--warp-specialized: the gathering producer's page ids this many "
                        "blocks ahead on pages under GATHER_IDS_LEAD_PAGES_UNDER keys "
                        "(kernels/gathered_keys.py's GATHER_IDS_LEAD; default: the "
                        "module's)")  # fmt: skip
    parser.add_argument("--arch", type=int, default=90)
    parser.add_argument("--json", action="store_true", help="one JSON object per line")
    args = parser.parse_args()
    if args.gather_ids_lead is not None:
        set_gather_ids_lead(args.gather_ids_lead)
    if args.warp_specialized:
        kernel = compile_warp_specialized(args.page_size, args.heads, args.qlen, args.arch,
                                          args.balanced_batch, args.bf16_partials,
                                          args.block_q, args.keys_as_rows or None,
                                          args.whole_pieces, not args.no_lse,
                                          args.early_start, args.consumer_groups,
                                          args.merge_streams,
                                          args.alternate_blocks)  # fmt: skip
        row = {"page_size": args.page_size, "heads": args.heads, "qlen": args.qlen,
               **report(kernel), "setmaxnreg": kernel.asm["ptx"].count("setmaxnreg"),
               "copies_before_wait": copies_before_wait(kernel.asm["ptx"]),
               **block_loop(kernel)}  # fmt: skip
        print(json.dumps(row) if args.json else row)
        return
    configs = STANDARD
    if args.block_h:
        configs = [(args.block_h, args.block_n, args.warps, args.stages, args.prefetch)]
    for config in configs:
        kernel = compile_split(
            *config, page_size=args.page_size, heads=args.heads, arch=args.arch,
            maxnreg=args.maxnreg, balanced_batch=args.balanced_batch,
            latent_chains=args.latent_chains, kv_tma=args.kv_tma, program_loop=args.program_loop,
            qlen=args.qlen,
        )  # fmt: skip
        names = ("block_h", "block_n", "warps", "stages", "prefetch")
        row = {**dict(zip(names, config, strict=True)), **report(kernel), **block_loop(kernel)}
        print(json.dumps(row) if args.json else row)


if __name__ == "__main__":
    main()
