"""The seed's levers, each switched on and off with everything else fixed (issue 3): the grid
order, the blocked merge, and latency hiding in the split loop."""

from __future__ import annotations

import random

import torch

from splitkv.bench.shapes import (
    BenchShape,
    gqa_shapes,
    gqa_special_shapes,
    prefix_mix_shape,
    shared_prefix_shape,
    special_shapes,
    with_labels,
)
from splitkv.bench.sweep import Trial

HEADS = (12, 16)
BATCHES = (1, 8, 16, 24, 48)
CONTEXTS = (68096, 327600)


def ablation_shapes(
    with_shared_prefix: bool = False, contexts: tuple[int, ...] = CONTEXTS
) -> list[BenchShape]:
    shapes = [BenchShape(h, ctx, bs) for h in HEADS for ctx in contexts for bs in BATCHES]
    if with_shared_prefix:
        shapes += [shared_prefix_shape(h) for h in HEADS] + [prefix_mix_shape(12)]
    return shapes


def schedule_shapes() -> list[BenchShape]:
    """Issue 5's ragged batches (with MTP) beside uniform ones the planner must not slow."""
    ragged = [s for s in special_shapes(12) if not (s.shared_prefix or s.prefix_groups)]
    mtp = [s for q in (2, 4) for s in special_shapes(12, qlen=q) if s.label.startswith("1x")]
    uniform = [BenchShape(12, ctx, bs) for ctx in CONTEXTS for bs in (1, 8, 48)]
    return ragged + mtp + uniform


def gqa_schedule_shapes() -> list[BenchShape]:
    """GQA ragged batches (a grouped model, and gpt-oss with sinks at head dim 64) beside
    uniform batches that the planner keeps on uniform splits."""
    models = ("llama3-8b", "gpt-oss")
    ragged = [s for q in (1, 2) for s in gqa_special_shapes(models, qlen=q)]
    return ragged + gqa_shapes(models, (32768,), (1, 8))


def merge_tile_shapes() -> list[BenchShape]:
    """Where the merge is a large share of the call: ragged batches (balanced: most rows fold
    one or two partials), short uniform contexts and batch 1 (uniform: 16-256 partials)."""
    ragged = [s for s in special_shapes(12) if s.label in ("ragged", "1x327600+47 short")]
    mtp = [s for q in (2, 4) for s in special_shapes(12, qlen=q) if s.label.startswith("1x")]
    uniform = [BenchShape(12, 8192, bs) for bs in (1, 8, 48, 128)]
    return ragged + mtp + uniform + [BenchShape(12, ctx, 1) for ctx in CONTEXTS]


def ragged_and_one_long(heads: int, qlen: int) -> list[BenchShape]:
    """Issue 5's ragged batch and its one long request beside 47 short, at `heads` x `qlen`."""
    return with_labels(special_shapes(heads, qlen=qlen), ["ragged", "1x"])


def copy_rows_shapes() -> list[BenchShape]:
    """Issue 5's ragged and one-long batches on each Gluon consumer: keys as rows (12 heads x
    qlen 1 and 2), the 64-row tile (qlen 4) and its alternating pair (128 heads)."""
    heights = ((12, 1), (12, 2), (12, 4), (128, 1))
    return [s for heads, qlen in heights for s in ragged_and_one_long(heads, qlen)]


def mtp_loop_shapes() -> list[BenchShape]:
    """Issue 5's ragged and one-long batches at qlen 2 and 4 (MTP): the Gluon program loop on
    the 32-row keys-as-rows and the 64-row tiles."""
    return [s for q in (2, 4) for s in ragged_and_one_long(12, q)]


WIDE_LOOP_HEIGHTS = ((12, 4), (16, 4), (32, 2), (64, 1))  # 64 rows: one head block a request
ALTERNATE_LOOP_HEIGHTS = ((128, 1), (64, 2), (32, 4))  # 128 rows: two, the alternating consumers


def seeded_ragged(heads: int, qlen: int, seed: int, one_long: bool = False) -> list[BenchShape]:
    """Three ragged batches of random lengths (16 x 1-131,072, 32 x 1-32,768, 64 x 1-8,192),
    the same for a seed; `one_long` adds a fourth, 1 x 196,608 beside 31 of 1-4,096."""
    rng = random.Random(seed)
    shapes = []
    for batch, longest in ((16, 131072), (32, 32768), (64, 8192)):
        lengths = tuple(rng.randint(1, longest) for _ in range(batch))
        label = f"{batch} x 1-{longest} qlen {qlen}"
        shapes.append(BenchShape(heads, max(lengths), batch, qlen, seq_lens=lengths, label=label))
    if one_long:
        lengths = (196608, *(rng.randint(1, 4096) for _ in range(31)))
        label = f"1x196608+31 x 1-4096 qlen {qlen}"
        shapes.append(BenchShape(heads, 196608, 32, qlen, seq_lens=lengths, label=label))
    return shapes


