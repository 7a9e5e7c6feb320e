"""Session 39: whether a fixed cost or a cost factor on the balanced GQA schedule, added to the
schedule model, lowers the default's loss to the faster schedule over the 156 batches session
38 timed both ways (`h200_session38/schedule_loss.py`'s batches and times; plans made on the
"meta" device with the H200 preset). Run from the repository root:

    PYTHONPATH=src python benchmarks/results/h200_session39/schedule_fit.py
"""

import runpy
from pathlib import Path

import splitkv
import splitkv.schedule as schedule
from splitkv.bench.shapes import GQA_MODELS

LOSS = Path(__file__).resolve().parents[1] / "h200_session38" / "schedule_loss.py"
PICK = schedule.pick_schedule


def loss_with(batches, fixed: float, factor: float) -> tuple[float, int]:
    """The default's loss (us) and its misses by > 3% with `fixed` blocks and `factor` on the
    balanced schedule's modelled time."""

    def pick(seq_lens, num_splits, num_programs, programs_per_unit, wave, block_n, cost,
             balanced_fixed=0.0, balanced_grid=None):  # fmt: skip
        return PICK(seq_lens, num_splits, num_programs, programs_per_unit, wave, block_n,
                    cost * factor, balanced_fixed + fixed, balanced_grid)  # fmt: skip

    schedule.pick_schedule = pick
    spec = splitkv.DeviceSpec.preset("h200")
    loss, misses = 0.0, 0
    for model, qlen, lengths, uniform, balanced in batches:
        heads, kv_heads, dim, _ = GQA_MODELS[model]
        plan = splitkv.plan_decode(len(lengths), -(-max(lengths) // 16) * 16, heads, qlen=qlen,
                                   page_size=16, kind="gqa", num_kv_heads=kv_heads,
                                   head_dim=dim, device="meta", device_spec=spec,
                                   seq_lens=lengths)  # fmt: skip
        took = uniform if plan.schedule == "uniform" else balanced
        loss += took - min(uniform, balanced)
        misses += took > 1.03 * min(uniform, balanced)
    schedule.pick_schedule = PICK
    return round(loss, 1), misses


def main() -> None:
    # schedule_loss.py's batches (running it prints its own report first: the default's loss).
    batches = runpy.run_path(str(LOSS), run_name="schedule_loss")["batches"]()
    for factor in (1.0, 1.1, 1.2):
        for fixed in (0, 1, 2, 4, 8, 15):
            loss, misses = loss_with(batches, fixed, factor)
            print(f"factor {factor}, fixed {fixed} blocks: loss {loss} us, {misses} misses > 3%")


main()
