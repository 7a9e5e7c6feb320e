"""The seed's levers, each switched on and off with everything else fixed (issue 3): the grid
order, the blocked merge, and latency hiding in the split loop."""

from __future__ import annotations

from splitkv.bench.shapes import BenchShape, shared_prefix_shape
from splitkv.bench.sweep import Trial

HEADS = (12, 16)
BATCHES = (1, 8, 16, 24, 48)
CONTEXTS = (68096, 327600)


def ablation_shapes(with_shared_prefix: bool = False) -> list[BenchShape]:
    shapes = [BenchShape(h, ctx, bs) for h in HEADS for ctx in CONTEXTS for bs in BATCHES]
    if with_shared_prefix:
        shapes += [shared_prefix_shape(h) for h in HEADS]
    return shapes


_PREFETCH = {"page_prefetch": True}

# name: (trials, shared-prefix shapes too, measure the merge's own time)
ABLATIONS: dict[str, tuple[list[Trial], bool, bool]] = {
    "grid_order": (
        [Trial("split-major", {"grid_order": "split_major"}),
         Trial("batch-major", {"grid_order": "batch_major"})],
        True,
        False,
    ),
    "merge": (
        [Trial("blocked merge", {}),
         Trial("serial merge", {"merge_block_s": 1, "merge_d_split": 1})],
        False,
        True,
    ),
    "pipeline": (
        [Trial("2 stages (default)", {"num_stages": 2}),
         Trial("1 stage (no prefetch)", {"num_stages": 1}),
         Trial("3 stages", {"num_stages": 3}),
         Trial("8 warps", {"num_warps": 8}),
         Trial("block_n 32, 3 stages", {"block_n": 32, "num_stages": 3}),
         # Page ids one block ahead: the pipeliner then double-buffers the KV blocks
         # (checked in the compiled TTGIR, docs/perf.md).
         Trial("prefetch, block_n 32, 3 stages", _PREFETCH | {"block_n": 32, "num_stages": 3}),
         Trial("prefetch, block_n 32, 4 stages", _PREFETCH | {"block_n": 32, "num_stages": 4}),
         Trial("prefetch, block_n 64, 3 stages", _PREFETCH | {"num_stages": 3})],
        False,
        False,
    ),
}  # fmt: skip
