"""Stage 1 of MLA decode on the balanced schedule (kernels/balanced.py) on Hopper: the
warp-specialized kernel of `mla_warp_specialized.py` (either consumer) as a program loop. One
program per (schedule program, head block) streams the program's share of the batch, however
many requests it crosses. The shares are cut in units of key blocks, each request counting
PIECE_COST units beside its blocks for what a piece costs on its own (`balanced.request_units`,
as the Triton program loop cuts them), so a program meeting many short requests streams fewer
blocks (docs/perf.md v0.2.8e):
- the producer warp walks the share's pieces request by request, bringing their key blocks
  through each request's page-table row into the one ring, so a request boundary costs no
  drain: the next piece's first blocks are in flight while the consumers finish the last one;
- the consumer warpgroups take each piece in turn: its request's query rows in shared memory,
  the online softmax over its blocks, its partial at slot (program + request) of each row, as
  `mla_balanced_kernel` writes them (so the merge is the same). Where q's rows can be described
  for bulk copies (QUERY_TMA), the producer brings them too, as soon as the consumers' last
  score wgmma of the previous piece has read the old ones: a piece then starts without a
  round trip to memory on the consumers' side (measured ~4 us a piece under load, with the
  consumers loading them; tools/program_times.py, docs/perf.md v0.2.8).
Both partitions derive the pieces from seq_lens alone, on the device, so a CUDA graph replays
the schedule for new lengths.
"""

from __future__ import annotations

from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import fence_async_shared, mbarrier

from splitkv.kernels.balanced import piece_blocks, record_piece_range, request_units
from splitkv.kernels.gathered_keys import (
    COPY_PRODUCER_REGS,
    GATHER_ARRIVALS,
    GATHER_PRODUCER_REGS,
    GATHER_WARPS,
    key_source,
)
from splitkv.kernels.gluon_dependent_launch import release_dependents, wait_for_kernel_ahead
from splitkv.kernels.mla_alternate_blocks import (
    allocate_turn_buffers,
    attend_alternate_blocks,
    wait_for_each_other,
)
from splitkv.kernels.mla_warp_specialized import (
    LATENT,
    allocate_buffers,
    attend_any_rows,
    early_key_blocks,
    load_key_blocks,
    load_query_block,
    store_query_rows,
)
from splitkv.kernels.split_range import clamped_seq_len

# TIME_PROGRAMS: a program's row of int64 ns: its start, its end, then (piece start, queries
# in shared memory, piece end) for its first PIECE_TIMES - 1 pieces (later ones in the last).
PIECE_TIMES = gl.constexpr(5)
PROGRAM_TIMES = gl.constexpr(2 + 3 * PIECE_TIMES.value)


@gluon.jit
def add(a, b):
    return a + b


@gluon.jit
def mark_empty_slots(partial_o_ptr, partial_lse_ptr, first_row, ROWS: gl.constexpr, num_slots,
                     slot, BLOCK_Q: gl.constexpr):  # fmt: skip
    """An empty program's slot in a request's range: lse -inf and output 0 for its head
    block's rows, as `kernels/balanced.mark_empty` (the merge folds it without a select)."""
    row_layout: gl.constexpr = gl.BlockedLayout([1], [32], [gl.num_warps()], [0])
    rows = first_row + gl.arange(0, BLOCK_Q, row_layout)
    slots = rows.to(gl.int64) * num_slots + slot
    gl.store(partial_lse_ptr + slots, gl.full([BLOCK_Q], float("-inf"), gl.float32, row_layout),
             mask=rows < ROWS)  # fmt: skip
    o_layout: gl.constexpr = gl.BlockedLayout([1, 4], [1, 32], [gl.num_warps(), 1], [1, 0])
    o_rows = first_row + gl.arange(0, BLOCK_Q, gl.SliceLayout(1, o_layout))
    d = gl.arange(0, LATENT, gl.SliceLayout(0, o_layout))
    zeros = gl.zeros([BLOCK_Q, LATENT], partial_o_ptr.dtype.element_ty, o_layout)
    o_slots = o_rows.to(gl.int64) * num_slots + slot
    gl.store(partial_o_ptr + o_slots[:, None] * LATENT + d[None, :], zeros,
             mask=(o_rows < ROWS)[:, None])  # fmt: skip


