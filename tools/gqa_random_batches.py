"""Seeded random GQA batches whose default plan differs between an older tree and this one, as
`tools/gqa_plan_ab.py --batch` arguments: time each tree's default on them in one device call
to hold a planner change out over batches nobody picked (no GPU needed here).

    mkdir -p .old_src/v53 && git archive <old commit> src tools | tar -x -C .old_src/v53
    python tools/gqa_random_batches.py .old_src/v53 --count 200 --seed 45

8-40 requests at 8 kv heads, 60-320 at one kv head (--requests: the same range for all),
qlen 1-8 (--qlens), the four bench models (--models), 100-2,500 keys (--keys), a third of the
batches ragged (LO-HI). Prints the changed batches (at most --most), then --same unchanged ones
as controls; the counts go to stderr.
"""

import argparse
import random
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gqa_ab_compare import plans_in

KV_HEADS = {"gpt-oss": 8, "llama3-8b": 8, "qwen-64-8": 8, "llama3-70b-tp8": 1}


def random_batches(count: int, seed: int, keys: tuple[int, int] = (100, 2500),
                   models: tuple[str, ...] = tuple(KV_HEADS), qlens: tuple[int, ...] = (1, 2, 4, 8),
                   requests: tuple[int, int] | None = None) -> list[str]:  # fmt: skip
    """`count` distinct MODEL:QLEN:REQUESTS:KEYS batches of `keys` (least, most) keys,
    MODEL:QLEN:REQUESTS:LO-HI where ragged; `requests` (least, most) for every model, else
    8-40 at 8 kv heads and 60-320 at one."""
    rng = random.Random(seed)
    batches = []
    while len(batches) < count:
        model, qlen = rng.choice(models), rng.choice(qlens)
        lo, hi = requests or ((8, 40) if KV_HEADS[model] == 8 else (60, 320))
        requests_here = rng.randint(lo, hi)
        if rng.random() < 0.3:
            # Shortest from half the least to 4/25 of the most, the longest 2/25 of the most
            # past it at least (50-400 and 200 at the default keys).
            shortest = rng.randint(keys[0] // 2, max(keys[0] // 2, keys[1] * 4 // 25))
            length = f"{shortest}-{rng.randint(shortest + keys[1] * 2 // 25, keys[1])}"
        else:
            length = str(rng.randint(*keys))
        batch = f"{model}:{qlen}:{requests_here}:{length}"
        if batch not in batches:  # the plans come back keyed by batch
            batches.append(batch)
    return batches


def plans(tool: Path, batches: list[str]) -> list[list]:
    """Each batch's default plan as `tool` (a tree's gqa_plan_ab.py) prints it."""
    done = subprocess.run([sys.executable, str(tool), "--plans-only", "--batch", *batches],
                          capture_output=True, text=True, check=True)  # fmt: skip
    return list(plans_in(done.stdout).values())


def same_plan(before: list, after: list) -> bool:
    """Whether an older tree's shown plan is this tree's: the fields shown since (kv_pack,
    session 47) must then be at their value of old, 1."""
    return before == after[: len(before)] and all(v == 1 for v in after[len(before) :])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("old", type=Path, help="the older tree (holding tools/ and src/)")
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--seed", type=int, default=45)
    parser.add_argument("--keys", type=int, nargs=2, default=(100, 2500), metavar=("LEAST", "MOST"))
    parser.add_argument("--models", nargs="+", choices=list(KV_HEADS), default=list(KV_HEADS))
    parser.add_argument("--qlens", type=int, nargs="+", default=[1, 2, 4, 8])
    parser.add_argument("--requests", type=int, nargs=2, default=None, metavar=("LEAST", "MOST"))
    parser.add_argument("--most", type=int, default=40, help="changed batches printed at most")
    parser.add_argument("--same", type=int, default=4, help="unchanged batches printed")
    args = parser.parse_args()
    batches = random_batches(args.count, args.seed, tuple(args.keys), tuple(args.models),
                             tuple(args.qlens), args.requests and tuple(args.requests))  # fmt: skip
    here = Path(__file__).resolve().parent / "gqa_plan_ab.py"
    pairs = zip(batches, plans(args.old / "tools" / "gqa_plan_ab.py", batches),
                plans(here, batches), strict=True)  # fmt: skip
    changed, same = [], []
    for batch, before, after in pairs:
        (same if same_plan(before, after) else changed).append(batch)
    print(f"{len(changed)} changed, {len(same)} not", file=sys.stderr)
    print(" ".join(changed[: args.most] + same[: args.same]))


if __name__ == "__main__":
    main()
