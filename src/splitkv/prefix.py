"""MLA decode with shared prefixes read once per group (a cascade; docs/shared-prefix.md).

1. Prefix pass: for each group, its members' query rows stacked as the heads of one request
   (qlen 1: the prefix lies before every query token) attend the group's shared pages once;
   all groups are the requests of a single decode call.
2. Suffix pass: every request attends only its keys after its group's prefix (or all of them,
   if it takes no part in a prefix pass).
3. The two states of every row merge in fp32 (`kernels/prefix_cascade.py`, as `merge_states`).

A member takes part only if its query tokens all lie after the prefix
(prefix_len <= seq_len - qlen + 1, decided on the device, so lengths may change between
CUDA-graph replays); otherwise it attends its whole context in the suffix pass.

Past the plan's `max_rows` query rows a request (heads x qlen) the attention is compute-bound:
reading shared pages once then saves less than the second pass costs, unless stacking the
members' rows fills the tensor-core tiles that the plain path pads (`_cascade_pays`). Calls
where it does not pay decode plainly.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import torch

from splitkv.checks import MAX_PAGE_SIZE, check_int, check_mla_call, validate_decode_data
from splitkv.device import DeviceSpec, on_device
from splitkv.host_lengths import host_lengths
from splitkv.kernels.prefix_cascade import merge_prefix_kernel, suffix_rows_kernel
from splitkv.merge import MAX_BLOCK_D
from splitkv.mla import decode_checked
from splitkv.plan import (
    MAX_HEADS,
    MAX_QLEN,
    MLA_HEAD_DIM_QK,
    MLA_HEAD_DIM_V,
    DecodePlan,
    max_heads_for,
    plan_decode,
)
from splitkv.plan_rules import block_h_for, next_pow2
from splitkv.prefix_rows import PrefixRows, chunk_layout, chunk_width, prefix_rows

# The cascade's time over the plain path's at equal tile rows, past max_rows (its second pass
# and merge; 1.01-1.06 on the H200 at 120 and 128 rows a request, docs/perf.md session 22).
CASCADE_COST = 1.06
# The prefix pass on chunks of one tile runs one head block a chunk, without the alternating
# consumers that two or more take (6-10% faster a row on the H200, docs/perf.md v0.2.19b):
# narrower chunks must save more tile rows than that.
NARROW_CHUNK_COST = 1.1


@dataclass(frozen=True)
class SharedPrefixPlan:
    """What `mla_decode_shared_prefix` needs on the device, built from host integers so a call
    makes no host-to-device copy (CUDA-graph capturable): the prefix pass's row indices for
    each (qlen, heads) the plan was built for or has served."""

    groups: tuple[tuple[tuple[int, ...], int], ...]  # (members, shared pages), checked
    batch_size: int  # requests a call decodes (the rows carry their prefix lengths)
    page_size: int
    device: torch.device
    max_rows: int | None  # query rows a request up to which the cascade always pays (None: any)
    spec: DeviceSpec = field(compare=False, repr=False)  # the device the tiles are sized for
    seq_lens: tuple[int, ...] = field(default=(), repr=False)  # the calls' expected lengths
    # by (qlen, heads), and ("gqa", qlen, heads, kv heads) for gqa_decode_shared_prefix
    rows: dict = field(default_factory=dict, compare=False, repr=False)
    passes: dict = field(default_factory=dict, compare=False, repr=False)  # by call shape

    def rows_for(self, qlen: int, heads: int) -> PrefixRows | None:
        """The prefix pass's chunks for calls of qlen x heads query rows a request (built on
        the first such call, which copies them to the device: not under graph capture), or
        None where those calls decode plainly (no group has a page, or the cascade would not
        pay)."""
        if (qlen, heads) in self.rows:
            return self.rows[qlen, heads]
        per_request = qlen * heads
        width = self._chunk_rows(per_request)
        chunks = chunk_layout(self.groups, per_request, width)
        if not (chunks and self._cascade_pays(chunks, per_request)):
            self.rows[qlen, heads] = None  # a plain decode: nothing to put on the device
            return None
        refuse_under_capture(self.device, qlen, heads)
        self.rows[qlen, heads] = prefix_rows(
            self.groups, self.batch_size, per_request, self.page_size, width, self.device
        )
        return self.rows[qlen, heads]

    def _chunk_rows(self, per_request: int) -> int:
        """The prefix pass's most rows a chunk: MAX_HEADS, or a smaller multiple of the tile
        (`block_m`) where that computes fewer tile rows by more than NARROW_CHUNK_COST (8
        members of 24 rows: 3 chunks of 64 rows instead of 128 and 64 padded to 2 x 128)."""
        tile = self.spec.tunables.block_m
        best = MAX_HEADS
        best_rows = self._stacked_rows(chunk_layout(self.groups, per_request, best))
        best_rows /= NARROW_CHUNK_COST
        for width in range(MAX_HEADS - tile, 0, -tile):  # ties keep the wider chunks
            rows = self._stacked_rows(chunk_layout(self.groups, per_request, width))
            if rows < best_rows:
                best, best_rows = width, rows
        return best

    def _stacked_rows(self, chunks: list[tuple[int, int, int]]) -> int:
        """Rows the prefix pass's tiles compute: every chunk as wide as the widest (one
        request's heads), in whole head blocks."""
        return len(chunks) * _tile_rows(chunk_width(chunks), self.spec) if chunks else 0

    def _cascade_pays(self, chunks: list[tuple[int, int, int]], per_request: int) -> bool:
        """Up to `max_rows` query rows a request, always. Past them both paths compute the
        same attention, each on tiles of block_h rows (`plan_rules.block_h_for`), and the
        cascade pays only where its stacked chunks pad fewer rows than the plain path's
        head blocks by more than its own cost. On the H200 (docs/perf.md, session 22, 8 x
        327,600 sharing 308,736 and the 6-group mix) at equal tile rows (120 and 128 rows a
        request) the cascade took 1-6% longer; with a sixth fewer (160 rows: chunks of 128
        against blocks of 192) it was 7-14% faster, a quarter fewer (96) 20-25%."""
        if self.max_rows is None or per_request <= self.max_rows:
            return True
        members = sum(len(m) for m, pages in self.groups if pages)
        plain = members * _tile_rows(per_request, self.spec)
        return self._stacked_rows(chunks) * CASCADE_COST <= plain

    def suffix_pass_lengths(self, qlen: int, cascade: bool, max_keys: int) -> list[int] | None:
        """The lengths that steer the suffix pass's plan (`plan_decode`'s `seq_lens`), from
        those given to `plan_shared_prefix`: a request's keys after its group's prefix where
        its query tokens all follow the prefix (as `suffix_rows` decides on the device), else
        its whole context; every whole context where the call decodes plainly (`cascade`
        False); none past the call's table (`max_keys`). None where no lengths were given."""
        if not self.seq_lens:
            return None
        lengths = [min(n, max_keys) for n in self.seq_lens]
        if cascade:
            for members, pages in self.groups:
                prefix = pages * self.page_size
                for b in members:
                    if 0 < prefix <= lengths[b] - qlen + 1:
                        lengths[b] -= prefix
        return lengths

    def plans_for(self, q: torch.Tensor, columns: int, rows: PrefixRows | None
                  ) -> tuple[DecodePlan, DecodePlan | None]:  # fmt: skip
        """The suffix and prefix passes' decode plans for calls of q's shape and dtype with
        page tables of `columns` pages, planned on the first such call and kept with their
        workspaces (so, like a DecodePlan, one plan serves one stream at a time). Planning
        costs the host 75-155 us a pass (docs/perf.md v0.2.19c), the order of the GPU's
        whole cascade.
        Plans made under a CUDA-graph capture are used but not kept: their workspaces live in
        the graph's memory pool."""
        batch, qlen, heads = q.shape[:3]
        key = (qlen, heads, q.dtype, q.device, columns)
        if key in self.passes:
            return self.passes[key]
        suffix = plan_decode(max(batch, 1), columns * self.page_size, heads, qlen=qlen,
                             page_size=self.page_size, dtype=q.dtype, device=q.device,
                             seq_lens=self.suffix_pass_lengths(
                                 qlen, rows is not None, columns * self.page_size))  # fmt: skip
        prefix = None
        if rows is not None:
            # The balanced schedule: on the H200 the stacked rows' pass took 193.6 us against
            # uniform splits' 199.4 on 8 x 327,600 (one chunk), 150.8 against 184.9 on the
            # 6-group mix (chunks of 16k-64k keys; docs/perf.md, session 18).
            prefix = plan_decode(rows.num_chunks, rows.tokens, rows.width,
                                 page_size=self.page_size, dtype=q.dtype, device=q.device,
                                 schedule="balanced")  # fmt: skip
        return self.keep_passes(key, (suffix, prefix), q)

    def keep_passes(self, key, plans: tuple, q: torch.Tensor) -> tuple:
        """Keep a shape's pass plans for its later calls, unless planned under a CUDA-graph
        capture (their workspaces live in the graph's memory pool); returns them."""
        if not (q.is_cuda and torch.cuda.is_current_stream_capturing()):
            self.passes[key] = plans
        return plans


