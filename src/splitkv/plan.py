"""The decode plan: every launch knob, chosen on the host from host integers, plus the workspace.

`plan_decode` runs once per batch shape (no device data, no sync); `mla_decode(..., plan=plan)`
then does no allocation and no host sync, so one CUDA-graph capture replays for any `seq_lens`
and `page_table` contents within the plan's bounds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import torch

from splitkv import warp_specialized as ws
from splitkv.checks import (
    MAX_GQA_HEAD_DIM,
    MAX_PAGE_SIZE,
    check_bool,
    check_int,
    check_plan_fits,
)
from splitkv.device import DeviceSpec, resolve_device
from splitkv.gqa_pack import (
    GQA_DEFAULT_PACK,
    gqa_kv_pack_may_pay,
    kv_pack_for,
    packed_plan_agrees,
    packed_rows,
    packed_tile,
)
from splitkv.gqa_plan_tile import gqa_planned_tile
from splitkv.gqa_tile_rules import (
    gqa_balanced_grid,
    gqa_one_split_pays,
    gqa_partials_split_cap,
)
from splitkv.host_lengths import HostLengths, host_lengths
from splitkv.partition import num_partitions, resident_programs_per_sm
from splitkv.plan_gluon import gluon_outlook
from splitkv.plan_memo import remember_lengthless_plans
from splitkv.plan_merge import MergeKnobs, merge_plan
from splitkv.plan_rules import (
    MAX_SPLITS,
    MIN_DOT,
    GridOrder,
    alternate_blocks_for,
    balanced_grid,
    block_h_for,
    consumer_groups_for,
    early_start_for,
    grid_order_for,
    keys_as_rows_for,
    narrow_gluon_splits,
    next_pow2,
    piece_cost_for,
    warp_specialized_for,
    whole_pieces_for,
)
from splitkv.plan_schedule import auto_schedule
from splitkv.plan_tile import stage_one_tile

MAX_HEADS = 128  # DeepSeek-V3 unsharded; more heads would need more head blocks than tested
# GQA/MHA query heads: a kv head's rows run in head blocks of any count, and the shared-prefix
# cascade stacks up to a tile of rows a kv head (8 kv heads x 64 rows: 512 heads).
MAX_GQA_HEADS = 1024


def max_heads_for(kind: str) -> int:
    """The most query heads a call of this kind ("mla" or "gqa") takes."""
    return MAX_GQA_HEADS if kind == "gqa" else MAX_HEADS


MAX_QLEN = 8  # multi-token prediction depth the causal rule is tested for
MLA_HEAD_DIM_QK = 576  # 512 latent + 64 rope (DeepSeek-V3, Kimi-K2/K3)
MLA_HEAD_DIM_V = 512
GQA_HEAD_DIM = 128  # Llama, Qwen
GRID_ORDERS = ("split_major", "batch_major")
SCHEDULES = ("uniform", "balanced")
PARTIAL_DTYPES = (torch.float32, torch.bfloat16)


@dataclass(frozen=True)
class DecodeWorkspace:
    """Stage-1 partials: `partial_o [batch, qlen*heads, num_splits, d_v]` (the plan's
    `partial_dtype`, float32 by default) and `partial_lse [batch, qlen*heads, num_splits]`
    float32 (base 2); the balanced
    schedule's are `[qlen*heads, num_programs + batch]` per head block, plus `piece_ranges
    [batch, 2]` int32: each request's first and last stage-1 program, written by stage 1 so
    the merge need not recompute the schedule (kernels/balanced.py). With `merge_streams`,
    `split_flags [batch, qlen*heads, merge_d_split, num_splits]` int32: 1 once stage 1 wrote
    that split's partial for that merge program, back to 0 when the merge has read it
    (kernels/split_flags.py); zero between calls."""

    partial_o: torch.Tensor
    partial_lse: torch.Tensor
    piece_ranges: torch.Tensor | None = None
    split_flags: torch.Tensor | None = None

    def __repr__(self) -> str:
        nbytes = self.partial_o.numel() * self.partial_o.element_size()
        mib = (nbytes + self.partial_lse.numel() * 4) / (1 << 20)
        return f"DecodeWorkspace(partial_o={list(self.partial_o.shape)}, {mib:.1f} MiB)"


@dataclass(frozen=True)
class DecodePlan:
    """Launch knobs for one decode shape; print it to see them all.

    Shape bounds: `batch_size` (a call may use fewer requests), `num_heads`, `qlen`,
    `page_size`, `dtype`, head dims. `max_seq_len` is the context the split count was chosen
    for; longer contexts still compute correctly, with fewer splits than ideal.
    Stage 1: `num_splits` key splits x `num_kv_heads` x `num_head_blocks` blocks of `block_h`
    query rows per request (MLA: one latent kv head; GQA: a kv head's group of query heads),
    `block_n` keys per iteration, program order `grid_order`; `page_prefetch` loads each
    block's page ids one iteration ahead (lets num_stages >= 3 keep several blocks in flight);
    `latent_chains` 2 (MLA) keeps the latent dims in halves, so the score dot runs as two
    independent mma chains (docs/perf.md); `kv_tma` (MLA) brings whole key blocks in by bulk
    tensor copies (TMA) instead of per-thread loads.
    `kv_pack` (GQA) kv heads share a program: the kv-head axis counts groups of that many.
    `schedule` "balanced" replaces the splits by `num_programs` programs per head block that
    share the batch's key blocks evenly (ragged batches; `block_b` is the batch bound the
    kernels scan; `program_loop` launches one program per schedule program instead of one per
    piece; `piece_cost` the units a request adds to a program loop's schedule beside its key
    blocks; `whole_pieces`: the Gluon loop writes a request one piece holds straight to the
    output, as the Gluon uniform kernel does on one split, with no merge); "uniform" splits
    every request into `num_splits`. `warp_specialized` (MLA, 16- to 64-row tiles on Hopper,
    uniform or program loop) runs stage 1 on the Gluon kernels instead of the Triton ones,
    which bring each key block in bulk copies of `copy_rows` rows (0 on the Triton kernels).
    Stage 2: `merge_block_s` partials per iteration, `merge_d_split` programs per row;
    `dependent_launch` starts it as a programmatic dependent of stage 1; `early_start` starts
    the Gluon stage 1 as one of the kernel ahead of it. `partial_dtype`: the
    element type of the normalised partial outputs stage 1 writes and the merge reads.
    """

    kind: str
    batch_size: int
    max_seq_len: int
    num_heads: int
    num_kv_heads: int
    qlen: int
    page_size: int
    dtype: torch.dtype
    head_dim_qk: int
    head_dim_v: int
    device: torch.device
    device_name: str
    num_splits: int
    block_h: int
    num_head_blocks: int
    block_n: int
    grid_order: GridOrder
    schedule: str
    num_programs: int
    block_b: int
    split_num_warps: int
    split_num_stages: int
    page_prefetch: bool
    latent_chains: int
    kv_tma: bool
    program_loop: bool
    piece_cost: int
    whole_pieces: bool
    warp_specialized: bool
    keys_as_rows: bool
    consumer_groups: int
    dependent_launch: bool
    early_start: bool
    merge_block_s: int
    merge_d_split: int
    merge_num_warps: int
    partial_dtype: torch.dtype
    workspace: DecodeWorkspace = field(compare=False)
    merge_streams: bool = False
    alternate_blocks: bool = False
    merge_rows: int = 1
    merge_long_partials: int = 0
    kv_pack: int = 1
    copy_rows: int = 0

    @property
    def programs_a_split(self) -> int:
        """Stage-1 programs a request launches a split (or balanced slot): groups of
        `kv_pack` kv heads x head blocks."""
        kv_groups, _ = packed_tile(self.num_kv_heads, self.head_dim_v, self.kv_pack)
        return kv_groups * self.num_head_blocks

    @property
    def tile_head_dim(self) -> int:
        """The head dim stage 1's tile rules weigh: `kv_pack` heads' columns (gqa_pack.py)."""
        return packed_tile(self.num_kv_heads, self.head_dim_v, self.kv_pack)[1]

    @property
    def split_grid(self) -> int:
        """Stage-1 programs for a full batch."""
        return self.num_splits * self.batch_size * self.programs_a_split

    @property
    def merge_block_d(self) -> int:
        return next_pow2(self.head_dim_v // self.merge_d_split)


def check_plan_shape(batch_size: int, max_seq_len: int, num_heads: int, qlen: int,
                     page_size: int, kind: str, num_kv_heads: int, window_left: int,
                     schedule: str, dtype: torch.dtype,
                     partial_dtype: torch.dtype) -> None:  # fmt: skip
    """`plan_decode`'s shape arguments in bounds (each error names its argument)."""
    for name, value, low, high in (
        ("batch_size", batch_size, 1, None),
        ("max_seq_len", max_seq_len, 1, None),
        ("num_heads", num_heads, 1, max_heads_for(kind)),
        ("qlen", qlen, 1, MAX_QLEN),
        ("page_size", page_size, 1, MAX_PAGE_SIZE),
    ):
        check_int(name, value, low, high)
    if kind not in ("mla", "gqa"):
        raise ValueError(f"kind: expected 'mla' or 'gqa', got {kind!r}")
    check_int("num_kv_heads", num_kv_heads, 1, 1 if kind == "mla" else num_heads)
    if num_heads % num_kv_heads:
        raise ValueError(
            f"num_kv_heads: expected a divisor of num_heads={num_heads}, got {num_kv_heads}"
        )
    check_int("window_left", window_left, -1)
    if schedule not in (*SCHEDULES, "auto"):
        raise ValueError(f"schedule: expected one of {(*SCHEDULES, 'auto')}, got {schedule!r}")
    if dtype not in (torch.bfloat16, torch.float16, torch.float32):
        raise TypeError(f"dtype: expected torch.bfloat16, float16 or float32, got {dtype}")
    if partial_dtype not in PARTIAL_DTYPES:
        raise TypeError(
            f"partial_dtype: expected torch.float32 or torch.bfloat16, got {partial_dtype!r}"
        )


def checked_head_dims(kind: str, head_dim: int | None, head_dim_qk: int,
                      head_dim_v: int) -> tuple[int, int]:  # fmt: skip
    """(key width, value width): MLA's as given; GQA's one head dim (default GQA_HEAD_DIM)."""
    if kind == "gqa":
        head_dim = GQA_HEAD_DIM if head_dim is None else head_dim
        check_int("head_dim", head_dim, MIN_DOT, MAX_GQA_HEAD_DIM)
        if head_dim % MIN_DOT:
            raise ValueError(f"head_dim: expected a multiple of {MIN_DOT}, got {head_dim}")
        head_dim_qk = head_dim_v = head_dim
    check_int("head_dim_v", head_dim_v, MIN_DOT, None)
    check_int("head_dim_qk", head_dim_qk, head_dim_v, None)
    return head_dim_qk, head_dim_v


def default_split_count(kind: str, batch_size: int, keys: int, lengths: HostLengths, *,
                        rows: int, kv_groups: int, num_kv_heads: int, group_rows: int,
                        block_h: int, tile_head_dim: int, programs_a_split: int,
                        dtype: torch.dtype, partial_dtype: torch.dtype, gqa_tiled: bool,
                        spec: DeviceSpec) -> tuple[int, int | None]:  # fmt: skip
    """The planner's uniform split count for `batch_size` requests of up to `keys` keys (the
    seed's wave-aligned rule, `num_partitions`), and where GQA takes one split on its measured
    tiles the longest request's keys that split streams (else None)."""
    if kind == "mla":
        return num_partitions(batch_size, keys, rows, spec, is_mla=True), None
    num_splits = num_partitions(
        batch_size, keys, kv_groups, spec, is_mla=False, head_dim=tile_head_dim
    )
    # One kv head and head block (llama3-70b-tp8): the fill rule counts programs, where tall
    # splits also write partials that the merge reads back.
    one_group = num_kv_heads == 1 and group_rows <= block_h
    if spec.tunables.mha_programs_per_sm is not None and one_group:
        num_splits = min(num_splits, gqa_partials_split_cap(
            keys, spec.tunables.mha_split_page_size, group_rows, dtype.itemsize,
            partial_dtype.itemsize, batch_size, spec.compute_units,
        ))  # fmt: skip
    # On the measured tiles, any kv heads: one split where its launch fills the SMs within a
    # wave and its programs are short (the longest request's, where every length is given:
    # the table's width is often wider). Ragged lengths too, on uniform splits: each
    # request's program streams it alone, no merge.
    known = len(lengths) == batch_size
    longest = min(keys, lengths.longest if known else keys)
    ragged = known and lengths.shortest < longest
    if gqa_tiled and gqa_one_split_pays(
        batch_size * programs_a_split, longest, block_h, tile_head_dim, dtype.itemsize,
        spec.compute_units, ragged,
    ):  # fmt: skip
        return 1, longest
    return num_splits, None


def plan_decode(
    batch_size: int,
    max_seq_len: int,
    num_heads: int,
    *,
    qlen: int = 1,
    page_size: int = 64,
    dtype: torch.dtype = torch.bfloat16,
    device: torch.device | str | None = None,
    kind: str = "mla",
    num_kv_heads: int = 1,
    head_dim: int | None = None,
    window_left: int = -1,
    schedule: str = "auto",
    seq_lens: Sequence[int] | torch.Tensor | None = None,
    num_programs: int | None = None,
    num_splits: int | None = None,
    grid_order: GridOrder | None = None,
    merge_block_s: int | None = None,
    merge_d_split: int | None = None,
    merge_num_warps: int | None = None,
    merge_rows: int | None = None,
    merge_long_partials: int | None = None,
    kv_pack: int | None = None,
    block_h: int | None = None,
    block_n: int | None = None,
    num_warps: int | None = None,
    num_stages: int | None = None,
    page_prefetch: bool | None = None,
    latent_chains: int | None = None,
    kv_tma: bool | None = None,
    program_loop: bool | None = None,
    piece_cost: int | None = None,
    whole_pieces: bool | None = None,
    warp_specialized: bool | None = None,
    keys_as_rows: bool | None = None,
    consumer_groups: int | None = None,
    alternate_blocks: bool | None = None,
    copy_rows: int | None = None,
    dependent_launch: bool | None = None,
    early_start: bool | None = None,
    merge_streams: bool | None = None,
    partial_dtype: torch.dtype = torch.float32,
    head_dim_qk: int = MLA_HEAD_DIM_QK,
    head_dim_v: int = MLA_HEAD_DIM_V,
    device_spec: DeviceSpec | None = None,
) -> DecodePlan:
    """Plan a decode step from host integers; allocates the plan's workspace on `device`.

    Without `seq_lens` the plan is remembered for these arguments (`splitkv/plan_memo.py`): the
    same call again returns the same knobs with a fresh workspace, without planning.

    Args:
        batch_size: the most requests one call will hold.
        max_seq_len: the longest context (keys, including the qlen new tokens) to plan for.
        num_heads: query heads (MLA: all share the one latent KV head).
        num_kv_heads: GQA/MHA kv heads (dividing num_heads); 1 for MLA.
        head_dim: GQA/MHA head dim (default 128); MLA uses head_dim_qk / head_dim_v.
        kv_pack: GQA kv heads one stage-1 program attends at once (a power of two dividing
            num_kv_heads; their rows in one 16-row tile, their columns at most 256;
            splitkv/gqa_pack.py); default: 2 on gpt-oss's shape where the H200 measured a
            gain, else 1. Split counts and num_programs then count groups of kv_pack heads.
        window_left: GQA sliding window the calls will use (-1: none); with a window only the
            last window_left + qlen keys are split.
        schedule: "uniform" (every request cut into num_splits), "balanced" (the batch's key
            blocks cut evenly over num_programs programs per kv head and head block; default:
            `balanced_grid`), or "auto": uniform
            when `num_splits` is given,
            balanced when only `num_programs` is, else balanced where `seq_lens` shows a
            ragged batch that it would finish sooner (splitkv/schedule.py) or where Hopper's
            16-row keys-as-rows program loop takes a long batch (`loop_streams_long_batch`),
            or, for GQA without `seq_lens` (a CUDA graph's plan, replayed on ragged steps),
            from two requests (`gqa_graph_plan_balanced`), else uniform.
        seq_lens: the lengths the plan is for (host ints or a tensor, read once here), used only
            to pick the schedule and to size the balanced GQA grid (about 10 key blocks a
            program on the H200); a plan serves any lengths within its bounds.
        qlen: query positions per request, 1 to 8 (MTP).
        page_size: KV page size, any from 1 to 16,384 keys (MLA's Hopper Gluon tile takes
            multiples of 8; other sizes run the Triton kernels).
        dtype: q and kv_cache dtype (bfloat16, float16; float32 for testing).
        device: where the workspace lives; default: the current CUDA device, else the CPU.
        kind: "mla" (absorbed latent attention) or "gqa" (GQA, MHA, MQA).
        num_splits, grid_order, merge_block_s, merge_d_split, block_n, num_warps, num_stages:
            override the heuristic's choice (ablations, tuning). GQA on a measured device
            (16-bit types): with block_n and num_stages left to the planner, balanced programs
            take `gqa_balanced_tile` and uniform splits `gqa_long_split_tile` where their launch
            fits one wave of it, on half the default num_splits if need be
            (`gqa_long_split_count`); where they keep a tabled uniform tile (16 rows, and
            gpt-oss's 32) with lengths given and equal, the default num_splits halves where
            its launch passes one wave of that build's residency by a tail
            (`gqa_uniform_waves.py`); a given num_splits is kept.
        block_h: MLA only: query rows a stage-1 program attends (16, 32 or 64, at most the
            device's `block_m`); default: the request's rows (heads x qlen) rounded up to a
            power of two, at least 16. Larger than the rows, the rest is padding (computed,
            never stored).
        merge_num_warps: warps per merge program (1, 2, 4 or 8); default: one per 1,024
            elements of the tile most rows fold, 1 to 4 (`default_merge_num_warps`). With
            neither merge knob given, a merge that fits one wave takes twice the slices and
            half the warps (`one_wave_merge_slicing`); rows of at most 128 columns (GQA) take
            half the slices while the merge passes a wave (`narrow_rows_merge_slicing`).
        merge_rows: rows of one request each merge program folds as one tile (a power of two
            dividing heads x qlen, up to 8); default: 1, or for rows of at most 128 columns
            (GQA) the fewest that bring the merge within one wave (`merge_rows_for`).
        merge_long_partials: the balanced schedule only (0: off): a request of more partials
            than this (a power of two) merges one row a program in tiles of merge_block_s, the
            others merge_rows rows a program in one tile of this many, on one grid
            (kernels/merge_by_length.py): at most (programs - 1) // this many requests can
            have more, so few programs cover them. Default: 16 with 4 rows a program for MLA
            batches of more requests than that, with no merge knob given
            (`default_long_partials`), else 0.
        page_prefetch: load the next key block's page ids one iteration ahead, so the KV
            blocks can be double-buffered; default: where the device's tunables measured a gain
            (MLA 16-row programs, `PartitionTunables.prefetch_split_keys`; the GQA balanced and
            long-split tiles).
        latent_chains: MLA only: 2 splits the score dot over the latent dims into two
            independent accumulator chains, 1 keeps one; default: 2 for uniform tiles of 16
            and 32 rows (3-11% faster on the H200, docs/perf.md v0.2.2) and for balanced ones
            that take bulk copies (`kv_tma`), 1 for the 64-row tile and other balanced tiles
            (slower with two).
        kv_tma: MLA, two latent chains, page_size >= block_n: load each
            whole key block with tensor-memory-accelerator copies (Hopper on; the interpreter
            emulates them) through descriptors over the pool's rows; the partial last block of
            a split keeps masked loads, and so does a call whose cache is not page-contiguous
            with 16-byte aligned rows. Default (`tma_pays`): on, with two latent chains,
            64-key blocks and 2 stages, for 16-row tiles whose programs stream at least the
            device's `tma_min_split_keys` (H200: uniform splits 3.5-8% faster there,
            docs/perf.md v0.2.3; balanced programs 0.5-7.6%, v0.2.4), and only when block_n
            and num_stages are left to the planner.
        program_loop: MLA, balanced schedule: launch one stage-1 program per schedule program,
            walking its pieces (every program then streams the same number of key blocks),
            instead of one per piece; the default grid is then one wave of programs. Default:
            on for tiles of 32 and 64 rows (MTP, 128 heads), level to 25% faster on the H200's
            ragged batches there, and for 16-row tiles on the Gluon kernel; off for 16-row
            Triton tiles (19-33% slower at qlen 1; docs/perf.md, rows "session 7 program
            loop" and v0.2.6).
        piece_cost: MLA program loop: the schedule's units each request adds beside its key
            blocks, for what a piece costs on its own (queries, masked last block, partial
            store), so that a program meeting many requests streams fewer blocks
            (`kernels/balanced.request_units`). Default: `warp_specialized.PIECE_COST` (2) on
            either program loop (H200: Gluon, 12 heads x qlen 4 one-long 183.5 -> 174.2 us,
            128 heads ragged 304.4 -> 285.1, docs/perf.md v0.2.8e; Triton, 12 heads x qlen 2
            ragged 202.7 -> 183.5, one-long 218.9 -> 196.1, v0.2.8f), `PIECE_COST_32_ROWS`
            (4) on the keys-as-rows consumers' 32-row blocks (one-long 1-4 us faster at 12
            and 16 heads x qlen 2 and 32 heads, ragged level to 0.8 us slower; session 23),
            the device's `wide_loop_piece_cost` on the Gluon loop's 64-row head blocks, one a
            request or two on the alternating consumers, where it has one (H100: 4; one a
            request, 11 batches 1.3% faster in the geomean, 16 held-out ones 0.6%, session 59;
            alternating, 10 batches 1.2-1.3%, session 60); 0 without a loop.
        whole_pieces: the Gluon program loop: a piece that holds all of its request's keys
            (a short request inside one program's share) writes the request's output and lse
            itself, and the merge's programs for its rows return before reading any partial
            (the merge on one-long batches is bound by such rows: H200 ncu, docs/perf.md
            session 12); the Gluon uniform kernel and GQA's on one split (without
            merge_streams): every program writes its rows' output, and no merge runs.
            Default: on for one split, and on the keys-as-rows loop for qlen 1
            (`plan_rules.whole_pieces_for`: H200 one-long -0.7%, ragged -0.9%; at qlen 2 the
            ragged batch lost 0.5%).
        warp_specialized: MLA, uniform schedule or the balanced one's program loop, head
            blocks of 16, 32 or 64 rows, bfloat16 or float16, page_size >= 8, Hopper (sm_90):
            run stage 1 on the Gluon kernel whose copies and matrix multiplies run on
            different warps (kernels/mla_warp_specialized.py and, for the program loop,
            mla_warp_specialized_loop.py; 64-key blocks by bulk copies, 2 stages, one producer
            warp) instead of the Triton tile: 64-row head blocks (33-128 query rows: 128 heads,
            MTP) on two consumer warpgroups, 16- and 32-row ones (12-16 heads at qlen 1-2)
            with the keys as wgmma's rows on one (kernels/mla_keys_as_rows.py). A call whose
            cache is not page-contiguous with 16-byte aligned rows falls back to the Triton
            tile. Default: on wherever it can run and the splits (or the balanced programs'
            shares) are longer than one 64-key block (nothing to overlap in one), unless
            block_n, num_warps, num_stages, latent_chains, kv_tma or page_prefetch are given
            (they configure the Triton tile). H200: 64 rows 1.6x the Triton tile's rate on the
            same work (docs/perf.md, session 8); 16 rows 93.9 -> 96.1% of the read ceiling at
            12 heads 327k x 8, ragged 127.9 -> 116.1 us (v0.2.9a). The 16-32-row kernel holds
            one program per SM: its default splits fill waves of one per SM, its default
            program loop is one wave.
        keys_as_rows: with warp_specialized: attend with the keys as wgmma's rows (S^T = K Q^T,
            O^T += V^T P^T; the query rows split between the consumer warpgroups). Always for
            16- and 32-row head blocks; for 64-row ones an opt-in beside the default wide tile
            (two warpgroups of 32 query rows on one ring, no padding work at 48 rows: MTP qlen
            4 at 12 heads; unmeasured). True asks for the Gluon kernel too.
        consumer_groups: with keys_as_rows: the consumer warpgroups that split a head block's
            query rows, 1 or 2 (`plan_rules.consumer_groups_for`). Default 1 for 16- and 32-row
            blocks, 2 for 64-row ones (which take only 2); 2 on a 32-row block is an opt-in
            (two warpgroups of 16 rows on one ring; 1-3% slower at 12 heads qlen 1-2 on the
            H200, docs/perf.md session 17). 0 off the Gluon kernel.
        alternate_blocks: with the Gluon 64-row tile (either schedule): its two consumer
            warpgroups take turns, each scoring every other 32-key block alone and handing its
            P to the other (kernels/mla_alternate_blocks.py; up to 10% faster on the H200 than
            two splitting every 64-key block, the alternative: False); default on where that
            tile runs two or more head blocks a request (`plan_rules.alternate_blocks_for`).
            True asks for the Gluon kernel too.
        copy_rows: the Gluon kernels: rows of each bulk copy (TMA) of a key block, a power of
            two from 8 that divides the page size, at most a block. Default: the most,
            `warp_specialized.copy_rows` (a 64-key block in one copy at page 64, in four of 16
            rows at page 48), or less where the device measured less (the H100's 64-row tile
            on one head block a request: 16, `PartitionTunables.wide_copy_rows`).
        dependent_launch: launch the merge as a programmatic dependent of stage 1, hiding its
            launch behind stage 1's tail; default: where the device supports it (Hopper on).
        early_start: with warp_specialized and dependent_launch: launch stage 1 as a
            programmatic dependent of the kernel ahead of it in the stream (and let the merge
            release the next call's stage 1 early), so its launch, schedule, page ids and
            first key blocks overlap that kernel's tail. The caller's contract: seq_lens, the
            page table and every cached key but each request's last qlen (the new tokens,
            read only after the wait) are written before the kernel ahead of stage 1 starts
            (as when they are copied in before a graph replays, the new tokens' keys written
            by the kernel just ahead). Default: on for batches of up to 256 query rows (batch x
            qlen x heads; `plan_rules.early_start_by_default`), where the merge's programs
            fit one wave (H200, 12 heads, back-to-back calls: 8k x 1 11.6 -> 9.1 us, 68k x 1
            28.7 -> 26.3, ragged 116.3 -> 114.4; 128 heads 8k x 8, past the bound, 55.5 ->
            60.2, docs/perf.md v0.2.12).
        merge_streams: MLA on uniform splits (the merge folding a row's partials in one tile):
            stage 1 raises a flag per split it wrote for each merge program that folds it,
            and the merge folds each partial once its flag is up, instead of waiting for all
            of stage 1 (launched as its programmatic dependent, the merge's programs are
            resident before stage 1 ends). Each stage 1 must be followed by its merge (the
            merge clears the flags). Default off: slower on the H200 (8k x 1 8.4 -> 9.8 us,
            68k x 1 26.2 -> 27.7; the polling merge programs slow stage 1 by more than they
            save after it; docs/perf.md, session 18).
        partial_dtype: torch.float32 (default) or torch.bfloat16: the normalised partial
            outputs between the two stages (lse stays float32). bfloat16 halves what stage 1
            writes and the merge reads (each partial then carries bf16 rounding, ~0.4% of
            its values, before the merge's fp32 sum); measured slower on the H200 where it
            was meant to pay (128 heads 8k x 1 22.9 -> 25.8 us, 68k x 1 57.7 -> 61.4;
            docs/perf.md v0.2.8f), so not a default.
        head_dim_qk, head_dim_v: key and value widths (576 and 512 for absorbed MLA).
        device_spec: the spec the split heuristic plans for; default: read off `device`.

    >>> plan = plan_decode(2, 4096, 16, device="meta", device_spec=DeviceSpec.preset("h200"))
    >>> plan.num_splits, plan.grid_order, plan.merge_block_s, plan.merge_d_split
    (64, 'split_major', 64, 16)
    """
    # Every argument as given: the default kv_pack plans the call once with each pack pinned
    # and returns one of those plans (below).
    arguments = dict(locals())
    device = resolve_device(device)
    check_plan_shape(batch_size, max_seq_len, num_heads, qlen, page_size, kind, num_kv_heads,
                     window_left, schedule, dtype, partial_dtype)  # fmt: skip
    lengths = host_lengths(seq_lens, batch_size, max_seq_len)
    total_keys = lengths.total if lengths else batch_size * max_seq_len
    head_dim_qk, head_dim_v = checked_head_dims(kind, head_dim, head_dim_qk, head_dim_v)
    if device.type == "meta" and device_spec is None:
        raise ValueError("device_spec: expected a DeviceSpec to plan for when device is 'meta'")
    # A "meta" device plans without allocating (the CLI's `plan`): the workspace has no storage.
    spec = device_spec if device_spec is not None else DeviceSpec.from_torch(device)
    interpreted = device.type == "cpu"

    # An explicit split count or grid names its schedule: a sweep of num_splits must time
    # uniform splits, not whatever "auto" would make of the same lengths.
    if schedule == "auto" and (num_splits is None) != (num_programs is None):
        schedule = "uniform" if num_programs is None else "balanced"
    if schedule == "auto" and merge_streams:
        schedule = "uniform"  # the flags are split by split (plan_rules.merge_streams_for)
    rows = num_heads * qlen
    group_rows = rows // num_kv_heads  # query rows one program's kv head serves
    # GQA tiles left to the planner take the measured rules (`gqa_tile_for`, below; one split
    # where it pays): the schedule model weighs the uniform split count those rules run.
    tile_free = block_n is None and num_stages is None and not interpreted
    gqa_tiled = kind == "gqa" and tile_free and spec.tunables.gqa_balanced_min_blocks > 0
    free = kv_pack is None and gqa_tiled and num_splits is None and num_programs is None
    # The keys a request splits: the table's width, or with a window its last keys.
    keys = max_seq_len if window_left < 0 else min(max_seq_len, window_left + qlen)
    if free and gqa_kv_pack_may_pay(num_kv_heads, group_rows, head_dim_v, dtype.itemsize):
        # Both plans made without a workspace ("meta"), each with its pack pinned; the one
        # taken gets its workspace on the caller's device. A pinned pack plans the same as
        # the default that chose it, so no third plan is made.
        twin = {**arguments, "device": "meta", "device_spec": spec, "seq_lens": lengths or None}
        unpacked = plan_decode(**{**twin, "kv_pack": 1})
        packed = plan_decode(**{**twin, "kv_pack": GQA_DEFAULT_PACK})
        longest = min(lengths.longest, keys) if lengths else keys  # host_lengths: <= the table
        chosen = packed if packed_plan_agrees(unpacked, packed, spec, longest) else unpacked
        return plan_on_device(chosen, device)
    kv_pack = kv_pack_for(kv_pack, kind, num_kv_heads, group_rows, head_dim_v)
    # What stage 1's rules weigh: programs a request and split launches (kv heads over packs,
    # times head blocks below) and the tile's head dim (gqa_pack.py).
    kv_groups, tile_head_dim = packed_tile(num_kv_heads, head_dim_v, kv_pack)
    tile_rows = packed_rows(group_rows, kv_pack)
    block_h = block_h_for(block_h, kind, tile_rows, spec)
    default_splits, default_order = num_splits is None, grid_order is None
    num_head_blocks = -(-tile_rows // block_h)
    programs_a_split = kv_groups * num_head_blocks  # a request's stage-1 programs a split
    # The one split below (its longest request's keys): the long-split tile however short,
    # uniform.
    short_split_keys = None
    if num_splits is None:
        num_splits, short_split_keys = default_split_count(
            kind, batch_size, keys, lengths, rows=rows, kv_groups=kv_groups,
            num_kv_heads=num_kv_heads, group_rows=group_rows, block_h=block_h,
            tile_head_dim=tile_head_dim, programs_a_split=programs_a_split, dtype=dtype,
            partial_dtype=partial_dtype, gqa_tiled=gqa_tiled, spec=spec,
        )  # fmt: skip
    check_int("num_splits", num_splits, 1, MAX_SPLITS)
    if grid_order is None:
        grid_order = grid_order_for(num_splits, spec)
    if grid_order not in GRID_ORDERS:
        raise ValueError(f"grid_order: expected one of {GRID_ORDERS}, got {grid_order!r}")

    wave = spec.compute_units * resident_programs_per_sm(kind, block_h, tile_head_dim, spec)
    default_grid = num_programs is None
    if default_grid:
        # One wave of stage-1 programs in all, over the kv heads and head blocks (the
        # schedule choice below compares the schedules at one wave).
        num_programs = max(1, wave // programs_a_split)
    check_int("num_programs", num_programs, 1)
    if keys_as_rows is not None:
        check_bool("keys_as_rows", keys_as_rows)
    asks_gluon = keys_as_rows or consumer_groups is not None or alternate_blocks
    if asks_gluon and warp_specialized is None:
        warp_specialized = True  # the keys as rows run only on the Gluon kernel
    if dependent_launch is None:
        dependent_launch = spec.dependent_launch and not interpreted
    dependent_launch = bool(dependent_launch)
    pinned = (block_n, num_warps, num_stages, kv_tma, page_prefetch, latent_chains)
    gluon = gluon_outlook(
        warp_specialized, pinned, kind=kind, block_h=block_h, head_dim_qk=head_dim_qk,
        head_dim_v=head_dim_v, dtype=dtype, page_size=page_size, rows=rows,
        batch_size=batch_size, max_seq_len=max_seq_len, total_keys=total_keys,
        num_splits=num_splits, default_splits=default_splits, num_programs=num_programs,
        early_start=early_start, dependent_launch=dependent_launch, interpreted=interpreted,
        spec=spec,
    )  # fmt: skip
    ws_splits = gluon.splits
    # Only where the kernel may take the plan (by default, or asked for): elsewhere neither the
    # schedule model nor the plan reads the count.
    if (gluon.may_run or warp_specialized) and block_h in ws.NARROW_BLOCK_H and default_splits:
        # The keys-as-rows kernel holds one program per SM (164-185 KB of shared memory), where
        # the Triton tile of the same height holds two: its split count fills waves of one per
        # SM (H200, 12-16 heads: 327k x 1 best at 128 splits, 327k x 8 at 16; docs/perf.md
        # v0.2.9a). The schedule model weighs that count; a plan on the kernel takes it.
        ws_splits = narrow_gluon_splits(ws_splits, batch_size, keys, rows, block_h, spec)
    equal_shares = False
    # The balanced GQA grid, computed once: the schedule model weighs it, a balanced plan takes it.
    gqa_grid = None
    if gqa_tiled and default_grid:
        gqa_grid = gqa_balanced_grid(lengths, keys, batch_size, programs_a_split,
                                     block_h, tile_head_dim, dtype.itemsize,
                                     wave // spec.compute_units, spec.compute_units,
                                     spec.tunables.gqa_balanced_min_blocks)  # fmt: skip
    if schedule == "auto":
        schedule, equal_shares = auto_schedule(
            lengths, kind=kind, batch_size=batch_size, keys=keys, block_h=block_h,
            block_n=block_n, tile_head_dim=tile_head_dim, dtype=dtype, num_splits=num_splits,
            short_split_keys=short_split_keys, default_splits=default_splits,
            num_programs=num_programs, default_grid=default_grid,
            programs_a_split=programs_a_split, wave=wave, gqa_tiled=gqa_tiled, gqa_grid=gqa_grid,
            gluon=gluon, gluon_splits=ws_splits, program_loop=program_loop, spec=spec,
        )  # fmt: skip
    balanced = schedule == "balanced"
    loop_defaulted = program_loop is None
    if loop_defaulted:
        # The 16-row Triton tile streams faster one program per piece (reverted below when
        # the Gluon kernel does not take the plan); the Gluon kernels take the balanced
        # schedule only as a program loop.
        program_loop = balanced and kind == "mla" and (block_h > MIN_DOT or gluon.may_run)
    check_bool("program_loop", program_loop)
    if program_loop and (not balanced or kind != "mla"):
        raise ValueError(
            f"program_loop: expected the MLA balanced schedule, got kind={kind!r}, "
            f"schedule={schedule!r}"
        )
    warp_specialized = warp_specialized_for(
        warp_specialized,
        pinned=pinned,
        pays=gluon.pays[balanced],
        balanced=balanced,
        program_loop=program_loop,
        **gluon.config,
    )
    if loop_defaulted and program_loop and block_h <= MIN_DOT and not warp_specialized:
        program_loop = False
    gqa_tile = None
    if gqa_tiled:
        splits_before = num_splits
        gqa_tile, num_splits = gqa_planned_tile(
            balanced, lengths, block_h=block_h, tile_head_dim=tile_head_dim,
            head_dim_v=head_dim_v, kv_pack=kv_pack, num_kv_heads=num_kv_heads, dtype=dtype,
            num_splits=num_splits, default_splits=default_splits,
            short_split_keys=short_split_keys, keys=keys, batch_size=batch_size,
            programs_a_split=programs_a_split, spec=spec,
        )  # fmt: skip
        if num_splits != splits_before and default_order:
            grid_order = grid_order_for(num_splits, spec)
    if gqa_tile:
        block_n, num_stages = gqa_tile[0], gqa_tile[1]
        page_prefetch = gqa_tile[2] if page_prefetch is None else page_prefetch
    if default_grid and balanced and not program_loop and gqa_tile:
        num_programs = gqa_grid
    elif default_grid and balanced and not program_loop:
        num_programs = balanced_grid(kind, block_h, num_programs, batch_size)
    if warp_specialized and block_h in ws.NARROW_BLOCK_H and default_grid and program_loop:
        # The keys-as-rows kernel's one program per SM (`ws_splits` above): its program loop
        # takes one wave (H200 ragged: 131.8 us with two programs per SM, 116.1 with one;
        # docs/perf.md v0.2.9a).
        num_programs = max(1, spec.compute_units // programs_a_split)
    keys_as_rows = keys_as_rows_for(keys_as_rows, warp_specialized, block_h)
    consumer_groups = consumer_groups_for(consumer_groups, warp_specialized, keys_as_rows, block_h)
    alternate_blocks = alternate_blocks_for(alternate_blocks, warp_specialized, keys_as_rows,
                                            block_h, num_head_blocks)  # fmt: skip
    # The alternating consumers' blocks are 32 keys: the merge and the schedule count those.
    block_n_ws = ws.ALTERNATE_BLOCK_N if alternate_blocks else ws.BLOCK_N
    piece_cost = piece_cost_for(piece_cost, program_loop, block_n_ws, keys_as_rows, block_h,
                                warp_specialized=warp_specialized, spec=spec)  # fmt: skip
    # A device's measured copy height holds for the 64-row tile on one head block a request.
    one_wide_block = block_h == ws.BLOCK_H and not keys_as_rows and not alternate_blocks
    copy_rows = ws.copy_rows_for(
        copy_rows, warp_specialized=warp_specialized, page_size=page_size, block_n=block_n_ws,
        preferred=spec.tunables.wide_copy_rows if one_wide_block else 0,
    )  # fmt: skip
    if warp_specialized:
        # The Triton tile the kernel replaces, so a call that falls back runs the same tile.
        block_n, num_warps, num_stages = block_n_ws, ws.num_warps_for(block_h), ws.NUM_STAGES
        kv_tma, page_prefetch, latent_chains = False, False, 1
        num_splits = ws_splits
        grid_order = grid_order_for(num_splits, spec) if default_order else grid_order
    block_n, num_warps, num_stages, page_prefetch, kv_tma, latent_chains = stage_one_tile(
        block_n, num_warps, num_stages, page_prefetch, kv_tma, latent_chains, kind=kind,
        block_h=block_h, group_rows=group_rows, tile_head_dim=tile_head_dim,
        head_dim_v=head_dim_v, dtype=dtype, page_size=page_size, balanced=balanced,
        gqa_tiled=gqa_tiled, batch_size=batch_size, max_seq_len=max_seq_len,
        total_keys=total_keys, num_splits=num_splits, num_programs=num_programs,
        programs_a_split=programs_a_split, wave=wave, interpreted=interpreted, spec=spec,
    )  # fmt: skip
    early_start = early_start_for(
        early_start,
        warp_specialized=warp_specialized,
        dependent_launch=dependent_launch,
        batch_rows=batch_size * rows,
    )

    merge = merge_plan(
        MergeKnobs(merge_block_s, merge_d_split, merge_num_warps, merge_rows, merge_streams,
                   merge_long_partials),
        kind=kind, balanced=balanced, num_programs=num_programs, num_splits=num_splits,
        batch_size=batch_size, rows=rows, head_dim_v=head_dim_v, equal_shares=equal_shares,
        interpreted=interpreted, compute_units=spec.compute_units,
    )  # fmt: skip
    whole_pieces = whole_pieces_for(
        whole_pieces,
        program_loop=program_loop,
        warp_specialized=warp_specialized,
        keys_as_rows=keys_as_rows,
        qlen=qlen,
        one_split=not balanced and num_splits == 1 and not merge.streams,
        kind=kind,
    )
    workspace = new_workspace(batch_size, rows, balanced, num_programs, num_splits, head_dim_v,
                              partial_dtype, merge.streams, merge.d_split, device)  # fmt: skip
    return DecodePlan(
        kind=kind,
        batch_size=batch_size,
        max_seq_len=max_seq_len,
        num_heads=num_heads,
        num_kv_heads=num_kv_heads,
        qlen=qlen,
        page_size=page_size,
        dtype=dtype,
        head_dim_qk=head_dim_qk,
        head_dim_v=head_dim_v,
        device=device,
        device_name=spec.name,
        num_splits=num_splits,
        block_h=block_h,
        num_head_blocks=num_head_blocks,
        block_n=block_n,
        grid_order=grid_order,
        schedule=schedule,
        num_programs=num_programs,
        block_b=next_pow2(batch_size),
        split_num_warps=num_warps,
        split_num_stages=num_stages,
        page_prefetch=bool(page_prefetch),
        latent_chains=latent_chains,
        kv_tma=kv_tma,
        program_loop=program_loop,
        piece_cost=piece_cost,
        whole_pieces=whole_pieces,
        warp_specialized=warp_specialized,
        keys_as_rows=keys_as_rows,
        consumer_groups=consumer_groups,
        dependent_launch=dependent_launch,
        early_start=early_start,
        merge_block_s=merge.block_s,
        merge_d_split=merge.d_split,
        merge_num_warps=merge.num_warps,
        partial_dtype=partial_dtype,
        workspace=workspace,
        merge_streams=merge.streams,
        alternate_blocks=alternate_blocks,
        merge_rows=merge.rows,
        merge_long_partials=merge.long_partials,
        kv_pack=kv_pack,
        copy_rows=copy_rows,
    )


def new_workspace(batch_size: int, rows: int, balanced: bool, num_programs: int,
                  num_splits: int, head_dim_v: int, partial_dtype: torch.dtype,
                  merge_streams: bool, merge_d_split: int,
                  device: torch.device) -> DecodeWorkspace:  # fmt: skip
    """Stage 1's partials for `batch_size` requests of `rows` query rows: per split, or on the
    balanced schedule per slot (one per (program, request) piece: num_programs + batch_size),
    with `merge_streams` the split flags of its `merge_d_split` merge programs a row."""
    num_slots = num_programs + batch_size if balanced else None
    flags = None
    if merge_streams:
        flags = torch.zeros((batch_size, rows, merge_d_split, num_splits), dtype=torch.int32,
                            device=device)  # fmt: skip
    # Balanced: row-major, so the merge reads each row's partials from one contiguous run.
    partials = (rows, num_slots) if num_slots else (batch_size, rows, num_splits)
    return DecodeWorkspace(
        partial_o=torch.empty((*partials, head_dim_v), dtype=partial_dtype, device=device),
        partial_lse=torch.empty(partials, dtype=torch.float32, device=device),
        piece_ranges=(
            torch.empty((batch_size, 2), dtype=torch.int32, device=device) if num_slots else None
        ),
        split_flags=flags,
    )


def plan_on_device(plan: DecodePlan, device: torch.device) -> DecodePlan:
    """`plan` with a fresh workspace of its shape on `device` (a plan made on "meta")."""
    workspace = new_workspace(
        plan.batch_size, plan.num_heads * plan.qlen, plan.schedule == "balanced",
        plan.num_programs, plan.num_splits, plan.head_dim_v, plan.partial_dtype,
        plan.merge_streams, plan.merge_d_split, device,
    )  # fmt: skip
    return replace(plan, device=device, workspace=workspace)


plan_decode = remember_lengthless_plans(plan_decode, plan_on_device)


def plan_for_call(
    plan: DecodePlan | None,
    q: torch.Tensor,
    *,
    batch: int,
    max_seq_len: int,
    num_heads: int,
    qlen: int,
    page_size: int,
    kind: str,
    **kind_fields,
) -> DecodePlan:
    """The caller's plan, checked against the call, or a fresh one for it (allocates).

    kind_fields: for GQA, num_kv_heads, head_dim and window_left (the window only steers a
    fresh plan's split count; any plan computes any window correctly).
    """
    if plan is None:
        return plan_decode(
            max(batch, 1),
            max_seq_len,
            num_heads,
            qlen=qlen,
            page_size=page_size,
            dtype=q.dtype,
            device=q.device,
            kind=kind,
            **kind_fields,
        )
    planned = {k: v for k, v in kind_fields.items() if k != "window_left"}
    if "head_dim" in planned:
        planned["head_dim_v"] = planned.pop("head_dim")
    check_plan_fits(
        plan,
        batch=batch,
        kind=kind,
        dtype=q.dtype,
        device=q.device,
        num_heads=num_heads,
        qlen=qlen,
        page_size=page_size,
        **planned,
    )
    return plan


def allocate_outputs(
    q: torch.Tensor,
    out: torch.Tensor | None,
    lse: torch.Tensor | None,
    out_shape: tuple[int, int, int, int],
    return_lse: bool,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """The caller's out/lse, or new ones (lse only when it is returned)."""
    if out is None:
        out = q.new_empty(out_shape)
    if return_lse and lse is None:
        lse = torch.empty(out_shape[:3], dtype=torch.float32, device=q.device)
    return out, lse if return_lse else None
