"""Session 40, call 6: which GQA split count a last-wave fill would pick, fed the programs an SM
each count's build holds on the H200 (from the registers and shared memory in
`splits_builds.jsonl`), against the planner's count and the fastest, on the 10 batches of
`splits.jsonl` (docs/perf.md "Next runs (session 40)" item 1). Run from the repository root:

    PYTHONPATH=src python benchmarks/results/h200_session40/call6/split_rule_check.py
"""

import json
import runpy
from pathlib import Path

from splitkv.bench.shapes import GQA_MODELS

HERE = Path(__file__).resolve().parent
# Programs an SM holds, as `tools/inspect_gqa.py` counts them for its builds.
held_programs = runpy.run_path(str(HERE.parents[3] / "tools" / "inspect_gqa.py"))["held_programs"]

SMS = 132
COUNTS = ("1 split", "2 splits", "4 splits", "8 splits")
FILL = 0.9  # the H200 preset's wave_fill


def main() -> None:
    held = held_programs([HERE / "splits_builds.jsonl"])
    hits = 0
    for line in (HERE / "splits.jsonl").read_text().splitlines():
        row = json.loads(line)
        model, qlen, requests, _ = row["batch"].split()
        q_heads, kv_heads, head_dim = GQA_MODELS[model][:3]
        qlen, requests = int(qlen), int(requests)
        times, fills = {}, {}
        for name in COUNTS:
            _, splits, block_h, block_n, stages, whole = row["plan " + name]
            fit = held[(q_heads, head_dim, qlen, block_h, block_n, stages, whole)]
            programs = requests * kv_heads * splits
            wave = SMS * fit
            fills[name] = programs / (wave * -(-programs // wave))
            times[name] = row[name][0]
        picked = next((n for n in COUNTS if fills[n] >= FILL), COUNTS[-1])
        best = min(times, key=times.get)
        planned = next(n for n in COUNTS if row["plan " + n][1] == row["plan planned"][1])
        near = times[picked] <= 1.03 * times[best]
        hits += near
        print(
            f"{row['batch']:24s} best {best:8s} {times[best]:6.1f} | planner {planned:8s} "
            f"{times[planned]:6.1f} | fill rule {picked:8s} {times[picked]:6.1f} "
            f"({' '.join(f'{fills[n]:.2f}' for n in COUNTS)}){'' if near else '  miss'}"
        )
    print(f"fill rule within 3% of the best: {hits} of 10")


if __name__ == "__main__":
    main()