@gluon.jit
def program_share(seq_lens_ptr, batch, max_seq_len, program, num_programs, BLOCK_B: gl.constexpr,
                  BLOCK_N: gl.constexpr, PIECE_COST: gl.constexpr,
                  num_warps: gl.constexpr):  # fmt: skip
    """The schedule program's units [lo, hi) of the batch's (`request_units`, laid end to end),
    the requests it meets (first to last; last < first when it has none), the first unit and
    the length of request `first`, and the request whose slot an empty program must mark
    (`batch` for none). With PIECE_COST 0 the units are `program_requests`'s key blocks."""
    layout: gl.constexpr = gl.BlockedLayout([1], [32], [num_warps], [0])
    b = gl.arange(0, BLOCK_B, layout)
    in_batch = b < batch
    lens = gl.minimum(gl.maximum(gl.load(seq_lens_ptr + b, mask=in_batch, other=0), 0),
                      max_seq_len)  # fmt: skip
    units = request_units(gl.cdiv(lens, BLOCK_N), PIECE_COST)
    cu_end = gl.associative_scan(units, 0, add)
    total = gl.maximum(gl.sum(units, 0), 1).to(gl.int64)  # an empty batch: no request's slots
    lo = (program.to(gl.int64) * total // num_programs).to(gl.int32)
    hi = ((program.to(gl.int64) + 1) * total // num_programs).to(gl.int32)
    first = gl.sum((in_batch & (cu_end <= lo)).to(gl.int32), 0)
    last = gl.sum((in_batch & (cu_end <= hi - 1)).to(gl.int32), 0)
    first_start = gl.sum(gl.where(b == first, cu_end - units, 0), 0)
    # An empty program inside a request's blocks lies inside that request's program range:
    # the merge reads its slot, which must say "no keys". (Inside its first PIECE_COST units it
    # lies before the program holding the first block: outside the range.)
    spanned = gl.where((lo == hi) & (first < batch) & (first_start + PIECE_COST < lo), first,
                       batch)  # fmt: skip
    first_len = gl.sum(gl.where(b == first, lens, 0), 0)
    return lo, hi, first, last, first_start, first_len, spanned


@gluon.jit
def request_length(seq_lens_ptr, request, batch, max_seq_len):
    """seq_lens[request] clamped into [0, max_seq_len]; 0 for request == batch (past the last,
    where an empty batch's loop ends) without reading past the array."""
    seq_len = clamped_seq_len(seq_lens_ptr, gl.minimum(request, batch - 1), max_seq_len)
    return gl.where(request < batch, seq_len, 0)


@gluon.jit
def load_pieces(source, q_lat_desc, q_rope_desc, queries, ring, page_table_ptr,
                stride_table_batch, seq_lens_ptr, batch, max_pages, head_block, share,
                ROWS: gl.constexpr, BLOCK_Q: gl.constexpr, BLOCK_N: gl.constexpr,
                NUM_STAGES: gl.constexpr, PAGE_SIZE: gl.constexpr, PIECE_COST: gl.constexpr,
                QUERY_TMA: gl.constexpr, QLEN: gl.constexpr, EARLY_START: gl.constexpr,
                EARLY_BLOCKS: gl.constexpr):  # fmt: skip
    """Producer: every piece's key blocks into the ring, one after the other, and with
    QUERY_TMA its query rows once the consumers freed the previous ones. EARLY_START: the
    first piece's first old blocks before the wait for the kernel ahead
    (`early_key_blocks`)."""
    q_lo, q_hi, q_pe, queries_in, queries_free = queries
    k_lo, k_hi, k_pe, ready, empty = ring
    lo_p, hi_p, first, last, first_start, first_len = share
    max_seq_len = max_pages * PAGE_SIZE
    early = 0
    if EARLY_START:
        lo, hi = piece_blocks(lo_p, hi_p, first_start, gl.cdiv(first_len, BLOCK_N), PIECE_COST)
        early = early_key_blocks(lo * BLOCK_N, gl.maximum(hi - lo, 0), first_len - QLEN,
                                 BLOCK_N, NUM_STAGES, EARLY_BLOCKS)  # fmt: skip
        early = gl.where(first <= last, early, 0)  # a program with no request reads nothing
        table_row = page_table_ptr + first.to(gl.int64) * stride_table_batch
        load_key_blocks(source, k_lo, k_hi, k_pe, ready, empty, table_row,
                        max_pages, lo * BLOCK_N, early, 0, BLOCK_N, NUM_STAGES,
                        PAGE_SIZE)  # fmt: skip
        wait_for_kernel_ahead()
    start = first_start
    blocks_done = 0
    pieces = 0
    next_len = first_len
    for request in range(first, last + 1):
        seq_len = next_len
        # The next request's length now: its load overlaps this piece's copies.
        next_len = request_length(seq_lens_ptr, request + 1, batch, max_seq_len)
        lo, hi = piece_blocks(lo_p, hi_p, start, gl.cdiv(seq_len, BLOCK_N), PIECE_COST)
        blocks = gl.maximum(hi - lo, 0)
        if QUERY_TMA:  # noqa: SIM102 (a compile-time branch around a run-time one)
            if blocks > 0:
                # The queries' buffer frees with the previous piece's last scores, so this copy
                # runs while the consumers finish that piece. (The piece's first key block
                # issued before it measured no faster: v0.2.8c in docs/perf.md.)
                load_query_block(q_lat_desc, q_rope_desc, q_lo, q_hi, q_pe, queries_in,
                                 queries_free, request * ROWS + head_block * BLOCK_Q,
                                 pieces)  # fmt: skip
                pieces += 1
        table_row = page_table_ptr + request.to(gl.int64) * stride_table_batch
        skip = gl.where(request == first, early, 0)  # brought before the wait
        load_key_blocks(source, k_lo, k_hi, k_pe, ready, empty, table_row,
                        max_pages, (lo + skip) * BLOCK_N, blocks - skip, blocks_done + skip,
                        BLOCK_N, NUM_STAGES, PAGE_SIZE)  # fmt: skip
        blocks_done += blocks
        start += request_units(gl.cdiv(seq_len, BLOCK_N), PIECE_COST)


@gluon.jit
def attend_pieces(queries, ring, q_ptr, q_strides, seq_lens_ptr, piece_ranges_ptr, partial_o_ptr,
                  partial_lse_ptr, scale_log2, batch, max_seq_len, program, num_slots, head_block,
                  share, times_ptr, outputs, NUM_HEADS: gl.constexpr, QLEN: gl.constexpr,
                  BLOCK_Q: gl.constexpr, BLOCK_N: gl.constexpr, NUM_STAGES: gl.constexpr,
                  PIECE_COST: gl.constexpr, QUERY_TMA: gl.constexpr,
                  TIME_PROGRAMS: gl.constexpr, KEYS_AS_ROWS: gl.constexpr,
                  WHOLE_PIECES: gl.constexpr, WRITE_LSE: gl.constexpr,
                  EARLY_START: gl.constexpr, turns=None, W: gl.constexpr = 0):  # fmt: skip
    """Consumers: each piece's queries, attention and partial, in the producer's order; with
    WHOLE_PIECES a piece holding its request's every key writes the request's output and lse
    instead (outputs: out, lse and their strides). TIME_PROGRAMS: the time each of
    the first pieces starts, has its queries, and ends. EARLY_START: nothing before the wait
    for the kernel ahead (the merge ahead may still read the piece ranges and partials).
    turns: the alternating 64-row consumers' buffers (kernels/mla_alternate_blocks.py), this
    partition being warpgroup W of the two; each piece starts with block 0 on warpgroup 0."""
    ALTERNATE: gl.constexpr = turns is not None
    gl.static_assert(not ALTERNATE or QUERY_TMA, "alternating consumers: queries by copies")
    LEAD: gl.constexpr = W == 0  # the partition that records the piece ranges and times
    if EARLY_START:
        wait_for_kernel_ahead()
    q_lo, q_hi, q_pe, queries_in, queries_free = queries
    k_lo, k_hi, k_pe, ready, empty = ring
    lo_p, hi_p, first, last, first_start, first_len = share
    ROWS: gl.constexpr = QLEN * NUM_HEADS
    start = first_start
    blocks_done = 0
    pieces = 0
    other_turns = 0  # ALTERNATE: the blocks the other warpgroup published so far
    next_len = first_len
    for request in range(first, last + 1):
        seq_len = next_len
        next_len = request_length(seq_lens_ptr, request + 1, batch, max_seq_len)
        lo, hi = piece_blocks(lo_p, hi_p, start, gl.cdiv(seq_len, BLOCK_N), PIECE_COST)
        if lo < hi:  # a request with no blocks between two others has no piece
            piece = gl.minimum(pieces, PIECE_TIMES - 1)
            if TIME_PROGRAMS and LEAD:
                gl.store(times_ptr + 2 + 3 * piece, global_time())
            if ALTERNATE:  # noqa: SIM102 (a compile-time branch around a run-time one)
                if pieces > 0:
                    wait_for_each_other(turns, pieces - 1)
            if (head_block == 0) & LEAD:
                record_piece_range(piece_ranges_ptr, request, program + request, lo, hi, 0,
                                   seq_len, 0, BLOCK_N)  # fmt: skip
            if QUERY_TMA:
                mbarrier.wait(queries_in, pieces & 1)
            else:
                # Both warpgroups' last wgmma read the previous piece's queries: all done first.
                gl.thread_barrier()
                store_query_rows(q_lo, q_hi, q_pe, q_ptr, request, head_block, *q_strides, ROWS,
                                 NUM_HEADS)  # fmt: skip
                fence_async_shared()  # the queries, visible to the wgmma
                gl.thread_barrier()
            if TIME_PROGRAMS and LEAD:
                gl.store(times_ptr + 3 + 3 * piece, global_time())
            final, whole = None, False  # every piece writes a partial
            if WHOLE_PIECES:
                out_ptr, lse_ptr, out_strides, lse_strides = outputs
                final = (out_ptr + request.to(gl.int64) * out_strides[0], out_strides[1],
                         out_strides[2])  # fmt: skip
                if WRITE_LSE:  # the lse's part only then: store_final tells by the length
                    final = final + (  # noqa: RUF005 (the JIT frontend takes no starred tuple)
                                     lse_ptr + request.to(gl.int64) * lse_strides[0],
                                     lse_strides[1], lse_strides[2])  # fmt: skip
                whole = (lo == 0) & (hi == gl.cdiv(seq_len, BLOCK_N))
            if ALTERNATE:
                attend_alternate_blocks(q_lo, q_hi, q_pe, k_lo, k_hi, k_pe, ready, empty, turns,
                                        blocks_done, hi - lo, lo * BLOCK_N, lo * BLOCK_N,
                                        gl.minimum(hi * BLOCK_N, seq_len), seq_len,
                                        seq_len - QLEN, head_block, head_block * BLOCK_Q,
                                        program + request, num_slots, ROWS, partial_o_ptr,
                                        partial_lse_ptr, scale_log2, queries_in, queries_free,
                                        other_turns, NUM_HEADS, BLOCK_N, NUM_STAGES, False,
                                        QUERY_TMA, W, final, whole)  # fmt: skip
                other_turns += (hi - lo + W) // 2  # the other's blocks 1 - W, 3 - W, ...
            else:
                attend_any_rows(q_lo, q_hi, q_pe, k_lo, k_hi, k_pe, ready, empty, blocks_done,
                                hi - lo, lo * BLOCK_N, lo * BLOCK_N,
                                gl.minimum(hi * BLOCK_N, seq_len), seq_len, seq_len - QLEN,
                                head_block, head_block * BLOCK_Q, program + request, num_slots,
                                ROWS, partial_o_ptr, partial_lse_ptr, scale_log2, queries_in,
                                queries_free, NUM_HEADS, BLOCK_N, NUM_STAGES, False,
                                QUERY_TMA, KEYS_AS_ROWS, final, whole)  # fmt: skip
            if TIME_PROGRAMS and LEAD:
                gl.store(times_ptr + 4 + 3 * piece, global_time())
            pieces += 1
        blocks_done += gl.maximum(hi - lo, 0)
        start += request_units(gl.cdiv(seq_len, BLOCK_N), PIECE_COST)


@gluon.jit
def mla_warp_specialized_loop_kernel(
    q_ptr,
    lat_desc,  # as in mla_warp_specialized_kernel
    rope_desc,
    q_lat_desc,  # QUERY_TMA: q as rows [batch * qlen * heads, 576], boxes [BLOCK_Q, 256]
    q_rope_desc,  # and [BLOCK_Q, 64] (without QUERY_TMA: lat_desc, rope_desc, unused)
    page_table_ptr,
    seq_lens_ptr,
    partial_o_ptr,  # [ROWS, num_programs + batch, 512] a head block, as mla_balanced_kernel
    partial_lse_ptr,
    piece_ranges_ptr,  # [batch, 2] int32: the merge's program range per request
    out_ptr,  # WHOLE_PIECES: the call's out [batch, qlen, heads, 512] and lse [batch, qlen, heads]
    lse_ptr,  # (WRITE_LSE; without it a stand-in never written)
    scale_log2,
    batch,
    max_pages,
    num_programs,
    stride_q_batch,
    stride_q_pos,
    stride_q_head,
    stride_table_batch,
    stride_out_batch,
    stride_out_pos,
    stride_out_head,
    stride_lse_batch,
    stride_lse_pos,
    stride_lse_head,
    NUM_HEADS: gl.constexpr,
    QLEN: gl.constexpr,
    BLOCK_Q: gl.constexpr,  # query rows a program: 16, 32 or 64
    KEYS_AS_ROWS: gl.constexpr,  # the keys as wgmma's rows (kernels/mla_keys_as_rows.py)
    PAGE_SIZE: gl.constexpr,
    BLOCK_N: gl.constexpr,
    NUM_STAGES: gl.constexpr,
    BLOCK_B: gl.constexpr,
    PIECE_COST: gl.constexpr,  # key blocks' worth of schedule a piece costs (program_share)
    QUERY_TMA: gl.constexpr,
    WHOLE_PIECES: gl.constexpr = False,  # a whole request's piece writes out / lse itself
    WRITE_LSE: gl.constexpr = False,
    RELEASE_MERGE: gl.constexpr = False,
    EARLY_START: gl.constexpr = False,  # launched as a dependent of the kernel ahead
    EARLY_BLOCKS: gl.constexpr = 2,  # EARLY_START: key blocks brought before its wait
    program_times_ptr=None,  # TIME_PROGRAMS: [programs, PROGRAM_TIMES] int64 ns (below)
    TIME_PROGRAMS: gl.constexpr = False,
    ALTERNATE_BLOCKS: gl.constexpr = False,  # 64 rows: kernels/mla_alternate_blocks.py
    kv_ptr=None,  # GATHER_KEYS: as in mla_warp_specialized_kernel
    stride_kv_page=0,
    stride_kv_slot=0,
    num_pages=0,
    GATHER_KEYS: gl.constexpr = False,
):
    """Program (schedule program, head block), the head block fastest: the head blocks of one
    share read the same keys at about the same time (the second read from L2). TIME_PROGRAMS
    (tools/program_times.py) records when each program starts and ends, and when its pieces
    do, on the GPU's global timer: which programs a wave waits for, and on what. EARLY_START
    (the plan's `early_start`): before the wait for the kernel ahead only seq_lens, the page
    table and the first piece's old keys are read (`load_pieces`), and nothing is written."""
    ROWS: gl.constexpr = QLEN * NUM_HEADS
    HEAD_BLOCKS: gl.constexpr = (ROWS + BLOCK_Q - 1) // BLOCK_Q
    if RELEASE_MERGE:
        release_dependents()  # the merge may launch now; it waits for our writes
    pid = gl.program_id(0)
    times_row = seq_lens_ptr  # a stand-in, never written, without TIME_PROGRAMS
    if TIME_PROGRAMS:
        times_row = program_times_ptr + PROGRAM_TIMES * pid
        gl.store(times_row, global_time())
    head_block = pid % HEAD_BLOCKS
    program = pid // HEAD_BLOCKS
    num_slots = num_programs + batch
    max_seq_len = max_pages * PAGE_SIZE
    lo_p, hi_p, first, last, first_start, first_len, spanned = program_share(
        seq_lens_ptr, batch, max_seq_len, program, num_programs, BLOCK_B, BLOCK_N, PIECE_COST,
        gl.num_warps(),
    )  # fmt: skip
    if spanned < batch:
        if EARLY_START:
            wait_for_kernel_ahead()  # the merge ahead may still read this slot
        mark_empty_slots(partial_o_ptr, partial_lse_ptr, head_block * BLOCK_Q, ROWS,
                         num_slots, program + spanned, BLOCK_Q)  # fmt: skip

    queries, ring = allocate_buffers(lat_desc, rope_desc, q_lat_desc, q_rope_desc,
                                     q_ptr.dtype.element_ty, BLOCK_Q, BLOCK_N, NUM_STAGES,
                                     2 if ALTERNATE_BLOCKS else 1,
                                     GATHER_ARRIVALS if GATHER_KEYS else 1)  # fmt: skip
    source = key_source(lat_desc, rope_desc, kv_ptr, stride_kv_page, stride_kv_slot, num_pages,
                        BLOCK_N, GATHER_KEYS)  # fmt: skip
    PRODUCER_REGS: gl.constexpr = GATHER_PRODUCER_REGS if GATHER_KEYS else COPY_PRODUCER_REGS
    PRODUCER_WARPS: gl.constexpr = GATHER_WARPS if GATHER_KEYS else 1
    turns = None
    if ALTERNATE_BLOCKS:
        turns = allocate_turn_buffers(q_ptr.dtype.element_ty, BLOCK_N)
    fence_async_shared()  # the initialised barriers, visible to the bulk copies
    gl.thread_barrier()
    share = (lo_p, hi_p, first, last, first_start, first_len)
    outputs = (out_ptr, lse_ptr, (stride_out_batch, stride_out_pos, stride_out_head),
               (stride_lse_batch, stride_lse_pos, stride_lse_head))  # fmt: skip
    # fmt: off
    if ALTERNATE_BLOCKS:
        # The second consumer warpgroup first among the workers: ptxas fits the registers
        # that way round (the other order spilled ~800 times, docs/perf.md v0.2.19).
        gl.warp_specialize(
            [
                (attend_pieces, (queries, ring, q_ptr,
                                 (stride_q_batch, stride_q_pos, stride_q_head), seq_lens_ptr,
                                 piece_ranges_ptr, partial_o_ptr, partial_lse_ptr, scale_log2,
                                 batch, max_seq_len, program, num_slots, head_block, share,
                                 times_row, outputs, NUM_HEADS, QLEN, BLOCK_Q, BLOCK_N,
                                 NUM_STAGES, PIECE_COST, QUERY_TMA, TIME_PROGRAMS, KEYS_AS_ROWS,
                                 WHOLE_PIECES, WRITE_LSE, EARLY_START, turns, 1)),
                (attend_pieces, (queries, ring, q_ptr,
                                 (stride_q_batch, stride_q_pos, stride_q_head), seq_lens_ptr,
                                 piece_ranges_ptr, partial_o_ptr, partial_lse_ptr, scale_log2,
                                 batch, max_seq_len, program, num_slots, head_block, share,
                                 times_row, outputs, NUM_HEADS, QLEN, BLOCK_Q, BLOCK_N,
                                 NUM_STAGES, PIECE_COST, QUERY_TMA, TIME_PROGRAMS, KEYS_AS_ROWS,
                                 WHOLE_PIECES, WRITE_LSE, EARLY_START, turns, 0)),
                (load_pieces, (source, q_lat_desc, q_rope_desc, queries, ring,
                               page_table_ptr, stride_table_batch, seq_lens_ptr, batch,
                               max_pages, head_block, share, ROWS, BLOCK_Q, BLOCK_N, NUM_STAGES,
                               PAGE_SIZE, PIECE_COST, QUERY_TMA, QLEN, EARLY_START,
                               EARLY_BLOCKS)),
            ],
            [4, PRODUCER_WARPS],  # the other consumer warpgroup; the producer
            [232, PRODUCER_REGS],
        )
    else:
        gl.warp_specialize(
            [
                (attend_pieces, (queries, ring, q_ptr,
                                 (stride_q_batch, stride_q_pos, stride_q_head), seq_lens_ptr,
                                 piece_ranges_ptr, partial_o_ptr, partial_lse_ptr, scale_log2,
                                 batch, max_seq_len, program, num_slots, head_block, share,
                                 times_row, outputs, NUM_HEADS, QLEN, BLOCK_Q, BLOCK_N,
                                 NUM_STAGES, PIECE_COST, QUERY_TMA, TIME_PROGRAMS, KEYS_AS_ROWS,
                                 WHOLE_PIECES, WRITE_LSE, EARLY_START)),
                (load_pieces, (source, q_lat_desc, q_rope_desc, queries, ring,
                               page_table_ptr, stride_table_batch, seq_lens_ptr, batch,
                               max_pages, head_block, share, ROWS, BLOCK_Q, BLOCK_N, NUM_STAGES,
                               PAGE_SIZE, PIECE_COST, QUERY_TMA, QLEN, EARLY_START,
                               EARLY_BLOCKS)),
            ],
            [PRODUCER_WARPS],  # the producer: one warp of bulk copies, or GATHER_WARPS gathering
            [PRODUCER_REGS],  # and few registers, so the consumers keep theirs
        )
    # fmt: on
    if TIME_PROGRAMS:
        gl.store(times_row + 1, global_time())


@gluon.jit
def global_time():
    """The GPU's global nanosecond timer (the same clock on every SM)."""
    return gl.inline_asm_elementwise("mov.u64 $0, %globaltimer;", "=l", [], dtype=gl.int64,
                                     is_pure=False, pack=1)  # fmt: skip