def plan_shared_prefix(
    prefix_groups: Sequence[tuple[Sequence[int], int]],
    batch_size: int,
    max_pages: int,
    page_size: int,
    device: torch.device | str,
    *,
    num_heads: int | None = None,
    qlen: int = 1,
    num_kv_heads: int | None = None,
    max_rows: int | None = None,
    seq_lens: Sequence[int] | torch.Tensor | None = None,
    device_spec: DeviceSpec | None = None,
) -> SharedPrefixPlan:
    """Check the grouping and put it on the device.

    prefix_groups: (request indices, shared pages) per group: those requests hold the same page
    ids in their first `shared pages` page-table columns (as the serving engine's prefix cache
    knows). A request belongs to at most one group; requests in no group are decoded plainly.
    num_heads, qlen: the calls' query heads and positions, to build the prefix pass's row
    indices now (a graph captured on the plan's first call needs them); else the first call
    of each shape builds them.
    num_kv_heads: with num_heads, build them for `gqa_decode_shared_prefix` calls of that
    many kv heads instead (MLA calls: leave it None).
    max_rows: the most query rows a request (heads x qlen) at which reading shared pages once
    always pays; with more (compute-bound) a call takes the cascade only where stacking
    the members' rows pads the tensor-core tiles less than the plain path (the H200: 96 or
    160 rows yes, 120 or 128 no), else decodes plainly (the same results). Default: the
    device's measured crossover (`DeviceSpec.tunables.prefix_max_rows`: 64 on the H200),
    else the cascade at any row count.
    seq_lens: the lengths the calls are expected to have, one a request (host ints or a
        tensor, read once here), as `plan_decode`'s: they steer the suffix pass's plan, which
        then sees each request's keys after its prefix (ragged suffixes may take the balanced
        schedule) instead of planning for whole tables. Calls may have any lengths.
    device_spec: the device the tiles are sized for; default: read off `device`.
    """
    check_int("page_size", page_size, 1, MAX_PAGE_SIZE)
    groups = _check_groups(prefix_groups, batch_size, max_pages)
    lengths = host_lengths(seq_lens, batch_size, max_pages * page_size)
    if seq_lens is not None and len(lengths) != batch_size:
        raise ValueError(
            f"seq_lens: expected one length a request ({batch_size}), got {len(lengths)}"
        )
    if num_heads is not None:
        kind = "mla" if num_kv_heads is None else "gqa"
        check_int("num_heads", num_heads, 1, max_heads_for(kind))
        check_int("qlen", qlen, 1, MAX_QLEN)
    if num_kv_heads is not None:
        if num_heads is None or num_heads % max(num_kv_heads, 1):
            raise ValueError(
                f"num_kv_heads: expected a divisor of num_heads={num_heads}, got {num_kv_heads}"
            )
        check_int("num_kv_heads", num_kv_heads, 1, num_heads)
    spec = device_spec if device_spec is not None else DeviceSpec.from_torch(device)
    if max_rows is None:
        max_rows = spec.tunables.prefix_max_rows
    else:
        check_int("max_rows", max_rows, 0, MAX_HEADS * MAX_QLEN)
    plan = SharedPrefixPlan(
        groups=tuple((tuple(m), p) for m, p in groups),
        batch_size=batch_size,
        page_size=page_size,
        device=torch.device(device),
        max_rows=max_rows,
        spec=spec,
        seq_lens=tuple(lengths),
    )
    if num_heads is not None and num_kv_heads is not None:
        from splitkv.prefix_gqa import gqa_rows_for  # the GQA cascade builds on this module

        gqa_rows_for(plan, qlen, num_heads, num_kv_heads)
    elif num_heads is not None:
        plan.rows_for(qlen, num_heads)
    return plan


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
            pages) pairs (planned on each call then: that copies them to the device). Calls of
            more query rows a request than the plan's `max_rows` decode plainly.
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
    prefix = resolve_prefix_plan(prefix_groups, call.batch, page_table, call.page_size, q.device)
    if validate:
        validate_decode_data(
            page_table,
            seq_lens,
            num_pages=call.kv_cache.shape[0],
            page_size=call.page_size,
            qlen=call.qlen,
        )
        validate_sharing(page_table, seq_lens, call.page_size, prefix.groups)
    qlen, heads = call.qlen, call.num_heads
    rows = prefix.rows_for(qlen, heads)  # built, or a clear error under capture, before any launch

    # A member takes part in its group's prefix pass only if its query tokens all follow the
    # prefix; else it attends its whole context in the suffix pass. The suffix pass: a plain
    # decode of every request's keys after its prefix, through its table row shifted left by
    # the prefix's pages (a prefix is whole pages) and its length cut by as much. The causal
    # rule compares keys with the length only, so it holds shifted, and so any plan serves
    # it: the planner's own choice (the balanced program loop on long batches) sees the
    # suffixes' lengths.
    suffix_plan, prefix_plan = prefix.plans_for(q, page_table.shape[1], rows)
    # Both passes launch on this call's checked facts (`decode_checked`): their tables,
    # lengths and stacked rows are built here from checked arguments, on plans made for them.
    if rows is None or call.batch == 0:  # no prefix pass: a plain decode
        return decode_checked(suffix_plan, q, call, page_table, seq_lens)
    suffix_table, suffix_lens, takes_part = suffix_rows(page_table, seq_lens, prefix, qlen, rows)
    suffix_out, suffix_lse = decode_checked(suffix_plan, q, call, suffix_table, suffix_lens)
    # Prefix pass: every group's rows at once over its shared pages, all groups in one launch.
    chunk_out, chunk_lse = _prefix_pass(q, call, page_table, rows, prefix_plan)
    return merge_prefix_states(chunk_out, chunk_lse, rows, takes_part, suffix_out, suffix_lse)


