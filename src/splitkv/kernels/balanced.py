"""The balanced schedule: the batch's key blocks laid end to end and cut evenly over a fixed
number of programs, whatever the requests' lengths.

Request b owns global blocks [cu_end[b] - blocks[b], cu_end[b]); program p owns
[p * total // P, (p + 1) * total // P). A program may finish one request and start the next;
each (program, request) piece writes one partial per query row to slot p + b of that row's
[num_programs + batch] slots, so request b's partials sit in the consecutive slots
[first_program(b) + b, last_program(b) + b] and no two pieces share a slot. Everything is
computed on the device from seq_lens, so a CUDA graph replays it for any lengths with the same
grid.

With more programs than blocks some programs own nothing. Such a program p (lo = hi) marks
slot p + b, b the request holding block lo, with lse -inf: that slot lies in b's range when lo
is inside b, and in no request's range when lo starts b (the merge never reads it then). So the
merge reads every slot of a request's range without asking which programs were empty.
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
def mark_if_empty(partial_lse_ptr, lo, hi, cu_end, batch, num_programs, program, rows, row_ok):
    """An empty program's lse -inf in the slot the merge reads for it (see above)."""
    if lo >= hi:
        request = request_of_block(cu_end, lo)
        if request < batch:
            slot = rows.to(tl.int64) * (num_programs + batch) + program + request
            tl.store(partial_lse_ptr + slot, tl.full(rows.shape, float("-inf"), tl.float32), row_ok)


@triton.jit
def request_of_block(cu_end, block):
    """The request holding global block `block` (requests without keys end at or before it);
    `batch` or more where no request does."""
    return tl.sum((cu_end <= block).to(tl.int32), 0)


@triton.jit
def pick(values, index, BLOCK_B: tl.constexpr):
    """values[index] as a scalar (index is a run-time value)."""
    return tl.sum(tl.where(tl.arange(0, BLOCK_B) == index, values, 0), 0)


@triton.jit
def program_of_block(block, num_programs, total):
    """The program whose range [p * total // P, (p + 1) * total // P) holds `block`."""
    block = block.to(tl.int64)
    return ((block + 1) * num_programs + total - 1) // total - 1
