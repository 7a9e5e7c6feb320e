"""Compare `tools/gqa_plan_ab.py` outputs: two runs' default plans batch by batch (an A/B of two
source trees), or two variants within one run (an A/B of plan fields). One line a batch: each
side's fastest round, the change, and the plans where they differ.

    python tools/gqa_ab_compare.py old.jsonl new.jsonl --names v0.2.45 v0.2.47
    python tools/gqa_ab_compare.py blocks.jsonl --variants k64 k128
"""

import argparse
import json
from pathlib import Path


def rows_of(path: str) -> dict:
    return {row["batch"]: row for row in map(json.loads, Path(path).read_text().splitlines())}


def compared(a: dict, b: dict, key_a: str, key_b: str) -> str:
    """A batch's line: fastest rounds of `key_a` in row a and `key_b` in row b."""
    ta, tb = min(a[key_a]), min(b[key_b])
    plan_a, plan_b = a["plan " + key_a], b["plan " + key_b]
    plans = "" if plan_a == plan_b else f"  {plan_a} -> {plan_b}"
    return f"{a['batch']:34s} {ta:8.1f} {tb:8.1f} {100 * (tb / ta - 1):+6.1f}%{plans}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="+", help="one run (with --variants) or two")
    parser.add_argument("--names", nargs=2, default=["a", "b"], help="the two runs' names")
    parser.add_argument("--variants", nargs=2, help="two variants of one run")
    args = parser.parse_args()
    if args.variants and len(args.files) == 1:
        rows = rows_of(args.files[0])
        print(f"{'batch':34s} {args.variants[0]:>8s} {args.variants[1]:>8s}")
        for row in rows.values():
            print(compared(row, row, *args.variants))
    elif not args.variants and len(args.files) == 2:
        old, new = rows_of(args.files[0]), rows_of(args.files[1])
        print(f"{'batch':34s} {args.names[0]:>8s} {args.names[1]:>8s}")
        for batch, row in old.items():
            if batch in new:
                print(compared(row, new[batch], "planned", "planned"))
    else:
        parser.error("give two files, or one file and --variants")


if __name__ == "__main__":
    main()
