"""One line a batch from `tools/gqa_plan_ab.py`'s JSON lines: each variant's best round in us
and its change against a base variant, with the plans, and each variant's error against the
fp32 reference where the run checked it. Device scripts print their results with it instead of
a summary of their own:

    python tools/ab_summary.py $OUT/logs/heldout.jsonl                 # against "planned"
    python tools/ab_summary.py $OUT/logs/heldout.jsonl --base v65 --plans

A variant's change is (its best / the base's best - 1); `--plans` adds each variant's plan.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable


def variant_names(row: dict) -> list[str]:
    """The variants a row timed, in the run's order: keys holding a list of round times."""
    return [name for name, value in row.items() if isinstance(value, list) and
            not name.startswith("plan ")]  # fmt: skip


def summary_line(row: dict, base: str, plans: bool = False) -> str:
    names = variant_names(row)
    if base not in names:
        raise ValueError(f"--base: {base!r} is not a variant of {row['batch']!r}: {names}")
    base_us = min(row[base])
    cells = []
    for name in names:
        best = min(row[name])
        cell = f"{name} {best:8.1f}"
        if name != base:
            cell += f" ({100 * (best / base_us - 1):+5.1f}%)"
        if "error " + name in row:
            cell += f" err {row['error ' + name]:.1e}"
        if plans:
            cell += f" {row['plan ' + name]}"
        cells.append(cell)
    return f"{row['batch']:26s} " + "  ".join(cells)


def summaries(lines: Iterable[str], base: str, plans: bool = False) -> list[str]:
    return [summary_line(json.loads(line), base, plans) for line in lines if line.strip()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("path", help="gqa_plan_ab.py --out JSON lines")
    parser.add_argument("--base", default="planned", help="the variant the others compare to")
    parser.add_argument("--plans", action="store_true", help="show each variant's plan")
    args = parser.parse_args(argv)
    try:
        with open(args.path) as lines:
            print("\n".join(summaries(lines, args.base, args.plans)))
    except (OSError, ValueError) as error:
        print(f"ab_summary: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