def wide_loop_shapes() -> list[BenchShape]:
    """The Gluon program loop's 64-row head blocks, one a request (12-16 heads x qlen 4, 32 x
    qlen 2, 64 x qlen 1), on issue 5's ragged and one-long batches, and three seeded ragged
    batches at 12 heads x qlen 4. (Two head blocks a request run the alternating consumers,
    whose piece cost counts 32-key units.)"""
    special = [s for heads, qlen in WIDE_LOOP_HEIGHTS for s in ragged_and_one_long(heads, qlen)]
    # The qlen 4 shapes (issue 5's unmet targets) first, then the other heights.
    return special[:4] + seeded_ragged(12, 4, seed=58) + special[4:]


def held_out_shapes(heights, first_seed: int) -> list[BenchShape]:
    """Batches a piece cost was not fitted on: three seeded ragged batches and a one-long one
    at each height (heads, qlen), a seed of its own from `first_seed` on."""
    return [
        s
        for i, (heads, qlen) in enumerate(heights)
        for s in seeded_ragged(heads, qlen, first_seed + i, one_long=True)
    ]


def wide_loop_held_out_shapes() -> list[BenchShape]:
    """Held out from `wide_loop_shapes`: each 64-row height, seeds 59-62."""
    return held_out_shapes(WIDE_LOOP_HEIGHTS, 59)


def copy_rows_held_out_shapes() -> list[BenchShape]:
    """Held out from `copy_rows_shapes`: each 64-row height of one head block a request, seeds
    67-70, and two uniform batches (12 heads x qlen 4, 8 x 65,536; 64 heads, 48 x 8,192)."""
    uniform = [BenchShape(12, 65536, 8, 4), BenchShape(64, 8192, 48)]
    return held_out_shapes(WIDE_LOOP_HEIGHTS, 67) + uniform


def alternate_loop_held_out_shapes() -> list[BenchShape]:
    """Held out from `alternate_loop_shapes`: each 128-row height, seeds 64-66."""
    return held_out_shapes(ALTERNATE_LOOP_HEIGHTS, 64)


def alternate_loop_shapes() -> list[BenchShape]:
    """The Gluon program loop's alternating consumers (two 64-row head blocks a request: 128
    heads, 64 x qlen 2, 32 x qlen 4) on issue 5's ragged and one-long batches, and three
    seeded ragged batches and a one-long one at 128 heads."""
    special = [
        s for heads, qlen in ALTERNATE_LOOP_HEIGHTS for s in ragged_and_one_long(heads, qlen)
    ]
    return special + seeded_ragged(128, 1, seed=63, one_long=True)


def warp_specialized_shapes() -> list[BenchShape]:
    """Target 3's compute-bound shapes (128 heads; 16 heads x qlen 8) and MTP at qlen 4: the
    64-row tiles the warp-specialized kernel runs."""
    wide = [BenchShape(128, ctx, bs) for ctx in (8192, *CONTEXTS) for bs in (1, 8, 48)]
    mtp = [
        BenchShape(16, ctx, bs, qlen=q) for q in (4, 8) for ctx in (8192, 68096) for bs in (1, 8)
    ]
    return wide + mtp + [BenchShape(128, 8192, 128)]


_PREFETCH = {"page_prefetch": True}
# The balanced trials' base: one program per piece (program_loop off, the default for 16-row
# tiles; the trial "balanced, program loop" walks pieces).
_BALANCED = {"schedule": "balanced", "page_prefetch": False, "program_loop": False}
_BALANCED_TMA = {
    "schedule": "balanced", "latent_chains": 2, "kv_tma": True, "block_n": 64, "num_stages": 2,
    "program_loop": False,
}  # fmt: skip
_NO_PREFETCH = {"page_prefetch": False, "block_n": 64}
# The balanced schedule's program loop (the default for 32- and 64-row MLA tiles).
_LOOP = {"schedule": "balanced", "program_loop": True}


def _piece_costs(*costs: int) -> list[Trial]:
    """The program loop at each piece cost (`plan_decode(piece_cost=)`)."""
    return [Trial(f"piece cost {c}", _LOOP | {"piece_cost": c}) for c in costs]


