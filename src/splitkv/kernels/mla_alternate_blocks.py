"""The 64-row consumers of the warp-specialized MLA stage 1 on Hopper, taking turns: two
warpgroups, each in its own partition, that score alternate key blocks (the plan's
`alternate_blocks`, by default from two head blocks a request; docs/perf.md v0.2.19-v0.2.19b).

The other 64-row consumer (`attend_key_blocks`, kernels/mla_warp_specialized.py) splits the
columns of S = Q K^T and of O += P V between its two warpgroups. A row's maximum and sum then
span both, and P must reach both as wgmma operands: three exchanges through shared memory a
block, with both warpgroups waiting in each, while the tensor cores idle. Here:
- warpgroup w scores the blocks j = w, w + 2, ... alone (S [64, 32] over the full 576 columns:
  the row reductions stay inside a warp), and still owns half of O's columns, as before;
- its softmax of block j starts from the running maximum after block j - 1, which the other
  warpgroup publishes with its P (through `p_buffer`, `row_max` and `row_sum`, signalled on
  p_ready[other]); it then publishes its own and adds P_j V_j to its half from registers,
  while the other adds P_j V_j to its half from shared memory;
so one warpgroup's softmax runs while the other's matrix multiplies keep the tensor cores busy
(FlashAttention-3's two consumer groups taking turns; FlashMLA calls its variant "seesaw").
Both see every block's maximum and sum in the same order, so their rescales and sums agree.
The ring holds 4 blocks of 32 keys (two in work, one a warpgroup, two being copied).

Why one P buffer is enough: the warpgroup that writes P_{j+1} is the one that reads P_j, and it
writes only after its P_j V_j is done; the same holds for the statistics. Across a program
loop's pieces nothing orders them, so the two meet between pieces (`wait_for_each_other`).
A buffer per warpgroup was measured twice and lost both times (H200, docs/perf.md): alone
(v0.2.22b, 2-5% slower) and to publish P before adding the other's block (v0.2.22d, 2-4%
slower: the wait for the other to have read a buffer lands in the softmax chain it was to
shorten).
"""

from __future__ import annotations

from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import (
    fence_async_shared,
    mbarrier,
    warpgroup_mma,
    warpgroup_mma_init,
    warpgroup_mma_wait,
)

from splitkv.kernels.gluon_row_store import store_row_half
from splitkv.kernels.gluon_softmax import block_probabilities, row_key_bounds
from splitkv.kernels.shared_rows import wait_for_key_block

HALF = gl.constexpr(256)
BLOCK_M = gl.constexpr(64)  # query rows: one warpgroup's wgmma M


@gluon.jit
def allocate_turn_buffers(dtype: gl.constexpr, BLOCK_N: gl.constexpr):
    """What the two warpgroups exchange: one block's P [64, BLOCK_N] (wgmma's A operand from
    shared memory), its rows' running maximum and sum, a barrier per warpgroup that says its
    latest P and statistics are in, and one both arrive at between a program loop's pieces
    (`wait_for_each_other`)."""
    p_buffer = gl.allocate_shared_memory(
        dtype, [BLOCK_M, BLOCK_N], gl.NVMMASharedLayout.get_default_for([BLOCK_M, BLOCK_N], dtype)
    )
    plain: gl.constexpr = gl.SwizzledSharedLayout(vec=1, per_phase=1, max_phase=1, order=[0])
    row_max = gl.allocate_shared_memory(gl.float32, [BLOCK_M], plain)
    row_sum = gl.allocate_shared_memory(gl.float32, [BLOCK_M], plain)
    p_ready = gl.allocate_shared_memory(gl.int64, [2, 1], mbarrier.MBarrierLayout())
    for w in gl.static_range(2):
        mbarrier.init(p_ready.index(w), count=1)
    both_done = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    mbarrier.init(both_done, count=2)
    return p_buffer, row_max, row_sum, p_ready, both_done


@gluon.jit
def wait_for_each_other(turns, meetings):
    """Both warpgroups here before either goes on (`meetings`: the times they met before): a
    program loop's next piece may overwrite P and the statistics only once the other read the
    last ones, which nothing else orders across pieces."""
    both_done = turns[4]
    mbarrier.arrive(both_done, count=1)
    mbarrier.wait(both_done, meetings & 1)


