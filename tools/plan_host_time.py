"""Host time of `plan_decode` (no GPU needed: plans on "meta" for the H200's spec), for batches
of seeded random lengths, MLA and the GQA bench models, with and without the lengths given.

    python tools/plan_host_time.py                   # 8, 64, 256 and 1,024 requests
    python tools/plan_host_time.py --batch 4096 --repeat 3

A serving engine that plans each step with its lengths (`seq_lens=`) pays this once a step;
a shape planned without lengths is remembered (`splitkv/plan_memo.py`), so only its first plan
costs the planning; CUDA-graph replays of one plan pay nothing. Prints the best of --repeat
rounds a plan, in us.
"""

import argparse
import random
import timeit

import torch

import splitkv

# (label, plan_decode arguments past batch, keys, heads)
SHAPES = [
    ("mla 16 heads", 16, {}),
    ("llama3-8b", 32, {"kind": "gqa", "num_kv_heads": 8, "head_dim": 128}),
    ("gpt-oss", 64, {"kind": "gqa", "num_kv_heads": 8, "head_dim": 64}),
    ("llama3-70b-tp8", 8, {"kind": "gqa", "num_kv_heads": 1, "head_dim": 128}),
]


def plan_us(batch: int, lengths: list[int] | None, heads: int, shape: dict, repeat: int,
            forget: bool = False) -> float:  # fmt: skip
    """Best of `repeat` rounds, microseconds a `plan_decode` call (`forget`: each call a shape
    not planned before, as the first call of a shape without lengths)."""
    spec = splitkv.DeviceSpec.preset("h200")
    keys = max(lengths) if lengths else 32768

    def plan() -> splitkv.DecodePlan:
        if forget:
            splitkv.plan_decode.forget()
        return splitkv.plan_decode(batch, keys, heads, seq_lens=lengths, device="meta",
                                   device_spec=spec, dtype=torch.bfloat16, **shape)  # fmt: skip

    plan()
    calls = max(1, 20_000 // batch)
    return min(timeit.repeat(plan, number=calls, repeat=repeat)) / calls * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batch", type=int, nargs="+", default=[8, 64, 256, 1024])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--seed", type=int, default=48)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    print(f"{'batch':>6} {'shape':16s} {'new shape':>10} {'again':>6} {'lengths':>8}  (us a plan;"
          " without lengths: a new shape, and again: remembered)")  # fmt: skip
    for batch in args.batch:
        lengths = [rng.randint(100, 30000) for _ in range(batch)]
        for label, heads, shape in SHAPES:
            new = plan_us(batch, None, heads, shape, args.repeat, forget=True)
            again = plan_us(batch, None, heads, shape, args.repeat)
            given = plan_us(batch, lengths, heads, shape, args.repeat)
            print(f"{batch:6d} {label:16s} {new:10.0f} {again:6.0f} {given:8.0f}")


if __name__ == "__main__":
    main()
