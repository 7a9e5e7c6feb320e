"""Session 35, call 7: the balanced GQA grid's v0.2.37 rule (one group stops at one wave)
against v0.2.36's, at one kv head, qlen 1 and 4, on call 6's batches where the two differ.
CUDA-graph medians in us, two rounds, with the largest difference from the fp32 reference."""

import json
import os

import torch

import splitkv
import splitkv.plan as plan_module
from splitkv.bench.shapes import BenchShape, _gqa_fields
from splitkv.bench.sweep import _build_cases
from splitkv.gqa_tile_rules import GQA_BALANCED_MAX_WAVES
from splitkv.timing import cuda_graph_times_us

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


def median_us(fn) -> float:
    fn()
    torch.cuda.synchronize()
    return round(cuda_graph_times_us(fn, rep_ms=30)[1], 1)


def main() -> None:
    import random

    from splitkv.bench.shapes import GQA_ONE_LONG

    rng = random.Random(63)  # call 6's batches
    batches = {"one-long 327600": [327600, *(1 + (4095 * i) // 46 for i in range(47))],
               "one-long 131072": list(GQA_ONE_LONG)}  # fmt: skip
    for n, lo, hi in ((48, 4000, 12000), (64, 1000, 8000), (128, 500, 4000), (16, 16000, 48000),
                      (256, 200, 2000)):  # fmt: skip
        batches[f"{n} x {lo}-{hi}"] = [rng.randint(lo, hi) for _ in range(n)]
    rows = []
    path = os.path.join(os.environ.get("STEP_OUT", "."), "gqa_grid_confirm_large.json")
    for qlen in (1, 4):
        for name, lengths in batches.items():
            common = dict(qlen=qlen, page_size=16, device="cuda", kind="gqa", num_kv_heads=1,
                          head_dim=128, seq_lens=lengths)  # fmt: skip
            cols = -(-max(lengths) // 16)
            new = splitkv.plan_decode(len(lengths), cols * 16, 8, **common)
            plan_module.gqa_balanced_programs = v0_2_36
            old = splitkv.plan_decode(len(lengths), cols * 16, 8, **common)
            plan_module.gqa_balanced_programs = NEW_RULE
            if (old.schedule, old.num_programs) == (new.schedule, new.num_programs):
                continue
            shape = BenchShape(8, max(lengths), len(lengths), qlen, seq_lens=tuple(lengths),
                               **_gqa_fields("llama3-70b-tp8", 16))  # fmt: skip
            case = _build_cases(shape, 0, 1)[0]
            reference = splitkv.reference.gqa_decode(*case.args)[0].float()
            row = {"batch": name, "qlen": qlen, "grids": [old.num_programs, new.num_programs]}
            for label, plan in (("v0.2.36", old), ("v0.2.37", new)):
                out = splitkv.gqa_decode(*case.args, plan=plan)[0].float()
                row[f"err_{label}"] = round((out - reference).abs().max().item(), 5)
            for _ in range(2):
                for label, plan in (("v0.2.36", old), ("v0.2.37", new)):
                    row.setdefault(label, []).append(
                        median_us(lambda p=plan, c=case: splitkv.gqa_decode(*c.args, plan=p))
                    )
            rows.append(row)
            print(json.dumps(row), flush=True)
            with open(path, "w") as f:
                json.dump(rows, f, indent=1)


main()
