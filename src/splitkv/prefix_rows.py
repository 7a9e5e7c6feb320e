"""Where the cascade's prefix pass puts each query row (splitkv/prefix.py): index tensors built
once per plan and (qlen, heads) from host integers, so that a call stacks the groups' rows and
hands their states back with one indexing kernel each, whatever the number of groups (one copy
per chunk and four per group took ~30 us of a 310 us call on the H200, session 18)."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class PrefixRows:
    """The prefix pass's chunks: each group's members' query rows, member by member, cut into
    chunks of at most `max_rows` (a chunk is one request of the pass, its rows the heads)."""

    num_chunks: int
    width: int  # rows a chunk holds (the widest chunk's; the rest padding, dropped)
    chunk_tokens: tuple[int, ...]  # each chunk's prefix length in keys (host ints)
    gather: torch.Tensor  # [num_chunks * width] int64: the query row each chunk row holds
    scatter: torch.Tensor  # [batch * rows_per_request] int64: the chunk row of each query row
    # [num_chunks] int64: the member whose table row the chunk reads its group's pages
    # through. Built as the group's first member; each call's `prefix.suffix_rows` writes a
    # member taking part in the pass instead, since a member that ends inside the prefix may
    # hold anything in the columns past its keys (`validate_sharing`). Any member taking part
    # holds the shared pages, so which one a call's writes leave does not matter.
    first: torch.Tensor
    lens: torch.Tensor  # [num_chunks] int32: chunk_tokens on the device
    # [batch] int32 each: the chunks [chunk_lo, chunk_hi) of the request's group (none: 0, 0)
    chunk_lo: torch.Tensor
    chunk_hi: torch.Tensor
    prefix_len: torch.Tensor  # [batch] int32: shared keys of each request's group (0: none)

    @property
    def tokens(self) -> int:
        """The longest prefix, in keys."""
        return max(self.chunk_tokens)


def prefix_rows(
    groups: tuple[tuple[tuple[int, ...], int], ...],
    batch: int,
    rows_per_request: int,
    page_size: int,
    max_rows: int,
    device: torch.device | str,
    *,
    kv_heads: int = 1,
    heads_per_kv: int | None = None,
) -> PrefixRows | None:
    """The chunks of `groups` ((members, shared pages) each) for requests of `rows_per_request`
    query rows a kv head (MLA: qlen x heads, flat as q's rows are; GQA: qlen x heads_per_kv),
    or None when no group has a page. With `kv_heads` > 1 a chunk holds its rows once per kv
    head, kv head by kv head (the stacked call's query head h reads kv head h // width), from
    q's rows ordered (request, position, kv head, head of that kv head). Query rows of
    requests outside every pass point at chunk row 0 (their prefix state is masked)."""
    layout = row_layout(groups, batch, rows_per_request, page_size, max_rows, kv_heads,
                        heads_per_kv or rows_per_request)  # fmt: skip
    if layout is None:
        return None
    num_chunks, width, chunk_tokens, packed = layout
    return PrefixRows(num_chunks, width, chunk_tokens, *packed.on(device))


@functools.lru_cache(maxsize=64)
def row_layout(
    groups: tuple[tuple[tuple[int, ...], int], ...],
    batch: int,
    rows_per_request: int,
    page_size: int,
    max_rows: int,
    kv_heads: int,
    per_kv: int,
) -> tuple | None:
    """`prefix_rows`' fields on the host: (num_chunks, width, chunk_tokens, the index tensors
    packed as `PackedInts`), None without a chunk. Remembered: a serving step's groups
    repeat step after step, and a cascade called with groups instead of a plan lays them out
    on every call (8 members of 64 rows on this repository's CI machine: 431 -> 232 us of
    host work a call with the packing below, `tools/call_host_time.py`)."""
    chunks = chunk_layout(groups, rows_per_request, max_rows)
    if not chunks:
        return None
    width = chunk_width(chunks)
    gather = [0] * (len(chunks) * kv_heads * width)  # padding rows repeat query row 0
    scatter = [0] * (batch * rows_per_request * kv_heads)
    for c, (g, start, rows) in enumerate(chunks):
        members = groups[g][0]
        for r in range(start, start + rows):
            member = members[r // rows_per_request]
            position, head = divmod(r % rows_per_request, per_kv)
            first = (member * rows_per_request + position * per_kv) * kv_heads
            for h in range(kv_heads):
                row = first + h * per_kv + head
                stacked = (c * kv_heads + h) * width + r - start
                gather[stacked] = row
                scatter[row] = stacked
    chunk_tokens = tuple(groups[g][1] * page_size for g, _, _ in chunks)
    spans = {}  # each group's chunks [lo, hi): chunk_layout lays them out consecutively
    for c, (g, _, _) in enumerate(chunks):
        spans[g] = (spans.get(g, (c, c))[0], c + 1)
    # A group without pages has no chunks and shares no keys: its members keep 0, 0 and 0.
    chunk_lo, chunk_hi, prefix_len = [0] * batch, [0] * batch, [0] * batch
    for g, (lo, hi) in spans.items():
        for member in groups[g][0]:
            chunk_lo[member], chunk_hi[member] = lo, hi
            prefix_len[member] = groups[g][1] * page_size
    first_members = [groups[g][0][0] for g, _, _ in chunks]
    index, count = torch.int64, torch.int32
    packed = PackedInts.of(
        [(gather, index), (scatter, index), (first_members, index), (chunk_tokens, count),
         (chunk_lo, count), (chunk_hi, count), (prefix_len, count)]
    )  # fmt: skip
    return len(chunks), kv_heads * width, chunk_tokens, packed


@dataclass(frozen=True)
class PackedInts:
    """Integer arrays packed in one host buffer, each from an 8-byte boundary, so they reach a
    device in one copy. torch copies host memory to a GPU only after the stream's queued work
    is done, so each copy stalls the host: a plan's rows and its groups' prefix lengths, copied
    array by array, were seven stalls (and seven a call, for a cascade called with groups
    instead of a plan); packed, one."""

    buffer: torch.Tensor  # uint8, never written: `on` copies it
    spans: tuple[tuple[int, int, torch.dtype], ...]  # (first byte, bytes, dtype) an array

    @classmethod
    def of(cls, arrays: list[tuple[Sequence[int], torch.dtype]]) -> PackedInts:
        raw, spans, offset = [], [], 0
        for values, dtype in arrays:
            data = torch.tensor(values, dtype=dtype).view(torch.uint8)
            padding = -data.numel() % 8
            raw += [data, torch.zeros(padding, dtype=torch.uint8)]
            spans.append((offset, data.numel(), dtype))
            offset += data.numel() + padding
        return cls(torch.cat(raw), tuple(spans))

    def on(self, device: torch.device | str) -> list[torch.Tensor]:
        """The arrays on `device`: views into a copy of their own (kernels write some)."""
        buffer = self.buffer.to(device, copy=True)
        return [buffer[start : start + size].view(dtype) for start, size, dtype in self.spans]


def chunk_layout(
    groups: tuple[tuple[tuple[int, ...], int], ...], rows_per_request: int, max_rows: int
) -> list[tuple[int, int, int]]:
    """The prefix pass's chunks from host integers alone: (group, its first stacked row in the
    chunk, rows) each, every group with a page cut into chunks of at most `max_rows`."""
    chunks = []
    for g, (members, pages) in enumerate(groups):
        if pages:
            total = len(members) * rows_per_request
            chunks += [(g, s, min(max_rows, total - s)) for s in range(0, total, max_rows)]
    return chunks


def chunk_width(chunks: list[tuple[int, int, int]]) -> int:
    """Rows every chunk holds (the widest chunk's; the rest padding)."""
    return max(rows for _, _, rows in chunks)
