"""The planner fit (`splitkv tune`'s second half) on synthetic sweeps: it must recover the rule
that generated the best counts, and its table must be what DeviceSpec loads."""

import dataclasses
import json

import pytest

from splitkv import device
from splitkv.device import DeviceSpec
from splitkv.partition import num_partitions
from splitkv.tune import SWEEP_SPLITS, best_times, fit_tunables, save_tuned, time_at

H200 = DeviceSpec.preset("h200")


def synthetic_sweep(truth: DeviceSpec) -> list[dict]:
    """Rows whose fastest count at each shape is the one `truth` picks; time grows with the
    log2 distance from it."""
    rows = []
    for heads in (12, 16, 128):
        for context in (8192, 68096, 327600):
            for batch in (1, 8, 16, 48, 128):
                best = num_partitions(batch, context, heads, truth, is_mla=True)
                for splits in SWEEP_SPLITS:
                    miss = abs(splits.bit_length() - best.bit_length())
                    rows.append({
                        "provider": "splitkv", "status": "ok", "label": "", "heads": heads,
                        "context": context, "batch": batch, "qlen": 1, "num_splits": splits,
                        "p50_us": 100.0 * (1 + 0.2 * miss),
                    })  # fmt: skip
    return rows


def with_tunables(spec, **changes):
    return dataclasses.replace(spec, tunables=dataclasses.replace(spec.tunables, **changes))


@pytest.mark.parametrize(
    "changes",
    [{}, {"programs_per_sm": (3, 1), "wave_fill": 0.8}, {"split_page_size": 128}],
    ids=["h200", "three-per-sm", "128-key-pages"],
)
def test_fit_recovers_the_rule_behind_the_sweep(changes):
    truth = with_tunables(H200, **changes)
    fit = fit_tunables(synthetic_sweep(truth), H200)
    assert fit.mean_slowdown == pytest.approx(1.0) and fit.worst_slowdown == pytest.approx(1.0)
    for shape in fit.per_shape:
        assert shape["chosen_splits"] == shape["best_splits"]


def test_unmeasured_counts_take_the_nearest_slower_time():
    measured = {4: 10.0, 16: 12.0, 64: 30.0}
    assert time_at(measured, 16) == 12.0
    assert time_at(measured, 8) == 12.0  # 4 and 16 are equally near: the slower
    assert time_at(measured, 256) == 30.0


def test_fit_ignores_failed_and_ragged_rows():
    rows = synthetic_sweep(H200)
    rows.append({**rows[0], "status": "wrong: relative error nan", "p50_us": 0.001})
    rows.append({**rows[0], "label": "ragged", "p50_us": 0.001})
    assert len(best_times(rows)) == 45
    with pytest.raises(ValueError, match=r"^rows: expected"):
        fit_tunables([], H200)


def test_saved_table_is_what_the_preset_loads(tmp_path, monkeypatch):
    truth = with_tunables(H200, programs_per_sm=(3, 1), wave_fill=0.8)
    fit = fit_tunables(synthetic_sweep(truth), H200)
    path = save_tuned(fit, "h200", source="synthetic", directory=tmp_path)
    record = json.loads(path.read_text())
    assert record["tunables"]["fitted"] is True and record["fit"]["source"] == "synthetic"
    monkeypatch.setattr(device, "TUNED_DIR", tmp_path)
    loaded = device._tuned("h200", H200.tunables)
    assert loaded == dataclasses.replace(fit.tunables, fitted=True)
