"""The balanced schedule: the batch's key blocks laid end to end and cut evenly over a fixed
number of programs, whatever the requests' lengths.

Request b owns global blocks [cu_end[b] - blocks[b], cu_end[b]); program p owns
[p * total // P, (p + 1) * total // P). A program may finish one request and start the next;
each (program, request) piece writes one partial per query row to slot p + b of that row's
[num_programs + batch] slots, so request b's partials sit in the consecutive slots
[first_program(b) + b, last_program(b) + b] and no two pieces share a slot. Everything is
computed on the device from seq_lens, so a CUDA graph replays it for any lengths with the same
grid.

Stage 1 runs one launched program per slot, not per schedule program: the program for slot
s finds the one piece (p, b) with p + b = s whose program range meets request b's blocks
(`piece_of_slot`), so its key loop is the uniform kernel's flat loop over one key range and
holds no batch-wide state (the nested piece loop compiled to 255 registers and 280 bytes of
spills at 12 heads, against the uniform kernel's 209 and none). Where program p owns no block
of b although s lies in b's slot range (more programs than blocks), the slot's program marks
it lse -inf, so the merge reads every slot of a request's range without asking which programs
were empty.

The merge needs each request's program range [first, last] to find its slots. Stage 1 writes
it (`record_piece_range`: the piece holding the request's first block writes first, the one
holding its last block writes last) into a [batch, 2] int32 workspace, so the merge's programs
read two integers instead of each rescanning seq_lens (~190 of ~400 instructions per merge
program on sm_90, docs/perf.md v0.2.4). A request with no blocks has no pieces and no range:
the merge finds it empty from its own length.
"""

import triton
import triton.language as tl

from splitkv.kernels.split_range import first_visible_key


@triton.jit
def request_blocks(
    seq_lens_ptr,
    batch,
    max_seq_len,
    window_left,
    QLEN: tl.constexpr,
    BLOCK_B: tl.constexpr,
    BLOCK_N: tl.constexpr,
    HAS_WINDOW: tl.constexpr,
):
    """(clamped lengths, first visible keys, key blocks, inclusive prefix sum of blocks, total)
    over the batch; with a sliding window only the blocks some query row can see count."""
    offs_b = tl.arange(0, BLOCK_B)
    lens = tl.load(seq_lens_ptr + offs_b, mask=offs_b < batch, other=0)
    lens = tl.minimum(tl.maximum(lens, 0), max_seq_len)
    if HAS_WINDOW:
        firsts = first_visible_key(lens, window_left, QLEN, BLOCK_N)
    else:
        firsts = tl.zeros_like(lens)
    blocks = tl.cdiv(lens - firsts, BLOCK_N)
    cu_end = tl.cumsum(blocks, 0)
    return lens, firsts, blocks, cu_end, tl.sum(blocks, 0)


