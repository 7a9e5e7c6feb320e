"""Session 42, CPU only: what if `gqa_long_split_count` kept halving past a count whose splits
are too short for the long-split tile, down to the largest count whose splits stream 8 blocks
(one split included)? Replans every uniform batch of the pinned-count sweeps of sessions 41
and 42 with today's planner, both ways, and prints each changed plan with the time the sweep
measured for the new plan (where a pinned variant had that exact plan). Run from the
repository root:

    PYTHONPATH=src python benchmarks/results/h200_session42/cpu/long_split_deeper.py
"""

import json
import math
import runpy
from pathlib import Path

import splitkv
import splitkv.gqa_tile_rules as rules
from splitkv.bench.shapes import GQA_MODELS

ROOT = Path(__file__).resolve().parents[4]
table_keys = runpy.run_path(str(ROOT / "tools" / "gqa_plan_ab.py"))["table_keys"]
SPEC = splitkv.DeviceSpec.preset("h200")
TODAYS = rules.gqa_long_split_count


def deeper(num_splits, keys, programs_a_split, resident, compute_units, block_n, key_bytes,
           may_halve):  # fmt: skip
    got = TODAYS(num_splits, keys, programs_a_split, resident, compute_units, block_n,
                 key_bytes, may_halve)  # fmt: skip
    if got is not None or resident is None or not may_halve:
        return got
    splits, wave = num_splits, resident * compute_units
    short = rules.GQA_UNIFORM_MIN_BLOCKS * block_n
    while splits > 1 and (splits * programs_a_split > wave or -(-keys // splits) < short):
        splits //= 2
    return TODAYS(splits, keys, programs_a_split, resident, compute_units, block_n, key_bytes,
                  False)  # fmt: skip


def plan(batch: str, rule) -> list:
    model, qlen, requests, keys = batch.split()
    heads, kv_heads, head_dim, _ = GQA_MODELS[model]
    lengths = [int(keys)] * int(requests)
    rules.gqa_long_split_count = rule
    try:
        p = splitkv.plan_decode(len(lengths), table_keys(lengths), heads,
                                qlen=int(qlen), kind="gqa", num_kv_heads=kv_heads,
                                head_dim=head_dim, page_size=16, device="meta",
                                device_spec=SPEC, seq_lens=lengths)  # fmt: skip
    finally:
        rules.gqa_long_split_count = TODAYS
    return [p.schedule, p.num_splits, p.block_h, p.block_n, p.split_num_stages, p.whole_pieces]


def main() -> None:
    results = ROOT / "benchmarks" / "results"
    files = sorted(results.glob("h200_session4[12]/call*/sweep_*.jsonl"))
    files.append(results / "h200_session42" / "call4" / "counts.jsonl")
    ratios = []
    for path in files:
        for line in path.read_text().splitlines():
            row = json.loads(line)
            if "-" in row["batch"].split()[-1]:
                continue  # ragged
            today, new = plan(row["batch"], TODAYS), plan(row["batch"], deeper)
            if today == new:
                continue
            names = [n for n in row if not n.startswith("plan") and n != "batch"]
            timed = {tuple(row["plan " + n]): row[n][0] for n in names}
            t_today, t_new = timed.get(tuple(today)), timed.get(tuple(new))
            best = min(row[n][0] for n in names)
            print(f"{row['batch']:26s} {today} -> {new}  today {t_today} new {t_new} best {best}")
            if t_today and t_new:
                ratios.append(t_new / t_today)
    geomean = math.exp(sum(map(math.log, ratios)) / len(ratios)) if ratios else None
    print(f"{len(ratios)} changed plans timed both ways; new / today geometric mean {geomean}")


if __name__ == "__main__":
    main()
