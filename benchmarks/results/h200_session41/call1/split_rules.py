"""Session 41, call 1: the last-wave fill rule on each build's residency (docs/perf.md "Next
runs (session 40)" item 1) against the default and each batch's best pinned split count, over
call 1's 84 uniform GQA batches. The programs an SM each build holds come from the GPU's
registers and shared memory (`builds_*.jsonl`). Run from the repository root:

    PYTHONPATH=src python benchmarks/results/h200_session41/call1/split_rules.py
"""

import json
import runpy
from pathlib import Path

from splitkv.bench.shapes import GQA_MODELS

HERE = Path(__file__).resolve().parent
held_programs = runpy.run_path(str(HERE.parents[3] / "tools" / "inspect_gqa.py"))["held_programs"]
SMS = 132
FILL = 0.9  # the H200 preset's wave_fill


def fills(row: dict, held: dict) -> dict:
    """{variant: (splits, programs an SM, fill of the launch's waves)}."""
    model, qlen, requests, _ = row["batch"].split()
    qlen, requests = int(qlen), int(requests)
    q_heads, kv_heads, head_dim = GQA_MODELS[model][:3]
    out = {}
    for name in row:
        if name.startswith("plan ") and name != "plan planned":
            _, splits, block_h, block_n, stages, whole = row[name]
            fit = held[(q_heads, head_dim, qlen, block_h, block_n, stages, whole)]
            head_blocks = -(-(qlen * q_heads // kv_heads) // block_h)
            programs, wave = requests * kv_heads * head_blocks * splits, SMS * fit
            out[name[5:]] = (splits, fit, programs / (wave * -(-programs // wave)))
    return out


def main() -> None:
    held = held_programs(sorted(HERE.glob("builds_*.jsonl")))
    totals = {"default": 0.0, "fill rule": 0.0, "best": 0.0}
    for path in sorted(HERE.glob("sweep_*.jsonl")):
        for line in path.read_text().splitlines():
            row = json.loads(line)
            fill = fills(row, held)
            names = sorted(fill, key=lambda n: fill[n][0])
            times = {n: row[n][0] for n in names}
            best = min(names, key=times.get)
            pick = next((n for n in names if fill[n][2] >= FILL), names[-1])
            totals["default"] += row["planned"][0]
            totals["fill rule"] += times[pick]
            totals["best"] += times[best]
            cells = " ".join(f"{n}:{fill[n][1]}/{fill[n][2]:.2f}" for n in names)
            print(
                f"{row['batch']:26s} default {row['planned'][0]:6.1f} best {best:4s} "
                f"{times[best]:6.1f} fill rule {pick:4s} {times[pick]:6.1f} | {cells}"
            )
    print({k: round(v, 1) for k, v in totals.items()})


if __name__ == "__main__":
    main()
