"""Host time of `plan_decode` (no GPU needed: plans on "meta" for the H200's spec), for batches
of seeded random lengths, MLA and the GQA bench models, with and without the lengths given.

    python tools/plan_host_time.py                   # 8, 64, 256 and 1,024 requests
    python tools/plan_host_time.py --batch 4096 --repeat 3
    python tools/plan_host_time.py --batch 1024 --profile   # where a plan's host time goes

A serving engine that plans each step with its lengths (`seq_lens=`) pays this once a step;
a shape planned without lengths is remembered (`splitkv/plan_memo.py`), so only its first plan
costs the planning; CUDA-graph replays of one plan pay nothing. Prints the best of --repeat
rounds a plan, in us.
"""

import argparse
import cProfile
import io
import pstats
import random
import timeit
from collections.abc import Callable

import torch

import splitkv

# (label, plan_decode arguments past batch, keys, heads)
SHAPES = [
    ("mla 16 heads", 16, {}),
    ("llama3-8b", 32, {"kind": "gqa", "num_kv_heads": 8, "head_dim": 128}),
    ("gpt-oss", 64, {"kind": "gqa", "num_kv_heads": 8, "head_dim": 64}),
    ("llama3-70b-tp8", 8, {"kind": "gqa", "num_kv_heads": 1, "head_dim": 128}),
]


def planner(batch: int, lengths: list[int] | None, heads: int, shape: dict,
            forget: bool = False) -> Callable[[], splitkv.DecodePlan]:  # fmt: skip
    """A `plan_decode` call for the H200 on "meta" (`forget`: each call a shape not planned
    before, as the first call of a shape without lengths), made once already."""
    spec = splitkv.DeviceSpec.preset("h200")
    keys = max(lengths) if lengths else 32768

    def plan() -> splitkv.DecodePlan:
        if forget:
            splitkv.plan_decode.forget()
        return splitkv.plan_decode(batch, keys, heads, seq_lens=lengths, device="meta",
                                   device_spec=spec, dtype=torch.bfloat16, **shape)  # fmt: skip

    plan()
    return plan


def plan_us(batch: int, lengths: list[int] | None, heads: int, shape: dict, repeat: int,
            forget: bool = False) -> float:  # fmt: skip
    """Best of `repeat` rounds, microseconds a `plan_decode` call (`planner`)."""
    plan = planner(batch, lengths, heads, shape, forget)
    calls = max(1, 20_000 // batch)
    return min(timeit.repeat(plan, number=calls, repeat=repeat)) / calls * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batch", type=int, nargs="+", default=[8, 64, 256, 1024])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--seed", type=int, default=48)
    parser.add_argument("--profile", action="store_true",
                        help="cProfile's top functions of 50 plans with lengths a shape, at the "
                        "last --batch, instead of the timings")  # fmt: skip
    args = parser.parse_args()
    rng = random.Random(args.seed)
    if args.profile:
        batch = args.batch[-1]
        lengths = [rng.randint(100, 30000) for _ in range(batch)]
        for label, heads, shape in SHAPES:
            profile_plans(label, planner(batch, lengths, heads, shape))
        return
    print(f"{'batch':>6} {'shape':16s} {'new shape':>10} {'again':>6} {'lengths':>8}  (us a plan;"
          " without lengths: a new shape, and again: remembered)")  # fmt: skip
    for batch in args.batch:
        lengths = [rng.randint(100, 30000) for _ in range(batch)]
        for label, heads, shape in SHAPES:
            new = plan_us(batch, None, heads, shape, args.repeat, forget=True)
            again = plan_us(batch, None, heads, shape, args.repeat)
            given = plan_us(batch, lengths, heads, shape, args.repeat)
            print(f"{batch:6d} {label:16s} {new:10.0f} {again:6.0f} {given:8.0f}")


def profile_plans(label: str, plan: Callable[[], splitkv.DecodePlan], calls: int = 50) -> None:
    """The functions that take a plan's host time, by their own time (cProfile adds its
    overhead to each call, so read the shares, not the microseconds)."""
    profile = cProfile.Profile()
    profile.runcall(lambda: [plan() for _ in range(calls)])
    text = io.StringIO()
    stats = pstats.Stats(profile, stream=text)
    print(f"== {label}: {stats.total_tt / calls * 1e6:.0f} us a plan under cProfile, "
          f"calls a plan / own us a plan / share")  # fmt: skip
    rows = sorted(stats.stats.items(), key=lambda item: -item[1][2])[:10]
    for (path, line, name), (_, ncalls, own, _, _) in rows:
        where = f"{path.rsplit('/', 1)[-1]}:{line}({name})" if line else name
        print(f"  {ncalls / calls:7.1f} {own / calls * 1e6:7.1f} {own / stats.total_tt:6.1%}  "
              f"{where}")  # fmt: skip


if __name__ == "__main__":
    main()
