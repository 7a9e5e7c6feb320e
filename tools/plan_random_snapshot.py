"""Every field of the plans `plan_decode` makes for seeded random arguments, MLA and GQA, on the
H200, H100 and MI355X presets and the CPU, with 0-3 knobs pinned and lengths given or not, each
plan's workspace as its tensors' shapes, dtypes and devices, and each refusal as its message:
JSON lines to compare before and after a planner refactor (which must leave them identical).
`tools/gqa_plan_snapshot.py` walks a fixed grid of GQA shapes instead; `tools/fuzz_reference.py
plan-memo` draws its arguments here.

    python tools/plan_random_snapshot.py /tmp/before.jsonl --count 60000 --seed 7
    python tools/plan_random_snapshot.py /tmp/after.jsonl --count 60000 --seed 7
    cmp /tmp/before.jsonl /tmp/after.jsonl
"""

import argparse
import json
import random
import sys

import torch

from checkout_src import SRC, behind_pythonpath

sys.path.insert(behind_pythonpath(), SRC)
import splitkv
from splitkv.device import DeviceSpec

# The H100 has tunables of its own (the 64-row tile's piece cost and copy rows a block).
SPECS = {name: DeviceSpec.preset(name) for name in ("h200", "h100", "mi355x")}
# Values each knob is pinned to when drawn (some out of bounds or at odds with the shape: the
# refusals are part of the snapshot).
KNOBS = {
    "num_splits": (1, 2, 7, 64),
    "schedule": ("uniform", "balanced", "auto"),
    "num_programs": (1, 100, 264),
    "grid_order": ("split_major", "batch_major"),
    "merge_block_s": (1, 2, 16, 64),
    "merge_d_split": (1, 2, 4, 16),
    "merge_num_warps": (1, 2, 4, 8),
    "merge_rows": (1, 2, 4),
    "kv_pack": (1, 2, 4),
    "block_h": (16, 32, 64),
    "block_n": (16, 32, 64, 128),
    "num_warps": (4, 8),
    "num_stages": (1, 2, 3),
    "page_prefetch": (True, False),
    "latent_chains": (1, 2),
    "kv_tma": (True, False),
    "program_loop": (True, False),
    "piece_cost": (1, 2, 4),
    "whole_pieces": (True, False),
    "warp_specialized": (True, False),
    "keys_as_rows": (True, False),
    "consumer_groups": (1, 2),
    "alternate_blocks": (True, False),
    "dependent_launch": (True, False),
    "early_start": (True, False),
    "merge_streams": (True, False),
    "partial_dtype": (torch.bfloat16,),
    "dtype": (torch.float16, torch.float32),
}


def draw(rng: random.Random) -> tuple[tuple, dict]:
    """Random `plan_decode` arguments."""
    kind = rng.choice(["mla", "gqa"])
    heads = rng.choice([1, 2, 8, 12, 16, 32, 64, 128])
    batch = rng.choice([1, 2, 3, 8, 16, 48, 128, 300])
    keys = rng.choice([1, 63, 100, 1000, 4096, 32768, 131072, 327600])
    kwargs = {"qlen": rng.choice([1, 1, 2, 3, 4, 8]), "page_size": rng.choice([1, 16, 64, 128])}
    if kind == "gqa":
        kv = rng.choice([k for k in (1, 2, 4, 8, 16) if heads % k == 0])
        kwargs.update(kind="gqa", num_kv_heads=kv, head_dim=rng.choice([64, 128, 256]))
        if rng.random() < 0.2:
            kwargs["window_left"] = rng.choice([0, 127, 4095])
    device = rng.choice(["h200", "h200", "h100", "mi355x", "cpu"])
    if device == "cpu":  # the workspace is allocated: a few requests keep it within memory
        kwargs["device"] = "cpu"
        batch = min(batch, 3)
    else:
        kwargs.update(device="meta", device_spec=SPECS[device])
    if rng.random() < 0.4:
        kwargs["seq_lens"] = [rng.randint(0, keys) for _ in range(batch)]
    for name in rng.sample(sorted(KNOBS), rng.choice([0, 0, 1, 1, 2, 3])):
        kwargs[name] = rng.choice(KNOBS[name])
    return (batch, keys, heads), kwargs


def record(args: tuple, kwargs: dict) -> dict | str:
    """The plan's every field and workspace tensor (shape, dtype, device), or the refusal."""
    try:
        plan = splitkv.plan_decode(*args, **kwargs)
    except (TypeError, ValueError) as error:
        return f"{type(error).__name__}: {error}"
    fields = {k: str(v) for k, v in vars(plan).items() if k != "workspace"}
    fields["workspace"] = {k: None if t is None else [list(t.shape), str(t.dtype), str(t.device)]
                           for k, t in vars(plan.workspace).items()}  # fmt: skip
    return fields


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out")
    parser.add_argument("--count", type=int, default=20000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    with open(args.out, "w") as out:
        for i in range(args.count):
            out.write(json.dumps([i, record(*draw(rng))]) + "\n")
    print(f"{args.count} plans -> {args.out}")


if __name__ == "__main__":
    main()
