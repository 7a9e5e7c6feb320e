"""Every field of the GQA plans `plan_decode` makes over a grid of devices, head layouts,
batches, qlens and pinned knobs, as JSON: run it before and after a planner refactor and
compare the two files (a refactor must leave them identical).

    python tools/gqa_plan_snapshot.py /tmp/before.json
    python tools/gqa_plan_snapshot.py /tmp/after.json && cmp /tmp/before.json /tmp/after.json
"""

import itertools
import json
import sys
from pathlib import Path

import torch

from checkout_src import SRC, behind_pythonpath

sys.path.insert(behind_pythonpath(), SRC)
import splitkv
from splitkv.device import DeviceSpec

DEVICES = ("h200", "mi355x")
HEADS = ((32, 8, 128), (64, 8, 64), (8, 1, 128), (32, 32, 128), (16, 2, 256))  # q, kv, dim
BATCHES = ([131072], [32768], [65536] * 2, [131072] * 2, [8192] * 4, [131072] * 8,
           [1, 63, 64, 65, 4096, 4097, 32768, 131072], [300])  # fmt: skip


def spread(n: int, lo: int, hi: int) -> list[int]:
    """n lengths evenly from lo to hi (one: lo)."""
    return [lo + (hi - lo) * i // max(1, n - 1) for i in range(n)]


def spread_of(requests: str, keys: str) -> list[int]:
    """The lengths a batch spelled REQUESTS and KEYS or LO-HI names (the tools' `--batch`):
    every request KEYS long, or lengths evenly from LO to HI."""
    lo, _, hi = keys.partition("-")
    return spread(int(requests), int(lo), int(hi or lo))


# Ragged batches where the balanced grid's small-batch rules decide (docs/perf.md session
# 35): a cascade's suffix pass, small and many-short batches, one long request beside 47.
BATCHES += (spread(48, 100, 4000), spread(32, 100, 2000), spread(16, 500, 8000),
            spread(256, 100, 500), [327600, *spread(47, 1, 4096)])  # fmt: skip
# Equal lengths past one wave, where the uniform rules that need them decide (the wave rule's
# halving, the pack on one split's grid: docs/perf.md sessions 51-56).
BATCHES += ([4000] * 42, [16384] * 18, [32768] * 48, [8192] * 116)
KNOBS = ({}, {"num_splits": 64}, {"num_stages": 2}, {"page_prefetch": False},
         {"schedule": "balanced"}, {"schedule": "uniform"}, {"dtype": torch.float32},
         {"window_left": 127})  # fmt: skip


def snapshot() -> list[dict]:
    plans = []
    grid = itertools.product(DEVICES, HEADS, BATCHES, (1, 2, 4, 8), KNOBS)
    for device, (q_heads, kv_heads, dim), lengths, qlen, knobs in grid:
        try:
            plan = splitkv.plan_decode(len(lengths), max(lengths), q_heads, qlen=qlen,
                                       kind="gqa", num_kv_heads=kv_heads, head_dim=dim,
                                       device="meta", device_spec=DeviceSpec.preset(device),
                                       seq_lens=lengths, **knobs)  # fmt: skip
            plans.append({k: str(v) for k, v in sorted(vars(plan).items()) if k != "workspace"})
        except (TypeError, ValueError) as e:
            plans.append({"error": repr(e)})
    return plans


if __name__ == "__main__":
    plans = snapshot()
    Path(sys.argv[1]).write_text(json.dumps(plans))
    print(f"{len(plans)} plans -> {sys.argv[1]}")