def resolve_prefix_plan(
    prefix_groups, batch: int, page_table: torch.Tensor, page_size: int, device: torch.device
) -> SharedPrefixPlan:
    """The call's plan: the caller's, checked against the call, or one built from its groups
    (which copies them to the device)."""
    if not isinstance(prefix_groups, SharedPrefixPlan):
        return plan_shared_prefix(prefix_groups, batch, page_table.shape[1], page_size, device)
    if prefix_groups.batch_size != batch or prefix_groups.page_size != page_size:
        raise ValueError(
            f"prefix_groups: expected a plan for {batch} requests of page size {page_size}, "
            f"got one for {prefix_groups.batch_size} / {prefix_groups.page_size}"
        )
    return prefix_groups


def refuse_under_capture(device: torch.device, qlen: int, heads: int, more_args: str = "") -> None:
    """A plan's first call of a shape copies its rows to the device: not under capture.
    `more_args`: the rest of the plan_shared_prefix arguments the message suggests."""
    if device.type == "cuda" and torch.cuda.is_current_stream_capturing():
        raise ValueError(
            f"prefix_groups: a plan not yet used for qlen {qlen} x {heads} heads, under "
            f"CUDA-graph capture; build it with plan_shared_prefix(..., num_heads={heads}, "
            f"qlen={qlen}{more_args}) or make one call before capturing"
        )


