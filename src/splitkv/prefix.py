"""MLA decode with shared prefixes read once per group (a cascade; docs/shared-prefix.md).

1. Prefix pass: for each group, its members' query rows stacked as the heads of one request
   (qlen 1: the prefix lies before every query token) attend the group's shared pages once;
   all groups are the requests of a single decode call.
2. Suffix pass: every request attends only its keys after its group's prefix (or all of them,
   if it takes no part in a prefix pass).
3. The two states of every row merge in fp32 (`merge_states`).

A member takes part only if its query tokens all lie after the prefix
(prefix_len <= seq_len - qlen + 1, decided on the device, so lengths may change between
CUDA-graph replays); otherwise it attends its whole context in the suffix pass.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from splitkv.checks import check_int, check_mla_call, validate_decode_data
from splitkv.merge import merge_states
from splitkv.mla import mla_decode
from splitkv.plan import MAX_HEADS, MAX_QLEN, MLA_HEAD_DIM_QK, MLA_HEAD_DIM_V


@dataclass(frozen=True)
class SharedPrefixPlan:
    """What `mla_decode_shared_prefix` needs on the device, built once from host integers so
    the call makes no host-to-device copy (CUDA-graph capturable)."""

    groups: tuple[tuple[tuple[int, ...], int], ...]  # (members, shared pages), checked
    prefix_len: torch.Tensor  # [batch] int32 shared tokens of each request's group (0: none)
    members: tuple[torch.Tensor, ...]  # per group, its request indices on the device
    prefix_lens: tuple[torch.Tensor, ...]  # per group, [1] int32 shared tokens
    page_size: int


def plan_shared_prefix(
    prefix_groups: Sequence[tuple[Sequence[int], int]],
    batch_size: int,
    max_pages: int,
    page_size: int,
    device: torch.device | str,
) -> SharedPrefixPlan:
    """Check the grouping and put it on the device.

    prefix_groups: (request indices, shared pages) per group: those requests hold the same page
    ids in their first `shared pages` page-table columns (as the serving engine's prefix cache
    knows). A request belongs to at most one group; requests in no group are decoded plainly.
    """
    groups = _check_groups(prefix_groups, batch_size, max_pages)
    prefix_len = torch.zeros(batch_size, dtype=torch.int32)
    for members, pages in groups:
        prefix_len[members] = pages * page_size
    return SharedPrefixPlan(
        groups=tuple((tuple(m), p) for m, p in groups),
        prefix_len=prefix_len.to(device),
        members=tuple(torch.tensor(m, device=device) for m, _ in groups),
        prefix_lens=tuple(
            torch.full((1,), p * page_size, dtype=torch.int32, device=device) for _, p in groups
        ),
        page_size=page_size,
    )


def mla_decode_shared_prefix(
    q: torch.Tensor,
    kv_cache: torch.Tensor,
    page_table: torch.Tensor,
    seq_lens: torch.Tensor,
    prefix_groups: Sequence[tuple[Sequence[int], int]] | SharedPrefixPlan,
    *,
    scale: float | None = None,
    validate: bool = False,
) -> tuple[torch.Tensor, torch.Tensor]:
    """MLA decode where groups of requests share leading pages (prefix caching): each group's
    shared pages are read once for all its members.

    Args:
        q, kv_cache, page_table, seq_lens, scale: as `splitkv.mla_decode`.
        prefix_groups: a `plan_shared_prefix(...)` result, or its (request indices, shared
            pages) pairs (planned on each call then: that copies them to the device).
        validate: also check lengths and page ids, and that each group's members hold the
            same page ids in the shared columns they use (syncs).

    Returns:
        (out, lse) as `splitkv.mla_decode`, equal to it within rounding.
    """
    call = check_mla_call(
        q,
        kv_cache,
        page_table,
        seq_lens,
        scale=scale,
        out=None,
        lse=None,
        head_dim_qk=MLA_HEAD_DIM_QK,
        head_dim_v=MLA_HEAD_DIM_V,
        max_heads=MAX_HEADS,
        max_qlen=MAX_QLEN,
    )
    prefix = prefix_groups
    if not isinstance(prefix, SharedPrefixPlan):
        prefix = plan_shared_prefix(
            prefix, call.batch, page_table.shape[1], call.page_size, q.device
        )
    elif prefix.prefix_len.shape != (call.batch,) or prefix.page_size != call.page_size:
        raise ValueError(
            f"prefix_groups: expected a plan for {call.batch} requests of page size "
            f"{call.page_size}, got one for {tuple(prefix.prefix_len.shape)} / {prefix.page_size}"
        )
    if validate:
        validate_decode_data(
            page_table,
            seq_lens,
            num_pages=call.kv_cache.shape[0],
            page_size=call.page_size,
            qlen=call.qlen,
        )
        _validate_sharing(page_table, seq_lens, call.page_size, prefix.groups)
    qlen, heads = call.qlen, call.num_heads

    # A member takes part in its group's prefix pass only if its query tokens all follow the
    # prefix; else it attends its whole context in the suffix pass.
    takes_part = prefix.prefix_len <= seq_lens - qlen + 1
    key_starts = torch.where(takes_part, prefix.prefix_len, 0).to(torch.int32)

    # Suffix pass: a plain decode of every request's keys after its prefix, through its table
    # row shifted left by the prefix's pages (a prefix is whole pages) and its length cut by
    # as much. The causal rule compares keys with the length only, so it holds shifted, and
    # so any plan serves it: the planner's own choice (the balanced program loop on long
    # batches) sees the suffixes' lengths.
    suffix_table, suffix_lens = _after_prefix(page_table, seq_lens, key_starts, call.page_size)
    suffix_out, suffix_lse = mla_decode(q, call.kv_cache, suffix_table, suffix_lens,
                                        scale=call.scale)  # fmt: skip

    # Prefix pass: every group's rows at once over its shared pages, all groups in one launch.
    prefix_out, prefix_lse = _prefix_pass(q, call, page_table, prefix, qlen, heads)
    prefix_lse = torch.where(takes_part[:, None, None], prefix_lse, float("-inf"))

    outs, lses = torch.stack([prefix_out, suffix_out]), torch.stack([prefix_lse, suffix_lse])
    return merge_states(outs, lses)


def _after_prefix(page_table, seq_lens, key_starts, page_size):
    """(table, lengths) of each request's keys from its key start (whole pages) on: its row's
    columns shifted left, the last column repeated past the end (beyond the cut length, so
    never read)."""
    columns = page_table.shape[1]
    shift = (key_starts // page_size).long()
    index = torch.arange(columns, device=page_table.device)[None, :] + shift[:, None]
    table = torch.gather(page_table, 1, index.clamp_(max=max(columns - 1, 0)))
    return table, seq_lens - key_starts


def _prefix_pass(q, call, page_table, prefix, qlen, heads):
    """Each group's members' query rows stacked as the heads of one request (qlen 1: the prefix
    precedes every query token) over its shared pages; chunks of at most MAX_HEADS rows, all
    groups' chunks as the requests of a single decode call, so the groups' passes share one
    grid instead of one launch (and one half-empty wave) each."""
    rows_of = {}  # group -> its members' rows, flat [members * qlen * heads, d_qk]
    chunks = []  # (group, first row, rows)
    for g, ((members, pages), index) in enumerate(zip(prefix.groups, prefix.members, strict=True)):
        if pages == 0:
            continue
        rows_of[g] = q[index].reshape(len(members) * qlen * heads, q.shape[-1])
        total = rows_of[g].shape[0]
        starts = range(0, total, MAX_HEADS)
        chunks += [(g, start, min(MAX_HEADS, total - start)) for start in starts]
    prefix_out = q.new_zeros(call.batch, qlen, heads, MLA_HEAD_DIM_V)
    prefix_lse = torch.full(prefix_out.shape[:-1], float("-inf"), device=q.device)
    if not chunks:
        return prefix_out, prefix_lse
    width = max(rows for _, _, rows in chunks)
    stacked = q.new_zeros(len(chunks), 1, width, q.shape[-1])  # padding rows: zeros, dropped
    for c, (g, start, rows) in enumerate(chunks):
        stacked[c, 0, :rows] = rows_of[g][start : start + rows]
    # Each chunk reads its group's pages through the first member's table row.
    first = torch.cat([prefix.members[g][:1] for g, _, _ in chunks])
    lens = torch.cat([prefix.prefix_lens[g] for g, _, _ in chunks])
    out, lse = mla_decode(stacked, call.kv_cache, page_table[first], lens, scale=call.scale)
    for g, ((members, _), index) in enumerate(zip(prefix.groups, prefix.members, strict=True)):
        if g not in rows_of:
            continue
        parts = [(c, rows) for c, (cg, _, rows) in enumerate(chunks) if cg == g]
        group_out = torch.cat([out[c, 0, :rows] for c, rows in parts])
        group_lse = torch.cat([lse[c, 0, :rows] for c, rows in parts])
        prefix_out[index] = group_out.reshape(len(members), qlen, heads, -1)
        prefix_lse[index] = group_lse.reshape(len(members), qlen, heads)
    return prefix_out, prefix_lse


def _check_groups(prefix_groups, batch: int, columns: int) -> list[tuple[list[int], int]]:
    if not isinstance(prefix_groups, (list, tuple)):
        raise TypeError(
            "prefix_groups: expected a list of (request indices, shared pages), got "
            f"{type(prefix_groups).__name__}"
        )
    seen: set[int] = set()
    groups = []
    for group in prefix_groups:
        if not isinstance(group, (list, tuple)) or len(group) != 2:
            raise ValueError(
                f"prefix_groups: expected (request indices, shared pages) pairs, got {group!r}"
            )
        members, pages = group
        check_int("prefix_groups", pages, 0, columns)
        members = list(members)
        for b in members:
            check_int("prefix_groups", b, 0, batch - 1)
            if b in seen:
                raise ValueError(f"prefix_groups: expected each request in one group, {b} twice")
            seen.add(b)
        if members:
            groups.append((members, pages))
    return groups


def _validate_sharing(
    page_table: torch.Tensor, seq_lens: torch.Tensor, page_size: int, groups
) -> None:
    """Every shared column a member uses holds the same page id for all members using it (a
    member may end inside the prefix and use fewer of its pages)."""
    for members, pages in groups:
        members = list(members)
        rows = page_table[members, :pages].long()
        used_pages = (seq_lens[members].long() + page_size - 1) // page_size
        used = torch.arange(pages, device=rows.device)[None, :] < used_pages[:, None]
        lowest = torch.where(used, rows, torch.iinfo(torch.int64).max).amin(0)
        highest = torch.where(used, rows, torch.iinfo(torch.int64).min).amax(0)
        if bool((used.any(0) & (lowest != highest)).any()):
            raise ValueError(
                f"prefix_groups: expected requests {members} to hold the same page ids in the "
                f"first {pages} columns they use"
            )
