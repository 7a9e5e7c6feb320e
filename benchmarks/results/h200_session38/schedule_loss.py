"""The GQA default's loss to the faster schedule over the batches session 38 timed both ways
(call 1's 138, call 2's 18 changed plans), for whichever splitkv is importable: the plans are
made on the "meta" device with the H200 preset, the times are the calls' medians.

    PYTHONPATH=src python benchmarks/results/h200_session38/schedule_loss.py       # 305.0 us
    git worktree add /tmp/v0240 eefcf99 && \\
      PYTHONPATH=/tmp/v0240/src python benchmarks/results/h200_session38/schedule_loss.py  # 1,267.7
"""

import json
from pathlib import Path

import splitkv
from splitkv.bench.shapes import GQA_MODELS

HERE = Path(__file__).resolve().parent
SHORT = {256: (100, 500), 32: (100, 2000), 48: (100, 4000)}


def spread(n: int, lo: int, hi: int) -> list[int]:
    return [lo + (hi - lo) * i // (n - 1) for i in range(n)]


def batches() -> list[tuple[str, int, list[int], float, float]]:
    out = []
    call1 = (HERE / "call1" / "gqa_schedules.jsonl").read_text().splitlines()
    for r in map(json.loads, call1):
        out.append((r["model"], r["qlen"], r["lengths"], r["uniform"][0], r["balanced"][0]))
    call2 = (HERE / "call2" / "changed_plans.jsonl").read_text().splitlines()
    for r in map(json.loads, call2):
        lengths = spread(r["batch"], *SHORT[r["batch"]])
        out.append((r["model"], r["qlen"], lengths, r["uniform"], r["balanced"]))
    return out


def main() -> None:
    spec = splitkv.DeviceSpec.preset("h200")
    loss, misses, rows = 0.0, 0, batches()
    for model, qlen, lengths, uniform, balanced in rows:
        heads, kv_heads, dim, _ = GQA_MODELS[model]
        plan = splitkv.plan_decode(len(lengths), -(-max(lengths) // 16) * 16, heads, qlen=qlen,
                                   page_size=16, kind="gqa", num_kv_heads=kv_heads,
                                   head_dim=dim, device="meta", device_spec=spec,
                                   seq_lens=lengths)  # fmt: skip
        took = uniform if plan.schedule == "uniform" else balanced
        loss += took - min(uniform, balanced)
        misses += took > 1.03 * min(uniform, balanced)
    print(f"splitkv {splitkv.__version__}: {len(rows)} batches, the default's loss to the "
          f"faster schedule {loss:.1f} us, {misses} slower by more than 3%")  # fmt: skip


main()
