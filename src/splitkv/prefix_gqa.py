"""GQA/MHA decode with shared prefixes read once per chunk of a group: the cascade of
`splitkv/prefix.py` on NHD caches (docs/shared-prefix.md).

1. Prefix pass: each kv head's query rows of a group's members (qlen x heads of that kv head,
   member by member) are stacked as that kv head's heads of one request over the group's
   shared pages (qlen 1: the prefix lies before every query token). A chunk holds at most one
   head block of rows a kv head (`chunk_rows_per_kv_head`: 64 on the H200), so each kv head's
   prefix is read once a chunk: all 8 members of llama3-8b (4 heads a kv head) or gpt-oss (8).
2. Suffix pass and merge as for MLA: every request's keys after its prefix, then the two states
   of every row in fp32. Sinks enter the suffix pass only, so each row's softmax counts them
   once; a logit cap applies to both passes.

A sliding window (`window_left >= 0`) decodes plainly: the prefix pass would need each query
token's window, and a window that excludes most of a long prefix leaves little to share.
Calls whose chunks would hold one member each (too many rows a kv head) decode plainly too.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from splitkv.checks import check_gqa_call, validate_decode_data
from splitkv.device import DeviceSpec
from splitkv.gqa import decode_checked
from splitkv.plan import MAX_GQA_HEADS, MAX_QLEN, DecodePlan, plan_decode
from splitkv.prefix import (
    SharedPrefixPlan,
    merge_prefix_states,
    refuse_under_capture,
    resolve_prefix_plan,
    stacked_rows,
    suffix_rows,
    validate_sharing,
)
from splitkv.prefix_rows import PrefixRows, chunk_layout, prefix_rows


def gqa_decode_shared_prefix(
    q: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    page_table: torch.Tensor,
    seq_lens: torch.Tensor,
    prefix_groups: Sequence[tuple[Sequence[int], int]] | SharedPrefixPlan,
    *,
    scale: float | None = None,
    window_left: int = -1,
    logit_cap: float = 0.0,
    sinks: torch.Tensor | None = None,
    validate: bool = False,
) -> tuple[torch.Tensor, torch.Tensor]:
    """GQA/MHA decode where groups of requests share leading pages (prefix caching): each
    group's shared pages are read once a chunk of its members (module docstring).

    Args:
        q, k_cache, v_cache, page_table, seq_lens, scale, window_left, logit_cap, sinks: as
            `splitkv.gqa_decode`.
        prefix_groups: a `plan_shared_prefix(...)` result (with `num_kv_heads=` to build the
            prefix pass's rows before a CUDA-graph capture), or its (request indices, shared
            pages) pairs (planned on each call then: that copies them to the device).
        validate: also check lengths and page ids, and that each group's members hold the
            same page ids in the shared columns they use (syncs).

    Returns:
        (out, lse) as `splitkv.gqa_decode`, equal to it within rounding.

    >>> import torch, splitkv
    >>> dev = "cuda" if torch.cuda.is_available() else "cpu"
    >>> dt = torch.bfloat16 if dev == "cuda" else torch.float16
    >>> q = torch.randn(2, 1, 8, 64, dtype=dt, device=dev)
    >>> k, v = torch.randn(2, 6, 16, 2, 64, dtype=dt, device=dev)
    >>> table = torch.tensor([[0, 1, 2], [0, 1, 3]], dtype=torch.int32, device=dev)  # 0-1 shared
    >>> lens = torch.tensor([40, 45], dtype=torch.int32, device=dev)
    >>> out, lse = splitkv.gqa_decode_shared_prefix(q, k, v, table, lens, [([0, 1], 2)])
    >>> out.shape, lse.shape
    (torch.Size([2, 1, 8, 64]), torch.Size([2, 1, 8]))
    """
    call = check_gqa_call(
        q,
        k_cache,
        v_cache,
        page_table,
        seq_lens,
        scale=scale,
        out=None,
        lse=None,
        window_left=window_left,
        logit_cap=logit_cap,
        sinks=sinks,
        max_heads=MAX_GQA_HEADS,
        max_qlen=MAX_QLEN,
    )
    prefix = resolve_prefix_plan(prefix_groups, call.batch, page_table, call.page_size, q.device)
    if validate:
        validate_decode_data(
            page_table, seq_lens, num_pages=call.num_pages, page_size=call.page_size,
            qlen=call.qlen,
        )  # fmt: skip
        validate_sharing(page_table, seq_lens, call.page_size, prefix.groups)
    rows = None  # built, or a clear error under capture, before any launch
    if window_left < 0:
        rows = gqa_rows_for(prefix, call.qlen, call.num_q_heads, call.num_kv_heads)
    suffix_plan, prefix_plan = gqa_plans_for(prefix, q, call, page_table.shape[1], rows)
    # Both passes launch on this call's checked facts, as the MLA cascade's.
    caches = (k_cache, v_cache)
    if rows is None or call.batch == 0:  # no prefix pass: a plain decode
        return decode_checked(suffix_plan, call, q, caches, page_table, seq_lens, sinks)
    suffix_table, suffix_lens, takes_part = suffix_rows(page_table, seq_lens, prefix, call.qlen,
                                                        rows)  # fmt: skip
    suffix_out, suffix_lse = decode_checked(suffix_plan, call, q, caches, suffix_table,
                                            suffix_lens, sinks)  # fmt: skip
    # Prefix pass: every chunk's stacked rows over its group's pages (read through the table
    # row of a member taking part), all chunks the requests of one launch; no sinks (the
    # suffix pass counts them once).
    head_dim = call.head_dim
    stacked, chunk_table = stacked_rows(q, page_table, rows)
    stacked_call = call._replace(batch=rows.num_chunks, qlen=1, num_q_heads=rows.width)
    chunk_out, chunk_lse = decode_checked(prefix_plan, stacked_call, stacked, caches,
                                          chunk_table, rows.lens)  # fmt: skip
    return merge_prefix_states(chunk_out.view(-1, head_dim), chunk_lse.view(-1), rows,
                               takes_part, suffix_out, suffix_lse)  # fmt: skip


def gqa_rows_for(
    prefix: SharedPrefixPlan, qlen: int, q_heads: int, kv_heads: int
) -> PrefixRows | None:
    """The prefix pass's chunks for calls of this shape (built on the first, kept in the
    plan), or None where those calls decode plainly: no group has a page, or a chunk could
    hold no more than one member's rows."""
    key = ("gqa", qlen, q_heads, kv_heads)
    if key in prefix.rows:
        return prefix.rows[key]
    heads_per_kv = q_heads // kv_heads
    per_request = qlen * heads_per_kv  # rows a kv head
    members_per_chunk = chunk_rows_per_kv_head(prefix.spec, kv_heads) // per_request
    chunk_rows = members_per_chunk * per_request  # whole members: a chunk never splits one
    if members_per_chunk < 2 or not chunk_layout(prefix.groups, per_request, chunk_rows):
        prefix.rows[key] = None
        return None
    refuse_under_capture(prefix.device, qlen, q_heads, f", num_kv_heads={kv_heads}")
    prefix.rows[key] = prefix_rows(prefix.groups, prefix.batch_size, per_request, prefix.page_size,
                                   chunk_rows, prefix.device, kv_heads=kv_heads,
                                   heads_per_kv=heads_per_kv)  # fmt: skip
    return prefix.rows[key]


