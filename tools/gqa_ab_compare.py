"""Compare `tools/gqa_plan_ab.py` outputs: two runs' default plans batch by batch (an A/B of two
source trees), or two variants within one run (an A/B of plan fields). One line a batch: each
side's fastest round, the change, and the plans where they differ.

    python tools/gqa_ab_compare.py old.jsonl new.jsonl --names v0.2.45 v0.2.47
    python tools/gqa_ab_compare.py blocks.jsonl --variants k64 k128

An old tree's run can time a new tree's plan as a variant of its own: `--plans` takes the new
tree's `gqa_plan_ab.py --plans-only` output and marks which variant's plan each batch's new
default plan is (`= NAME`, or `= neither` where no variant timed it).

    python tools/gqa_ab_compare.py ab.jsonl --variants planned s1 --plans plans_new.txt
"""

import argparse
import json
from pathlib import Path


def rows_of(path: str) -> dict:
    return {row["batch"]: row for row in map(json.loads, Path(path).read_text().splitlines())}


def plans_of(path: str) -> dict:
    """{batch: default plan} of a `gqa_plan_ab.py --plans-only` output file."""
    return plans_in(Path(path).read_text())


def plans_in(text: str) -> dict:
    """{batch: default plan} of `gqa_plan_ab.py --plans-only` output (other lines skipped)."""
    lines = (line for line in text.splitlines() if line.startswith("{"))
    return {row["batch"]: row["plan planned"] for row in map(json.loads, lines)}


def matched(row: dict, plan: list, names: list[str]) -> str:
    """Which of the variants `names` in `row` was timed on `plan`."""
    return next((name for name in names if row["plan " + name] == plan), "neither")


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
    parser.add_argument("--plans", help="a new tree's --plans-only output, matched to variants")
    args = parser.parse_args()
    if args.variants and len(args.files) == 1:
        rows = rows_of(args.files[0])
        plans = plans_of(args.plans) if args.plans else {}
        print(f"{'batch':34s} {args.variants[0]:>8s} {args.variants[1]:>8s}")
        for batch, row in rows.items():
            mark = f"  = {matched(row, plans[batch], args.variants)}" if batch in plans else ""
            print(compared(row, row, *args.variants) + mark)
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