def _tile_rows(rows: int, spec: DeviceSpec) -> int:
    """Rows the MLA tiles compute for `rows` query rows: whole head blocks of block_h."""
    block_h = block_h_for(None, "mla", rows, spec)
    return -(-rows // block_h) * block_h


def suffix_rows(page_table, seq_lens, prefix, qlen, rows):
    """(table, lengths) of each request's keys after its prefix, and whether it takes part in
    its group's prefix pass (int8), in one launch, which also points each of `rows`' chunks at
    a member taking part (`PrefixRows.first`)."""
    batch, columns = page_table.shape
    table = torch.empty_like(page_table, memory_format=torch.contiguous_format)
    lens = torch.empty_like(seq_lens)
    takes_part = torch.empty(batch, dtype=torch.int8, device=seq_lens.device)
    if batch and columns:
        block = min(1024, next_pow2(columns))
        with on_device(page_table.device):
            suffix_rows_kernel[(batch, -(-columns // block))](
                page_table, seq_lens, rows.prefix_len, table, lens, takes_part,
                rows.chunk_lo, rows.chunk_hi, rows.first, columns, page_table.stride(0),
                QLEN=qlen, PAGE_SIZE=prefix.page_size, BLOCK_C=block,
            )  # fmt: skip
    elif batch:  # no columns: nothing to shift, no prefix
        lens.copy_(seq_lens)
        takes_part.zero_()
    return table, lens, takes_part


def _prefix_pass(q, call, page_table, rows, plan):
    """Each group's members' query rows stacked as the heads of one request (qlen 1: the prefix
    precedes every query token) over its shared pages; chunks of at most MAX_HEADS rows, all
    groups' chunks as the requests of a single decode call, so the groups' passes share one
    grid instead of one launch (and one half-empty wave) each. Returns the chunks' rows'
    (out [chunk rows, d_v], lse [chunk rows])."""
    stacked, chunk_table = stacked_rows(q, page_table, rows)
    stacked_call = call._replace(batch=rows.num_chunks, qlen=1, num_heads=rows.width)
    out, lse = decode_checked(plan, stacked, stacked_call, chunk_table, rows.lens)
    return out.view(-1, out.shape[-1]), lse.view(-1)


def stacked_rows(q, page_table, rows):
    """The prefix pass's requests: each chunk's query rows stacked as its heads, [chunks, 1,
    width, head dim], and its table row, a member taking part's (it holds the group's shared
    pages). `index_select`, not indexing: a fifth of the host time on a CPU, and fewer checks
    on a GPU, for the same copy."""
    head_dim = q.shape[-1]
    stacked = q.reshape(-1, head_dim).index_select(0, rows.gather)
    chunk_table = page_table.index_select(0, rows.first)
    return stacked.view(rows.num_chunks, 1, rows.width, head_dim), chunk_table


def merge_prefix_states(chunk_out, chunk_lse, rows, takes_part, suffix_out, suffix_lse):
    """Each query row's prefix state (weight 0 where its request took no part) merged with its
    suffix state in fp32, in one launch."""
    out, lse = torch.empty_like(suffix_out), torch.empty_like(suffix_lse)
    head_dim = suffix_out.shape[-1]
    block_d = min(MAX_BLOCK_D, next_pow2(head_dim))
    with on_device(out.device):
        merge_prefix_kernel[(suffix_lse.numel(), -(-head_dim // block_d))](
            chunk_out, chunk_lse, rows.scatter, takes_part, suffix_out, suffix_lse, out, lse,
            ROWS_PER_REQUEST=suffix_lse[0].numel(), HEAD_DIM=head_dim, BLOCK_D=block_d,
        )  # fmt: skip
    return out, lse


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
        if not isinstance(members, (list, tuple, range)):
            raise TypeError(
                "prefix_groups: expected a group's request indices as a list, got "
                f"{type(members).__name__}"
            )
        members = list(members)
        for b in members:
            check_int("prefix_groups", b, 0, batch - 1)
            if b in seen:
                raise ValueError(f"prefix_groups: expected each request in one group, {b} twice")
            seen.add(b)
        if members:
            groups.append((members, pages))
    return groups


def validate_sharing(
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
