"""What the planner weighs of the Gluon kernels (stage 1 with its copies and matrix multiplies
on different warps, warp_specialized.py) before it picks the schedule: whether they may run
the plan's shape, the uniform split count they take, and whether they pay on each schedule.
The schedule then decides (plan_schedule.py), and `plan_rules.warp_specialized_for` turns the
outlook into the plan's knob."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from splitkv import warp_specialized as ws
from splitkv.device import DeviceSpec
from splitkv.plan_rules import early_start_pays_alone, partial_bytes_split_cap, program_keys_for


@dataclass(frozen=True)
class GluonOutlook:
    """config: the shape `ws.unsupported_reason` weighs; may_run: the kernel supports the
    shape on uniform splits and no Triton-tile knob is pinned; splits: the uniform split
    count it takes; pays: by schedule (True: balanced), whether it beats the Triton tile."""

    config: dict
    may_run: bool
    splits: int
    pays: dict[bool, bool]


def gluon_outlook(
    warp_specialized: bool | None,
    pinned: tuple,
    *,
    kind: str,
    block_h: int,
    head_dim_qk: int,
    head_dim_v: int,
    dtype: torch.dtype,
    page_size: int,
    rows: int,
    batch_size: int,
    max_seq_len: int,
    total_keys: int,
    num_splits: int,
    default_splits: bool,
    num_programs: int,
    early_start: bool | None,
    dependent_launch: bool,
    interpreted: bool,
    spec: DeviceSpec,
) -> GluonOutlook:
    """The Gluon kernels' outlook for a plan of `batch_size` requests of `rows` query rows, up
    to `max_seq_len` keys (`total_keys` in all), on `num_splits` uniform splits or
    `num_programs` balanced programs; `pinned`: the Triton-tile knobs as given (any not None
    keeps the plan off the Gluon kernel unless it is asked for)."""
    config = {
        "kind": kind,
        "block_h": block_h,
        "head_dim_qk": head_dim_qk,
        "head_dim_v": head_dim_v,
        "dtype": dtype,
        "page_size": page_size,
        "warpgroup_mma": spec.warpgroup_mma,
        "interpreted": interpreted,
    }
    may_run = (
        warp_specialized is not False
        and all(k is None for k in pinned)
        and ws.unsupported_reason(balanced=False, program_loop=False, **config) is None
    )
    # No more splits than keep a request's partials within its key bytes (and, on the
    # keys-as-rows tile, waves of one program an SM: plan.py).
    splits = num_splits
    if default_splits:
        key_bytes = max_seq_len * head_dim_qk * dtype.itemsize
        splits = min(num_splits, partial_bytes_split_cap(key_bytes, rows * head_dim_v * 4))
    # Splits or shares of one 64-key block leave the copies nothing to overlap (16 heads x
    # qlen 4, 8k x 1, 128 splits: 21.0 us against the Triton tile's 20.3; session 8), unless
    # the prologue and block overlap the kernel ahead (`early_start`; 16 rows, 8k x 1, 128
    # splits: 9.1 us against the Triton tile's 11.6; docs/perf.md v0.2.12).
    batch_rows = batch_size * rows
    pays = {}
    for balanced in (False, True):
        keys = program_keys_for(balanced, total_keys, max_seq_len, num_programs, splits)
        pays[balanced] = keys > ws.BLOCK_N or early_start_pays_alone(
            early_start, dependent_launch, balanced, batch_rows, block_h
        )
    return GluonOutlook(config, may_run, splits, pays)
