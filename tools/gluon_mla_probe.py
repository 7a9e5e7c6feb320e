"""A warp-specialized MLA decode loop in Gluon (`triton.experimental.gluon`) for sm_90: the
probe for issue 3's target 3 (docs/perf.md, "Next runs"). Not part of the library yet.

One program attends 64 query rows (128 heads in two programs, or 16 heads x qlen 4) to its own
request's keys, read through its page-table row from a pool of 64-token pages viewed as rows
`[pages * 64, 576]`; one split per request, whole blocks only (no masking) and no merge yet.
A one-warp producer partition streams each key block by bulk copies (two latent halves and the
rope part) into a ring of NUM_STAGES buffers guarded by mbarriers; the default partition (8
warps: two warpgroups that split the columns of S and O) runs S = Q K^T and O += P V as wgmma
with both operands in shared memory but P, and releases each stage when its last wgmma has
read it.

    python tools/gluon_mla_probe.py               # compile both variants for sm_90 here (no
                                                  # GPU): what the compiler made of them
    python tools/gluon_mla_probe.py --run         # on a GPU: check both against torch, then
                                                  # time them beside splitkv's 64-row tile
"""

from __future__ import annotations

import argparse
import json
import os
import sys

os.environ.setdefault("TRITON_INTERPRET", "0")  # Gluon compiles for real; no interpreter

import torch
import triton
from triton.backends.compiler import GPUTarget
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import (
    fence_async_shared,
    mbarrier,
    tma,
    warpgroup_mma,
    warpgroup_mma_wait,
)
from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

LATENT = gl.constexpr(512)  # absorbed MLA: keys [latent | rope], values the latent part
ROPE = gl.constexpr(64)
HALF = gl.constexpr(256)  # a bulk copy's box is at most 256 elements wide
BLOCK_M = gl.constexpr(64)  # query rows: wgmma's smallest M for one warpgroup
WIDTH, ROWS, LAT, HALF_W, ROPE_W = 576, 64, 512, 256, 64  # the same, as host ints
PAGE = 64  # tokens per page of the pool (the benchmark's page size)