@triton.jit
def piece_of_slot(
    seq_lens_ptr,
    batch,
    max_seq_len,
    window_left,
    slot,
    num_programs,
    QLEN: tl.constexpr,
    BLOCK_B: tl.constexpr,
    BLOCK_N: tl.constexpr,
    HAS_WINDOW: tl.constexpr,
):
    """The piece that writes `slot`: (request, its global block range [lo, hi), the request's
    first global block, length and first visible key). request is `batch` where no request's
    slot range holds `slot` (nothing to write); lo >= hi where it does but the piece's program
    owns none of the request's blocks (write lse -inf)."""
    lens, firsts, blocks, cu_end, total = request_blocks(
        seq_lens_ptr, batch, max_seq_len, window_left, QLEN, BLOCK_B, BLOCK_N, HAS_WINDOW
    )
    total = tl.maximum(total, 1)  # an empty batch: no request holds a slot (blocks are 0)
    b = tl.arange(0, BLOCK_B)
    starts = cu_end - blocks
    program = slot - b  # the program that would write slot for request b
    first = program_of_block(starts, num_programs, total)
    last = program_of_block(cu_end - 1, num_programs, total)
    holds = (b < batch) & (blocks > 0) & (program >= first) & (program <= last)
    request = tl.where(tl.sum(holds.to(tl.int32), 0) > 0, tl.sum(tl.where(holds, b, 0), 0), batch)
    program = (slot - request).to(tl.int64)
    start = pick(starts, request, BLOCK_B)
    end = pick(cu_end, request, BLOCK_B)
    lo = tl.maximum(start, (program * total // num_programs).to(tl.int32))
    hi = tl.minimum(end, ((program + 1) * total // num_programs).to(tl.int32))
    first_key = pick(firsts, request, BLOCK_B)
    return request, lo, hi, start, pick(lens, request, BLOCK_B), first_key


@triton.jit
def request_units(num_blocks, PIECE_COST: tl.constexpr):
    """A request's share of the program loop's schedule: its key blocks plus PIECE_COST
    block-sized units for what a piece costs beside its blocks (its queries, its masked last
    block, its partial store), so that a program meeting many requests streams fewer blocks;
    none for a request without blocks. With PIECE_COST 0 the units are the key blocks."""
    return tl.where(num_blocks > 0, num_blocks + PIECE_COST, 0)


@triton.jit
def piece_blocks(lo_p, hi_p, start, num_blocks, PIECE_COST: tl.constexpr):
    """A request's key blocks [lo, hi) (its own numbering) inside the program's units
    [lo_p, hi_p), the request's units starting at `start` (its first PIECE_COST units hold no
    block); lo >= hi: the program has no piece of it."""
    first_block_unit = start + PIECE_COST
    return tl.maximum(lo_p - first_block_unit, 0), tl.minimum(hi_p - first_block_unit, num_blocks)


@triton.jit
def program_requests(
    cu_end, units, batch, program, num_programs, total, BLOCK_B: tl.constexpr,
    PIECE_COST: tl.constexpr = 0,
):  # fmt: skip
    """The schedule program's unit range [lo, hi) (`request_units` laid end to end; `cu_end`
    their inclusive prefix sum, `total` the sum) and the requests it meets, first to last
    (last < first when it owns no unit), for launching one program per schedule program that
    walks its pieces; plus the request whose slot an empty program must mark (`batch` when
    none: an empty program strictly inside a request's program range, kernels above)."""
    p = program.to(tl.int64)
    lo = (p * total // num_programs).to(tl.int32)
    hi = ((p + 1) * total // num_programs).to(tl.int32)
    b = tl.arange(0, BLOCK_B)
    in_batch = b < batch
    first = tl.sum((in_batch & (cu_end <= lo)).to(tl.int32), 0)
    last = tl.sum((in_batch & (cu_end <= hi - 1)).to(tl.int32), 0)
    # lo inside request `first`'s blocks (past its first block's unit): that request's range
    # spans the program, so its slot here is read by the merge and must say "no keys". (Inside
    # its first PIECE_COST units it lies before the program holding its first block.)
    first_start = pick(cu_end - units, first, BLOCK_B)
    spanned = tl.where((lo == hi) & (first < batch) & (first_start + PIECE_COST < lo), first, batch)
    return lo, hi, first, last, spanned


@triton.jit
def record_piece_range(
    piece_ranges_ptr, request, slot, lo, hi, first_block, seq_len, first_key, BLOCK_N: tl.constexpr
):
    """Write the request's first and last program, from the pieces that hold its first and last
    key blocks (one program each). Call it from one head block only: all write the same."""
    program = slot - request
    if lo == first_block:
        tl.store(piece_ranges_ptr + 2 * request, program)
    if hi == first_block + tl.cdiv(seq_len - first_key, BLOCK_N):
        tl.store(piece_ranges_ptr + 2 * request + 1, program)


@triton.jit
def mark_empty(
    partial_o_ptr, partial_lse_ptr, slots, row_ok, HEAD_DIM_V: tl.constexpr, BLOCK_D: tl.constexpr
):
    """lse -inf and output 0 for a slot whose piece has no keys (see above): the merge weighs
    it 0, and with a finite output there it needs no select to keep the slot out
    (`online_softmax.fold_states`)."""
    tl.store(partial_lse_ptr + slots, tl.full(slots.shape, float("-inf"), tl.float32), row_ok)
    d = tl.arange(0, BLOCK_D)
    zeros = tl.zeros([slots.shape[0], BLOCK_D], partial_o_ptr.dtype.element_ty)
    tl.store(
        partial_o_ptr + slots[:, None] * HEAD_DIM_V + d[None, :],
        zeros,
        mask=row_ok[:, None] & (d < HEAD_DIM_V)[None, :],
    )


@triton.jit
def pick(values, index, BLOCK_B: tl.constexpr):
    """values[index] as a scalar (index is a run-time value)."""
    return tl.sum(tl.where(tl.arange(0, BLOCK_B) == index, values, 0), 0)


@triton.jit
def program_of_block(block, num_programs, total):
    """The program whose range [p * total // P, (p + 1) * total // P) holds `block`."""
    block = block.to(tl.int64)
    return ((block + 1) * num_programs + total - 1) // total - 1
