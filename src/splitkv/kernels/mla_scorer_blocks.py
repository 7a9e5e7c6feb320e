"""The 64-row consumers of the warp-specialized MLA stage 1 on Hopper with one scoring
warpgroup (SCORER_WARPGROUP; opt-in, docs/perf.md session 21): three partitions of one
warpgroup each beside the producer.

Why: S = Q K^T on a 32-key block is m64n32k16, and with both operands in shared memory that
wgmma waits on its operands: 3 KB a step for 32K multiply-adds, ~70% of the rate of N >= 64 or
of Q from registers on the H200 (tools/wgmma_rate.py). The alternating pair
(kernels/mla_alternate_blocks.py) cannot hold Q in registers: each of its warpgroups keeps half
of O (128 registers a thread) and scores too. Here the work is split by kind instead:
- the scorer holds Q's latent columns in registers (128 a thread) for every block's
  S = Q K^T (wgmma with A from registers; the 64 rope columns stay in shared memory), runs the
  online softmax, and publishes each block's P and the rows' rescale factors through one of
  two shared buffers (p_ready), the rows' final maximum and sum once at the end;
- two accumulators each own half of O's columns: per block they wait for its P, rescale their
  half and add P V (both operands from shared memory: N = 256, where wgmma keeps its rate),
  then free the P buffer (p_free) and their hold on the key block.
The ring's `empty` barriers count all three (the scorer's release after its scores, each
accumulator's after its P V), so a block is refilled once all three are done with it; the two
P buffers let the scorer run one block ahead of the accumulators.
"""

from __future__ import annotations

from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import (
    fence_async_shared,
    mbarrier,
    tma,
    warpgroup_mma,
    warpgroup_mma_wait,
)

from splitkv.kernels.gluon_dependent_launch import wait_for_kernel_ahead
from splitkv.kernels.gluon_row_store import store_row_half
from splitkv.kernels.gluon_softmax import block_probabilities, row_key_bounds
from splitkv.kernels.shared_rows import early_key_blocks, load_query_block, wait_for_key_block

LATENT = gl.constexpr(512)
HALF = gl.constexpr(256)
BLOCK_M = gl.constexpr(64)  # query rows: one warpgroup's wgmma M
P_BUFFERS = gl.constexpr(2)  # the scorer runs up to this many blocks ahead of the accumulators


@gluon.jit
def allocate_score_buffers(dtype: gl.constexpr, BLOCK_N: gl.constexpr):
    """What the scorer hands the accumulators: P_BUFFERS blocks' P [64, BLOCK_N] (wgmma's A
    operand) with their rows' rescale factors, barriers for each (p_ready: the scorer's P is
    in; p_free: both accumulators are done with it), and the rows' final maximum and sum with
    their barrier."""
    p_buffer = gl.allocate_shared_memory(
        dtype,
        [P_BUFFERS, BLOCK_M, BLOCK_N],
        gl.NVMMASharedLayout.get_default_for([BLOCK_M, BLOCK_N], dtype),
    )
    plain: gl.constexpr = gl.SwizzledSharedLayout(vec=1, per_phase=1, max_phase=1, order=[0])
    rescale = gl.allocate_shared_memory(gl.float32, [P_BUFFERS, BLOCK_M], plain)
    row_stats = gl.allocate_shared_memory(gl.float32, [2, BLOCK_M], plain)
    p_ready = gl.allocate_shared_memory(gl.int64, [P_BUFFERS, 1], mbarrier.MBarrierLayout())
    p_free = gl.allocate_shared_memory(gl.int64, [P_BUFFERS, 1], mbarrier.MBarrierLayout())
    for b in gl.static_range(P_BUFFERS):
        mbarrier.init(p_ready.index(b), count=1)
        mbarrier.init(p_free.index(b), count=2)
    stats_ready = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    mbarrier.init(stats_ready, count=1)
    return p_buffer, rescale, row_stats, p_ready, p_free, stats_ready


