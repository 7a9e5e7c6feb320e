"""The GQA plans of a grid of equal-length batches on the H200 preset (or `--preset NAME`), as
JSON, to count what a planner change moves (session 52, v0.2.60 = bf1c691 against v0.2.61:
222 of 21,588 plans with lengths, all gpt-oss at qlen 4; 1,946 of 19,028 plans without
lengths, which v0.2.61 no longer halves). Run it on each tree and compare:

    PYTHONPATH=<old tree>/src python uniform_plan_grid.py /tmp/before.json
    PYTHONPATH=src python uniform_plan_grid.py /tmp/after.json        # add --no-lengths for
    python uniform_plan_grid.py --compare /tmp/before.json /tmp/after.json  # graph plans

With lengths the grid is 1-128 requests of 1,000-131,072 keys (table one page wider, as
`tools/gqa_plan_ab.py` plans); without, 1-128 requests at tables of 1,024-131,072 keys.
Batches whose KV passes 40 GB are left out (BENCH.md).
"""

import argparse
import itertools
import json
from pathlib import Path

import torch

import splitkv
from splitkv.bench.shapes import GQA_MODELS, gqa_batch

KEYS = (1000, 2048, 4000, 4096, 8192, 16384, 32768, 65536, 131072)
TABLE_KEYS = (1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072)


def grid(lengthless: bool, preset: str = "h200") -> dict:
    spec = splitkv.DeviceSpec.preset(preset)
    plans = {}
    keys_grid = TABLE_KEYS if lengthless else KEYS
    for model, qlen, requests, keys in itertools.product(GQA_MODELS, (1, 2, 4, 8), range(1, 129),
                                                         keys_grid):  # fmt: skip
        if gqa_batch(model, [keys] * requests, qlen).bytes_read > 40e9:
            continue
        heads, kv_heads, head_dim, _ = GQA_MODELS[model]
        plan = splitkv.plan_decode(
            requests, keys if lengthless else keys + 32, heads, qlen=qlen, kind="gqa",
            num_kv_heads=kv_heads, head_dim=head_dim, page_size=16, dtype=torch.bfloat16,
            device="meta", device_spec=spec, seq_lens=None if lengthless else [keys] * requests,
        )  # fmt: skip
        plans[f"{model} {qlen} {requests} {keys}"] = [plan.schedule, plan.num_splits,
                                                      plan.block_h, plan.split_num_stages,
                                                      plan.kv_pack]  # fmt: skip
    return plans


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", nargs="?")
    parser.add_argument("--no-lengths", action="store_true")
    parser.add_argument("--preset", default="h200", help="the device preset planned for")
    parser.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"))
    args = parser.parse_args()
    if args.compare:
        before, after = (json.loads(Path(path).read_text()) for path in args.compare)
        changed = [key for key in before if before[key] != after[key]]
        print(f"{len(before)} plans, {len(changed)} changed")
        for key in changed:
            print(f"{key:28s} {before[key]} -> {after[key]}")
        return
    with open(args.out, "w") as out:
        json.dump(grid(args.no_lengths, args.preset), out)


if __name__ == "__main__":
    main()