# name: (trials, shapes, measure the merge's own time)
ABLATIONS: dict[str, tuple[list[Trial], object, bool]] = {
    "grid_order": (
        [
            Trial("split-major", {"grid_order": "split_major"}),
            Trial("batch-major", {"grid_order": "batch_major"}),
        ],
        lambda: ablation_shapes(with_shared_prefix=True),
        False,
    ),
    "merge": (
        [
            Trial("blocked merge", {}),
            Trial("serial merge", {"merge_block_s": 1, "merge_d_split": 1}),
            Trial("blocked merge, launched after stage 1", {"dependent_launch": False}),
        ],
        ablation_shapes,
        True,
    ),
    "pipeline": (
        [
            Trial("default plan", {}),
            Trial("single buffer: block_n 64, 2 stages", _NO_PREFETCH | {"num_stages": 2}),
            Trial("1 stage (no pipelining)", _NO_PREFETCH | {"num_stages": 1}),
            Trial("block_n 64, 3 stages", _NO_PREFETCH | {"num_stages": 3}),
            Trial("block_n 64, 8 warps", _NO_PREFETCH | {"num_warps": 8}),
            Trial("block_n 32, 3 stages", _NO_PREFETCH | {"block_n": 32, "num_stages": 3}),
            # Page ids one block ahead: the pipeliner then double-buffers the KV blocks
            # (checked in the compiled TTGIR, docs/perf.md).
            Trial("prefetch, block_n 32, 3 stages", _PREFETCH | {"block_n": 32, "num_stages": 3}),
            Trial("prefetch, block_n 32, 4 stages", _PREFETCH | {"block_n": 32, "num_stages": 4}),
            Trial("prefetch, block_n 64, 3 stages", _PREFETCH | {"block_n": 64, "num_stages": 3}),
            # One 64-key buffer, page ids off the critical path (docs/perf.md: the SASS loops).
            Trial("prefetch, block_n 64, 2 stages", _PREFETCH | {"block_n": 64, "num_stages": 2}),
            # Whole key blocks by bulk tensor copies (TMA); with page ids a block ahead and 3
            # stages the pipeliner keeps two 32-key blocks in flight (202 registers, sm_90).
            Trial(
                "TMA, prefetch, block_n 32, 3 stages",
                _PREFETCH | {"kv_tma": True, "block_n": 32, "num_stages": 3},
            ),
            Trial("TMA, block_n 64, 2 stages", {"kv_tma": True, "block_n": 64, "num_stages": 2}),
            # The score dot as one mma chain over all latent dims (the default for 16-row
            # tiles is two independent chains over the latent halves; docs/perf.md v0.2.2).
            Trial("one latent chain", {"latent_chains": 1}),
        ],
        # With 8k: short splits, where the TMA default stops (docs/perf.md v0.2.3).
        lambda: ablation_shapes(contexts=(8192, *CONTEXTS)),
        False,
    ),
    "wide_tile": (  # 128 heads: the 64-row wgmma tile (compiled resources in docs/perf.md)
        [
            Trial("block_n 32, 2 stages (default)", {}),
            Trial("block_n 64, 2 stages", {"block_n": 64}),
            Trial("prefetch, block_n 16, 3 stages", _PREFETCH | {"block_n": 16, "num_stages": 3}),
            Trial("prefetch, block_n 32, 3 stages", _PREFETCH | {"block_n": 32, "num_stages": 3}),
        ],
        lambda: (
            [BenchShape(128, ctx, bs) for ctx in CONTEXTS for bs in (1, 8, 48)]
            + [BenchShape(16, 68096, 8, qlen=8)]
        ),
        False,
    ),
    "schedule": (
        [
            Trial("default plan (auto)", {}),
            Trial("uniform splits", {"schedule": "uniform"}),
            # Without page-id prefetch (the balanced default for <= 32 rows since v0.2.1).
            # The default grid: one wave of programs (four for MLA's 64-row tile, since v0.2.2).
            Trial("balanced, default grid", _BALANCED),
            Trial("balanced, 2 waves", _BALANCED | {"num_programs": 528}),
            # Stage 1 launches num_programs + batch programs per head block: grids whose
            # launched programs are one or two waves (docs/perf.md, session 5).
            Trial("balanced, 1 launched wave", _BALANCED | {"launched_waves": 1}),
            Trial("balanced, 2 launched waves", _BALANCED | {"launched_waves": 2}),
            Trial("balanced, 4 waves", _BALANCED | {"num_programs": 1056}),
            # The balanced merge at batch 48 is 4,608 programs of 64 columns, most merging one
            # or two partials; 2 programs per row instead of 8 lost (docs/perf.md, session 5):
            # the long request's rows walk 216 partials each: try more, narrower slices.
            Trial("default plan, merge 2 programs per row", {"merge_d_split": 2}),
            Trial("default plan, merge 16 programs per row", {"merge_d_split": 16}),
            # Its loop issues the page-id load after the dots (SASS, docs/perf.md): prefetch.
            Trial(
                "balanced, prefetch, block_n 64",
                _BALANCED | {"block_n": 64, "num_stages": 2} | _PREFETCH,
            ),
            # Two chains and bulk copies at every tile (the default for 16-row balanced tiles
            # since v0.2.4; 32- and 64-row tiles lost with them, docs/perf.md session 6).
            Trial("balanced, two chains, TMA, block_n 64", _BALANCED_TMA),
            # One program per schedule program walking its pieces (the default for 32- and
            # 64-row tiles since v0.2.5).
            Trial("balanced, program loop", {"schedule": "balanced", "program_loop": True}),
        ],
        schedule_shapes,
        True,
    ),
    "merge_tile": (  # the merge's programs: warps each, programs per row
        [
            Trial("default plan", {}),
            Trial("merge 4 warps (v0.2.4's)", {"merge_num_warps": 4}),
            Trial("merge 1 warp", {"merge_num_warps": 1}),
            Trial("merge 2 warps", {"merge_num_warps": 2}),
            Trial("merge 8 warps", {"merge_num_warps": 8}),
            Trial("merge 4 programs per row", {"merge_d_split": 4}),
            Trial("merge 4 programs per row, 2 warps", {"merge_d_split": 4, "merge_num_warps": 2}),
        ],
        merge_tile_shapes,
        True,
    ),
    "warp_specialized": (  # the 64-row tile: Gluon, copies and math on different warps
        [
            Trial("default plan (warp-specialized)", {}),
            Trial("Triton 64-row tile", {"warp_specialized": False}),
        ],
        warp_specialized_shapes,
        False,
    ),
    "mtp_loop": (  # the Gluon program loop's knobs at qlen 2 and 4 (issue 5's MTP targets)
        [
            Trial("default plan", {}),
            # A one-piece request writes its own output: on by default at qlen 1 only (the
            # 64-row loop's lost 0.5-0.7% on the H100, docs/perf.md session 58).
            Trial("whole pieces", _LOOP | {"whole_pieces": True}),
            Trial("bf16 partials", _LOOP | {"partial_dtype": torch.bfloat16}),
            Trial(
                "whole pieces, bf16 partials",
                _LOOP | {"whole_pieces": True, "partial_dtype": torch.bfloat16},
            ),
            # One of these is each shape's default (64 rows: 4 on the H100, 2 on the H200; 32 rows:
            # 4): a repeat of it.
            *_piece_costs(1, 2, 4, 8),
            Trial("early start", _LOOP | {"early_start": True}),
        ],
        mtp_loop_shapes,
        True,
    ),
    "loop_piece_cost": (  # the 64-row program loop's piece cost (default: H100 4, H200 2)
        _piece_costs(2, 4, 6, 8),
        wide_loop_shapes,
        False,
    ),
    "loop_piece_cost_held_out": (  # the device's default cost against 2 and 4 on other batches
        [Trial("default plan", {}), *_piece_costs(2, 4)],
        wide_loop_held_out_shapes,
        True,
    ),
    "alternate_piece_cost": (  # the alternating consumers' piece cost, in 32-key units
        _piece_costs(4, 8, 12, 16),
        alternate_loop_shapes,
        False,
    ),
    "alternate_piece_cost_held_out": (  # the default (H100 8, H200 4) against 4 and 8
        [Trial("default plan", {}), *_piece_costs(4, 8)],
        alternate_loop_held_out_shapes,
        True,
    ),
    "copy_rows": (  # the Gluon kernels' bulk copies of a key block, in boxes of these rows
        [
            Trial("default plan", {}),
            *(Trial(f"copy rows {n}", {"copy_rows": n}) for n in (32, 16, 8)),
        ],
        copy_rows_shapes,
        False,
    ),
    "copy_rows_held_out": (  # the device's default height against 64, 32 and 16 rows (one of
        # them is the default: the H100's 16, the H200's 64, a repeat that shows the spread)
        [
            Trial("default plan", {}),
            *(Trial(f"copy rows {n}", {"copy_rows": n}) for n in (64, 32, 16)),
        ],
        copy_rows_held_out_shapes,
        False,
    ),
    "gqa_schedule": (  # GQA's balanced grid: one wave of programs, or of launched pieces
        [
            Trial("default plan (auto)", {}),
            Trial("uniform splits", {"schedule": "uniform"}),
            Trial("balanced, 1 launched wave", {"schedule": "balanced", "launched_waves": 1}),
            Trial("balanced, 2 launched waves", {"schedule": "balanced", "launched_waves": 2}),
        ],
        gqa_schedule_shapes,
        True,
    ),
}
