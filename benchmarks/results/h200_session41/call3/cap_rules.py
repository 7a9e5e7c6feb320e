"""Session 41, after call 3: candidate caps on the default GQA uniform split count, each
replacing `gqa_partials_split_cap` in a plan on the H200 preset, scored by the times the
pinned counts of calls 1 and 3 measured (118 uniform batches where every candidate's count
was timed): the total, the geometric mean of each batch over its best count, and the batches
more than 3% and 5% off their best. The planner asks for the cap at one kv head and head
block only (v0.2.45), so the candidates differ there; before that condition (8 kv heads
capped too) the 8x cap scored a geometric mean of 1.0214 and 8x on pages 1.0209 (docs/perf.md
session 41). Run from the repository root:

    PYTHONPATH=src python benchmarks/results/h200_session41/call3/cap_rules.py
"""

import json
import math
import runpy
from pathlib import Path

import splitkv
import splitkv.plan as plan_module
from splitkv.bench.shapes import GQA_MODELS
from splitkv.plan_rules import prev_pow2

HERE = Path(__file__).resolve().parent
# The max_seq_len the timed path planned with (its page table's width).
table_keys = runpy.run_path(str(HERE.parents[3] / "tools" / "gqa_plan_ab.py"))["table_keys"]
NONE = 1 << 30  # no cap


def candidate(share=8, pages=False, min_rows=0, per_sm=1):
    """A cap: splits read `share` times their partial bytes (keys in whole 128-key pages if
    `pages`), at least `per_sm` programs an SM; only at `min_rows` rows or more."""

    def cap(keys, group_rows, itemsize, partial_itemsize, programs_a_split, units):
        if group_rows < min_rows:
            return NONE
        counted = -(-keys // 128) * 128 if pages else keys
        split_bytes = share * group_rows * partial_itemsize
        most = prev_pow2(max(1, counted * 2 * itemsize // split_bytes))
        return max(most, prev_pow2(max(1, per_sm * units // programs_a_split)))

    return cap


CANDIDATES = {
    "none (v0.2.44)": lambda *args: NONE,
    "8x": candidate(),
    "8x pages (v0.2.45)": candidate(pages=True),
    "8x, 32+ rows": candidate(min_rows=32),
    "4x": candidate(share=4),
    "8x pages, 2 an SM": candidate(pages=True, per_sm=2),
}


def measured() -> dict:
    """{batch: {splits: us}} from the pinned counts of calls 1 and 3."""
    times = {}
    for path in sorted(HERE.parent.glob("call[13]/sweep_*.jsonl")):
        for line in path.read_text().splitlines():
            row = json.loads(line)
            for name in row:
                if name not in ("batch", "planned") and not name.startswith("plan "):
                    times.setdefault(row["batch"], {})[row["plan " + name][1]] = row[name][0]
    return times


def default_count(batch: str, cap) -> int:
    """The uniform split count the planner picks with `cap` in place of its own."""
    model, qlen, requests, keys = batch.split()
    q_heads, kv_heads, head_dim = GQA_MODELS[model][:3]

    def old_signature(keys, page_keys, group_rows, itemsize, partial_itemsize, batch, units):
        return cap(keys, group_rows, itemsize, partial_itemsize, batch, units)

    plan_module.gqa_partials_split_cap = old_signature
    kv = {"kind": "gqa", "num_kv_heads": kv_heads, "head_dim": head_dim, "page_size": 16}
    lengths = [int(keys)] * int(requests)
    plan = splitkv.plan_decode(int(requests), table_keys(lengths), q_heads, qlen=int(qlen),
                               device="meta", device_spec=splitkv.DeviceSpec.preset("h200"),
                               seq_lens=lengths, schedule="uniform", **kv)  # fmt: skip
    return plan.num_splits


def main() -> None:
    times = measured()
    scores = {name: [] for name in CANDIDATES}
    for batch, by_count in times.items():
        picks = {name: default_count(batch, cap) for name, cap in CANDIDATES.items()}
        if not all(count in by_count for count in picks.values()):
            continue  # a candidate picked a count this batch did not time
        best = min(by_count.values())
        for name, count in picks.items():
            scores[name].append((by_count[count], by_count[count] / best))
    for name, rows in scores.items():
        ratios = [r for _, r in rows]
        mean = math.exp(sum(map(math.log, ratios)) / len(ratios))
        off3, off5 = sum(r > 1.03 for r in ratios), sum(r > 1.05 for r in ratios)
        print(
            f"{name:34s} {len(rows)} batches, total {sum(t for t, _ in rows):8.1f} us, "
            f"geomean {mean:.4f}, worst {max(ratios):.2f}, >3%: {off3}, >5%: {off5}"
        )


if __name__ == "__main__":
    main()
