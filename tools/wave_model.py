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
most 1/c times as fast. So a call takes fixed_us + (bytes / the full rate) x (1 + program_keys
/ a split's keys) x (floor(w) + max(c, frac(w))) / w. c is the tile's own.

Fits (docs/perf.md, session 52; `--fit` prints them): session 51's call 1 (23 batches, the
default split count against half of it, v0.2.59's kernels) gives c 0.5 on the 16-row tile and
0.7 on the 32-row ones (qwen-64-8 and llama3-70b-tp8 at qlen 4, 2 an SM), 5.2% rms, every
direction right: FITTED, which the predictions for run154 and run155 use. Session 50's gpt-oss
runs (16-row, packed and not, 56 pairs) fit c 0.45 (6.8%); session 40's call 6 (1-8 splits on
v0.2.44's kernels, 40 pairs) wants a per-program cost of ~64 keys and a small c on gpt-oss's
32-row tile (0.3-0.4 at 5 an SM). So c is a tile's, not a class's: run155's curves measure it.

--fit reads `tools/gqa_plan_ab.py` JSON lines (a batch, its variants' times and shown plans),
makes each variant's plan again from its shown fields and prints the best constants on a grid,
first the fitted constants' (FITTED), then a row a variant against "planned": the
waves, the measured and the modelled ratio.
--curve NAME compares variant NAME across each file's records instead (a wave curve: one
tile, the batch stepped), against its run of the most waves; --per-tile then fits a c for each
build (coordinate descent from the grid's best), as run155's curves call for:
    python tools/wave_model.py --fit curve_l8.jsonl curve_o4.jsonl --curve s8 --per-tile
--batch prints each variant's plan, waves and modelled time, and the fastest. `--gpu h100`
takes the H100's constants and full rate (session 56's curves) instead of the H200's.
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
from gqa_plan_ab import H200, PlanPatch, batch_arg, plan_on_h200, resolved, shown, variants_of
from inspect_kernel import registers_and_stack

from splitkv.bench.shapes import GQA_MODELS, gqa_batch

NARROW_ROWS = 16


class Constants(NamedTuple):
    c_narrow: float  # the 16-row tile's c
    c_tall: float  # the 32- and 64-row tiles'
    fixed_us: float  # launch, ramp and merge: what a call costs beyond its streaming
    program_keys: float  # what a program costs beyond its keys (its queries, its partial), in keys
    tile_c: tuple = ()  # (tile_key, c) pairs that override the class's c (`--per-tile`)

    def c(self, plan) -> float:
        own = dict(self.tile_c).get(tile_key(plan))
        if own is not None:
            return own
        return self.c_narrow if tile_class(plan) == "narrow" else self.c_tall


FITTED = Constants(0.5, 0.7, 5.0, 0.0)  # session 51's call 1 (module docstring)


class Gpu(NamedTuple):
    constants: Constants
    full_wave_bytes_per_us: float  # a full wave of the 16-row tile streams at this rate


# The H200: FITTED, its full wave llama3-8b 5 x 65,536 (640 programs) in 304.4 us. The H100
# (docs/perf.md session 56, run165's five curves: 3.6-3.9% rms, against 10.8% at FITTED): a
# partial wave comes nearer the full rate where a SM streams 0.7x the bytes; its full wave
# llama3-8b 10 x 32,768 (640 programs) in 448.4 us.
GPUS = {"h200": Gpu(FITTED, 4.41e6), "h100": Gpu(Constants(0.3, 0.5, 10.0, 0.0), 2.99e6)}
GRID = Constants((0.3, 0.4, 0.45, 0.5, 0.55, 0.6, 0.7, 0.75, 0.8, 0.9, 1.0),
                 (0.3, 0.4, 0.45, 0.5, 0.55, 0.6, 0.7, 0.75, 0.8, 0.9, 1.0),
                 (0.0, 2.0, 5.0, 8.0, 10.0), (0.0, 16.0, 32.0, 64.0, 96.0, 128.0))  # fmt: skip


class Timed(NamedTuple):
    plan: object
    waves: float
    us: float  # measured
    bytes_read: int
    split_keys: int  # the longest request's keys a split


def wave_time(waves: float, c: float) -> float:
    """Full waves' time of a launch of `waves` waves (module docstring)."""
    full = math.floor(waves + 1e-9)
    part = waves - full
    return full + (max(c, part) if part > 1e-9 else 0.0)


def tile_class(plan) -> str:
    return "narrow" if plan.block_h <= NARROW_ROWS else "tall"


def tile_key(plan) -> str:
    """A stage-1 build, as residency and c tell builds apart."""
    return (f"{plan.block_h} rows hd {plan.head_dim_v} pack {plan.kv_pack} bn {plan.block_n} "
            f"{plan.split_num_stages} stages{' ahead' if plan.page_prefetch else ''}"
            f"{' one-kv' if plan.num_kv_heads == 1 else ''}"
            f"{' one-split' if plan.num_splits == 1 else ''}")  # fmt: skip


def timed_run(plan, waves: float, us: float, model: str, qlen: int, lengths: list[int]) -> Timed:
    return Timed(plan, waves, us, gqa_batch(model, lengths, qlen).bytes_read,
                 -(-max(lengths) // plan.num_splits))  # fmt: skip


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


def waves_of(plan, held: Residency, model: str) -> float:
    return plan.split_grid / (held(plan, GQA_MODELS[model][3]) * H200.compute_units)


def modelled(waves: float, c: float) -> float:
    """Time over the time the same work takes at the full rate: a full wave of R programs an
    SM streams the SMs' whole rate, so the work is `waves` full waves' worth."""
    return wave_time(waves, c) / waves


def pinned_fields(shown_plan: list) -> dict:
    """Plan knobs and tile fields that make a recorded plan again (`gqa_plan_ab.SHOWN`)."""
    schedule, splits, block_h, block_n, stages, _, *packed = shown_plan
    kv_pack = packed[0] if packed else 1  # runs before v0.2.56 printed no kv_pack
    return {"schedule": schedule, "num_splits": splits, "block_h": block_h, "kv_pack": kv_pack,
            "block_n": block_n, "split_num_stages": stages}  # fmt: skip


def recorded_runs(paths: list[str]) -> list[tuple[str, str, dict]]:
    """(file, batch label, {variant: Timed}) a record of `gqa_plan_ab.py` JSON lines, each
    variant's plan made again from its shown fields; records whose plans cannot be are
    skipped."""
    patch, held = PlanPatch(), Residency()
    records = []
    for path in paths:
        for line in Path(path).read_text().splitlines():
            record = json.loads(line)
            model, qlen, lengths, _ = batch_arg(record["batch"].replace(" ", ":"))
            made = {}
            for name in (n[5:] for n in record if n.startswith("plan ")):
                if record["plan " + name][0] != "uniform":  # the model is of uniform waves
                    print(f"skipped {record['batch']} {name}: {record['plan ' + name][0]}")
                    break
                plan = plan_on_h200(patch, model, qlen, lengths,
                                    pinned_fields(record["plan " + name]))  # fmt: skip
                if shown(plan)[: len(record["plan " + name])] != record["plan " + name]:
                    print(f"skipped {record['batch']} {name}: made {shown(plan)}, "
                          f"recorded {record['plan ' + name]}")  # fmt: skip
                    break
                made[name] = timed_run(plan, waves_of(plan, held, model), min(record[name]),
                                       model, qlen, lengths)  # fmt: skip
            else:
                records.append((path, record["batch"], made))
    return records


def pairs_of(records, curve: str | None) -> list[tuple[str, str, Timed, Timed]]:
    """What the fit compares: each variant against "planned" in its record, or with `curve`,
    that variant across one file's records against its run of the most waves."""
    if not curve:
        return [(label, name, made["planned"], other) for _, label, made in records
                for name, other in made.items() if name != "planned"]  # fmt: skip
    pairs = []
    for path in dict.fromkeys(path for path, _, _ in records):
        runs = [(label, made[curve]) for p, label, made in records if p == path and curve in made]
        base = max(runs, key=lambda run: run[1].waves)[1]
        pairs += [(label, curve, base, run) for label, run in runs if run is not base]
    return pairs


def fit(paths: list[str], curve: str | None = None, per_tile: bool = False,
        gpu: Gpu = GPUS["h200"]) -> None:  # fmt: skip
    rows = pairs_of(recorded_runs(paths), curve)
    fitted = gpu.constants

    def rms(constants: Constants) -> float:
        errors = [math.log(ratio(base, other, constants) * base.us / other.us)
                  for _, _, base, other in rows]  # fmt: skip
        return math.sqrt(sum(e * e for e in errors) / len(errors))

    best = sorted((Constants(*values) for values in itertools.product(*GRID[:4])), key=rms)[:8]
    if per_tile:
        best.insert(0, per_tile_c(best[0], rows, rms))
    for constants in [fitted, *best]:
        tiles = "".join(f"\n    {key}: c {c:.2f}" for key, c in constants.tile_c)
        print(f"c narrow {constants.c_narrow:.2f} tall {constants.c_tall:.2f} fixed "
              f"{constants.fixed_us:4.1f} us program {constants.program_keys:5.1f} keys: rms "
              f"{100 * rms(constants):5.1f}% over {len(rows)} pairs{tiles}")  # fmt: skip
    for label, name, base, other in rows:
        measured = other.us / base.us
        model = ratio(base, other, fitted)
        agree = "" if (model < 1) == (measured < 1) or abs(model - 1) < 0.01 else "  direction"
        print(f"{label:28s} {name:8s} {tile_class(other.plan):6s} waves {base.waves:5.2f} -> "
              f"{other.waves:5.2f}  {base.us:6.1f} us measured {measured:5.3f} model "
              f"{model:5.3f}{agree}")  # fmt: skip


def per_tile_c(start: Constants, rows, rms) -> Constants:
    """A c for each build in `rows`, by coordinate descent over GRID's c values from `start`."""
    keys = sorted({tile_key(run.plan) for _, _, base, other in rows for run in (base, other)})
    tile_c = {key: start.c(next(run.plan for _, _, b, o in rows for run in (b, o)
                                if tile_key(run.plan) == key)) for key in keys}  # fmt: skip
    for _ in range(3):
        for key in keys:
            tile_c[key] = min(GRID.c_narrow, key=lambda c: rms(
                start._replace(tile_c=tuple({**tile_c, key: c}.items()))))  # fmt: skip
    return start._replace(tile_c=tuple(tile_c.items()))


def ratio(base: Timed, other: Timed, constants: Constants) -> float:
    """Modelled time of `other` over `base`."""
    return modelled_us(other, constants) / modelled_us(base, constants)


def modelled_us(run: Timed, constants: Constants,
                rate: float = GPUS["h200"].full_wave_bytes_per_us) -> float:  # fmt: skip
    """A run's time in us, streaming at `rate` bytes a us in a full wave."""
    overhead = 1 + constants.program_keys / run.split_keys
    stream_us = run.bytes_read * overhead / rate
    return constants.fixed_us + stream_us * modelled(run.waves, constants.c(run.plan))


def predict(batches, variants, gpu: Gpu = GPUS["h200"]) -> None:
    patch, held = PlanPatch(), Residency()
    for model, qlen, lengths, label in batches:
        made, row = {}, {"batch": label}
        for name, fields in variants.items():
            plan = plan_on_h200(patch, model, qlen, lengths, resolved(fields, made))
            made[name] = plan
            run = timed_run(plan, waves_of(plan, held, model), 0.0, model, qlen, lengths)
            us = modelled_us(run, gpu.constants, gpu.full_wave_bytes_per_us)
            row[name] = {"plan": shown(plan), "waves": round(run.waves, 2), "us": round(us, 1)}
        for name in variants:
            row[name]["ratio"] = round(row[name]["us"] / row["planned"]["us"], 3)
        row["fastest"] = min(variants, key=lambda n: row[n]["us"])
        print(json.dumps(row))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fit", nargs="+", help="gqa_plan_ab JSON lines to fit c on")
    parser.add_argument("--curve", help="with --fit: this variant across each file's records")
    parser.add_argument("--per-tile", action="store_true", help="with --fit: a c for each build")
    parser.add_argument("--batch", nargs="+", type=batch_arg, default=[])
    parser.add_argument("--variant", nargs="+", action="append", default=[],
                        metavar=("NAME", "FIELD=VALUE"))  # fmt: skip
    parser.add_argument("--gpu", choices=sorted(GPUS), default="h200",
                        help="whose fitted constants and full rate (the plans are the H200 "
                        "preset's: both have 132 SMs)")  # fmt: skip
    args = parser.parse_args()
    if args.fit:
        fit(args.fit, args.curve, args.per_tile, GPUS[args.gpu])
    if args.batch:
        predict(args.batch, variants_of(args.variant), GPUS[args.gpu])


if __name__ == "__main__":
    main()
