"""Paged-cache addressing shared by the stage-1 kernels: a key block's page ids, and the 64-bit
row offsets they give."""

import triton
import triton.language as tl


@triton.jit
def block_page_ids(
    table_row, block_start, keys, key_ok, PAGE_SIZE: tl.constexpr, BLOCK_N: tl.constexpr
):
    """Page ids of a key block: one id when a block lies inside one page (blocks start on block
    boundaries), else one per key (masked keys read entry 0 of the row)."""
    if PAGE_SIZE >= BLOCK_N:
        return tl.load(table_row + block_start // PAGE_SIZE)
    else:
        return tl.load(table_row + keys // PAGE_SIZE, mask=key_ok, other=0)


@triton.jit
def kv_row_offsets(page, keys, num_pages, stride_page, stride_slot, PAGE_SIZE: tl.constexpr):
    """Element offsets of the keys' rows. Page ids are clamped into the pool: a corrupt table
    gives a wrong row, never a fault."""
    page = tl.minimum(tl.maximum(page, 0), num_pages - 1).to(tl.int64)
    return page * stride_page + (keys % PAGE_SIZE).to(tl.int64) * stride_slot


@triton.jit
def first_page_ids(
    table_row, split_start, offs_n, split_end, PAGE_SIZE: tl.constexpr, BLOCK_N: tl.constexpr
):
    """The first block's page ids, loaded before the loop when page ids are prefetched."""
    keys = split_start + offs_n
    return block_page_ids(table_row, split_start, keys, keys < split_end, PAGE_SIZE, BLOCK_N)


@triton.jit
def advance_page_ids(
    table_row,
    block_start,
    keys,
    next_page,
    split_end,
    PAGE_SIZE: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    """(this block's page ids, the next block's): the next block's are loaded one iteration
    ahead, so a KV block's address never waits on a load issued in its own iteration; with
    that, Triton's pipeliner multi-buffers the KV blocks (num_stages 3: two in flight)."""
    following = tl.minimum(block_start + BLOCK_N, split_end - 1)
    next_keys = keys + BLOCK_N
    following_page = block_page_ids(
        table_row, following, next_keys, next_keys < split_end, PAGE_SIZE, BLOCK_N
    )
    return next_page, following_page