@gluon.jit
def add_other_block(o, m_mine, l_i, v_half, turns, other_turn, OTHER: gl.constexpr,
                    rows_layout: gl.constexpr, OUTSTANDING: gl.constexpr):  # fmt: skip
    """The other warpgroup's block (its `other_turn`-th): wait for its P and statistics, bring
    O and the sum to its maximum, and issue P V on this warpgroup's half of the columns (async:
    the caller waits). OUTSTANDING: the wgmma groups issued since this half's last P V (the
    next block's scores), which may keep running. Returns (o, m, l)."""
    p_buffer, row_max, row_sum, p_ready, _ = turns
    mbarrier.wait(p_ready.index(OTHER), other_turn & 1)
    m_other = row_max.load(rows_layout)
    s_other = row_sum.load(rows_layout)
    o = warpgroup_mma_wait(num_outstanding=OUTSTANDING, deps=(o,))  # this half's last P V
    m_safe = gl.where(m_other == float("-inf"), 0.0, m_other)  # as the other's exp2 used it
    alpha = gl.exp2(m_mine - m_safe)
    l_i = l_i * alpha + s_other
    o_rows: gl.constexpr = gl.SliceLayout(1, o.type.layout)
    o = warpgroup_mma(p_buffer, v_half, o * gl.convert_layout(alpha, o_rows)[:, None],
                      is_async=True)  # fmt: skip
    return o, m_other, l_i


