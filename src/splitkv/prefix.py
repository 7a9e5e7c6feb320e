"""MLA decode with shared prefixes read once per group (a cascade; docs/shared-prefix.md).

1. Prefix pass: for each group, its members' query rows stacked as the heads of one request
   (qlen 1: the prefix lies before every query token) attend the group's shared pages once.
2. Suffix pass: every request attends only its keys after its group's prefix (or all of them,
   if it takes no part in a prefix pass).
3. The two states of every row merge in fp32 (`merge_states`).

A member takes part only if its query tokens all lie after the prefix
(prefix_len <= seq_len - qlen + 1, decided on the device, so lengths may change between
CUDA-graph replays); otherwise it attends its whole context in the suffix pass.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from splitkv.checks import check_int, check_mla_call, validate_decode_data
from splitkv.merge import merge_states
from splitkv.mla import _launch, mla_decode
from splitkv.plan import MAX_HEADS, MAX_QLEN, MLA_HEAD_DIM_QK, MLA_HEAD_DIM_V, plan_decode


def mla_decode_shared_prefix(
    q: torch.Tensor,
    kv_cache: torch.Tensor,
    page_table: torch.Tensor,
    seq_lens: torch.Tensor,
    prefix_groups: Sequence[tuple[Sequence[int], int]],
    *,
    scale: float | None = None,
    validate: bool = False,
) -> tuple[torch.Tensor, torch.Tensor]:
    """MLA decode where groups of requests share leading pages (prefix caching).

    Args:
        q, kv_cache, page_table, seq_lens, scale: as `splitkv.mla_decode`.
        prefix_groups: (request indices, shared pages) per group: the requests hold the same
            page ids in their first `shared pages` table columns (host integers, as the serving
            engine's prefix cache knows them). A request belongs to at most one group; requests
            in no group are decoded plainly.
        validate: also check, on the device, that each group's rows really share those pages.

    Returns:
        (out, lse) as `splitkv.mla_decode`; equal to it within rounding.
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
    groups = _check_groups(prefix_groups, call.batch, page_table.shape[1])
    if validate:
        validate_decode_data(
            page_table,
            seq_lens,
            num_pages=call.kv_cache.shape[0],
            page_size=call.page_size,
            qlen=call.qlen,
        )
        _validate_sharing(page_table, seq_lens, call.page_size, groups)
    device, page_size, qlen, heads = q.device, call.page_size, call.qlen, call.num_heads

    # Each request's prefix length, and whether its query tokens all follow the prefix.
    prefix_len = torch.zeros(call.batch, dtype=torch.int32, device=device)
    for members, pages in groups:
        prefix_len[list(members)] = pages * page_size
    takes_part = prefix_len <= seq_lens - qlen + 1
    key_starts = torch.where(takes_part, prefix_len, 0).to(torch.int32)

    # Suffix pass: every request from its first key on.
    plan = plan_decode(
        max(call.batch, 1),
        page_table.shape[1] * page_size,
        heads,
        qlen=qlen,
        page_size=page_size,
        dtype=q.dtype,
        device=device,
    )
    suffix_out = q.new_empty(call.batch, qlen, heads, MLA_HEAD_DIM_V)
    suffix_lse = torch.empty(call.batch, qlen, heads, dtype=torch.float32, device=device)
    if call.batch:
        _launch(plan, q, call, page_table, seq_lens, suffix_out, suffix_lse, key_starts)

    # Prefix pass: per group, all members' rows at once over the shared pages.
    prefix_out = torch.zeros_like(suffix_out)
    prefix_lse = torch.full_like(suffix_lse, float("-inf"))
    for members, pages in groups:
        if pages == 0:
            continue
        index = torch.tensor(members, device=device)
        rows = q[index].reshape(1, 1, len(members) * qlen * heads, -1)
        table = page_table[members[0] : members[0] + 1, :pages]
        lens = torch.full((1,), pages * page_size, dtype=torch.int32, device=device)
        out_g, lse_g = _stacked_decode(rows, call.kv_cache, table, lens, call.scale)
        out_g = out_g.reshape(len(members), qlen, heads, -1)
        lse_g = lse_g.reshape(len(members), qlen, heads)
        # A member whose query tokens fall inside the prefix took its whole context above.
        lse_g = torch.where(takes_part[index][:, None, None], lse_g, float("-inf"))
        prefix_out[index] = out_g
        prefix_lse[index] = lse_g

    return merge_states(
        torch.stack([prefix_out, suffix_out]), torch.stack([prefix_lse, suffix_lse])
    )


def _stacked_decode(rows, kv_cache, table, lens, scale):
    """Decode many stacked rows (one 'request' with qlen 1), in chunks the kernels take."""
    outs, lses = [], []
    for start in range(0, rows.shape[2], MAX_HEADS):
        chunk = rows[:, :, start : start + MAX_HEADS]
        out, lse = mla_decode(chunk, kv_cache, table, lens, scale=scale)
        outs.append(out)
        lses.append(lse)
    return torch.cat(outs, dim=2), torch.cat(lses, dim=2)


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
