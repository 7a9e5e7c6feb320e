"""The warp-specialized MLA producer for pages a bulk copy cannot take (kernels/
mla_warp_specialized.py): pages of 1, 2 or 4 keys (SGLang's is 1), and pages whose size is no
multiple of 8 (100, 12, 6: `warp_specialized.copy_rows` under MIN_COPY_ROWS).

A bulk tensor copy (TMA) writes whole boxes of 8 rows or more, the buffers' swizzle pattern,
and a box must not cross a page. Where pages are shorter or cut a block at rows that are no
multiple of 8, each key row is gathered instead: its page id from the page table, then its
1,152 bytes by 16-byte asynchronous copies (`cp.async`) into the same swizzled ring buffers the
bulk copies fill, so the consumers are the same. Each of the producer's threads arrives on the
stage's `ready` barrier once its own copies landed (`cp.async.mbarrier.arrive.noinc`: the
barrier counts the producer's threads, `GATHER_ARRIVALS`).

A page id outside [0, num_pages) reads zeros (the copies' mask), never outside the pool, as the
bulk copies' bounds check gives; the consumers mask keys past the request's end as for those.
"""

from __future__ import annotations

from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.ampere import async_copy
from triton.experimental.gluon.language.nvidia.hopper import mbarrier

LATENT = gl.constexpr(512)
ROPE = gl.constexpr(64)
HALF = gl.constexpr(256)
WARP_ROWS = gl.constexpr(8)  # key rows a warp copies a pass: one 8-row swizzle atom
# The gathering producer's warps (a pass copies 8 rows a warp): four, one on each of the SM's
# schedulers, spread a 64-key block's ~520 producer instructions that one warp issued on the
# scheduler that also issues two consumer warps. On an H100 (docs/perf.md session 66, run219)
# four against one: 128 heads x qlen 1 14-17% less time at page 1, 12-18% at page 100; 12
# heads x qlen 4 at page 1 -6 to -8% (now level with page 100); 12 heads x qlen 1 level.
GATHER_WARPS = gl.constexpr(4)
# How many blocks ahead the producer loads a block's page ids: 0, over the wait for the
# block's buffer; 1, over the previous block's copies; 2, over the previous two blocks'. At page
# 1 each 32-key block's ids are a fresh 128-byte line of the table, a DRAM round trip before
# its row copies can be issued; at page 100 a line serves ~100 blocks. With one producer warp a
# lead of 1 closed the same page-1 gap at 12 heads x qlen 4 as four warps do (run219). Beside
# four warps on an H100 (docs/perf.md session 71; run222, run225 and run226, six runs a lead):
# 128 heads x qlen 1 at page 1 ragged median 286.5 -> 269.3 us (-6%), one-long 329.5 -> 322.2
# (-2%); at page 100 ragged level but one-long 304.8 -> 318.8 (+4.6%, in a 302-325 us band
# both leads share); 12 heads level at both. A lead of 2 gave back most of page 1's gain
# (one run). Gathered pages 2-7, 12 and 100 against lead 0 (session 72, run231-
# 233, two to six runs a variant): pages 2-4 (8 or more ids a block) ragged -5 to -7%,
# one-long -4 to -5%, every run faster; pages 5, 6, 7, 12 and 100 level in both rows (their
# lead-0 times already those of the large pages), page 100's loss above not repeated; pages
# 9, 10, 11 and 14 with the lead against without (session 73, run237, two runs a variant):
# level, every time in the band both share. So the lead applies to pages under
# GATHER_IDS_LEAD_PAGES_UNDER keys (a gain at 1-4, level at 5-7), and the larger gathered
# pages (9 and up, an odd factor times a power of two under 8; 9-12, 14 and 100 timed) load
# at the wait, as before: level there, with a shorter producer.
GATHER_IDS_LEAD = gl.constexpr(1)
GATHER_IDS_LEAD_PAGES_UNDER = gl.constexpr(8)
# The producer's threads, each arriving on a stage's barrier once its copies landed.
GATHER_ARRIVALS = gl.constexpr(32 * GATHER_WARPS)
# The producer's registers: few for bulk copies, more for a pass's row pointers.
COPY_PRODUCER_REGS = gl.constexpr(24)
GATHER_PRODUCER_REGS = gl.constexpr(56)


