"""What the planner needs to know about a device, read off it or taken from a preset.

The planner is plain Python over a `DeviceSpec`, so it can be tested on a machine without the
device it plans for: `DeviceSpec.preset("mi355x")` reproduces seed 001's sweep table anywhere.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

import torch

MiB = 1 << 20


@dataclass(frozen=True)
class PartitionTunables:
    """Constants of the wave-aligned split rule (seed 001), one set per device.

    block_m: query rows (heads x qlen) one MLA program packs; also the kernel's largest BLOCK_H.
    split_page_size: keys per planner "page", the unit of the work floor (not the KV page size).
    max_pages_per_split: a split holds at most this many planner pages before more splits pay.
    max_splits: the merge's limit for the MLA-style branch.
    mha_max_splits: the MHA-style branch's cap.
    mha_split_page_size: the MHA-style branch's planner page (seed 001: SPLIT_PAGE_SIZE).
    single_kv_split_page_size: the finer work floor for single-kv-head MHA.
    wave_fill: None keeps seed 001's MLA rule. A number (NVIDIA) selects the fill rule: the
        smallest power-of-two split count whose programs fill at least this fraction of their
        last wave, a wave being the programs resident at once (SMs x programs_per_sm).
    programs_per_sm: stage-1 programs one SM holds at once, by the kernel's head-block height
        (tiles of up to 32 rows, 64-row tiles): the wave size of the fill rule.
    keys_as_rows_wave_fill: the fill rule's `wave_fill` for the keys-as-rows Gluon kernel's
        16-row tiles (one program per SM), None: wave_fill.
    mha_programs_per_sm: None keeps seed 001's MHA-style rule. A number (NVIDIA) selects the
        MHA-style fill rule: the smallest power-of-two split count whose programs (kv heads x
        batch x splits) reach `wave_fill` of this many per SM at head dims 64 to 256 (times
        (64 / head_dim) squared below 64); GQA's programs are small (32 KB of K + V per key
        block), so several per SM are needed to keep enough loads in flight.
    prefetch_split_keys: 16-row MLA programs load page ids one block ahead (with 32-key blocks
        and 3 stages: two KV blocks in flight) when their 16 rows are all used, or when all
        programs fit in one wave and a split holds at most this many keys; 0 never does.
    prefetch_min_split_keys: and never for splits shorter than this.
    balanced_cost: the balanced schedule's stage-1 time per key block relative to uniform
        splits' (it finds its requests and pieces on the device); steers schedule="auto".
    balanced_fixed_blocks: the balanced schedule's cost beyond its key blocks, in the busiest
        program's blocks (finding its pieces from the lengths, a merge over more partials);
        steers schedule="auto" on small batches, where it decides.
    gqa_balanced_min_blocks: balanced GQA programs take the tile `gqa_tile_rules` measured (32 KB
        key blocks in 3 stages, page ids a block ahead) and a grid of this many key blocks a
        program (small batches at least a wave of the tile; `gqa_tile_rules`); 0 keeps 2
        stages of 64-key blocks on one wave (unmeasured devices).
    gqa_wide_uniform_split_keys: uniform GQA splits of 32-row tiles at head dim 128, at the
        count the long-split tile gave them (`gqa_tile_rules.gqa_long_split_count`), keep the
        uniform tile (128-key blocks, 2 stages, no page ids ahead) where the batch holds two
        requests or more and a split at least this many keys; 0 never (the H200's rule).
    prefix_max_rows: the most query rows a request (heads x qlen) for which
        `mla_decode_shared_prefix` always reads a group's shared pages once (the cascade);
        past it the attention is compute-bound, and a call takes the cascade only where it
        pads the tensor-core tiles less than decoding plainly (`prefix.py`). None: the
        cascade at any row count.
    wide_loop_piece_cost: the Gluon program loop's `piece_cost` on its 64-row head blocks
        (one a request, or two on the alternating consumers; not the keys-as-rows consumers),
        in 64-key blocks; 0 keeps `warp_specialized.PIECE_COST` (2, the H200's).
    wide_copy_rows: the Gluon kernel's bulk copies of a key block on its 64-row head blocks,
        one a request (not the alternating consumers, not keys as rows), in boxes of this many
        rows where the page allows them; 0 keeps the most the page allows (a whole block).
    balanced_two_chains_rows: balanced MLA programs of at most this many rows that cannot
        take bulk copies (pages the key block does not divide, or no copy engine) run two
        latent chains and no page-id look-ahead; 0 keeps one chain with the look-ahead.
    uniform_wide_block_split_keys: uniform splits of MLA's 32-row Triton tile stream 64-key
        blocks (in place of 32) where a split holds at least this many keys; 0 never.
    fitted: False while the values are seed 001's MI355X constants carried over unmeasured.
    """

    block_m: int = 32
    split_page_size: int = 256
    max_pages_per_split: int = 5
    max_splits: int = 256
    mha_max_splits: int = 64
    mha_split_page_size: int = 256
    single_kv_split_page_size: int = 128
    wave_fill: float | None = None
    programs_per_sm: tuple[int, int] = (2, 1)
    keys_as_rows_wave_fill: float | None = None
    mha_programs_per_sm: int | None = None
    prefetch_split_keys: int = 0
    prefetch_min_split_keys: int = 256
    balanced_cost: float = 1.15
    balanced_fixed_blocks: float = 0.0
    tma_min_split_keys: int = 0
    gqa_balanced_min_blocks: int = 0
    gqa_wide_uniform_split_keys: int = 0
    prefix_max_rows: int | None = None
    wide_loop_piece_cost: int = 0
    wide_copy_rows: int = 0
    balanced_two_chains_rows: int = 0
    uniform_wide_block_split_keys: int = 0
    fitted: bool = False


@dataclass(frozen=True)
class DeviceSpec:
    """A device as the planner sees it.

    name: preset or device name. compute_units: SMs (NVIDIA) or CUs (AMD).
    l2_domains: separately cached L2 slices that programs are spread over round-robin
    (XCDs on MI300X/MI355X: 8; one on NVIDIA Hopper). l2_bytes: total L2 over all domains.
    hbm_bytes_per_s: datasheet bandwidth (a lead; benchmarks measure the real ceiling).
    dependent_launch: programmatic dependent launch works (NVIDIA Hopper and later): the merge
    launches while stage 1 runs. bulk_copies: the tensor memory accelerator (TMA) copies
    tiles between global and shared memory (NVIDIA Hopper and later). warpgroup_mma: the
    asynchronous warpgroup matrix multiply (wgmma) of sm_90 (Hopper only: Blackwell has tcgen05
    instead), which the warp-specialized MLA kernel is built on.

    >>> DeviceSpec.preset("h200").compute_units
    132
    """

    name: str
    compute_units: int
    l2_domains: int
    l2_bytes: int
    hbm_bytes_per_s: float
    tunables: PartitionTunables = field(default_factory=PartitionTunables)
    dependent_launch: bool = False
    bulk_copies: bool = False
    warpgroup_mma: bool = False

    @classmethod
    def preset(cls, name: str) -> DeviceSpec:
        """A known device by name: "h100", "h200", "b200", "mi300x", "mi355x"."""
        if not isinstance(name, str):
            raise TypeError(f"name: expected a preset name (str), got {type(name).__name__}")
        key = name.lower()
        if key not in _PRESETS:
            raise ValueError(f"name: expected one of {sorted(_PRESETS)}, got {name!r}")
        return _PRESETS[key]

    @classmethod
    def from_torch(cls, device: torch.device | str | int | None = None) -> DeviceSpec:
        """Read the spec off a torch device; datasheet figures come from the matching preset.

        A CPU device (Triton's interpreter) gets a small spec with the host's core count, so
        plans made there stay small enough for the interpreter.
        """
        device = torch.device("cuda" if device is None else device)
        if device.type == "cpu":
            return _cpu_spec()
        if device.type != "cuda":
            raise ValueError(f"device: expected a cuda (or ROCm) or cpu device, got {device}")
        index = device.index if device.index is not None else torch.cuda.current_device()
        return _cuda_spec(index)


@functools.cache
def _cuda_spec(index: int) -> DeviceSpec:
    """Read once per device: planning without a plan happens on every call."""
    props = torch.cuda.get_device_properties(index)
    preset = match_preset(props.name, getattr(props, "gcnArchName", ""))
    measured = {
        "name": props.name,
        "compute_units": props.multi_processor_count,
        "l2_bytes": getattr(props, "L2_cache_size", 0) or (preset.l2_bytes if preset else 0),
        "dependent_launch": torch.version.hip is None and props.major >= 9,
        "bulk_copies": torch.version.hip is None and props.major >= 9,
        "warpgroup_mma": torch.version.hip is None and props.major == 9,
    }
    if preset is not None:
        return dataclasses.replace(preset, **measured)
    return DeviceSpec(l2_domains=1, hbm_bytes_per_s=0.0, **measured)


@functools.cache
def _cpu_spec() -> DeviceSpec:
    """Read once, as `_cuda_spec`: `os.cpu_count()` costs ~10 us, and launches ask each call."""
    return DeviceSpec(
        name="cpu (Triton interpreter)",
        compute_units=os.cpu_count() or 1,
        l2_domains=1,
        l2_bytes=0,
        hbm_bytes_per_s=0.0,
    )


# NVIDIA: block_m is the widest head block splitkv's MLA kernel packs (64 rows: the wgmma tile
# height). The MLA split count follows the fill rule, fitted on the H200's num_splits sweeps
# (docs/perf.md, v0.1.2): at 12 heads the best counts put 256, 512 or 768 programs in flight
# and the worst 128 or 384, i.e. two 16-row programs per SM and full last waves; at 128 heads
# (64-row programs) one per SM. split_page_size 64 is one key block: at batch 1 and 8,192 keys,
# 128 one-block splits beat the 32 that 256-key pages allowed (13.2 vs 21.7 us). The MHA-style
# constants are still seed 001's until `splitkv tune` fits them. Page-id prefetch, from the
# H200 pipeline ablation and its follow-up (docs/perf.md, v0.2.0): it wins at every 16-head
# shape measured with splits of 256 keys or more (2-13%) and at 12 heads in one wave with
# splits of 266 and 1,280 keys (10-13%); it loses 10-17% at 12 heads past one wave, and 50%
# for one-block splits (batch 1 x 8k).
# The MHA-style fill rule, fitted on the H200's GQA num_splits sweep (docs/perf.md, v0.2.1,
# uniform splits at every count): head dim 128 streams best with about 512 programs (4 per SM;
# 256 for one kv head at batch 1, where the 256-split cap binds); so does head dim 64 since
# its key blocks hold 128 keys, the same 32 KB (v0.2.2 sweep: 64 / 8 / 4 splits best at
# batch 1 / 8 / 32, where the v0.2.1 fit on 64-key blocks chose 4x more); a split keeps at
# least 128 keys (one kv head at batch 1 x 32k: 256 splits, 12.7 us, beat 128).
# The keys-as-rows kernel's 16-row tiles fill 70% of their last wave of one program per SM
# (H200, docs/perf.md v0.2.9g: 8k x 24 / 48 / 96 at 4 / 2 / 1 splits, 3-12% faster than 90%).
# The shared-prefix cascade pays at any padding up to 64 query rows a request (H200,
# docs/perf.md v0.2.22: 8 x 327,600 sharing 308,736 at 12 / 16 / 32 / 64 rows 1.77 / 1.74 /
# 1.31 / 1.04x faster than decoding plainly; the 6-group mix alike); past them only where it
# pads the tiles less (96 rows 1.25x, 128 rows 3-4% slower). Balanced GQA programs: 10 key
# blocks a program at least (docs/perf.md session 28, `gqa_tile_rules.gqa_balanced_programs`).
# Balanced MLA programs of 16 and 32 rows without bulk copies run two latent chains without
# page ids ahead, on 64-key blocks: the one-chain loop with the look-ahead spills (sm_90: 198
# spilled loads and stores a block at 32 rows, page 100). H100, docs/perf.md session 63: 16 rows
# at pages 100 / 48 / 4 4-15% faster, level on one batch (run203, run204); 32 rows (qlen 2)
# 1.6-2.3x (ragged 12 heads at page 100 470 -> 206 us; run204); page 64 without the copy engine
# 1-2%. Timed on the H100; the cause is the compiler's on any NVIDIA GPU, so the H200 (whose
# fitted table predates the field) takes it too. Uniform splits of the 32-row tile stream
# 64-key blocks from 512 keys a split: H100, page 100, 12 and 16 heads x qlen 2, 8-16% faster
# on 48 x 8,192 (512 keys a split), 8 x 68,096 and 48 x 68,096; 4% slower on 8 x 8,192 (256
# keys a split), which keeps 32-key blocks (session 63, run209).
_NVIDIA_TUNABLES = PartitionTunables(
    block_m=64,
    split_page_size=64,
    wave_fill=0.9,
    keys_as_rows_wave_fill=0.7,
    prefetch_split_keys=1536,
    mha_programs_per_sm=4,
    mha_max_splits=256,
    mha_split_page_size=128,
    tma_min_split_keys=1024,
    gqa_balanced_min_blocks=10,
    prefix_max_rows=64,
    balanced_fixed_blocks=2.5,
    balanced_two_chains_rows=32,
    uniform_wide_block_split_keys=512,
)
TUNED_DIR = Path(__file__).parent / "tuned"  # per-device tables written by `splitkv tune`


def _tuned(preset: str, default: PartitionTunables) -> PartitionTunables:
    """The preset's fitted table, if `splitkv tune` wrote one, else `default`. Fields the table
    predates keep `default`'s values (rules measured after the fit, which it did not steer)."""
    path = TUNED_DIR / f"{preset}.json"
    if not path.is_file():
        return default
    fields = json.loads(path.read_text())["tunables"]
    fields["programs_per_sm"] = tuple(fields["programs_per_sm"])
    return dataclasses.replace(default, **fields)


def _hopper_on(
    name: str,
    sms: int,
    l2_domains: int,
    l2_bytes: int,
    hbm: float,
    wgmma: bool = True,
    tunables: PartitionTunables = _NVIDIA_TUNABLES,
) -> DeviceSpec:
    """An NVIDIA preset from Hopper on: PDL and bulk copies (wgmma on Hopper itself), its
    fitted table if any, else `tunables`."""
    tunables = _tuned(name, tunables)
    return DeviceSpec(name, sms, l2_domains, l2_bytes, hbm, tunables, True, True, wgmma)


# The H100 streams 0.7x the H200's bytes an SM: there the 32-row head-dim-128 uniform tile
# outran the long-split tile at the same split count wherever two requests or more split into
# 2,048 keys or more (docs/perf.md session 57, run172-174: 19 of 19 batches, 0.7-6.6%; level on
# one request, 2-3% behind at 64-128 splits of 1,024 keys). Its Gluon program loop counts a
# piece as 4 key blocks on 64-row head blocks, where the H200's 2 was fitted: 11 batches of
# 12-64 heads x qlen 1-4, geomean 1.3% faster, none slower (one-long 2.3-3.1%; docs/perf.md
# session 59, run178); on the alternating consumers (two 64-row blocks a request: 32-128 heads
# x qlen 4-1) 10 batches, geomean 1.3% / 1.2% faster in two rounds, none over 0.7% slower
# (one-long 2.3-4.0%; session 60, run183). Its 64-row tile (one head block a request) brings a
# 64-key block in four copies of 16 rows: 12 heads x qlen 4, issue 5's ragged and one-long
# batches, 1.3-1.5% faster in the geomean of two rounds, one-long 1.9-2.0% (session 62, run195);
# held out, 18 batches at 12-64 heads x qlen 4-1: 0.3-2.1% faster in 17, 64 heads at 48 x 8,192
# uniform 0.4-0.6% behind (run196, run199). The alternating consumers lost 6-11% with 16-row
# copies and keep whole blocks.
_H100_TUNABLES = dataclasses.replace(
    _NVIDIA_TUNABLES, gqa_wide_uniform_split_keys=2048, wide_loop_piece_cost=4, wide_copy_rows=16
)

_PRESETS = {
    "h100": _hopper_on("h100", 132, 1, 50 * MiB, 3.35e12, tunables=_H100_TUNABLES),
    "h200": _hopper_on("h200", 132, 1, 60 * MiB, 4.8e12),
    "b200": _hopper_on("b200", 148, 2, 126 * MiB, 8.0e12, wgmma=False),
    "mi300x": DeviceSpec("mi300x", 304, 8, 32 * MiB, 5.3e12, PartitionTunables()),
    "mi355x": DeviceSpec("mi355x", 256, 8, 32 * MiB, 8.0e12, PartitionTunables(fitted=True)),
}


def match_preset(name: str, arch: str) -> DeviceSpec | None:
    text = f"{name} {arch}".lower()
    for key, marker in (
        ("h200", "h200"),
        ("h100", "h100"),
        ("b200", "b200"),
        ("mi355x", "gfx950"),
        ("mi300x", "gfx942"),
    ):
        if marker in text:
            return _PRESETS[key]
    return None


def on_device(device: torch.device) -> contextlib.AbstractContextManager:
    """The context to launch on `device` in: Triton launches on the current CUDA device (and its
    current stream), so a tensor on another one needs the switch; where it already is current
    (the usual case: one device a process) the switch is skipped, as entering and leaving it
    costs microseconds a launch."""
    if device.type != "cuda" or device.index == torch.cuda.current_device():
        return contextlib.nullcontext()
    return torch.cuda.device(device)


def resolve_device(device: torch.device | str | int | None) -> torch.device:
    """Where a plan's workspace lives: None is the current CUDA device, else the CPU; a CUDA
    device without an index is the current one."""
    if device is None:
        device = "cuda" if torch.cuda.is_available() else "cpu"
    device = torch.device(device)
    if device.type == "cuda" and device.index is None:
        device = torch.device("cuda", torch.cuda.current_device())
    return device
