"""Random paged decode inputs and the comparison against the reference.

Shared by the tests, the benchmarks and the CLI, so every place checks values the same way.
Inputs are random (never zeros), pages are shuffled across the pool, and every slot a request
does not own holds NaN, so a kernel that reads past a length or through an unused page-table
entry puts NaN into its output.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

# Relative Frobenius error allowed against the fp32 reference, per input dtype (DESIGN.md).
TOLERANCES = {torch.bfloat16: 2e-2, torch.float16: 2e-2, torch.float32: 2e-2}
FILL_CHUNK = 1 << 20  # KV rows drawn per step when filling a cache


@dataclass
class MlaCase:
    """One decode call's inputs. `poison_page` is a page of NaN that unused table entries name."""

    q: torch.Tensor
    kv_cache: torch.Tensor
    page_table: torch.Tensor
    seq_lens: torch.Tensor
    poison_page: int
    shared_prefix: int = 0  # leading tokens all requests share (same page ids)
    # (requests, leading tokens they share) per group, when the batch has several groups
    prefix_groups: tuple[tuple[tuple[int, ...], int], ...] = ()

    @property
    def args(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        return self.q, self.kv_cache, self.page_table, self.seq_lens

    @property
    def sharing(self) -> tuple[tuple[tuple[int, ...], int], ...]:
        """(requests, shared leading tokens) per group of requests holding the same pages."""
        return prefix_groups_of(self.shared_prefix, self.prefix_groups, self.q.shape[0])

    @property
    def key_pool(self) -> torch.Tensor:
        """The paged pool the keys live in (its size and page size), as for `GqaCase`."""
        return self.kv_cache


def random_mla_case(
    seq_lens: list[int],
    num_heads: int,
    *,
    qlen: int = 1,
    page_size: int = 64,
    dtype: torch.dtype = torch.float16,
    device: torch.device | str = "cpu",
    head_dim_qk: int = 576,
    table_columns: int | None = None,
    shared_prefix: int = 0,
    prefix_groups: Sequence[tuple[Sequence[int], int]] = (),
    spare_pages: int = 3,
    first_page: int = 0,
    contiguous: bool = False,
    seed: int | None = None,
) -> MlaCase:
    """Random MLA inputs for requests of the given lengths.

    table_columns: page-table width (default: the longest request's pages + 1 unused column).
    shared_prefix: tokens (a multiple of page_size) whose pages all requests share, as prefix
        caching produces: the same page ids at the same table positions.
    prefix_groups: several groups instead: (request indices, shared tokens) per group, each
        group's pages its own; requests in no group share nothing.
    spare_pages: pool pages nobody uses (NaN), so page ids are not simply dense.
    first_page: lowest page id handed out; pages below it exist but are unused, which places a
        small case at the far end of a large pool (64-bit offsets).
    contiguous: each request's own pages in order (the benchmarks' layout), not shuffled.
    """
    groups = prefix_groups_of(shared_prefix, prefix_groups, len(seq_lens))
    layout = _paged_layout(
        seq_lens,
        page_size,
        table_columns,
        groups,
        spare_pages,
        first_page,
        contiguous,
        device,
        seed,
    )
    kv_cache = layout.random_cache((head_dim_qk,), dtype)
    q = layout.randn((len(seq_lens), qlen, num_heads, head_dim_qk), dtype)
    return MlaCase(
        q,
        kv_cache,
        layout.page_table,
        layout.seq_lens,
        layout.poison_page,
        shared_prefix,
        tuple((tuple(m), t) for m, t in prefix_groups),
    )


def prefix_groups_of(
    shared_prefix: int, prefix_groups: Sequence[tuple[Sequence[int], int]], batch: int
) -> tuple[tuple[tuple[int, ...], int], ...]:
    """One form for both ways of naming shared prefixes: (requests, tokens) per group."""
    if shared_prefix and prefix_groups:
        raise ValueError("prefix_groups: expected either shared_prefix or prefix_groups, not both")
    if shared_prefix:
        return ((tuple(range(batch)), shared_prefix),)
    return tuple((tuple(members), tokens) for members, tokens in prefix_groups)


@dataclass
class GqaCase:
    """One GQA decode call's inputs (NHD caches); `poison_page` as for `MlaCase`."""

    q: torch.Tensor
    k_cache: torch.Tensor
    v_cache: torch.Tensor
    page_table: torch.Tensor
    seq_lens: torch.Tensor
    poison_page: int
    sinks: torch.Tensor | None = None  # optional [q_heads] float32 sink logits
    # (requests, leading tokens they share) per group, as `MlaCase.sharing`
    sharing: tuple[tuple[tuple[int, ...], int], ...] = ()

    @property
    def args(self) -> tuple[torch.Tensor, ...]:
        return self.q, self.k_cache, self.v_cache, self.page_table, self.seq_lens

    @property
    def key_pool(self) -> torch.Tensor:
        """The paged pool the keys live in (its size and page size), as for `MlaCase`."""
        return self.k_cache


def random_gqa_case(
    seq_lens: list[int],
    num_q_heads: int,
    num_kv_heads: int,
    head_dim: int = 128,
    *,
    qlen: int = 1,
    page_size: int = 16,
    dtype: torch.dtype = torch.float16,
    device: torch.device | str = "cpu",
    table_columns: int | None = None,
    spare_pages: int = 3,
    first_page: int = 0,
    contiguous: bool = False,
    sinks: bool = False,
    shared_prefix: int = 0,
    prefix_groups: Sequence[tuple[Sequence[int], int]] = (),
    seed: int | None = None,
) -> GqaCase:
    """Random GQA inputs: caches [num_pages, page_size, kv_heads, head_dim], NaN wherever a
    request owns no slot; `sinks`: random sink logits too. Other arguments as for
    `random_mla_case`."""
    groups = prefix_groups_of(shared_prefix, prefix_groups, len(seq_lens))
    layout = _paged_layout(
        seq_lens, page_size, table_columns, groups, spare_pages, first_page, contiguous, device,
        seed,
    )  # fmt: skip
    k_cache = layout.random_cache((num_kv_heads, head_dim), dtype)
    v_cache = layout.random_cache((num_kv_heads, head_dim), dtype)
    q = layout.randn((len(seq_lens), qlen, num_q_heads, head_dim), dtype)
    sink_logits = layout.randn((num_q_heads,), torch.float32) if sinks else None
    return GqaCase(
        q, k_cache, v_cache, layout.page_table, layout.seq_lens, layout.poison_page, sink_logits,
        groups,
    )  # fmt: skip


@dataclass
class _Layout:
    """Which pool slots each request owns, and a generator on the device to fill them."""

    page_table: torch.Tensor
    seq_lens: torch.Tensor
    pages: torch.Tensor  # page of every owned slot
    slots: torch.Tensor  # slot within that page
    num_pages: int
    page_size: int
    poison_page: int
    generator: torch.Generator

    def randn(self, shape: tuple[int, ...], dtype: torch.dtype) -> torch.Tensor:
        device = self.generator.device
        return torch.randn(shape, generator=self.generator, device=device).to(dtype)

    def random_cache(self, row_shape: tuple[int, ...], dtype: torch.dtype) -> torch.Tensor:
        """[num_pages, page_size, *row_shape]: random rows in owned slots, NaN elsewhere."""
        device = self.generator.device
        shape = (self.num_pages, self.page_size, *row_shape)
        cache = torch.full(shape, float("nan"), dtype=dtype, device=device)
        for start in range(0, len(self.pages), FILL_CHUNK):  # bounds the fp32 staging memory
            chunk = slice(start, start + FILL_CHUNK)
            rows = self.randn((len(self.pages[chunk]), *row_shape), torch.float32)
            cache[self.pages[chunk], self.slots[chunk]] = rows.to(dtype)
        return cache


def _paged_layout(
    seq_lens,
    page_size,
    table_columns,
    groups,
    spare_pages,
    first_page,
    contiguous,
    device,
    seed,
) -> _Layout:
    gen = torch.Generator(device="cpu")
    gen.manual_seed(int(torch.randint(0, 2**31, ()).item()) if seed is None else seed)
    batch = len(seq_lens)
    pages_each = [-(-n // page_size) for n in seq_lens]
    shared_of = [0] * batch  # pages request b shares with its group
    group_of = [-1] * batch
    for g, (members, tokens) in enumerate(groups):
        if tokens % page_size:
            raise ValueError(f"shared_prefix: expected a multiple of page_size={page_size}")
        for b in members:
            if not 0 <= b < batch or group_of[b] >= 0:
                raise ValueError(f"prefix_groups: request {b} is out of range or in two groups")
            group_of[b] = g
    group_pages = [tokens // page_size for _, tokens in groups]
    for b in range(batch):
        if group_of[b] >= 0:
            shared_of[b] = min(group_pages[group_of[b]], pages_each[b])
    columns = table_columns if table_columns is not None else max(pages_each, default=0) + 1
    own = [p - n for p, n in zip(pages_each, shared_of, strict=True)]
    num_used = sum(group_pages) + sum(own)
    num_pages = first_page + num_used + spare_pages + 1
    poison_page = num_pages - 1

    page_table = torch.full((batch, columns), poison_page, dtype=torch.int32)
    order = torch.arange(num_used) if contiguous else torch.randperm(num_used, generator=gen)
    ids = first_page + order
    starts = torch.tensor([0, *group_pages]).cumsum(0).tolist()
    own_ids = ids[starts[-1] :]
    for b in range(batch):
        n_shared = shared_of[b]
        if n_shared:
            first = starts[group_of[b]]
            page_table[b, :n_shared] = ids[first : first + n_shared].to(torch.int32)
        page_table[b, n_shared : pages_each[b]] = own_ids[: own[b]].to(torch.int32)
        own_ids = own_ids[own[b] :]

    device = torch.device(device)
    positions = torch.cat([torch.arange(n) for n in seq_lens] + [torch.zeros(0, dtype=torch.long)])
    owners = torch.repeat_interleave(torch.arange(batch), torch.tensor(seq_lens, dtype=torch.long))
    dev_gen = torch.Generator(device=device)
    dev_gen.manual_seed(int(torch.randint(0, 2**31, (), generator=gen)))
    return _Layout(
        page_table=page_table.to(device),
        seq_lens=torch.tensor(seq_lens, dtype=torch.int32).to(device),
        pages=page_table[owners, positions // page_size].long().to(device),
        slots=(positions % page_size).to(device),
        num_pages=num_pages,
        page_size=page_size,
        poison_page=poison_page,
        generator=dev_gen,
    )


def relative_error(got: torch.Tensor, want: torch.Tensor) -> float:
    """||got - want|| / ||want|| in float64 (NaN if got has NaN)."""
    got64, want64 = got.double(), want.double()
    denom = want64.norm().item()
    return (got64 - want64).norm().item() / (denom if denom > 0 else 1.0)


def check_against_reference(
    out: torch.Tensor,
    lse: torch.Tensor | None,
    ref_out: torch.Tensor,
    ref_lse: torch.Tensor | None,
) -> float:
    """Raise AssertionError unless out (and lse) match the reference; return out's error."""
    if torch.isnan(out).any():
        raise AssertionError("out holds NaN")
    err = relative_error(out, ref_out)
    tol = TOLERANCES[out.dtype]
    if not err <= tol:
        raise AssertionError(f"out: relative error {err:.3e} > {tol:.0e}")
    if lse is not None and ref_lse is not None:
        if not torch.equal(torch.isinf(lse), torch.isinf(ref_lse)):
            raise AssertionError("lse: -inf in different places than the reference")
        finite = torch.isfinite(ref_lse)
        lse_err = (lse[finite] - ref_lse[finite]).abs().max().item() if finite.any() else 0.0
        if not lse_err <= tol:
            raise AssertionError(f"lse: max abs error {lse_err:.3e} > {tol:.0e}")
    return err


def capture_cuda_graph(step) -> torch.cuda.CUDAGraph:
    """Run `step` once (compiles), once on a side stream (as torch asks before a capture), then
    capture it; replaying the graph reruns it on whatever the captured buffers then hold."""
    step()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        step()
    return graph
