"""Which stage-1 schedule a batch gets: uniform splits or the balanced schedule (issue 5).

Both are modelled as the busiest program's key blocks, the unit that bounds a memory-bound
stage 1. Uniform: every request is cut into `num_splits`, so the longest request's split
bounds the time, or the batch's total work over a wave when that is larger. Balanced: the
total over the grid, times the balanced kernel's measured cost per block
(`PartitionTunables.balanced_cost`: its programs find their request and piece on the device).
A batch whose requests all span the same number of key blocks stays uniform: uniform splits
are already even there, and the balanced schedule adds costs this model leaves out (a merge
over up to `num_programs` partials per row, programs with no whole block): on the H200 one
32k-token GQA request took 36 us balanced, 1,056 programs for 512 blocks (docs/perf.md, v0.2.1).
"""

from __future__ import annotations

from collections.abc import Sequence

from splitkv.device import DeviceSpec
from splitkv.host_lengths import as_host_lengths


def pick_schedule(
    seq_lens: Sequence[int],
    num_splits: int,
    num_programs: int,
    programs_per_unit: int,
    wave: int,
    block_n: int,
    balanced_cost: float,
    balanced_fixed: float = 0.0,
    balanced_grid: int | None = None,
) -> str:
    """ "balanced" when its modelled time beats uniform splits for these lengths, else "uniform".

    programs_per_unit: programs per (request, split) in the uniform grid and per balanced
    program index (kv heads x head blocks); wave: programs resident at once. balanced_fixed:
    what the balanced schedule costs beyond its blocks, in blocks (its programs find their
    pieces from the lengths before the first copy, and the merge reads more partials).

    balanced_grid: the balanced plan's own num_programs (GQA: `gqa_balanced_grid`), weighed
    where it is larger than `num_programs` (the wave the uniform plan is counted in) and the
    longest request spans more than one of its programs' shares. Weighed at the wave, 8-kv-head
    batches of 128 requests of up to 4k-16k keys and 48 of up to 64k kept uniform splits 7-20%
    slower than their balanced plan's 132 programs a kv head (llama3-8b 128 x up to 16k:
    1,223.5 against 1,083.3 us). Where no request passes a share, one uniform program a
    request is as even already, and 256 requests of 100-500 keys ran uniform 25-47% faster
    (llama3-8b 89.8 against 120.4 us). Over 156 8- and 32-kv-head batches timed both ways the
    default's loss to the faster schedule 1,267.7 -> 305.0 us (H200, docs/perf.md session 38).

    >>> pick_schedule([327600] + [2048] * 47, 16, 264, 1, 264, 64, 1.15)
    'balanced'
    >>> pick_schedule([327600] * 8, 32, 264, 1, 264, 64, 1.15)
    'uniform'
    >>> pick_schedule([32768], 64, 1056, 1, 1056, 64, 1.15)  # one request: never balanced
    'uniform'
    >>> pick_schedule([16227, 4651], 64, 132, 1, 132, 64, 1.15, 2.0)  # 4 blocks against 5.45
    'uniform'
    """
    # Key blocks a request (0 for 0 keys): the rounding is monotone, so the longest and
    # shortest requests' are the batch's most and fewest.
    lengths = as_host_lengths(seq_lens)
    total = lengths.key_blocks(block_n)
    most = -(-lengths.longest // block_n)
    if total == 0 or -(-lengths.shortest // block_n) == most:
        return "uniform"
    # The balanced plan's own grid where it is larger and some request passes its share.
    if balanced_grid and balanced_grid > num_programs and most * balanced_grid > total:
        num_programs = balanced_grid
    split_blocks = -(-most // num_splits)  # the longest request's split
    uniform = max(split_blocks, -(-total * programs_per_unit // wave))
    balanced = balanced_cost * -(-total // num_programs) + balanced_fixed
    return "balanced" if balanced < uniform else "uniform"


def modelled_schedule(
    lengths: Sequence[int],
    num_splits: int,
    num_programs: int,
    programs_per_unit: int,
    wave: int,
    block_n: int,
    *,
    kind: str,
    spec: DeviceSpec,
    gluon_splits: int | None = None,
    narrow: bool = False,
    balanced_on_gluon: bool = True,
    balanced_grid: int | None = None,
) -> str:
    """`plan_decode`'s schedule="auto" where it was given lengths: `pick_schedule` weighing the
    kernels that would run (H200 measurements: docs/perf.md sessions 32 and 34).

    gluon_splits: the uniform plan runs on a Gluon kernel, with this many splits (the
    partial-bytes cap; on the keys-as-rows tile, `narrow`, its own smaller count), and its
    balanced schedule on the program loop (on the keys-as-rows tile one wave of one program an
    SM). Weighed as the Triton tile's splits, 48 requests of 100-4,000 keys chose 2 splits of
    the longest (2,000 keys) over even shares of ~750. balanced_on_gluon: whether the balanced
    plan would run on the Gluon kernel too; where it would not (shares of one key block or
    less: `plan_decode`'s `gluon_pays`), the Triton tile's balanced programs took 1.75x the
    Gluon kernel's uniform splits' time (median, up to 2.3x; small batches): those stay uniform.
    The balanced schedule's fixed cost (`balanced_fixed_blocks`) was fitted on MLA batches;
    GQA's choice was measured without it (sessions 27-28).

    balanced_grid: the balanced GQA plan's own num_programs (`pick_schedule`).

    >>> spec = DeviceSpec.preset("h200")
    >>> modelled_schedule([3821, 3754, 2169, 996], 32, 264, 1, 264, 64, kind="mla", spec=spec,
    ...                   gluon_splits=32, narrow=True, balanced_on_gluon=False)
    'uniform'
    """
    if gluon_splits is not None:
        if not balanced_on_gluon:
            return "uniform"
        num_splits = gluon_splits
        if narrow:
            num_programs = max(1, spec.compute_units // programs_per_unit)
            wave = spec.compute_units
    fixed = spec.tunables.balanced_fixed_blocks if kind == "mla" else 0.0
    return pick_schedule(lengths, num_splits, num_programs, programs_per_unit, wave, block_n,
                         spec.tunables.balanced_cost, fixed, balanced_grid)  # fmt: skip