@gluon.jit
def load_partition(lat_desc, rope_desc, k_lo, k_hi, k_pe, ready, empty, table_row, num_blocks,
                   BLOCK_N: gl.constexpr, NUM_STAGES: gl.constexpr,
                   PAGE_SIZE: gl.constexpr):  # fmt: skip
    """Producer: block j (keys j * BLOCK_N onward, through the request's page-table row) into
    stage j % NUM_STAGES once the consumers released that stage."""
    BLOCK_BYTES: gl.constexpr = 2 * lat_desc.block_type.nbytes + rope_desc.block_type.nbytes
    for j in range(num_blocks):
        stage = j % NUM_STAGES
        # The first pass over the ring has nothing to wait for.
        mbarrier.wait(empty.index(stage), ((j // NUM_STAGES) & 1) ^ 1, pred=j >= NUM_STAGES)
        mbarrier.expect(ready.index(stage), BLOCK_BYTES)
        key = j * BLOCK_N
        row = gl.load(table_row + key // PAGE_SIZE) * PAGE_SIZE + key % PAGE_SIZE
        tma.async_copy_global_to_shared(lat_desc, [row, 0], ready.index(stage), k_lo.index(stage))
        tma.async_copy_global_to_shared(lat_desc, [row, HALF], ready.index(stage),
                                        k_hi.index(stage))  # fmt: skip
        tma.async_copy_global_to_shared(rope_desc, [row, LATENT], ready.index(stage),
                                        k_pe.index(stage))  # fmt: skip


@gluon.jit
def issue_scores(q_lo, q_hi, q_pe, k_lo, k_hi, k_pe, stage, s_layout: gl.constexpr,
                 BLOCK_N: gl.constexpr):  # fmt: skip
    """S = Q K^T of one stage, as three asynchronous wgmma groups (latent halves, rope)."""
    scores = gl.zeros([BLOCK_M, BLOCK_N], gl.float32, s_layout)
    scores = warpgroup_mma(q_lo, k_lo.index(stage).permute((1, 0)), scores, is_async=True)
    scores = warpgroup_mma(q_hi, k_hi.index(stage).permute((1, 0)), scores, is_async=True)
    return warpgroup_mma(q_pe, k_pe.index(stage).permute((1, 0)), scores, is_async=True)


@gluon.jit
def online_softmax(scores, m_i, l_i, scale_log2):
    """Base-2 online softmax step: (p, alpha, new max, new sum)."""
    scores = scores * scale_log2
    m_new = gl.maximum(m_i, gl.max(scores, 1))
    p = gl.exp2(scores - m_new[:, None])
    alpha = gl.exp2(m_i - m_new)
    return p, alpha, m_new, l_i * alpha + gl.sum(p, 1)


@gluon.jit
def attend_partition(q_lo, q_hi, q_pe, k_lo, k_hi, k_pe, ready, empty, num_blocks, out_ptr,
                     scale_log2, BLOCK_N: gl.constexpr, NUM_STAGES: gl.constexpr,
                     OVERLAP: gl.constexpr):  # fmt: skip
    """Consumers: the online softmax over the ring's blocks; writes O / l as fp32 rows.

    OVERLAP: block j's scores are issued before block j - 1's P V, and its softmax runs while
    that P V is still on the tensor cores (FlashAttention-3's intra-warpgroup pipelining);
    otherwise each block's wgmma finish before its softmax."""
    # Two warpgroups split S's columns and O's columns; the row statistics cross them.
    s_layout: gl.constexpr = gl.NVMMADistributedLayout(
        version=[3, 0], warps_per_cta=[4, 2], instr_shape=[16, 32, 16]
    )
    o_layout: gl.constexpr = gl.NVMMADistributedLayout(
        version=[3, 0], warps_per_cta=[4, 2], instr_shape=[16, 128, 16]
    )
    p_layout: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=o_layout, k_width=2)
    o_rows: gl.constexpr = gl.SliceLayout(1, o_layout)
    m_i = gl.full([BLOCK_M], float("-inf"), gl.float32, gl.SliceLayout(1, s_layout))
    l_i = gl.zeros([BLOCK_M], gl.float32, gl.SliceLayout(1, s_layout))
    o_lo = gl.zeros([BLOCK_M, HALF], gl.float32, o_layout)
    o_hi = gl.zeros([BLOCK_M, HALF], gl.float32, o_layout)
    if OVERLAP:
        mbarrier.wait(ready.index(0), 0)
        scores = issue_scores(q_lo, q_hi, q_pe, k_lo, k_hi, k_pe, 0, s_layout, BLOCK_N)
        scores = warpgroup_mma_wait(num_outstanding=0, deps=(scores,))
        p, alpha, m_i, l_i = online_softmax(scores, m_i, l_i, scale_log2)
        for j in range(1, num_blocks):
            stage = j % NUM_STAGES
            prev = (j - 1) % NUM_STAGES
            mbarrier.wait(ready.index(stage), (j // NUM_STAGES) & 1)
            scores = issue_scores(q_lo, q_hi, q_pe, k_lo, k_hi, k_pe, stage, s_layout, BLOCK_N)
            p_op = gl.convert_layout(p.to(gl.bfloat16), p_layout)
            o_lo = warpgroup_mma(p_op, k_lo.index(prev), o_lo, is_async=True)
            o_hi = warpgroup_mma(p_op, k_hi.index(prev), o_hi, is_async=True)
            # Groups retire in order: the three score groups first, the two P V groups run on.
            scores = warpgroup_mma_wait(num_outstanding=2, deps=(scores,))
            p, alpha, m_i, l_i = online_softmax(scores, m_i, l_i, scale_log2)
            # p_op in the deps: its registers are the in-flight wgmma's A operand.
            o_lo, o_hi, p_op = warpgroup_mma_wait(num_outstanding=0, deps=(o_lo, o_hi, p_op))
            mbarrier.arrive(empty.index(prev), count=1)
            alpha_o = gl.convert_layout(alpha, o_rows)[:, None]
            o_lo = o_lo * alpha_o
            o_hi = o_hi * alpha_o
        last = (num_blocks - 1) % NUM_STAGES
        p_op = gl.convert_layout(p.to(gl.bfloat16), p_layout)
        o_lo = warpgroup_mma(p_op, k_lo.index(last), o_lo, is_async=True)
        o_hi = warpgroup_mma(p_op, k_hi.index(last), o_hi, is_async=True)
        o_lo, o_hi, p_op = warpgroup_mma_wait(num_outstanding=0, deps=(o_lo, o_hi, p_op))
        mbarrier.arrive(empty.index(last), count=1)
    else:
        for j in range(num_blocks):
            stage = j % NUM_STAGES
            mbarrier.wait(ready.index(stage), (j // NUM_STAGES) & 1)
            scores = issue_scores(q_lo, q_hi, q_pe, k_lo, k_hi, k_pe, stage, s_layout, BLOCK_N)
            scores = warpgroup_mma_wait(num_outstanding=0, deps=(scores,))
            p, alpha, m_i, l_i = online_softmax(scores, m_i, l_i, scale_log2)
            alpha_o = gl.convert_layout(alpha, o_rows)[:, None]
            p_op = gl.convert_layout(p.to(gl.bfloat16), p_layout)
            o_lo = warpgroup_mma(p_op, k_lo.index(stage), o_lo * alpha_o, is_async=True)
            o_hi = warpgroup_mma(p_op, k_hi.index(stage), o_hi * alpha_o, is_async=True)
            o_lo, o_hi = warpgroup_mma_wait(num_outstanding=0, deps=(o_lo, o_hi))
            mbarrier.arrive(empty.index(stage), count=1)  # one elected thread of the partition
    inv_l = (1.0 / gl.convert_layout(l_i, o_rows))[:, None]
    rows = gl.arange(0, BLOCK_M, o_rows)
    cols = gl.arange(0, HALF, gl.SliceLayout(0, o_layout))
    offsets = rows[:, None] * LATENT + cols[None, :]
    gl.store(out_ptr + offsets, o_lo * inv_l)
    gl.store(out_ptr + offsets + HALF, o_hi * inv_l)


@gluon.jit
def mla_ws_kernel(q_desc, q_pe_desc, lat_desc, rope_desc, page_table_ptr, out_ptr, num_blocks,
                  scale_log2, BLOCK_N: gl.constexpr, NUM_STAGES: gl.constexpr,
                  PAGE_SIZE: gl.constexpr, OVERLAP: gl.constexpr):  # fmt: skip
    """Program p: the shared 64 query rows over request p's num_blocks * BLOCK_N keys, read
    through its row of the page table ([programs, num_blocks * BLOCK_N / PAGE_SIZE] int32)."""
    q_lo = gl.allocate_shared_memory(gl.bfloat16, [BLOCK_M, HALF], q_desc.layout)
    q_hi = gl.allocate_shared_memory(gl.bfloat16, [BLOCK_M, HALF], q_desc.layout)
    q_pe = gl.allocate_shared_memory(gl.bfloat16, [BLOCK_M, ROPE], q_pe_desc.layout)
    k_lo = gl.allocate_shared_memory(gl.bfloat16, [NUM_STAGES, BLOCK_N, HALF], lat_desc.layout)
    k_hi = gl.allocate_shared_memory(gl.bfloat16, [NUM_STAGES, BLOCK_N, HALF], lat_desc.layout)
    k_pe = gl.allocate_shared_memory(gl.bfloat16, [NUM_STAGES, BLOCK_N, ROPE], rope_desc.layout)
    ready = gl.allocate_shared_memory(gl.int64, [NUM_STAGES, 1], mbarrier.MBarrierLayout())
    empty = gl.allocate_shared_memory(gl.int64, [NUM_STAGES, 1], mbarrier.MBarrierLayout())
    q_ready = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    for i in gl.static_range(NUM_STAGES):
        mbarrier.init(ready.index(i), count=1)
        mbarrier.init(empty.index(i), count=1)
    mbarrier.init(q_ready, count=1)
    fence_async_shared()  # the initialised barriers, visible to the bulk copies
    mbarrier.expect(q_ready, 2 * q_desc.block_type.nbytes + q_pe_desc.block_type.nbytes)
    tma.async_copy_global_to_shared(q_desc, [0, 0], q_ready, q_lo)
    tma.async_copy_global_to_shared(q_desc, [0, HALF], q_ready, q_hi)
    tma.async_copy_global_to_shared(q_pe_desc, [0, LATENT], q_ready, q_pe)
    mbarrier.wait(q_ready, 0)
    program = gl.program_id(0)
    # The producer: one warp with few registers (it only issues copies). Arguments inline:
    # constexprs bound to a tuple first would reach the partitions as tensors.
    # fmt: off
    gl.warp_specialize(
        [
            (attend_partition, (q_lo, q_hi, q_pe, k_lo, k_hi, k_pe, ready, empty, num_blocks,
                                out_ptr + program * BLOCK_M * LATENT, scale_log2, BLOCK_N,
                                NUM_STAGES, OVERLAP)),
            (load_partition, (lat_desc, rope_desc, k_lo, k_hi, k_pe, ready, empty,
                              page_table_ptr + program * (num_blocks * BLOCK_N // PAGE_SIZE),
                              num_blocks, BLOCK_N, NUM_STAGES, PAGE_SIZE)),
        ],
        [1],
        [24],
    )
    # fmt: on


def descriptor(tensor: torch.Tensor, box: list[int]) -> TensorDescriptor:
    layout = gl.NVMMASharedLayout.get_default_for(box, gl.bfloat16)
    return TensorDescriptor(tensor, list(tensor.shape), list(tensor.stride()), box, layout)


def descriptors(q: torch.Tensor, kv: torch.Tensor, block_n: int) -> tuple:
    return (
        descriptor(q, [ROWS, HALF_W]),
        descriptor(q, [ROWS, ROPE_W]),
        descriptor(kv, [block_n, HALF_W]),
        descriptor(kv, [block_n, ROPE_W]),
    )


def compile_for_sm90(block_n: int, stages: int, overlap: bool) -> dict:
    """Compile without a GPU and report what the compiler made of the kernel."""
    from triton.experimental.gluon._runtime import GluonASTSource
    from triton.runtime.jit import mangle_type

    q = torch.empty(ROWS, WIDTH, dtype=torch.bfloat16)
    kv = torch.empty(4 * block_n, WIDTH, dtype=torch.bfloat16)
    names = ("q_desc", "q_pe_desc", "lat_desc", "rope_desc")
    signature = {n: mangle_type(d) for n, d in zip(names, descriptors(q, kv, block_n), strict=True)}
    signature.update(page_table_ptr="*i32", out_ptr="*fp32", num_blocks="i32", scale_log2="fp32")
    constants = {"BLOCK_N": block_n, "NUM_STAGES": stages, "PAGE_SIZE": PAGE, "OVERLAP": overlap}
    signature.update({name: "constexpr" for name in constants})
    source = GluonASTSource(mla_ws_kernel, signature, constants)
    kernel = triton.compile(source, target=GPUTarget("cuda", 90, 32), options={"num_warps": 8})
    from inspect_kernel import registers_and_stack  # this script's folder, tools/

    regs, stack = registers_and_stack(kernel)
    ptx = kernel.asm["ptx"]
    return {
        "block_n": block_n,
        "stages": stages,
        "overlap": overlap,
        "shared_kb": round(kernel.metadata.shared / 1024, 1),
        "registers": regs,
        "stack_bytes": stack,
        "wgmma": ptx.count("wgmma.mma_async"),
        "bulk_copies": ptx.count("cp.async.bulk.tensor"),
        "setmaxnreg": ptx.count("setmaxnreg"),
    }


def run_on_gpu(programs: int, num_blocks: int, block_n: int, stages: int) -> dict:
    """Check program 0 against torch, then time the probe beside splitkv's 64-row tile on the
    same work: 64 heads, one request per program, one split, the same shuffled page table
    (each program's 64 query rows over its own num_blocks x block_n keys)."""
    import splitkv
    from splitkv.timing import cuda_graph_times_us

    keys = num_blocks * block_n
    pages = programs * keys // PAGE
    gen = torch.Generator(device="cuda").manual_seed(0)
    q = torch.randn(ROWS, WIDTH, device="cuda", dtype=torch.bfloat16, generator=gen)
    pool = torch.randn(pages, PAGE, WIDTH, device="cuda", dtype=torch.bfloat16, generator=gen)
    table = torch.randperm(pages, device="cuda", generator=gen).to(torch.int32)
    table = table.view(programs, keys // PAGE)
    out = torch.empty(programs * ROWS, LAT, device="cuda", dtype=torch.float32)
    scale = WIDTH**-0.5
    descs = descriptors(q, pool.view(pages * PAGE, WIDTH), block_n)

    def probe(overlap: bool):
        mla_ws_kernel[(programs,)](*descs, table, out, num_blocks, scale * 1.4426950408889634,
                                   BLOCK_N=block_n, NUM_STAGES=stages, PAGE_SIZE=PAGE,
                                   OVERLAP=overlap, num_warps=8)  # fmt: skip

    keys_0 = pool[table[0].long()].reshape(keys, WIDTH).float()
    ref = torch.softmax(q.float() @ keys_0.T * scale, -1) @ keys_0[:, :LAT]
    errors = {}
    for overlap in (False, True):
        out.fill_(float("nan"))
        probe(overlap)
        torch.cuda.synchronize()
        errors[overlap] = ((out[:ROWS] - ref).norm() / ref.norm()).item()

    seq_lens = torch.full((programs,), keys, device="cuda", dtype=torch.int32)
    queries = q.view(1, 1, ROWS, WIDTH).expand(programs, 1, ROWS, -1).contiguous()
    plan = splitkv.plan_decode(programs, keys, ROWS, page_size=PAGE, num_splits=1,
                               device="cuda")  # fmt: skip
    their_out = queries.new_empty(programs, 1, ROWS, LAT)
    their_lse = torch.empty(programs, 1, ROWS, device="cuda")
    theirs = lambda: splitkv.mla_decode(queries, pool, table, seq_lens, plan=plan, scale=scale,
                                        out=their_out, lse=their_lse)  # fmt: skip
    theirs()
    torch.cuda.synchronize()
    their_error = ((their_out[0, 0].float() - ref).norm() / ref.norm()).item()
    flops = programs * ROWS * keys * 2 * (WIDTH + LAT)
    row = {"programs": programs, "keys_per_program": keys, "block_n": block_n, "stages": stages}
    runs = {
        "gluon_probe": (lambda: probe(False), errors[False]),
        "gluon_probe_overlap": (lambda: probe(True), errors[True]),
        "splitkv_64_row_tile": (theirs, their_error),
    }
    for name, (fn, error) in runs.items():
        _, p50, _ = cuda_graph_times_us(fn)
        row[name] = {"relative_error": error, "p50_us": round(p50, 1),
                     "tflops": round(flops / p50 / 1e6, 1)}  # fmt: skip
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--block-n", type=int, default=64)
    parser.add_argument("--stages", type=int, default=2)
    parser.add_argument("--run", action="store_true", help="on a GPU: check, then time")
    parser.add_argument("--programs", type=int, default=132)
    parser.add_argument("--blocks", type=int, default=256, help="key blocks per program")
    parser.add_argument("--json", action="store_true", help="(the report is always JSON)")
    args = parser.parse_args()
    if args.run:
        from checkout_src import SRC, behind_pythonpath

        sys.path.insert(behind_pythonpath(), SRC)
        print(json.dumps(run_on_gpu(args.programs, args.blocks, args.block_n, args.stages)))
    else:
        for overlap in (False, True):
            print(json.dumps(compile_for_sm90(args.block_n, args.stages, overlap)))


if __name__ == "__main__":
    main()
