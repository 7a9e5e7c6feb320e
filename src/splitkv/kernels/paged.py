"""Paged-cache addressing shared by the stage-1 kernels: a key block's page ids, and the 64-bit
row offsets they give."""

import triton
import triton.language as tl


@triton.jit
def block_page_ids(table_row, block_start, keys, key_ok, PAGE_SIZE: tl.constexpr,
                   BLOCK_N: tl.constexpr):  # fmt: skip
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
