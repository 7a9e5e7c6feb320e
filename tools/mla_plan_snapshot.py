"""The schedule, split count and grid of the MLA plans `plan_decode` makes for ragged batches
given their lengths, as JSON: run it before and after a change to the planner's schedule
model and compare the two files (`tools/gqa_plan_snapshot.py` is the GQA form, every field).

    python tools/mla_plan_snapshot.py /tmp/before.json
    python tools/mla_plan_snapshot.py /tmp/after.json --diff /tmp/before.json

The batches: 12-128 heads, qlen 1-4, 2-128 requests of seeded random lengths from a 40th of the
longest to the longest (1k-68k keys), on the H200 preset ("meta" device, no allocation).
"""

import argparse
import itertools
import json
import random
import sys
from pathlib import Path

from checkout_src import SRC, behind_pythonpath

sys.path.insert(behind_pythonpath(), SRC)
import splitkv
from splitkv.device import DeviceSpec

HEADS, QLENS = (12, 16, 32, 64, 128), (1, 2, 4)
BATCHES, LONGEST = (2, 4, 8, 16, 32, 48, 64, 128), (1024, 4096, 8192, 16384, 32768, 68096)
FIELDS = ("schedule", "num_splits", "num_programs", "program_loop", "warp_specialized", "block_h")


def snapshot(device: str = "h200") -> list[dict]:
    rng = random.Random(0)
    rows = []
    for heads, qlen, batch, longest in itertools.product(HEADS, QLENS, BATCHES, LONGEST):
        lengths = [rng.randint(max(1, longest // 40), longest) for _ in range(batch)]
        plan = splitkv.plan_decode(batch, -(-max(lengths) // 64) * 64, heads, qlen=qlen,
                                   page_size=64, device="meta", seq_lens=lengths,
                                   device_spec=DeviceSpec.preset(device))  # fmt: skip
        rows.append({"heads": heads, "qlen": qlen, "seq_lens": lengths,
                     "plan": {f: getattr(plan, f) for f in FIELDS}})  # fmt: skip
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--diff", type=Path, help="an earlier snapshot: print the plans changed")
    args = parser.parse_args()
    rows = snapshot()
    args.out.write_text(json.dumps(rows))
    print(f"{len(rows)} plans -> {args.out}")
    if args.diff:
        before = json.loads(args.diff.read_text())
        changed = [(a, b) for a, b in zip(before, rows, strict=True) if a["plan"] != b["plan"]]
        for a, b in changed:
            lengths = b["seq_lens"]
            print(f"{b['heads']} heads x qlen {b['qlen']}, {len(lengths)} requests of up to "
                  f"{max(lengths)} keys: {a['plan']} -> {b['plan']}")  # fmt: skip
        print(f"{len(changed)} of {len(rows)} plans changed")


if __name__ == "__main__":
    main()
