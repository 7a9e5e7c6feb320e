"""How many splits (partitions of the key range) a decode batch gets: seed 001's wave-aligned rule.

The rule sizes the split count so that the stage-1 grid fills the GPU for one to two waves of
programs, but never cuts a request's keys into splits too short to amortise a program's start.
"""

from __future__ import annotations

import torch

from splitkv.device import DeviceSpec


def num_partitions(
    batch_size: int,
    num_keys: int,
    heads_per_group: int,
    device: DeviceSpec | str | torch.device,
    is_mla: bool = False,
    head_dim: int = 128,
    *,
    programs_per_sm: int | None = None,
    wave_fill: float | None = None,
) -> int:
    """The number of KV splits for a decode batch (seed 001, generalised to any device).

    Args:
        batch_size: requests in the batch.
        num_keys: keys each request scans (the longest context the plan must serve).
        heads_per_group: MLA: query rows one request packs (num_heads x qlen).
            MHA-style: kv heads (each kv head is its own program).
        device: a `DeviceSpec`, a preset name ("h200", "mi355x", ...) or a torch device.
        is_mla: which regime the caller's kernel is in (see below).
        head_dim: MHA-style head dim; the MHA-style fill rule wants (64 / head_dim) squared
            times more programs per SM below head dim 64 (their key blocks move fewer bytes).
        programs_per_sm: MLA fill rule: the stage-1 programs one SM holds at once, where the
            kernel is not the one `resident_programs_per_sm` describes (the warp-specialized
            kernels hold one per SM at any height).
        wave_fill: MLA fill rule: the fraction of the last wave to fill, where the kernel has
            its own (default: the device's `tunables.wave_fill`).

    MLA-style (`is_mla=True`): a program packs `block_m` query rows, so a partition is
    `ceil(heads_per_group / block_m) * batch_size` programs. With
    `one_wave = units // cpp`, `two_wave = 2 * units // cpp` and
    `work_floor = ceil(pages / max_pages_per_split)` (pages of `split_page_size` keys), the target
    is `clamp(work_floor, one_wave, two_wave)`. Exception: `heads_per_group <= 16` is
    latency-bound with a single program per request and split, so it takes two full waves,
    `min(two_wave, pages)`. Cap: `max_splits` (the merge holds 256 partials).

    MHA-style (`is_mla=False`): a partition is `heads_per_group * batch_size` programs (one per kv
    head and request), cap `mha_max_splits` (64; 256 on NVIDIA). Seed 001 leaves three points
    vague; the choices:
    - high occupancy (one partition already fills the GPU): "few partitions, just enough to
      amortise key reads" is taken as `min(work_floor, two_wave)`, which is 1 or 2;
    - the 16-kv-head rule: the cap narrows to 32 from batch 8 up, and once a full unsplit wave
      and 8 pages are reached the key-stream rule takes over: `pages // 8` splits, so that each
      split streams at least 8 pages (2048 keys) of each head;
    - a single kv head uses the finer `single_kv_split_page_size` floor and the two-wave exception.
    Otherwise the MLA formula applies with these program counts.

    Bucketing, both regimes: the target is first limited to `min(cap, pages, two_wave)` (a split
    never holds less than one page of keys), then rounded up to a power of two, or down where
    rounding up would pass that limit. The result is at least 1.

    NVIDIA presets (`tunables.wave_fill` set) replace the MLA-style rule by the fill rule, fitted
    on the H200: the smallest power of two whose stage-1 programs fill at least `wave_fill` of
    their last wave, a wave being `compute_units * programs_per_sm` programs in flight; and the
    MHA-style rule by the smallest power of two that puts `wave_fill * mha_programs_per_sm`
    programs per SM in flight (`mha_programs_per_sm` set).

    >>> mi355x = DeviceSpec.preset("mi355x")
    >>> num_partitions(2, 131072, 64, mi355x, is_mla=True)
    128
    >>> num_partitions(8, 80000, 64, mi355x, is_mla=True)
    32
    """
    spec = _as_spec(device)
    _check_positive_int("batch_size", batch_size)
    _check_positive_int("heads_per_group", heads_per_group)
    _check_positive_int("head_dim", head_dim)
    if not isinstance(num_keys, int) or isinstance(num_keys, bool) or num_keys < 0:
        raise ValueError(f"num_keys: expected an int >= 0, got {num_keys!r}")
    tun = spec.tunables
    units = spec.compute_units

    if is_mla and tun.wave_fill is not None:
        pages = _cdiv(num_keys, tun.split_page_size)
        return _fill_rule(batch_size, heads_per_group, pages, spec, programs_per_sm, wave_fill)
    if not is_mla and tun.mha_programs_per_sm is not None:
        pages = _cdiv(num_keys, tun.mha_split_page_size)
        per_sm = resident_programs_per_sm("gqa", 16, head_dim, spec)
        return _mha_fill_rule(heads_per_group * batch_size, pages, per_sm, spec)
    if is_mla:
        ctas_per_partition = _cdiv(heads_per_group, tun.block_m) * batch_size
        pages = _cdiv(num_keys, tun.split_page_size)
        cap = tun.max_splits
        two_wave_exception = heads_per_group <= 16
        high_occupancy = False
    else:
        ctas_per_partition = heads_per_group * batch_size
        single_kv = heads_per_group == 1
        page_keys = tun.single_kv_split_page_size if single_kv else tun.mha_split_page_size
        pages = _cdiv(num_keys, page_keys)
        cap = tun.mha_max_splits
        if heads_per_group == 16 and batch_size >= 8:
            cap = min(cap, 32)
        two_wave_exception = single_kv
        high_occupancy = ctas_per_partition >= units
    if pages == 0:
        return 1

    one_wave = max(1, units // ctas_per_partition)
    two_wave = max(1, 2 * units // ctas_per_partition)
    work_floor = _cdiv(pages, tun.max_pages_per_split)

    if not is_mla and heads_per_group == 16 and high_occupancy and pages >= 8:
        target = pages // 8  # the 16-kv-head key-stream rule
    elif high_occupancy:
        target = min(work_floor, two_wave)
    elif two_wave_exception:
        target = min(two_wave, pages)
    else:
        target = min(max(work_floor, one_wave), two_wave)

    limit = cap if high_occupancy else min(cap, two_wave)
    return _bucket_pow2(target, min(limit, pages))


def _bucket_pow2(target: int, upper: int) -> int:
    """The power of two at or above `target`, or below it where that would pass `upper`."""
    target = max(1, min(target, upper))
    up = 1 << (target - 1).bit_length()
    if up <= upper:
        return up
    return 1 << (target.bit_length() - 1)


def resident_programs_per_sm(kind: str, block_h: int, head_dim: int, spec: DeviceSpec) -> int:
    """Stage-1 programs one SM holds at once: MLA tiles of up to 32 rows take
    `programs_per_sm[0]` (16 rows: 92 KB of shared memory, 32 rows: 74 KB and 255 registers,
    both two per H200 SM), 64-row tiles `programs_per_sm[1]`; GQA programs
    `mha_programs_per_sm` times (64 / head_dim) squared where that rule is set: a GQA key
    block moves the same 32 KB of K + V at head dim 128 (64 keys) and 64 (128 keys), and
    both stream best with 4 programs per SM on the H200 (docs/perf.md v0.2.1, v0.2.2)."""
    tun = spec.tunables
    if kind == "gqa" and tun.mha_programs_per_sm is not None:
        scale = max(1, 64 // max(head_dim, 1))
        return tun.mha_programs_per_sm * scale * scale
    return tun.programs_per_sm[0] if block_h <= 32 else tun.programs_per_sm[1]


def _fill_rule(
    batch_size: int,
    rows: int,
    pages: int,
    spec: DeviceSpec,
    per_sm: int | None = None,
    fill: float | None = None,
) -> int:
    """The smallest power-of-two split count whose programs fill `fill` (default: `wave_fill`)
    of their last wave (a wave: the programs all SMs hold at once, `per_sm` each if given);
    where none does within `min(cap, pages)`, the largest allowed, for the most parallelism."""
    tun = spec.tunables
    fill = tun.wave_fill if fill is None else fill
    if per_sm is None:
        per_sm = resident_programs_per_sm("mla", min(rows, 64), 0, spec)
    wave = spec.compute_units * per_sm
    ctas_per_partition = _cdiv(rows, tun.block_m if rows > 16 else 16) * batch_size
    upper = max(1, min(tun.max_splits, pages))
    splits = 1
    while True:
        programs = splits * ctas_per_partition
        if programs / (wave * _cdiv(programs, wave)) >= fill or 2 * splits > upper:
            return splits
        splits *= 2


def _mha_fill_rule(programs_per_split: int, pages: int, per_sm: int, spec: DeviceSpec) -> int:
    """The smallest power-of-two split count whose programs reach `wave_fill` of
    `per_sm` per SM, at most `min(mha_max_splits, pages)` (a split keeps at least
    one planner page of keys)."""
    tun = spec.tunables
    wanted = (tun.wave_fill or 1.0) * per_sm * spec.compute_units
    upper = max(1, min(tun.mha_max_splits, pages))
    splits = 1
    while splits * programs_per_split < wanted and 2 * splits <= upper:
        splits *= 2
    return splits


def _as_spec(device: DeviceSpec | str | torch.device) -> DeviceSpec:
    if isinstance(device, DeviceSpec):
        return device
    if isinstance(device, str) and device.lower() in {"h100", "h200", "b200", "mi300x", "mi355x"}:
        return DeviceSpec.preset(device)
    if isinstance(device, (str, torch.device)):
        return DeviceSpec.from_torch(device)
    raise TypeError(
        "device: expected a DeviceSpec, a preset name or a torch device, "
        f"got {type(device).__name__}"
    )


def _check_positive_int(name: str, value: object) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(f"{name}: expected an int >= 1, got {value!r}")


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)
