"""The partial-wave model of a uniform GQA launch: fit on timed runs, then used to predict which
split count runs fastest before a run. No GPU: plans on the H200 preset, each plan's stage 1
compiled for sm_90 for its residency (`tools/inspect_gqa.py`).

    python tools/wave_model.py --fit benchmarks/results/h200_session51/call1/logs/half.txt \
        benchmarks/results/h200_session50/call2/p2s_uniform.jsonl
    python tools/wave_model.py --batch llama3-8b:1:9:32768 qwen-64-8:4:27:16384 \
        --variant half num_splits=@planned/2 kv_pack=@planned

The model: P programs of equal work on N SMs holding R each take w = P / (R N) waves. A full
wave streams at the SMs' whole rate; a last, partial wave holding a fraction f of a full one
takes max(c, f) of a full wave's time: a program with fewer beside it streams faster, but at
most 1/c times as fast. So a call takes FIXED_US + (bytes / full rate) x (floor(w) + max(c,
frac(w))) / w. c is the tile's own: with more rows a key (the 32- and 64-row tiles) the math
bounds a lone program sooner, and c is larger.

Fit (docs/perf.md, session 52): session 51's call 1 (23 batches, the default split count
against half of it) gives c 0.5 on the 16-row tile and 0.7 on the taller ones, 5.2% rms over
the measured ratios, every direction right; with session 50's gpt-oss runs (packed and
unpacked, 2 and 3 stages, 56 more pairs) 8.1% at those constants and a fixed 5 us, 6.6% at
the grid's best (c 0.45 and a fixed 10 us: the calls of 7-25 us set it, whose launches, ramps
and merges the model does not itemise).

--fit reads `tools/gqa_plan_ab.py` JSON lines (a batch, its variants' times and shown plans),
makes each variant's plan again from its shown fields and prints the best constants on a grid,
first the fitted constants' (FITTED_C, FIXED_US), then a row a variant against "planned": the
waves, the measured and the modelled ratio.
--batch prints each variant's plan, waves and modelled time, and the fastest.
"""

import argparse
import itertools
import json
import math
import sys
from pathlib import Path
from typing import NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parent))
import inspect_gqa  # first: it turns the interpreter off, so plans compile for real
from gqa_plan_ab import (
    PlanPatch,
    batch_arg,
    resolved,
    shown,
    split_variant,
    table_keys,
    variants_of,
)
from inspect_kernel import registers_and_stack

import splitkv
from splitkv.bench.shapes import GQA_MODELS, gqa_batch

PAGE_SIZE = 16  # `tools/gqa_plan_ab.py`'s
NARROW_ROWS = 16
FITTED_C = {"narrow": 0.5, "tall": 0.7}  # sessions 50-51 (module docstring)
FIXED_US = 5.0  # launch, ramp and merge: what a call costs beyond its streaming
# The rate of a full wave of the 16-row tile (llama3-8b 5 x 65,536, 640 programs: 304.4 us).
FULL_WAVE_BYTES_PER_US = 4.41e6
C_GRID = (0.3, 0.4, 0.45, 0.5, 0.55, 0.6, 0.7, 0.75, 0.8, 0.9, 1.0)
FIXED_US_GRID = (0.0, 2.0, 4.0, 5.0, 6.0, 7.0, 8.0, 10.0)


class Timed(NamedTuple):
    plan: object
    waves: float
    us: float  # measured
    bytes_read: int


def wave_time(waves: float, c: float) -> float:
    """Full waves' time of a launch of `waves` waves (module docstring)."""
    full = math.floor(waves + 1e-9)
    part = waves - full
    return full + (max(c, part) if part > 1e-9 else 0.0)


def tile_class(plan) -> str:
    return "narrow" if plan.block_h <= NARROW_ROWS else "tall"


class Residency:
    """Programs an SM of each plan's stage 1, compiled once a build."""

    def __init__(self) -> None:
        self.known: dict = {}

    def __call__(self, plan, sinks: bool) -> int:
        key = (plan.num_heads, plan.num_kv_heads, plan.head_dim_v, plan.qlen, plan.block_h,
               plan.block_n, plan.split_num_stages, plan.page_prefetch, plan.kv_pack,
               plan.whole_pieces, plan.num_splits == 1, plan.schedule, sinks)  # fmt: skip
        if key not in self.known:
            kernel = inspect_gqa.compile_plan(plan, sinks=sinks, programs=plan.split_grid)
            registers, _ = registers_and_stack(kernel)
            fit = inspect_gqa.residency(registers, kernel.metadata.shared, plan.split_num_warps)
            self.known[key] = fit["per_sm"]
        return self.known[key]


def plan_of(patch: PlanPatch, model: str, qlen: int, lengths: list[int], fields: dict):
    heads, kv_heads, dim, _ = GQA_MODELS[model]
    patch.fields, patch.knobs = split_variant(fields)
    return patch(len(lengths), table_keys(lengths), heads, qlen=qlen, kind="gqa",
                 num_kv_heads=kv_heads, head_dim=dim, page_size=PAGE_SIZE, device="meta",
                 device_spec=splitkv.DeviceSpec.preset("h200"), seq_lens=lengths)  # fmt: skip


