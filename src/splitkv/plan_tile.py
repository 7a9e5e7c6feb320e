"""Stage 1's Triton tile of a plan: page ids a block ahead (`page_prefetch`), bulk copies
(`kv_tma`), latent chains, the key block, warps and stages; each the caller's, checked, or the
default measured for the plan's schedule, rows and launch (`plan_rules`, `gqa_tile_rules`).
The Gluon kernels' own tile is set before this (plan.py), and GQA's measured tiles where the
planner took them arrive here as given values."""

from __future__ import annotations

import torch

from splitkv.checks import check_bool, check_int, check_pow2
from splitkv.device import DeviceSpec
from splitkv.gqa_tile_rules import gqa_wide_tile
from splitkv.plan_rules import (
    MIN_DOT,
    TMA_BLOCK_N,
    balanced_prefetch_pays,
    balanced_two_chains_pay,
    prefetch_pays,
    program_keys_for,
    tma_pays,
    uniform_wide_block_pays,
)


def stage_one_tile(
    block_n: int | None,
    num_warps: int | None,
    num_stages: int | None,
    page_prefetch: bool | None,
    kv_tma: bool | None,
    latent_chains: int | None,
    *,
    kind: str,
    block_h: int,
    group_rows: int,
    tile_head_dim: int,
    head_dim_v: int,
    dtype: torch.dtype,
    page_size: int,
    balanced: bool,
    gqa_tiled: bool,
    batch_size: int,
    max_seq_len: int,
    total_keys: int,
    num_splits: int,
    num_programs: int,
    programs_a_split: int,
    wave: int,
    interpreted: bool,
    spec: DeviceSpec,
) -> tuple[int, int, int, bool, bool, int]:
    """(block_n, num_warps, num_stages, page_prefetch, kv_tma, latent_chains) for a stage 1 of
    `block_h`-row programs (`group_rows` query rows a kv head, a tile `tile_head_dim` wide) on
    the `balanced` schedule or `num_splits` uniform splits; `gqa_tiled`: GQA's measured tile
    rules apply; `wave`: programs the GPU holds at once."""
    short_tile = block_h <= MIN_DOT
    split_keys = -(-max_seq_len // num_splits)  # keys per split of the longest request
    uniform_programs = batch_size * num_splits * programs_a_split  # on splits
    # balanced_prefetch: the default chose prefetch for balanced MLA programs of <= 32 rows,
    # which then keep one 64-key buffer (schedule ablation, docs/perf.md v0.2.1: -5% for
    # 1 x 327,600 + 47 short at qlen 1 and 2).
    balanced_prefetch = False
    program_keys = program_keys_for(balanced, total_keys, max_seq_len, num_programs, num_splits)
    # Bulk copies by default only where measured, and only when the caller left the block
    # shape to the planner; they take two latent chains.
    tma_default = (
        kv_tma is None
        and latent_chains in (None, 2)
        and block_n is None
        and num_stages is None
        and not interpreted
        and tma_pays(kind, block_h, page_size, program_keys, dtype, spec)
    )
    # Balanced MLA programs without bulk copies (odd pages, pages under a block, GPUs without
    # the copy engine) run two latent chains and no look-ahead, on 64-key blocks: the
    # look-ahead's page ids spill the one-chain loop (page 100: 16 rows 2,139 -> 1,161
    # instructions a block, 32 rows 2,735 -> 1,617); on the H100 16 rows ran 4-15% faster and
    # 32 rows 1.6-2.3x (docs/perf.md session 63, run203-run204).
    chains_not_ahead = (
        balanced
        and not interpreted
        and not (tma_default or kv_tma is True)
        and latent_chains in (None, 2)
        and page_prefetch in (None, False)
        and balanced_two_chains_pay(kind, block_h, head_dim_v, spec)
    )
    if chains_not_ahead:
        latent_chains, page_prefetch = 2, False
    if page_prefetch is None and balanced:
        balanced_prefetch = balanced_prefetch_pays(kind, block_h, total_keys, num_programs, spec)
        page_prefetch = balanced_prefetch
    elif page_prefetch is None:
        page_prefetch = prefetch_pays(kind, block_h, group_rows, split_keys,
                                      uniform_programs <= wave, spec)  # fmt: skip
    if latent_chains is None:
        # Two chains halve the score dot's 36-step dependent mma chain (H200: 16-row tiles
        # 5-11% faster, 32-row 3%). The 64-row wgmma tile spills 648 B with two (qlen 8: 4%
        # slower); the balanced tile 96 B, 8% slower on the ragged batch with masked loads,
        # 7.6% faster with bulk copies (v0.2.4), so the balanced kernel takes two with them.
        two = kind == "mla" and block_h <= 2 * MIN_DOT and head_dim_v > MIN_DOT
        two = two and (not balanced or tma_default or kv_tma is True)
        latent_chains = 2 if two else 1
    check_int("latent_chains", latent_chains, 1, 2)
    if latent_chains == 2 and (kind != "mla" or head_dim_v <= MIN_DOT):
        # Each half of the latent dims feeds a dot, which needs 16 columns at least.
        raise ValueError(
            f"latent_chains: 2 needs MLA with head_dim_v > {MIN_DOT}, got kind={kind!r} with "
            f"head_dim_v={head_dim_v}"
        )
    if kv_tma is None:
        kv_tma = tma_default
        if kv_tma:
            # One 64-key buffer in flight: 32-key blocks in 3 stages lost (v0.2.3).
            block_n, num_stages = TMA_BLOCK_N, 2
    wide_gqa = None
    if kind == "gqa" and not interpreted:
        # The launch's programs, where the tile rules were measured on this device: a wider
        # key block is taken only where it costs no wave.
        launch = uniform_programs if gqa_tiled else None
        wide_gqa = gqa_wide_tile(block_h, tile_head_dim, balanced, split_keys,
                                 one_split=num_splits == 1, programs=launch,
                                 compute_units=spec.compute_units,
                                 itemsize=dtype.itemsize)  # fmt: skip
    wide_stages = None  # the wide tile's stages, where its key block is the one taken
    if block_n is None and wide_gqa:
        block_n, wide_stages = wide_gqa[0], wide_gqa[2]
    if block_n is None:
        # 64-key blocks for 16-row tiles (unless prefetched MLA: two 32-key blocks in flight)
        # and for MLA's 64-row tile, which gained 27-41% over 32 keys (wide-tile ablation,
        # docs/perf.md v0.2.0), its 32-row balanced tile and its uniform splits of 512 keys or
        # more (session 63); 32 elsewhere (unmeasured) and in the interpreter.
        short_64 = short_tile and not (page_prefetch and kind == "mla")
        wide_mla = kind == "mla" and block_h >= 64
        wide_balanced = balanced_prefetch or chains_not_ahead
        wide_uniform = not balanced and uniform_wide_block_pays(kind, block_h, split_keys, spec)
        wide = short_64 or wide_mla or wide_balanced or wide_uniform
        block_n = 64 if not interpreted and wide else 32
        if block_n == 64 and kind == "gqa" and tile_head_dim <= 64 and not balanced:
            # Head dim 64 (gpt-oss): 128-key blocks move the same 32 KB of K + V per iteration
            # as 64 keys at head dim 128; 6-10% faster on the H200 (docs/perf.md v0.2.1).
            block_n = 128
    check_int("block_n", block_n, MIN_DOT, 256)
    check_pow2("block_n", block_n)
    if num_warps is None:
        num_warps = wide_gqa[1] if wide_gqa else 8 if block_h >= 64 else 4
    if num_stages is None and wide_stages:
        num_stages = wide_stages
    if num_stages is None:
        # With page ids a block ahead, 3 stages keep two KV blocks in flight (docs/perf.md);
        # the balanced kernel's measured win kept 2 stages of 64-key blocks.
        num_stages = 3 if page_prefetch and short_tile and not balanced_prefetch else 2
    check_bool("kv_tma", kv_tma)
    if kv_tma and (kind != "mla" or latent_chains != 2):
        # Built on the two-chain MLA kernel (the latent halves as separate boxes).
        raise ValueError(
            f"kv_tma: needs MLA with latent_chains=2, got kind={kind!r}, "
            f"latent_chains={latent_chains}"
        )
    if kv_tma and page_size % block_n:
        # A bulk copy takes one box of consecutive pool rows: the block must sit in one page.
        raise ValueError(
            f"kv_tma: needs a page size that is a multiple of block_n={block_n}, got {page_size}"
        )
    return block_n, num_warps, num_stages, bool(page_prefetch), kv_tma, latent_chains