@gluon.jit
def score_key_blocks(lat_desc, rope_desc, q_lat_desc, q_rope_desc, queries, ring, scores_out,
                     table_row, max_pages, num_blocks, lo_key, hi_key, seq_len, last_key,
                     query_row, head_block, scale_log2, NUM_HEADS: gl.constexpr,
                     BLOCK_N: gl.constexpr, NUM_STAGES: gl.constexpr,
                     PAGE_SIZE: gl.constexpr, QUERY_TMA: gl.constexpr,
                     EARLY_START: gl.constexpr, EARLY_BLOCKS: gl.constexpr):  # fmt: skip
    """The scorer partition (one warpgroup), which is also the ring's producer (a fourth
    warpgroup for copies would leave ptxas 128 registers a thread, too few for an
    accumulator's m64n256 wgmma): it keeps LOOKAHEAD blocks' copies in flight, their page ids
    loaded an iteration before they are needed; per block, S with Q's rope and low latent
    columns from registers (the high half from shared memory: all of Q in registers does not
    fit beside the softmax in 168), the masked online softmax (`attend_key_blocks`' bounds),
    P and the rows' rescale into a P buffer for the accumulators; at the end the rows' base-2
    maximum and sum. EARLY_START as `load_split`."""
    gl.static_assert(gl.num_warps() == 4, "one warpgroup a partition")
    LOOKAHEAD: gl.constexpr = NUM_STAGES - P_BUFFERS
    q_lo, q_hi, q_pe, queries_in, queries_free = queries
    k_lo, k_hi, k_pe, ready, empty = ring
    p_buffer, rescale, row_stats, p_ready, p_free, stats_ready = scores_out
    s_layout: gl.constexpr = gl.NVMMADistributedLayout(
        version=[3, 0], warps_per_cta=[4, 1], instr_shape=[16, BLOCK_N, 16]
    )
    q_layout: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=s_layout, k_width=2)
    s_rows: gl.constexpr = gl.SliceLayout(1, s_layout)
    # The first LOOKAHEAD blocks (EARLY_START: those of old keys before the wait for the
    # kernel ahead, which may be writing q and the new keys), then the queries.
    early = 0
    if EARLY_START:
        gl.static_assert(EARLY_BLOCKS <= LOOKAHEAD, "early blocks within the lookahead")
        early = early_key_blocks(lo_key, num_blocks, last_key, BLOCK_N, NUM_STAGES,
                                 EARLY_BLOCKS)  # fmt: skip
        for j in range(early):
            issue_block_copies(lat_desc, rope_desc, ring, block_pages(table_row, max_pages,
                               lo_key + j * BLOCK_N, BLOCK_N, PAGE_SIZE), j, lo_key + j * BLOCK_N,
                               BLOCK_N, NUM_STAGES, PAGE_SIZE)  # fmt: skip
        wait_for_kernel_ahead()
    if QUERY_TMA:
        load_query_block(q_lat_desc, q_rope_desc, q_lo, q_hi, q_pe, queries_in, queries_free,
                         query_row, 0)  # fmt: skip
    for j in range(early, gl.minimum(num_blocks, LOOKAHEAD)):
        issue_block_copies(lat_desc, rope_desc, ring, block_pages(table_row, max_pages,
                           lo_key + j * BLOCK_N, BLOCK_N, PAGE_SIZE), j, lo_key + j * BLOCK_N,
                           BLOCK_N, NUM_STAGES, PAGE_SIZE)  # fmt: skip
    pages = block_pages(table_row, max_pages, lo_key + LOOKAHEAD * BLOCK_N, BLOCK_N, PAGE_SIZE)

    _, row_limit, unmasked_end, cols = row_key_bounds(head_block, hi_key, last_key, NUM_HEADS,
                                                         BLOCK_M, BLOCK_N, s_layout)  # fmt: skip
    m_i = gl.full([BLOCK_M], float("-inf"), gl.float32, s_rows)
    l_i = gl.zeros([BLOCK_M], gl.float32, s_rows)
    if QUERY_TMA:
        mbarrier.wait(queries_in, 0)
    q_lo_regs = q_lo.load(q_layout)
    q_pe_regs = q_pe.load(q_layout)
    for j in range(num_blocks):
        block_key = lo_key + j * BLOCK_N
        stage = wait_for_key_block(k_lo, k_hi, ready, j, block_key, seq_len, BLOCK_N,
                                   NUM_STAGES)  # fmt: skip
        scores = gl.zeros([BLOCK_M, BLOCK_N], gl.float32, s_layout)
        scores = warpgroup_mma(q_lo_regs, k_lo.index(stage).permute((1, 0)), scores,
                               is_async=True)  # fmt: skip
        scores = warpgroup_mma(q_pe_regs, k_pe.index(stage).permute((1, 0)), scores,
                               is_async=True)  # fmt: skip
        scores = warpgroup_mma(q_hi, k_hi.index(stage).permute((1, 0)), scores, is_async=True)
        scores = warpgroup_mma_wait(num_outstanding=0, deps=(scores,))
        mbarrier.arrive(empty.index(stage), count=1)  # the accumulators still read its values
        p, m_new, m_safe = block_probabilities(scores, m_i, block_key, cols, lo_key, row_limit,
                                               unmasked_end, scale_log2, BLOCK_N)  # fmt: skip
        alpha = gl.exp2(m_i - m_safe)
        l_i = l_i * alpha + gl.sum(p, 1)
        m_i = m_new
        buffer = j % P_BUFFERS
        # The accumulators' P V of block j - P_BUFFERS read this buffer: wait until both did.
        mbarrier.wait(p_free.index(buffer), ((j // P_BUFFERS) & 1) ^ 1, pred=j >= P_BUFFERS)
        p_buffer.index(buffer).store(p.to(q_lo.dtype))
        rescale.index(buffer).store(alpha)
        fence_async_shared()  # P, visible to the accumulators' wgmma (the async proxy)
        gl.thread_barrier()  # every thread's stores before the one arrival
        mbarrier.arrive(p_ready.index(buffer), count=1)
        # Block j + LOOKAHEAD into the stage block j - P_BUFFERS had: its accumulators were
        # done with it by the wait above (they release it right after P's buffer).
        ahead = j + LOOKAHEAD
        if ahead < num_blocks:
            issue_block_copies(lat_desc, rope_desc, ring, pages, ahead, lo_key + ahead * BLOCK_N,
                               BLOCK_N, NUM_STAGES, PAGE_SIZE)  # fmt: skip
            pages = block_pages(table_row, max_pages, lo_key + (ahead + 1) * BLOCK_N, BLOCK_N,
                                PAGE_SIZE)  # fmt: skip
    row_stats.index(0).store(m_i)
    row_stats.index(1).store(l_i)
    gl.thread_barrier()
    mbarrier.arrive(stats_ready, count=1)


@gluon.jit
def block_pages(table_row, max_pages, first_key, BLOCK_N: gl.constexpr,
                PAGE_SIZE: gl.constexpr):  # fmt: skip
    """The page ids of the key block from first_key: one per copy (a block spans BLOCK_N //
    SUB pages of SUB rows when pages are shorter than blocks), an index past the table row
    clamped to its last entry (`load_key_blocks`)."""
    SUB: gl.constexpr = PAGE_SIZE if PAGE_SIZE < BLOCK_N else BLOCK_N
    COPIES: gl.constexpr = BLOCK_N // SUB
    copy = gl.arange(0, COPIES, gl.BlockedLayout([1], [32], [gl.num_warps()], [0]))
    keys = first_key + copy * SUB
    return gl.load(table_row + gl.minimum(keys // PAGE_SIZE, max_pages - 1))


@gluon.jit
def issue_block_copies(lat_desc, rope_desc, ring, pages, block, first_key, BLOCK_N: gl.constexpr,
                       NUM_STAGES: gl.constexpr, PAGE_SIZE: gl.constexpr):  # fmt: skip
    """The ring's block number `block` (keys from first_key, on `pages`) into its stage once
    every reader released it."""
    k_lo, k_hi, k_pe, ready, empty = ring
    SUB: gl.constexpr = PAGE_SIZE if PAGE_SIZE < BLOCK_N else BLOCK_N
    COPIES: gl.constexpr = BLOCK_N // SUB
    BLOCK_BYTES: gl.constexpr = COPIES * (
        2 * lat_desc.block_type.nbytes + rope_desc.block_type.nbytes
    )
    stage = block % NUM_STAGES
    copy = gl.arange(0, COPIES, pages.type.layout)
    mbarrier.wait(empty.index(stage), ((block // NUM_STAGES) & 1) ^ 1, pred=block >= NUM_STAGES)
    mbarrier.expect(ready.index(stage), BLOCK_BYTES)
    for c in gl.static_range(COPIES):
        page = gl.sum(gl.where(copy == c, pages, 0), 0)
        row = page * PAGE_SIZE + (first_key + c * SUB) % PAGE_SIZE
        bar = ready.index(stage)
        tma.async_copy_global_to_shared(lat_desc, [row, 0], bar,
                                        k_lo.index(stage).slice(c * SUB, SUB))  # fmt: skip
        tma.async_copy_global_to_shared(lat_desc, [row, HALF], bar,
                                        k_hi.index(stage).slice(c * SUB, SUB))  # fmt: skip
        tma.async_copy_global_to_shared(rope_desc, [row, LATENT], bar,
                                        k_pe.index(stage).slice(c * SUB, SUB))  # fmt: skip


@gluon.jit
def accumulate_half(k_lo, k_hi, empty, scores_out, ring_start, num_blocks, head_block,
                    slot_base, split, num_splits, rows_total, partial_o_ptr, partial_lse_ptr,
                    NUM_HEADS: gl.constexpr, NUM_STAGES: gl.constexpr, H: gl.constexpr,
                    final=None, whole=False):  # fmt: skip
    """Accumulator H (0 or 1) of O's columns [H * 256, H * 256 + 256): per block, O = O *
    rescale + P V with P and V from shared memory, then that half of the partial (H = 0 also
    the lse) or, where `whole`, of the request's output (`gluon_row_store.store_row_half`)."""
    gl.static_assert(gl.num_warps() == 4, "one warpgroup a partition")
    p_buffer, rescale, row_stats, p_ready, p_free, stats_ready = scores_out
    o_layout: gl.constexpr = gl.NVMMADistributedLayout(
        version=[3, 0], warps_per_cta=[4, 1], instr_shape=[16, HALF, 16]
    )
    o_rows: gl.constexpr = gl.SliceLayout(1, o_layout)
    v_half = k_lo if H == 0 else k_hi
    o = gl.zeros([BLOCK_M, HALF], gl.float32, o_layout)
    for j in range(num_blocks):
        buffer = j % P_BUFFERS
        stage = (ring_start + j) % NUM_STAGES
        # The scorer published P after the block's copies landed (and its tail rows zeroed).
        mbarrier.wait(p_ready.index(buffer), (j // P_BUFFERS) & 1)
        alpha = rescale.index(buffer).load(o_rows)
        o = warpgroup_mma(p_buffer.index(buffer), v_half.index(stage), o * alpha[:, None],
                          is_async=True)  # fmt: skip
        o = warpgroup_mma_wait(num_outstanding=0, deps=(o,))
        mbarrier.arrive(p_free.index(buffer), count=1)
        mbarrier.arrive(empty.index(stage), count=1)

    mbarrier.wait(stats_ready, 0)
    m_i = row_stats.index(0).load(o_rows)
    l_i = row_stats.index(1).load(o_rows)
    rows = gl.arange(0, BLOCK_M, o_rows)
    request_rows = head_block * BLOCK_M + rows
    has_keys = l_i > 0.0
    slots = (slot_base + rows.to(gl.int64)) * num_splits + split
    lse = gl.where(has_keys, m_i + gl.log2(gl.where(has_keys, l_i, 1.0)), float("-inf"))
    inv_l = gl.where(has_keys, 1.0 / gl.where(has_keys, l_i, 1.0), 0.0)
    store_row_half(o * inv_l[:, None], H * HALF, lse, request_rows, rows_total, num_blocks,
                   slots, partial_o_ptr, partial_lse_ptr, NUM_HEADS, H == 0, final,
                   whole)  # fmt: skip