def waves_of(plan, held: Residency, model: str) -> float:
    return plan.split_grid / (held(plan, GQA_MODELS[model][3]) * 132)


def modelled(waves: float, c: float) -> float:
    """Time over the time the same work takes at the full rate: a full wave of R programs an
    SM streams the SMs' whole rate, so the work is `waves` full waves' worth."""
    return wave_time(waves, c) / waves


def pinned_fields(shown_plan: list) -> dict:
    """Plan knobs and tile fields that make a recorded plan again (`gqa_plan_ab.SHOWN`)."""
    schedule, splits, block_h, block_n, stages, _, kv_pack = shown_plan
    return {"schedule": schedule, "num_splits": splits, "block_h": block_h, "kv_pack": kv_pack,
            "block_n": block_n, "split_num_stages": stages}  # fmt: skip


def fit(paths: list[str]) -> None:
    patch, held = PlanPatch(), Residency()
    rows = []
    for path in paths:
        for line in Path(path).read_text().splitlines():
            record = json.loads(line)
            model, qlen, requests, keys = record["batch"].split()
            lengths = inspect_gqa.batch_lengths(f"{requests}:{keys}")
            made = {}
            for name in (n[5:] for n in record if n.startswith("plan ")):
                plan = plan_of(patch, model, int(qlen), lengths,
                               pinned_fields(record["plan " + name]))  # fmt: skip
                if shown(plan) != record["plan " + name]:
                    print(f"skipped {record['batch']} {name}: made {shown(plan)}, "
                          f"recorded {record['plan ' + name]}")  # fmt: skip
                    break
                made[name] = Timed(plan, waves_of(plan, held, model), min(record[name]),
                                   gqa_batch(model, lengths, int(qlen)).bytes_read)  # fmt: skip
            else:
                base = made.pop("planned")
                rows += [(record["batch"], name, base, other) for name, other in made.items()]

    def rms(c_narrow: float, c_tall: float, fixed_us: float) -> float:
        c = {"narrow": c_narrow, "tall": c_tall}
        errors = [math.log(ratio(base, other, c, fixed_us) * base.us / other.us)
                  for _, _, base, other in rows]  # fmt: skip
        return math.sqrt(sum(e * e for e in errors) / len(errors))

    grid = itertools.product(C_GRID, C_GRID, FIXED_US_GRID)
    best = sorted(grid, key=lambda constants: rms(*constants))[:8]
    for c_narrow, c_tall, fixed_us in [(FITTED_C["narrow"], FITTED_C["tall"], FIXED_US), *best]:
        print(f"c narrow {c_narrow:.2f} tall {c_tall:.2f} fixed {fixed_us:4.1f} us: rms "
              f"{100 * rms(c_narrow, c_tall, fixed_us):5.1f}% over {len(rows)} pairs")  # fmt: skip
    for label, name, base, other in rows:
        measured = other.us / base.us
        model = ratio(base, other, FITTED_C, FIXED_US)
        agree = "" if (model < 1) == (measured < 1) or abs(model - 1) < 0.01 else "  direction"
        print(f"{label:28s} {name:8s} {tile_class(base.plan):6s} waves {base.waves:5.2f} -> "
              f"{other.waves:5.2f}  {base.us:6.1f} us measured {measured:5.3f} model "
              f"{model:5.3f}{agree}")  # fmt: skip


def ratio(base: "Timed", other: "Timed", c: dict, fixed_us: float) -> float:
    """Modelled time of `other` over `base`."""
    return modelled_us(other, c, fixed_us) / modelled_us(base, c, fixed_us)


def modelled_us(run: "Timed", c: dict, fixed_us: float) -> float:
    stream_us = run.bytes_read / FULL_WAVE_BYTES_PER_US
    return fixed_us + stream_us * modelled(run.waves, c[tile_class(run.plan)])


def predict(batches, variants) -> None:
    patch, held = PlanPatch(), Residency()
    for model, qlen, lengths, label in batches:
        made, row = {}, {"batch": label}
        bytes_read = gqa_batch(model, lengths, qlen).bytes_read
        for name, fields in variants.items():
            plan = plan_of(patch, model, qlen, lengths, resolved(fields, made))
            made[name] = plan
            run = Timed(plan, waves_of(plan, held, model), 0.0, bytes_read)
            row[name] = {"plan": shown(plan), "waves": round(run.waves, 2),
                         "us": round(modelled_us(run, FITTED_C, FIXED_US), 1)}  # fmt: skip
        for name in variants:
            row[name]["ratio"] = round(row[name]["us"] / row["planned"]["us"], 3)
        row["fastest"] = min(variants, key=lambda n: row[n]["us"])
        print(json.dumps(row))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fit", nargs="+", help="gqa_plan_ab JSON lines to fit c on")
    parser.add_argument("--batch", nargs="+", type=batch_arg, default=[])
    parser.add_argument("--variant", nargs="+", action="append", default=[],
                        metavar=("NAME", "FIELD=VALUE"))  # fmt: skip
    args = parser.parse_args()
    if args.fit:
        fit(args.fit)
    if args.batch:
        predict(args.batch, variants_of(args.variant))


if __name__ == "__main__":
    main()