@gluon.jit
def gather_key_blocks(pool, k_lo, k_hi, k_pe, ready, empty, table_row, max_pages, first_key,
                      num_blocks, ring_start, BLOCK_N: gl.constexpr, NUM_STAGES: gl.constexpr,
                      PAGE_SIZE: gl.constexpr):  # fmt: skip
    """Producer (GATHER_WARPS warps): key block j (keys first_key + j * BLOCK_N onward) into
    the ring's buffer (ring_start + j) % NUM_STAGES once the consumers released it, row by row.
    pool: (kv_ptr, stride_page, stride_slot, num_pages, page_ids), page_ids a [BLOCK_N] int32
    shared buffer for the block's page ids (loaded once a block, read by each pass). A page
    index past the table row (the tail of a last block) is clamped to its last entry, as the
    bulk copies do; the consumers mask those keys."""
    kv_ptr, stride_page, stride_slot, num_pages, page_ids = pool
    WARPS: gl.constexpr = gl.num_warps()
    SUB_ROWS: gl.constexpr = WARP_ROWS * WARPS  # rows a pass
    gl.static_assert(BLOCK_N % SUB_ROWS == 0, "a block is whole passes")
    ids_layout: gl.constexpr = gl.BlockedLayout([1], [32], [WARPS], [0])
    # A thread's 16-byte pieces all lie in one row (4 threads a row, 8 rows a warp): one page
    # id, mask and row address a thread and pass serve its 8 latent and 2 rope pieces (a row a
    # thread's pieces compiled to ~15 instructions a copy, against the copies' ~3).
    latent: gl.constexpr = gl.BlockedLayout([1, 8], [8, 4], [WARPS, 1], [1, 0])
    rope: gl.constexpr = gl.BlockedLayout([1, 8], [8, 4], [WARPS, 1], [1, 0])
    gl.static_assert(GATHER_IDS_LEAD <= 2, "page ids at most two blocks ahead")
    LEAD: gl.constexpr = GATHER_IDS_LEAD if PAGE_SIZE < GATHER_IDS_LEAD_PAGES_UNDER else 0
    block_rows = gl.arange(0, BLOCK_N, ids_layout)
    if LEAD >= 1:
        ids = block_page_ids(table_row, max_pages, first_key + block_rows, PAGE_SIZE)
    if LEAD == 2:
        ids_after = block_page_ids(table_row, max_pages, first_key + BLOCK_N + block_rows,
                                   PAGE_SIZE)  # fmt: skip
    for j in range(num_blocks):
        ring = ring_start + j
        stage = ring % NUM_STAGES
        keys = first_key + j * BLOCK_N + block_rows
        if LEAD == 0:  # the block's ids first: their load overlaps the wait
            ids = block_page_ids(table_row, max_pages, keys, PAGE_SIZE)
        mbarrier.wait(empty.index(stage), ((ring // NUM_STAGES) & 1) ^ 1, pred=ring >= NUM_STAGES)
        gl.thread_barrier()  # every thread done reading the last block's ids
        page_ids.store(ids)
        gl.thread_barrier()
        if LEAD == 1:  # the next block's, in flight over this block's copies
            ids = block_page_ids(table_row, max_pages, keys + BLOCK_N, PAGE_SIZE)
        if LEAD == 2:  # the block after next's, over this and the next's copies
            ids = ids_after
            ids_after = block_page_ids(table_row, max_pages, keys + 2 * BLOCK_N, PAGE_SIZE)
        for r in gl.static_range(0, BLOCK_N, SUB_ROWS):
            key = first_key + j * BLOCK_N + r
            src, ok = key_rows(kv_ptr, page_ids, key, r, stride_page, stride_slot, num_pages, 0,
                               HALF, latent, PAGE_SIZE, SUB_ROWS)  # fmt: skip
            async_copy.async_copy_global_to_shared(k_lo.index(stage).slice(r, SUB_ROWS), src,
                                                   mask=ok)  # fmt: skip
            async_copy.async_copy_global_to_shared(k_hi.index(stage).slice(r, SUB_ROWS),
                                                   src + HALF, mask=ok)  # fmt: skip
            src, ok = key_rows(kv_ptr, page_ids, key, r, stride_page, stride_slot, num_pages,
                               LATENT, ROPE, rope, PAGE_SIZE, SUB_ROWS)  # fmt: skip
            async_copy.async_copy_global_to_shared(k_pe.index(stage).slice(r, SUB_ROWS), src,
                                                   mask=ok)  # fmt: skip
        async_copy.mbarrier_arrive(ready.index(stage), increment_count=False)


@gluon.jit
def block_page_ids(table_row, max_pages, keys, PAGE_SIZE: gl.constexpr):
    """The page ids of `keys` (a block's), an index past the table row clamped to its last
    entry (a last block's tail, or the blocks after a piece's last: never read past the row)."""
    return gl.load(table_row + gl.minimum(keys // PAGE_SIZE, max_pages - 1))


@gluon.jit
def key_rows(kv_ptr, page_ids, key, r: gl.constexpr, stride_page, stride_slot, num_pages,
             COL0: gl.constexpr, COLS: gl.constexpr, layout: gl.constexpr,
             PAGE_SIZE: gl.constexpr, SUB_ROWS: gl.constexpr):  # fmt: skip
    """Pointers to columns [COL0, COL0 + COLS) of keys key .. key + SUB_ROWS - 1 (rows r .. of
    the block, whose page ids `page_ids` holds), and the mask that keeps a page id outside the
    pool from being read."""
    pages = page_ids.slice(r, SUB_ROWS).load(gl.SliceLayout(1, layout))
    slots = (key + gl.arange(0, SUB_ROWS, gl.SliceLayout(1, layout))) % PAGE_SIZE
    rows = pages.to(gl.int64) * stride_page + slots.to(gl.int64) * stride_slot
    cols = COL0 + gl.arange(0, COLS, gl.SliceLayout(0, layout))
    in_pool = (pages >= 0) & (pages < num_pages)
    return kv_ptr + rows[:, None] + cols[None, :], in_pool[:, None]  # the copy broadcasts it


@gluon.jit
def key_source(lat_desc, rope_desc, kv_ptr, stride_page, stride_slot, num_pages,
               BLOCK_N: gl.constexpr, GATHER_KEYS: gl.constexpr):  # fmt: skip
    """What the producer's `load_key_blocks` reads the key blocks from: the pool's descriptors
    (bulk copies), or with GATHER_KEYS the pool's pointer, strides and page count and a
    shared buffer for a block's page ids (gathered rows). Call it outside the partitions:
    they cannot allocate shared memory."""
    if GATHER_KEYS:
        page_ids = gl.allocate_shared_memory(gl.int32, [BLOCK_N],
                                             gl.SwizzledSharedLayout(1, 1, 1, [0]))  # fmt: skip
        return kv_ptr, stride_page, stride_slot, num_pages, page_ids
    else:
        return lat_desc, rope_desc