@gluon.jit
def attend_alternate_blocks(q_lo, q_hi, q_pe, k_lo, k_hi, k_pe, ready, empty, turns, ring_start,
                            num_blocks, first_key, lo_key, hi_key, seq_len, last_key, head_block,
                            slot_base, split, num_splits, rows_total, partial_o_ptr,
                            partial_lse_ptr, scale_log2, queries_in, queries_free, other_turns,
                            NUM_HEADS: gl.constexpr, BLOCK_N: gl.constexpr,
                            NUM_STAGES: gl.constexpr, WAIT_FOR_QUERIES: gl.constexpr,
                            RELEASE_QUERIES: gl.constexpr, W: gl.constexpr, final=None,
                            whole=False):  # fmt: skip
    """Warpgroup W (0 or 1) of the pair, on the ring's next num_blocks blocks (from
    ring_start; `attend_key_blocks`' contract otherwise): the blocks W, W + 2, ... scored here,
    every block's P V on O's columns [W * 256, W * 256 + 256) (k_lo's or k_hi's), then that
    half of the partial (and, for W = 0, the lse). The ring's `empty` barriers and
    `queries_free` count both warpgroups (one arrival each). other_turns: the blocks the other
    warpgroup published before these (earlier pieces of a program loop), for its barrier's
    phase. final, whole: where `whole`, the half goes to the request's output (and, for W = 0,
    the lse) at `final` instead (`gluon_row_store.store_row_half`)."""
    gl.static_assert(gl.num_warps() == 4, "one warpgroup a partition")
    OTHER: gl.constexpr = 1 - W
    p_buffer, row_max, row_sum, p_ready, _ = turns
    s_layout: gl.constexpr = gl.NVMMADistributedLayout(
        version=[3, 0], warps_per_cta=[4, 1], instr_shape=[16, BLOCK_N, 16]
    )
    o_layout: gl.constexpr = gl.NVMMADistributedLayout(
        version=[3, 0], warps_per_cta=[4, 1], instr_shape=[16, HALF, 16]
    )
    p_layout: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=o_layout, k_width=2)
    s_rows: gl.constexpr = gl.SliceLayout(1, s_layout)
    o_rows: gl.constexpr = gl.SliceLayout(1, o_layout)
    rows, row_limit, unmasked_end, cols = row_key_bounds(head_block, hi_key, last_key, NUM_HEADS,
                                                         BLOCK_M, BLOCK_N, s_layout)  # fmt: skip
    m_i = gl.full([BLOCK_M], float("-inf"), gl.float32, s_rows)
    l_i = gl.zeros([BLOCK_M], gl.float32, s_rows)
    # O as an async accumulator: the other's P V runs on while this block's softmax does.
    o = warpgroup_mma_init(gl.zeros([BLOCK_M, HALF], gl.float32, o_layout))
    v_mine = k_lo if W == 0 else k_hi
    if WAIT_FOR_QUERIES:
        mbarrier.wait(queries_in, 0)
    for t in range((num_blocks - W + 1) // 2):
        j = 2 * t + W
        block_key = first_key + j * BLOCK_N
        # Block j's scores first, so they run while this warpgroup waits for the other's P.
        stage = wait_for_key_block(k_lo, k_hi, ready, ring_start + j, block_key, seq_len,
                                   BLOCK_N, NUM_STAGES)  # fmt: skip
        s_acc = gl.zeros([BLOCK_M, BLOCK_N], gl.float32, s_layout)
        s_acc = warpgroup_mma(q_lo, k_lo.index(stage).permute((1, 0)), s_acc, is_async=True)
        s_acc = warpgroup_mma(q_hi, k_hi.index(stage).permute((1, 0)), s_acc, is_async=True)
        s_acc = warpgroup_mma(q_pe, k_pe.index(stage).permute((1, 0)), s_acc, is_async=True)
        if j >= 1:  # the other's block j - 1: its maximum is where block j's softmax starts
            other_stage = (ring_start + j - 1) % NUM_STAGES
            o, m_i, l_i = add_other_block(o, m_i, l_i, v_mine.index(other_stage), turns,
                                          other_turns + (j - 1 - OTHER) // 2, OTHER, s_rows,
                                          1)  # fmt: skip
            scores = warpgroup_mma_wait(num_outstanding=1, deps=(s_acc,))  # P V may run on
        else:
            scores = warpgroup_mma_wait(num_outstanding=0, deps=(s_acc,))
        p, m_new, m_safe = block_probabilities(scores, m_i, block_key, cols, lo_key, row_limit,
                                               unmasked_end, scale_log2, BLOCK_N)  # fmt: skip
        p_sum = gl.sum(p, 1)
        p_low = p.to(q_lo.dtype)
        o = warpgroup_mma_wait(num_outstanding=0, deps=(o,))  # the buffer's P is read
        if j >= 1:
            mbarrier.arrive(empty.index((ring_start + j - 1) % NUM_STAGES), count=1)
        # Publish P and the statistics for the other warpgroup (its P V of this block, and
        # its next block's softmax), every thread's stores visible before the one arrival.
        p_buffer.store(p_low)
        row_max.store(m_new)
        row_sum.store(p_sum)
        fence_async_shared()
        gl.thread_barrier()
        mbarrier.arrive(p_ready.index(W), count=1)
        alpha = gl.exp2(m_i - m_safe)
        l_i = l_i * alpha + p_sum
        m_i = m_new
        o = warpgroup_mma(gl.convert_layout(p_low, p_layout), v_mine.index(stage),
                          o * gl.convert_layout(alpha, o_rows)[:, None],
                          is_async=True)  # fmt: skip
        # Waited here, not across the loop's back edge: an accumulator still in flight there
        # made ptxas serialize every wgmma of the loop (C7512, "insufficient register
        # resources"; 1.2-1.6x slower on the H200, docs/perf.md v0.2.19).
        o = warpgroup_mma_init(warpgroup_mma_wait(num_outstanding=0, deps=(o,)))
        mbarrier.arrive(empty.index(stage), count=1)
    if RELEASE_QUERIES:  # this warpgroup's scores are done: the next piece's queries may come
        mbarrier.arrive(queries_free, count=1)
    last = num_blocks - 1
    last_stage = (ring_start + last) % NUM_STAGES
    trailing = (last >= 0) & (last % 2 == OTHER)  # the other's last block, after this one's last
    if trailing:
        last_turn = other_turns + (last - OTHER) // 2
        o, m_i, l_i = add_other_block(o, m_i, l_i, v_mine.index(last_stage), turns, last_turn,
                                      OTHER, s_rows, 0)  # fmt: skip
    o = warpgroup_mma_wait(num_outstanding=0, deps=(o,))
    if trailing:
        mbarrier.arrive(empty.index(last_stage), count=1)

    # This half of the partial (or of the request's output): rows that saw no key get out 0
    # and lse -inf (the merge weighs them 0).
    request_rows = head_block * BLOCK_M + rows
    has_keys = l_i > 0.0
    slots = (slot_base + rows.to(gl.int64)) * num_splits + split
    lse = gl.where(has_keys, m_i + gl.log2(gl.where(has_keys, l_i, 1.0)), float("-inf"))
    inv_l = gl.convert_layout(gl.where(has_keys, 1.0 / gl.where(has_keys, l_i, 1.0), 0.0), o_rows)
    store_row_half(o * inv_l[:, None], W * HALF, lse, request_rows, rows_total, num_blocks,
                   slots, partial_o_ptr, partial_lse_ptr, NUM_HEADS, W == 0, final,
                   whole)  # fmt: skip
