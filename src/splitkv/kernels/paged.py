"""Paged-cache addressing shared by the stage-1 kernels: a key block's page ids, and the 64-bit
row offsets they give.

A key block starts on a multiple of its own size (`block_start`; every split, piece and tail
does), and blocks are powers of two, so with a power-of-two page size a block either lies
inside one page or covers whole pages: its keys' page indices are the start's plus a pattern
of the block's offsets (`offs`, `tl.arange(0, BLOCK_N)`) known at build time, not a division a
key. Any other page size (48, 100, 528: vLLM sizes hybrid models' pages to their state) cuts
blocks at arbitrary keys: each key divides by the page size (a constant: a multiply and a
shift) for its page and its slot. BY_BLOCK divides once a block instead: the page holding the
block's first key and that key's slot, then each key's offset past that slot (less than a
page plus a block) by the page size. That is for the MLA 64-row Triton tile: at 255 registers
dividing each key spilled inside its key loop (sm_90, page 100: 165 local loads and stores a
pass), and BY_BLOCK runs it 29% faster (H100, 12 heads x qlen 4, ragged: 415 -> 295 us), while
on the 16-row MLA tile and GQA's it issues more and runs 3-21% slower (docs/perf.md session
62, run197)."""

import triton
import triton.language as tl


@triton.jit
def block_page_ids(
    table_row, block_start, offs, key_ok, PAGE_SIZE: tl.constexpr, BLOCK_N: tl.constexpr,
    BY_BLOCK: tl.constexpr = False,
):  # fmt: skip
    """Page ids of a key block: one id when the block lies inside one page, else one per key
    (masked keys read entry 0 of the row)."""
    if PAGE_SIZE % BLOCK_N == 0:
        return tl.load(table_row + block_start // PAGE_SIZE)
    elif BLOCK_N % PAGE_SIZE == 0:  # whole pages: the block starts on a page's first key
        first = table_row + block_start // PAGE_SIZE
        return tl.load(first + offs // PAGE_SIZE, mask=key_ok, other=0)
    elif BY_BLOCK:  # pages past the one holding the block's first key (module docstring)
        first = table_row + block_start // PAGE_SIZE
        return tl.load(first + (block_start % PAGE_SIZE + offs) // PAGE_SIZE, mask=key_ok, other=0)
    else:
        return tl.load(table_row + (block_start + offs) // PAGE_SIZE, mask=key_ok, other=0)


@triton.jit
def key_slots(
    block_start, keys, PAGE_SIZE: tl.constexpr, SLOT_BY_MASK: tl.constexpr,
    BY_BLOCK: tl.constexpr,
):  # fmt: skip
    """The keys' slots in their pages (`keys` = block_start + offsets: any start). A power of
    two folds at build time, as low bits with SLOT_BY_MASK (keys are never negative) or a
    signed remainder; BY_BLOCK counts other page sizes from the first key's slot."""
    if SLOT_BY_MASK and (PAGE_SIZE & (PAGE_SIZE - 1)) == 0:
        return keys & (PAGE_SIZE - 1)
    if BY_BLOCK and (PAGE_SIZE & (PAGE_SIZE - 1)) != 0:
        return (block_start % PAGE_SIZE + (keys - block_start)) % PAGE_SIZE
    return keys % PAGE_SIZE


@triton.jit
def kv_row_offsets(
    page, block_start, keys, num_pages, stride_page, stride_slot, PAGE_SIZE: tl.constexpr,
    SLOT_BY_MASK: tl.constexpr = False, BY_BLOCK: tl.constexpr = False,
):  # fmt: skip
    """Element offsets of the keys' rows (`keys`: block_start + offsets). Page ids are clamped
    into the pool: a corrupt table gives a wrong row, never a fault. SLOT_BY_MASK takes a
    power-of-two page's slot as a key's low bits instead of a signed remainder: the GQA loop's
    64 keys in 436 instructions against 522 (sm_90, gpt-oss at qlen 4, generic build), while
    MLA's 16-row Triton tile compiled so takes 255 registers and spills (136 without), so it
    keeps `%`."""
    page = tl.minimum(tl.maximum(page, 0), num_pages - 1).to(tl.int64)
    slot = key_slots(block_start, keys, PAGE_SIZE, SLOT_BY_MASK, BY_BLOCK)
    return page * stride_page + slot.to(tl.int64) * stride_slot


@triton.jit
def first_page_ids(
    table_row, split_start, offs_n, split_end, PAGE_SIZE: tl.constexpr, BLOCK_N: tl.constexpr,
    BY_BLOCK: tl.constexpr = False,
):  # fmt: skip
    """The first block's page ids, loaded before the loop when page ids are prefetched."""
    keys = split_start + offs_n
    return block_page_ids(table_row, split_start, offs_n, keys < split_end, PAGE_SIZE, BLOCK_N,
                          BY_BLOCK)  # fmt: skip


@triton.jit
def advance_page_ids(
    table_row,
    block_start,
    offs_n,
    next_page,
    split_end,
    PAGE_SIZE: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BY_BLOCK: tl.constexpr = False,
):
    """(this block's page ids, the next block's): the next block's are loaded one iteration
    ahead, so a KV block's address never waits on a load issued in its own iteration; with
    that, Triton's pipeliner multi-buffers the KV blocks (num_stages 3: two in flight). Past
    the last block the next ids are one in-range entry (a block inside a page) or all masked."""
    next_start = block_start + BLOCK_N
    next_ok = next_start + offs_n < split_end
    following = tl.minimum(next_start, split_end - 1)  # an in-range entry past the last block
    following_page = block_page_ids(table_row, following, offs_n, next_ok, PAGE_SIZE, BLOCK_N,
                                    BY_BLOCK)  # fmt: skip
    return next_page, following_page
