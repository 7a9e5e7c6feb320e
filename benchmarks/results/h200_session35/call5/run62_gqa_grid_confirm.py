"""Session 35, call 5 (v0.2.37, from run61): the v0.2.36 rule against the default now;
first written as call 4: the balanced GQA grid with a floor of two programs an SM and the
one-wave fill only where it shrinks the grid by a quarter at most (`candidate`), against the
v0.2.36 rule (`gqa_tile_rules.gqa_balanced_programs`), fixed grids and uniform splits, on the
small ragged batches whose plan it changes and three it keeps; then the llama3-70b-tp8 mix
cascade with `seq_lens=` under both rules. CUDA-graph medians in us, two rounds alternating."""

import json
import os
import random

import torch

import splitkv
import splitkv.plan as plan_module
from splitkv.bench.shapes import BenchShape, _gqa_fields, gqa_prefix_shapes
from splitkv.bench.sweep import _build_cases
from splitkv.gqa_tile_rules import GQA_BALANCED_MAX_WAVES
from splitkv.timing import cuda_graph_times_us

MODELS = {"llama3-70b-tp8": 8, "llama3-8b": 32, "gpt-oss": 64}
NEW_RULE = plan_module.gqa_balanced_programs


def v0_2_36(key_blocks, groups, wave_per_sm, compute_units, min_blocks, batch, resident):
    programs = max(1, key_blocks // min_blocks)
    per_sm = min(GQA_BALANCED_MAX_WAVES * wave_per_sm, programs * groups // compute_units)
    programs = max(1, max(1, per_sm) * compute_units // groups)
    if resident is None:
        return programs
    wave = resident * compute_units // groups
    if wave // 2 <= programs <= wave and wave - batch >= programs // 2:
        return wave - batch
    return programs


OLD_RULE, candidate = v0_2_36, NEW_RULE


def planned(rule, make):
    plan_module.gqa_balanced_programs = rule
    try:
        return make()
    finally:
        plan_module.gqa_balanced_programs = NEW_RULE


def median_us(fn) -> float:
    fn()
    torch.cuda.synchronize()
    return round(cuda_graph_times_us(fn, rep_ms=30)[1], 1)


def batches() -> dict:
    rng = random.Random(35)  # as run60_gqa_small_balanced.py
    out = {"mix suffixes": [100 + (3900 * i) // 47 for i in range(48)]}
    for n, lo, hi in ((8, 1000, 32000), (16, 500, 8000), (32, 100, 2000), (64, 100, 4000),
                      (4, 2000, 65536)):  # fmt: skip
        out[f"{n} x {lo}-{hi}"] = [rng.randint(lo, hi) for _ in range(n)]
    out["one-long"] = [327600, *(1 + (4095 * i) // 46 for i in range(47))]
    return out


CASES = [("llama3-70b-tp8", b) for b in batches() if b != "one-long"]
CASES += [("gpt-oss", "16 x 500-8000"), ("llama3-8b", "32 x 100-2000"),
          ("gpt-oss", "32 x 100-2000"), ("llama3-70b-tp8", "one-long"),
          ("gpt-oss", "mix suffixes"), ("llama3-8b", "16 x 500-8000")]  # fmt: skip


def measure(model: str, name: str, lengths: list) -> dict:
    heads = MODELS[model]
    shape = BenchShape(heads, max(lengths), len(lengths), 1, seq_lens=tuple(lengths),
                       **_gqa_fields(model, 16))  # fmt: skip
    case = _build_cases(shape, 0, 1)[0]
    k, table = case.args[1], case.args[3]
    kv_heads, dim = k.shape[2], k.shape[3]
    reference = splitkv.reference.gqa_decode(*case.args, sinks=case.sinks)[0].float()
    common = dict(qlen=1, page_size=16, device="cuda", kind="gqa", num_kv_heads=kv_heads,
                  head_dim=dim, seq_lens=lengths)  # fmt: skip

    def make(**knobs):
        return lambda: splitkv.plan_decode(len(lengths), table.shape[1] * 16, heads,
                                           **{**common, **knobs})  # fmt: skip

    plans = {"old": planned(OLD_RULE, make()), "candidate": planned(candidate, make()),
             "uniform": make(schedule="uniform")()}  # fmt: skip
    fixed = (264,) if kv_heads == 1 else (33, 66, 99)
    for n in fixed:
        plans[f"fixed_{n}"] = make(schedule="balanced", num_programs=n)()
    row = {"model": model, "batch": name, "keys": sum(lengths),
           "grids": {k: (p.schedule, p.num_programs) for k, p in plans.items()}}  # fmt: skip
    for label, plan in plans.items():
        run = lambda p=plan: splitkv.gqa_decode(*case.args, plan=p, sinks=case.sinks)
        row[f"err_{label}"] = round((run()[0].float() - reference).abs().max().item(), 5)
    for _ in range(2):
        for label, plan in plans.items():
            run = lambda p=plan: splitkv.gqa_decode(*case.args, plan=p, sinks=case.sinks)
            row.setdefault(label, []).append(median_us(run))
    return row


def cascade() -> dict:
    shape = next(s for s in gqa_prefix_shapes(models=("llama3-70b-tp8",)) if "groups" in s.label)
    case = _build_cases(shape, 0, 1)[0]
    q, cache, table = case.args[0], case.args[1], case.args[-2]
    groups = [(list(m), tokens // cache.shape[1]) for m, tokens in case.sharing]

    def make(lengths):
        # The passes' plans are made on the first call (SharedPrefixPlan.plans_for).
        def build():
            prefix = splitkv.plan_shared_prefix(
                groups, q.shape[0], table.shape[1], cache.shape[1], q.device, seq_lens=lengths
            )
            splitkv.gqa_decode_shared_prefix(*case.args, prefix, sinks=case.sinks)
            return prefix

        return build

    lengths = case.seq_lens.tolist()
    plans = {"blind": make(None)(), "lengths_old": planned(OLD_RULE, make(lengths)),
             "lengths_candidate": planned(candidate, make(lengths))}  # fmt: skip
    row = {"shape": shape.describe()}
    for label, prefix in plans.items():
        ((suffix, _),) = prefix.passes.values()
        row[f"suffix_{label}"] = (suffix.schedule, suffix.num_programs, suffix.num_splits)
    for _ in range(2):
        for label, prefix in plans.items():
            run = lambda p=prefix: splitkv.gqa_decode_shared_prefix(*case.args, p, sinks=case.sinks)
            row.setdefault(label, []).append(median_us(run))
    return row


def main() -> None:
    rows, all_batches = [], batches()
    path = os.path.join(os.environ.get("STEP_OUT", "."), "gqa_grid_v0.2.37.json")
    rows.append(cascade())
    print(json.dumps(rows[-1]), flush=True)
    for model, name in CASES:
        rows.append(measure(model, name, all_batches[name]))
        print(json.dumps({k: v for k, v in rows[-1].items() if not k.startswith("err")}),
              flush=True)  # fmt: skip
        with open(path, "w") as f:
            json.dump(rows, f, indent=1)


main()
