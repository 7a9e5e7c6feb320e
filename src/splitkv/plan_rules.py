"""The planner's default for each knob, one rule a function: plain Python over host integers
and the device's measured constants, each rule citing the measurement behind it (docs/perf.md).
`plan_decode` (plan.py) calls them in order and checks what the caller pinned."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

import torch

from splitkv import warp_specialized as ws
from splitkv.checks import check_bool, check_int, check_pow2
from splitkv.device import DeviceSpec
from splitkv.host_lengths import as_host_lengths
from splitkv.kernels.merge import SMALL_S
from splitkv.partition import num_partitions

BALANCED_MERGE_BLOCK_S = 64  # the balanced merge's tile of partials (default_merge_block_s)
EQUAL_SHARES_MERGE_BLOCK_S = 32  # its least, where every row folds about the same (ditto)
LOOP_MIN_KEYS = 32768  # uniform batches this long take the keys-as-rows program loop
TMA_BLOCK_N = 64  # keys per bulk-copied block (pipeline ablation, docs/perf.md v0.2.3)
MAX_SPLITS = 256  # the merge is tuned for at most 256 partials per row (one BLOCK_S tile)
MIN_DOT = 16  # tl.dot needs every dimension >= 16
DEFAULT_D_SPLIT = 8  # merge programs per row (seed 000)
MIN_MERGE_COLUMNS = 16  # a merge slice narrower than this wastes its loads
EARLY_START_MAX_ROWS = 256  # query rows of a batch up to which early_start is the default
MERGE_WARP_ELEMENTS = 1024  # merge tile elements per warp (32 per thread), up to 4 warps
MERGE_WARPS_PER_SM = 12  # merge warps an SM holds at once (168 registers a thread: H200)
NARROW_MERGE_COLUMNS = 32  # the narrowest slice the one-wave rule halves slices down to
# A narrow row's tile of partials on one warp: 128 fp32 a thread, as MLA's balanced tile (64
# partials x 64 columns), so no [64, 128] tile spills (narrow_rows_merge_slicing).
NARROW_ROWS_TILE_ELEMENTS = 4096
# Programs an SM holds at once: the hardware's 32 blocks, which binds the uniform merge's
# one-warp programs (32-52 registers a thread, tools/inspect_merge.py --uniform).
MERGE_PROGRAMS_PER_SM = 32
MAX_MERGE_ROWS = 8  # rows of one request a merge program folds as one tile (merge_rows_for)
LONG_PARTIALS = 16  # the balanced MLA merge's bound on a short request's partials (run240)
LONG_PARTIALS_ROWS = 4  # the short requests' rows a merge program under it (ditto)
GridOrder = Literal["split_major", "batch_major"]


def grid_order_for(num_splits: int, spec: DeviceSpec) -> GridOrder:
    """Split-major keeps one split's programs on one L2 domain only when the round-robin over
    domains lines up with the split count (seed 000)."""
    return "split_major" if num_splits % spec.l2_domains == 0 else "batch_major"


def loop_streams_long_batch(batch_size: int, keys: int, lengths: Sequence[int]) -> bool:
    """Whether the 16-row keys-as-rows program loop should take a batch that uniform splits
    would cut evenly: from two requests that scan LOOP_MIN_KEYS keys (`keys`: the plan's
    bound on a request's scan, `lengths`: its hint, if any). Its 132 programs keep every SM
    streaming where uniform splits of one program per SM leave 4 idle (128 = 8 requests x 16
    splits): H200, 12 heads, 68k and 327k x 8 / 16 / 48 / 128 1-2% faster (327k x 48 4029.5 ->
    3956.1 us, 99.3% of the read ceiling); at 8k x 8 / 16 / 128 2-4% slower (a program there
    holds two requests' pieces, each paying its fixed costs) and at batch 1 (its merge folds
    all 132 partials of every row) 3% to 2x slower (docs/perf.md v0.2.9f)."""
    longest = min(as_host_lengths(lengths).longest, keys) if lengths else keys
    return batch_size >= 2 and longest >= LOOP_MIN_KEYS


def gqa_graph_plan_balanced(lengths: list[int], batch_size: int, one_short_split: bool) -> bool:
    """Whether a GQA plan made without lengths takes the balanced schedule: from two requests,
    unless the planner cut the table's width into one short split. Such a plan is the one an
    engine captures a CUDA graph on (a batch bucket at its longest context, docs/serving.md),
    and its replays are serving steps, ragged: uniform splits sized for the table's width
    leave the longest request's programs streaming alone, where balanced programs re-cut
    every replay's key blocks on the device (docs/perf.md session 55, run160 item c)."""
    return not lengths and batch_size >= 2 and not one_short_split


def program_keys_for(balanced, total_keys, max_seq_len, num_programs, num_splits) -> int:
    """Keys one stage-1 program streams: a split of the longest request, or a balanced
    program's share of the batch's `total_keys`."""
    if balanced:
        return -(-total_keys // num_programs)
    return -(-max_seq_len // num_splits)


def keys_as_rows_for(requested: bool | None, warp_specialized: bool, block_h: int) -> bool:
    """The plan's `keys_as_rows`: as requested where the Gluon kernel runs, else whether the
    head block is narrower than wgmma's 64 rows (the only way such a block runs there)."""
    narrow = block_h in ws.NARROW_BLOCK_H
    if requested and not warp_specialized:
        raise ValueError("keys_as_rows: needs the warp-specialized kernel (warp_specialized)")
    if requested is False and warp_specialized and narrow:
        raise ValueError(f"keys_as_rows: a {block_h}-row head block needs it (wgmma's M is 64)")
    return warp_specialized and (narrow or bool(requested))


def consumer_groups_for(requested: int | None, warp_specialized: bool, keys_as_rows: bool,
                        block_h: int) -> int:  # fmt: skip
    """The plan's `consumer_groups`: the warpgroups of 4 consumer warps that share a Gluon head
    block (0 off the Gluon kernel). A 64-row block always takes two (the wide tile splits O's
    columns between them, the keys-as-rows one its query rows); 16- and 32-row blocks one, or
    two as an opt-in: each attends half the rows (8 or 16, wgmma's N) to the same key block,
    both reading it from shared memory, so a block's softmax and P V are two shorter chains
    side by side. Measured 1-3% slower at 12 heads, qlen 1 and 2 (the consumers already
    waited on the ring, and two groups add barriers and shared-memory reads: docs/perf.md
    session 17), so one stays the default."""
    wide = block_h >= ws.BLOCK_H
    if requested is None:
        return ws.num_warps_for(block_h) // ws.CONSUMER_WARPS if warp_specialized else 0
    check_int("consumer_groups", requested, 1, 2)
    if not (warp_specialized and keys_as_rows):
        raise ValueError(
            "consumer_groups: needs the warp-specialized keys-as-rows consumers "
            f"(warp_specialized and keys_as_rows), got {requested}"
        )
    if wide and requested != 2:
        raise ValueError(f"consumer_groups: a {block_h}-row head block takes 2, got {requested}")
    return requested


def alternate_blocks_for(requested: bool | None, warp_specialized: bool, keys_as_rows: bool,
                         block_h: int, num_head_blocks: int) -> bool:  # fmt: skip
    """The plan's `alternate_blocks`: the 64-row Gluon tile's two consumer warpgroups taking
    turns, each scoring every other key block alone (kernels/mla_alternate_blocks.py), instead
    of splitting every block's scores; on either schedule (the balanced one's program loop).
    Default: where that tile runs two or more head blocks a request (`ws.ALTERNATE_BLOCKS`), so
    each key block is read once from memory for several tiles' worth of matrix work. H200
    (docs/perf.md v0.2.19 and v0.2.19b): 128 heads -6 to -10% on uniform splits and -1 to -5%
    on the program loop, 16 heads x qlen 8 -7%, the shared-prefix cascade -3 to -5%; but one
    head block (12 heads x qlen 4, closer to the read ceiling) +2 to +5% on the loop: its
    32-key blocks take twice the copies and barriers a key."""
    tile = warp_specialized and not keys_as_rows and block_h >= ws.BLOCK_H
    if requested is None:
        return ws.ALTERNATE_BLOCKS and tile and num_head_blocks >= 2
    check_bool("alternate_blocks", requested)
    if requested and not tile:
        raise ValueError(
            "alternate_blocks: needs the warp-specialized 64-row tile (warp_specialized, "
            f"block_h={ws.BLOCK_H}, keys_as_rows off), got block_h={block_h}"
        )
    return requested


def block_h_for(requested: int | None, kind: str, group_rows: int, spec: DeviceSpec) -> int:
    """The plan's `block_h`: as requested (MLA: 16 to the device's block_m, a power of two),
    else the group's rows rounded up to a power of two within those bounds."""
    if requested is None:
        return min(spec.tunables.block_m, max(MIN_DOT, next_pow2(group_rows)))
    if kind != "mla":
        raise ValueError(f"block_h: MLA only (GQA tiles follow the group), got kind={kind!r}")
    check_int("block_h", requested, MIN_DOT, spec.tunables.block_m)
    check_pow2("block_h", requested)
    return requested


def piece_cost_for(
    requested: int | None, program_loop: bool, block_n: int = ws.BLOCK_N,
    keys_as_rows: bool = False, block_h: int = 0, *,
    warp_specialized: bool, spec: DeviceSpec,
) -> int:  # fmt: skip
    """The plan's `piece_cost`: as requested (the program loop only), else the measured
    default on either program loop (the Gluon and the Triton one; the keys-as-rows
    consumers' 32-row blocks their own, the Gluon loop's 64-row blocks, alternating or not,
    the device's `wide_loop_piece_cost` where it has one), 0 without a loop. The default
    counts 64-key blocks: the same cost in twice as many units of 32 keys (the alternating
    consumers' blocks)."""
    if requested is None:
        if not program_loop:
            return 0
        blocks = ws.PIECE_COST
        if keys_as_rows and block_h == 32:
            blocks = ws.PIECE_COST_32_ROWS
        wide = warp_specialized and not keys_as_rows and block_h == 64
        if wide and spec.tunables.wide_loop_piece_cost:
            blocks = spec.tunables.wide_loop_piece_cost
        return blocks * (ws.BLOCK_N // block_n)
    check_int("piece_cost", requested, 0, 1 << 16)
    if requested and not program_loop:
        raise ValueError(
            f"piece_cost: needs the balanced program loop (program_loop=True), got {requested}"
        )
    return requested


def gated_knob(name: str, requested: bool | None, *, runs: bool, default: bool, needs: str
               ) -> bool:  # fmt: skip
    """A bool knob only some plans can run: as requested (ValueError naming what it `needs`
    where it cannot run), else `default` where it runs."""
    if requested is None:
        return runs and default
    check_bool(name, requested)
    if requested and not runs:
        raise ValueError(f"{name}: needs {needs}")
    return requested


def whole_pieces_for(
    requested: bool | None, *, program_loop: bool, warp_specialized: bool, keys_as_rows: bool,
    qlen: int, one_split: bool, kind: str = "mla",
) -> bool:  # fmt: skip
    """The plan's `whole_pieces`: stage 1 writes the output of a request one program holds
    whole. As requested on the Gluon kernels (the program loop: a piece holding its request's
    every key; `one_split`, a uniform plan of one split without merge_streams: every program,
    and no merge runs) and GQA's uniform kernel on one split, else on (1) for one split: the
    merge's whole cost goes (GQA, H200, docs/perf.md session 37: the merge after one split
    was 5-41 us of 60-185 us calls of 48-256 requests), 16,384
    one-warp programs at 128 heads x 128 requests (H200: 81 us alone, 7.6% of 8k x 128, the
    sweep `h200_sweep128_v0.2.19d`); (2) on the keys-as-rows program loop for up to
    `warp_specialized.WHOLE_PIECES_MAX_QLEN` query positions. H200, 12 heads, two sessions
    (docs/perf.md v0.2.11, v0.2.13): qlen 1 ragged 114.2 / 114.1 -> 113.8 / 113.1 us, one long
    request beside 47 short 123.8 / 125.8 -> 122.7 / 124.9; qlen 2 one-long 132.5 / 134.7 ->
    131.9 / 134.0 but ragged 117.5 / 118.0 -> 118.3 / 118.6, and again with the 32-row loop's
    piece cost 4 (session 24): one-long 133.2 / 133.0 -> 132.9 / 132.9, ragged 118.6 / 118.4
    -> 119.4 / 119.4. The 64-row program loop's consumers write whole pieces too, opt-in
    (H100, 12 heads x qlen 4, session 58: ragged 175.8 -> 176.9 us, one-long 204.1 ->
    205.2)."""
    return gated_knob(
        "whole_pieces",
        requested,
        runs=(warp_specialized and (program_loop or one_split)) or (kind == "gqa" and one_split),
        default=one_split or (keys_as_rows and qlen <= ws.WHOLE_PIECES_MAX_QLEN),
        needs="the warp-specialized kernels (warp_specialized) on the program loop "
        "(program_loop), or one uniform split without merge_streams (those or GQA)",
    )


def merge_streams_for(requested: bool | None, *, kind: str, balanced: bool, merge_block_s: int,
                      num_splits: int, merge_d_split: int) -> bool:  # fmt: skip
    """The plan's `merge_streams`: as requested (MLA on uniform splits whose merge folds a row
    in one tile, in power-of-two column slices: stage 1 flags each split it wrote for the
    merge programs that fold it), else off (slower on the H200: docs/perf.md, session 18)."""
    one_tile = merge_block_s >= num_splits and merge_d_split & (merge_d_split - 1) == 0
    return gated_knob(
        "merge_streams",
        requested,
        runs=kind == "mla" and not balanced and one_tile,
        default=False,
        needs="MLA on uniform splits, merge_block_s >= num_splits and a power-of-two merge_d_split",
    )


def early_start_for(requested: bool | None, *, warp_specialized: bool, dependent_launch: bool,
                    batch_rows: int) -> bool:  # fmt: skip
    """The plan's `early_start`: as requested (the Gluon kernels on a device with programmatic
    dependent launch only: their producer prefetches keys before the wait), else
    `early_start_by_default` there."""
    return gated_knob(
        "early_start",
        requested,
        runs=warp_specialized and dependent_launch,
        default=early_start_by_default(batch_rows),
        needs="the warp-specialized kernels (warp_specialized) and a device with "
        "programmatic dependent launch (dependent_launch, Hopper on)",
    )


def early_start_by_default(batch_rows: int) -> bool:
    """`early_start` by default: `warp_specialized.EARLY_START` for batches of up to
    `EARLY_START_MAX_ROWS` query rows (batch x qlen x heads). H200, back-to-back calls, default
    splits (docs/perf.md v0.2.12), uniform: 12 heads 8k / 68k / 327k x 1 11.6 / 28.7 / 93.5 ->
    9.1 / 26.3 / 92.2 us, 8k x 8 26.8 -> 26.0; qlen 2 8k x 1 / 8 13.5 / 29.3 -> 11.1 / 28.4,
    68k x 1 / 8 31.1 / 153.9 -> 30.2 / 152.4; 128 heads 8k / 68k x 1 22.9 / 58.1 -> 21.8 /
    56.7. The program loop: ragged (8 requests) 116.3 -> 114.4, qlen 2 119.6 -> 117.9; 68k /
    327k x 8 and x 16 level (149.7 -> 149.8, 1331.2 -> 1330.0). Past it the merge runs its
    programs in several waves and the calls lost: 128 heads 8k / 68k x 8 55.5 / 359.4 -> 60.2
    / 361.9, 12 heads 8k x 48 112.9 -> 114.6, one long request beside 47 short 126.1 -> 127.8
    (qlen 2 135.1 -> 139.4)."""
    return ws.EARLY_START and batch_rows <= EARLY_START_MAX_ROWS


def early_start_pays_alone(requested: bool | None, dependent_launch: bool, balanced: bool,
                           batch_rows: int, block_h: int) -> bool:  # fmt: skip
    """Whether `early_start` makes the Gluon kernel pay even on splits of one key block: when
    asked for (it runs only there), or by default for 16-row tiles on uniform splits (H200, 12
    heads, 8k x 1 at 128 splits: 9.1 us against the Triton tile's 11.6; 32-row tiles and the
    program loop's one-block shares unmeasured there)."""
    if requested is not None:
        return bool(requested)
    return (
        dependent_launch
        and not balanced
        and early_start_by_default(batch_rows)
        and (block_h == MIN_DOT)
    )


def warp_specialized_for(requested: bool | None, *, pinned: tuple, pays: bool, **config) -> bool:
    """The plan's `warp_specialized`: as requested (ValueError where it cannot run), else on
    wherever it can run and pays, unless a Triton-tile knob was pinned."""
    if requested is not None:
        check_bool("warp_specialized", requested)
    reason = ws.unsupported_reason(**config)
    if requested and reason is not None:
        raise ValueError(f"warp_specialized: {reason}")
    if requested is None:
        return reason is None and pays and all(knob is None for knob in pinned)
    return requested


def balanced_grid(kind: str, block_h: int, wave_programs: int, batch_size: int) -> int:
    """The default balanced grid's num_programs per kv head and head block, from one wave's
    worth (`wave_programs`). Stage 1 launches num_programs + batch programs, one per piece, so
    MLA sizes the grid by what it launches: whole waves, one for tiles of up to 32 rows and
    two for the 64-row tile (H200 schedule ablation, docs/perf.md v0.2.3: ragged 155.8 ->
    136.9 us, 1 x 327,600 + 47 short 187.7 -> 171.3 us, at qlen 4 two launched waves 434.7 us
    beside 436.3 for the four waves of num_programs before), with at least half a wave of
    programs so that a batch of a wave or more still cuts its keys in small pieces. GQA keeps
    one wave of num_programs where `gqa_tile_rules.gqa_balanced_programs` does not size it
    (a device without `gqa_balanced_min_blocks`, or a block shape the caller pinned)."""
    if kind != "mla":
        return wave_programs
    return launched_wave_programs(2 if block_h >= 64 else 1, wave_programs, batch_size)


def launched_wave_programs(waves: int, wave_programs: int, batch_size: int) -> int:
    """num_programs whose stage 1 launches `waves` whole waves (num_programs + batch_size
    pieces per head block), adding waves until it is at least half a wave."""
    programs = waves * wave_programs - batch_size
    while programs < max(1, wave_programs // 2):
        programs += wave_programs
    return programs


def tma_pays(
    kind: str, block_h: int, page_size: int, program_keys: int, dtype: torch.dtype, spec
) -> bool:
    """Whether key blocks come by bulk copies (with two latent chains) by default: on a device
    with them and a measured `tma_min_split_keys`, for MLA's 16-row tiles over 16-bit caches
    (fp32 plans are for testing, unmeasured), pages that hold whole 64-key blocks (a multiple
    of 64 keys: a block of a 96-key page may cross into the next), and
    programs that stream at least `tma_min_split_keys` keys (a split of the longest request,
    or a balanced program's share of the batch). H200, 64-key blocks in 2 stages against the
    default: uniform splits 3.5-8% faster with 1,280 to 20,475 keys (12 and 16 heads, batch 1
    to 48), 4.4% slower with 266 (batch 1 x 68k: four blocks per program; pipeline ablation,
    docs/perf.md v0.2.3); balanced programs of ~1,700-2,100 keys 0.5-7.6% faster (ragged
    batch, 1 x 327,600 + 47 short, prefix-boundary batch; schedule ablation, v0.2.4)."""
    tun = spec.tunables
    return (
        spec.bulk_copies
        and tun.tma_min_split_keys > 0
        and kind == "mla"
        and block_h == MIN_DOT
        and dtype != torch.float32
        and page_size % TMA_BLOCK_N == 0
        and program_keys >= tun.tma_min_split_keys
    )


def prefetch_pays(
    kind: str, block_h: int, group_rows: int, split_keys: int, one_wave: bool, spec
) -> bool:
    """Whether page-id prefetch is the default, as measured on the H200 for MLA's 16-row
    programs (docs/perf.md v0.2.0): never for splits under `prefetch_min_split_keys` (one
    64-key block: 13.5 -> 20.8 us at batch 1 x 8k); always for a full 16-row tile; for a
    partial one only while all programs fit in one wave and splits hold at most
    `prefetch_split_keys` (12 heads: wins at batch 1, loses 10-17% at batch 8-48)."""
    tun = spec.tunables
    if kind != "mla" or block_h != MIN_DOT or tun.prefetch_split_keys <= 0:
        return False
    if split_keys < tun.prefetch_min_split_keys:
        return False
    return group_rows == block_h or (one_wave and split_keys <= tun.prefetch_split_keys)


def balanced_prefetch_pays(
    kind: str, block_h: int, total_keys: int, num_programs: int, spec
) -> bool:
    """Whether the balanced schedule's programs prefetch page ids by default: MLA programs of
    at most 32 rows (12 heads at qlen 1 and 2 gained 5% on the H200; the 64-row tile at qlen
    4 lost 10%), on a device whose tunables measured prefetch, and at least
    `prefetch_min_split_keys` keys per program (one-block programs lose, as for splits)."""
    tun = spec.tunables
    if kind != "mla" or block_h > 2 * MIN_DOT or tun.prefetch_split_keys <= 0:
        return False
    return total_keys >= tun.prefetch_min_split_keys * num_programs


def balanced_two_chains_pay(kind: str, block_h: int, head_dim_v: int, spec) -> bool:
    """Whether balanced MLA programs without bulk copies take two latent chains and no
    page-id look-ahead: programs of at most `balanced_two_chains_rows` rows (H100, docs/perf.md
    session 63: 16 rows 4-15% faster at pages 100, 48 and 4; 32 rows 1.6-2.3x)."""
    rows = spec.tunables.balanced_two_chains_rows
    return kind == "mla" and block_h <= rows and head_dim_v > MIN_DOT


def uniform_wide_block_pays(kind: str, block_h: int, split_keys: int, spec) -> bool:
    """Whether uniform splits of MLA's 32-row Triton tile stream 64-key blocks: splits of at
    least `uniform_wide_block_split_keys` keys (H100, docs/perf.md session 63, run209: 12 and
    16 heads x qlen 2 at page 100, 8-16% faster from 512 keys a split, 4% slower at 256)."""
    least = spec.tunables.uniform_wide_block_split_keys
    return kind == "mla" and block_h == 2 * MIN_DOT and least > 0 and split_keys >= least


def merge_partials_per_row(balanced: bool, num_programs: int, batch_size: int,
                           num_splits: int) -> int:  # fmt: skip
    """The partials a row of the merge folds on average: uniform splits, all `num_splits`;
    the balanced schedule, num_programs / batch (most of a ragged batch's rows one or two, its
    long requests' many)."""
    return -(-num_programs // batch_size) if balanced else num_splits


def default_merge_block_s(balanced: bool, num_programs: int, mean_partials: int,
                          equal_shares: bool = False) -> int:  # fmt: skip
    """The merge's tile of partials. Uniform: one tile holds all of a row's partials.
    Balanced: a 256-row tile made every one of a ragged batch's merge programs pay for its
    registers (H200, docs/perf.md v0.2.0), so 64 unless the batch is so small that its rows'
    partials average more: at batch 1 three serial tiles of 64 cost 327k x 1 6 us of 102
    (v0.2.9e). A request has at most one piece in each balanced program.
    equal_shares: the program loop streams a batch of equal (or unknown) lengths
    (`loop_streams_long_batch`), so every row folds its mean or one more, and a tile of
    EQUAL_SHARES_MERGE_BLOCK_S holds them where 64 would be half masked: H200, 12 heads, 68k x
    8 (17-18 partials a row) 145.5 -> 143.8 us (92.7% of the read ceiling), 68k x 16 281.4 ->
    279.0, 327k x 8 / 16 -1 to -2 us, x 48 level (docs/perf.md v0.2.15)."""
    if not balanced:
        return min(MAX_SPLITS, next_pow2(mean_partials))
    if equal_shares:
        most_partials = max(mean_partials + 1, EQUAL_SHARES_MERGE_BLOCK_S)
    else:
        most_partials = max(mean_partials, BALANCED_MERGE_BLOCK_S)
    return min(MAX_SPLITS, next_pow2(min(most_partials, num_programs)))


def default_long_partials(batch_size: int, num_programs: int, rows: int,
                          merge_rows: int) -> tuple[int, int]:  # fmt: skip
    """(merge_long_partials, merge_rows) by default for a balanced merge of wide rows (MLA)
    that no knob pinned. One row a program launches batch x rows x slices programs, and on a
    batch of many short requests beside a long one those launches are the merge's cost after
    stage 1; folding a request of up to LONG_PARTIALS partials LONG_PARTIALS_ROWS rows a
    program, and the longer ones one row a program (kernels/merge_by_length.py), cut them
    (H100, 12 heads, 1 x 327,600 + 47 short: qlen 4 196.0 -> 190.7 us, qlen 2 180.4 -> 178.3,
    docs/perf.md run240; held out, run241: 16 heads qlen 4 / 8 -3.4 / -5.8%, 128 heads qlen
    1 / 4 / 8 -4.5 to -5.1%, but 12 and 16 heads qlen 1 +0.3%). Off where the batch has no
    more requests than the grid's long slots ((num_programs - 1) // LONG_PARTIALS): every
    request may then be long, the launches are few, and the slots' search only adds to the
    long rows' path (ragged batch of 8, qlen 2: 161.7 -> 163.0 us), and where no 2 rows
    divide heads x qlen."""
    short_rows = math.gcd(rows, LONG_PARTIALS_ROWS)
    if batch_size <= (num_programs - 1) // LONG_PARTIALS or short_rows == 1:
        return 0, merge_rows
    return LONG_PARTIALS, short_rows


def default_merge_d_split(head_dim_v: int) -> int:
    """D_SPLIT = 8, halved while it does not divide head_dim_v or a slice would be under 16."""
    d_split = DEFAULT_D_SPLIT
    while d_split > 1 and (head_dim_v % d_split or head_dim_v // d_split < MIN_MERGE_COLUMNS):
        d_split //= 2
    return d_split


def one_wave_merge_slicing(
    head_dim_v: int, d_split: int, num_warps: int, merge_rows: int, compute_units: int
) -> tuple[int, int]:
    """(merge_d_split, merge_num_warps): twice the slices, each warp keeping its share of the
    tile (half the warps, at least one), where the merge's grid still fits one wave of
    `MERGE_WARPS_PER_SM` warps an SM and the slices stay >= NARROW_MERGE_COLUMNS wide; else as
    given. Each warp folds as many partials as before, but a program has fewer warps to reduce
    across (shared-memory round trips and barriers: 11 an iteration of a [128, 64] tile on 4
    warps, 1 of a [128, 16] tile on 1; `tools/inspect_merge.py`), while on grids of several
    waves the extra programs queue (each pays its launch and wait). H200, 12 heads, MLA, 8 ->
    16 slices (docs/perf.md v0.2.14b): one wave: ragged 113.0 -> 112.2 us, 8k x 8 25.6 ->
    24.9, 68k x 8 149.3 -> 148.1, 8k x 1 8.95 -> 8.77 (4 -> 2 warps; 4 warps 9.2), 68k x 1
    26.3 -> 26.1, 327k x 1 level; several waves: the qlen 2 ragged batch (3,072 programs)
    118.1 -> 119.6, one long request beside 47 short 124.4 -> 126.4."""
    narrow_split = 2 * d_split
    narrow_warps = max(1, num_warps // 2)
    fits = (
        head_dim_v % narrow_split == 0
        and head_dim_v // narrow_split >= NARROW_MERGE_COLUMNS
        and merge_rows * narrow_split * narrow_warps <= MERGE_WARPS_PER_SM * compute_units
    )
    return (narrow_split, narrow_warps) if fits else (d_split, num_warps)


def wide_merge_slicing(
    d_split: int, num_warps: int, merge_rows: int, compute_units: int
) -> tuple[int, int]:
    """(merge_d_split, merge_num_warps) of a uniform plan's merge: half the slices, each on
    twice the warps (up to 4, so each warp keeps its share of the tile), while the grid takes
    more than one wave of `MERGE_PROGRAMS_PER_SM` programs an SM. The uniform merge's programs
    are small (32-52 registers), so the SM's block limit, not its registers, sets how many run
    at once; past a wave each pays its launch and dependent loads in turn. H200, against 8
    slices of 1 warp, two rounds alternating (docs/perf.md v0.2.20b): 128 heads 8k x 48 (1 x
    4 here) 272.8 / 272.8 -> 261.4 / 264.7 us, the merge alone 31.9 -> 15.5; 8k x 16 (2 x 4)
    and 8k x 8 (4 x 2) level (87.4 / 88.2 -> 87.1 / 88.8, 50.8 / 50.7 -> 50.6 / 50.2); 16
    heads 8k x 48 112.3 / 112.6 -> 111.7 / 111.5, 12 heads 8k x 48 and 16 x qlen 8 68k x 8
    level. The balanced merge's programs hold 12 an SM by their registers, and wider ones
    lost there (docs/perf.md session 15)."""
    slices = slices_in_one_wave(d_split, merge_rows, compute_units)
    return slices, min(4, num_warps * (d_split // slices))


def slices_in_one_wave(d_split: int, merge_rows: int, compute_units: int) -> int:
    """d_split halved while the merge's grid (rows x slices) takes more than one wave of
    `MERGE_PROGRAMS_PER_SM` programs an SM (`wide_merge_slicing`, `narrow_rows_merge_slicing`).
    d_split is a power of two dividing head_dim_v (the default's and the one-wave rule's), so
    every half divides it too."""
    one_wave = MERGE_PROGRAMS_PER_SM * compute_units
    while d_split > 1 and merge_rows * d_split > one_wave:
        d_split //= 2
    return d_split


def narrow_rows_merge_slicing(
    head_dim_v: int, d_split: int, block_s: int, partials: int, merge_rows: int,
    compute_units: int,
) -> tuple[int, int, int]:  # fmt: skip
    """(merge_d_split, merge_num_warps, merge_block_s) where a row's small tile fits one warp
    (`narrow_merge_rows`: GQA's 64-128 columns, not MLA's 512): half the slices while the
    grid takes more than one wave of `MERGE_PROGRAMS_PER_SM` programs an SM, on the warps
    the tile of `partials` (the tile most rows fold) takes (`default_merge_num_warps`), not
    the uniform rule's doubled ones, and a tile of partials of at most
    NARROW_ROWS_TILE_ELEMENTS a warp. The slicing above was fitted on MLA's rows; at 64-128
    columns it cut rows into 16-column slices, so a batch of thousands of rows launched tens
    of thousands of one-warp programs, each a chain of dependent loads (the piece range, the
    lse, the partials), paid wave after wave. H200, 48 requests of up to 4k keys, balanced,
    the merge alone (docs/perf.md session 37): 8 slices of 16 columns (gpt-oss 4) against
    one slice on one warp: llama3-8b at qlen 4 31.3 -> 5.5 us (the call 162.0 -> 136.7),
    gpt-oss 31.4 -> 9.2, at qlen 1 9.1 -> 2.6 and 9.2 -> 3.7; the whole row on 4 warps 19.5
    and 22.8 (a warp's share too small to pay for the reductions across warps)."""
    d_split = slices_in_one_wave(d_split, merge_rows, compute_units)
    block_d = next_pow2(head_dim_v // d_split)
    num_warps = default_merge_num_warps(min(partials, block_s), block_d)
    most_partials = max(SMALL_S.value, NARROW_ROWS_TILE_ELEMENTS * num_warps // block_d)
    return d_split, num_warps, min(block_s, most_partials)


def merge_rows_for(rows: int, merge_programs: int, block_s: int, block_d: int,
                   num_warps: int, compute_units: int) -> tuple[int, int]:  # fmt: skip
    """(merge_rows, merge_block_s) for rows of at most 128 columns (`narrow_merge_rows`): the
    fewest rows a merge program folds as one tile (a power of two dividing a request's `rows`,
    up to MAX_MERGE_ROWS) that bring its grid (`merge_programs` at one row a program) within
    one wave of `MERGE_PROGRAMS_PER_SM` programs an SM, while the tile most rows fold (rows x
    up to SMALL_S partials x block_d) stays within NARROW_ROWS_TILE_ELEMENTS a warp; the tile
    of partials of the rows with more (block_s) shrinks as much, down to SMALL_S. Past a wave
    each one-row program pays its launch and its chain of dependent loads (the piece range,
    the lse, the partials) in turn; a program of several rows issues their loads together."""
    one_wave = MERGE_PROGRAMS_PER_SM * compute_units
    budget = NARROW_ROWS_TILE_ELEMENTS * num_warps
    small_tile = min(block_s, SMALL_S.value) * block_d
    merge_rows = 1
    while (
        merge_programs > merge_rows * one_wave
        and 2 * merge_rows <= MAX_MERGE_ROWS
        and rows % (2 * merge_rows) == 0
        and 2 * merge_rows * small_tile <= budget
    ):
        merge_rows *= 2
    return merge_rows, min(block_s, max(SMALL_S.value, block_s // merge_rows))


def narrow_merge_rows(head_dim_v: int) -> bool:
    """A row's small tile of partials fits one merge warp (`narrow_rows_merge_slicing`)."""
    return SMALL_S.value * head_dim_v <= MERGE_WARP_ELEMENTS


def default_merge_num_warps(partials: int, block_d: int) -> int:
    """Warps per merge program: one per MERGE_WARP_ELEMENTS of the [partials, columns] tile
    (rows of at most 8 partials fold one [8, columns] tile, kernels/merge.py), from 1 to 4.
    H200 (`--ablation merge_tile`, docs/perf.md v0.2.5), 12 heads, 64-column slices, against
    4 warps: 1 warp 3-5% faster on ragged batches (1 x 327,600 + 47 short 152.4 -> 144.5 us,
    its qlen 4 402.3 -> 380.6; the ragged batch of 8, 32 partials a row on average, 131.9 ->
    127.2, 2 warps 127.9) and at 2 and 16 splits (8k x 128 298.8 -> 294.0, 8k x 48 136.3 ->
    131.7); at 32 splits 2 warps best (8k x 8 31.1 -> 29.4); at 128 and 256 splits fewer
    warps lose (68k x 1 31.5 -> 35.1 with 2, 53.9 with 1) and 8 gain nothing (32.4)."""
    rows = max(partials, SMALL_S.value)
    warps = next_pow2(-(-rows * block_d // MERGE_WARP_ELEMENTS))
    return max(1, min(4, warps))


def partial_bytes_split_cap(key_bytes: int, split_partial_bytes: int) -> int:
    """The Gluon tile's most default splits: no more than keep a request's fp32 partials
    (`split_partial_bytes` a split: rows x d_v x 4 B) within its key bytes, which the merge
    would otherwise read back in more time than the split saves (H200, 8k x 1: 128 heads
    best at 32 splits, 21.3 us against 22.7 at 64; 16 heads x qlen 4 best at 64, 18.6 us
    against 20.1 at 32; session 8). Rounded down to a power of two, as the fill rule's counts
    are: the cap's own 36 at 128 rows x 8k x 1 took 19.8 us against 18.4 at 32, the same 32
    splits filled (docs/perf.md session 25)."""
    return prev_pow2(max(1, key_bytes // split_partial_bytes))


def narrow_gluon_splits(num_splits: int, batch_size: int, keys: int, rows: int, block_h: int,
                        spec: DeviceSpec) -> int:  # fmt: skip
    """The keys-as-rows kernel's default split count for uniform plans, from the Triton tile's
    (`num_splits`): it holds one program per SM (164-185 KB of shared memory) where the Triton
    tile of the same height holds two, so its splits fill waves of one per SM; 16-row programs
    stream a block in ~2.2 us, so fewer, longer splits that leave up to
    `keys_as_rows_wave_fill` of the SMs idle beat more waves at 8k x 24-96 (H200: 8k x 24 69.6
    -> 61.0 us); 32-row ones, slower a block, lost 8% that way at 68k (docs/perf.md v0.2.9a,
    v0.2.9g)."""
    fill = spec.tunables.keys_as_rows_wave_fill if block_h == MIN_DOT else None
    one_per_sm = num_partitions(batch_size, keys, rows, spec, is_mla=True, programs_per_sm=1,
                                wave_fill=fill)  # fmt: skip
    return min(num_splits, one_per_sm)


def next_pow2(n: int) -> int:
    """The smallest power of two >= n, for n >= 1."""
    return 1 << max(0, (n - 1).bit_length())


def prev_pow2(n: int) -> int:
    """The largest power of two <= n, for n >= 1."""
    return 1 << (n.bit_length() - 1)