def chunk_rows_per_kv_head(spec: DeviceSpec, kv_heads: int) -> int:
    """The prefix pass's most rows a kv head a chunk: one head block (the device's `block_m`),
    since a program reads its kv head's keys for the rows of its block only, so a second block
    would read the prefix again; and at most MAX_GQA_HEADS stacked heads in all."""
    return min(spec.tunables.block_m, MAX_GQA_HEADS // kv_heads)


def gqa_plans_for(
    prefix: SharedPrefixPlan, q: torch.Tensor, call, columns: int, rows: PrefixRows | None
) -> tuple[DecodePlan, DecodePlan | None]:
    """The suffix and prefix passes' decode plans, planned on a shape's first call and kept
    with their workspaces, as `SharedPrefixPlan.plans_for` does for MLA."""
    key = ("gqa", call.qlen, call.num_q_heads, call.num_kv_heads, call.head_dim,
           call.window_left, q.dtype, q.device, columns)  # fmt: skip
    if key in prefix.passes:
        return prefix.passes[key]
    gqa = {"kind": "gqa", "num_kv_heads": call.num_kv_heads, "head_dim": call.head_dim}
    tiles = {"page_size": prefix.page_size, "dtype": q.dtype, "device": q.device}
    lengths = prefix.suffix_pass_lengths(call.qlen, rows is not None, columns * prefix.page_size)
    suffix = plan_decode(max(call.batch, 1), columns * prefix.page_size, call.num_q_heads,
                         qlen=call.qlen, window_left=call.window_left, seq_lens=lengths, **gqa,
                         **tiles)  # fmt: skip
    stacked = None
    if rows is not None:
        stacked = plan_decode(rows.num_chunks, rows.tokens, rows.width, **gqa, **tiles,
                              **stacked_schedule(rows.chunk_tokens))  # fmt: skip
    return prefix.keep_passes(key, (suffix, stacked), q)


def stacked_schedule(chunk_tokens: Sequence[int]) -> dict:
    """The prefix pass's schedule from its chunks' prefix lengths (host integers, fixed for the
    plan). Chunks of different lengths take the balanced schedule: planned as uniform splits
    of the longest, the shorter chunks' programs idle while the long-split rule has cut the
    launch to one wave (gpt-oss's 6-group mix at v0.2.31: 380.2 us, balanced 254.3; llama3-8b
    474.9 -> 447.9, llama3-70b-tp8 100.5 -> 94.6; docs/perf.md, session 31). Chunks of one
    length keep the planner's uniform splits, which beat the balanced schedule by 15% on
    llama3-8b's and gpt-oss's single chunk of 8 x 131,072 sharing 122,880."""
    lengths = list(chunk_tokens)
    if len(set(lengths)) > 1:
        return {"seq_lens": lengths, "schedule": "balanced"}
    return {"seq_lens": lengths}
