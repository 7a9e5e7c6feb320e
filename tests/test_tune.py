"""The planner fit (`splitkv tune`'s second half) on synthetic sweeps: it must recover the rule
that generated the best counts, and its table must be what DeviceSpec loads."""

import dataclasses
import json

import pytest

from splitkv import device
from splitkv.device import DeviceSpec
from splitkv.tune import (
    SWEEP_SPLITS,
    best_times,
    default_splits,
    defaults_against_best,
    fit_tunables,
    save_tuned,
    time_at,
)

H200 = DeviceSpec.preset("h200")


def synthetic_sweep(truth: DeviceSpec, kind: str = "mla") -> list[dict]:
    """Rows whose fastest count at each shape is the one the planner picks on `truth` (the
    fill rule, and on Hopper the Gluon kernels' rules for 12-16 and 128 heads); time grows
    with the log2 distance from it."""
    rows = []
    heads_list = [(12, 1), (16, 1), (128, 1)] if kind == "mla" else [(8, 1), (32, 8), (32, 32)]
    for q_heads, kv_heads in heads_list:
        for context in (8192, 68096, 327600):
            for batch in (1, 8, 16, 48, 128):
                best = default_splits(truth, (kind, q_heads, kv_heads, context, batch, 1, 128))
                for splits in SWEEP_SPLITS:
                    miss = abs(splits.bit_length() - best.bit_length())
                    shape = {"kind": kind, "heads": q_heads, "kv_heads": kv_heads,
                             "context": context, "batch": batch, "qlen": 1}  # fmt: skip
                    rows.append({
                        "provider": "splitkv", "status": "ok", "label": "", **shape,
                        "num_splits": splits, "p50_us": 100.0 * (1 + 0.2 * miss),
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
        assert shape["slowdown"] == pytest.approx(1.0), shape


@pytest.mark.parametrize(
    "changes",
    [{}, {"mha_split_page_size": 128, "max_pages_per_split": 10}, {"mha_max_splits": 16}],
    ids=["seed", "finer-pages", "cap-16"],
)
def test_gqa_fit_recovers_the_mha_branch(changes):
    truth = with_tunables(H200, **changes)
    rows = synthetic_sweep(truth, kind="gqa") + synthetic_sweep(H200)  # MLA rows are ignored
    fit = fit_tunables(rows, H200, kind="gqa")
    assert fit.mean_slowdown == pytest.approx(1.0)
    assert all(s["kind"] == "gqa" for s in fit.per_shape)


def test_unmeasured_counts_take_the_nearest_slower_time():
    measured = {4: 10.0, 16: 12.0, 64: 30.0}
    assert time_at(measured, 16) == 12.0
    assert time_at(measured, 8) == 12.0  # 4 and 16 are equally near: the slower
    assert time_at(measured, 256) == 30.0


def test_fit_ignores_failed_ragged_and_balanced_rows():
    rows = synthetic_sweep(H200)
    rows.append({**rows[0], "status": "wrong: relative error nan", "p50_us": 0.001})
    rows.append({**rows[0], "label": "ragged", "p50_us": 0.001})
    rows.append({**rows[0], "schedule": "balanced x 264 programs", "p50_us": 0.001})
    assert len(best_times(rows)) == 45
    assert min(best_times(rows)[best_key(rows[0])].values()) > 0.001
    with pytest.raises(ValueError, match=r"^rows: expected"):
        fit_tunables([], H200)
    with pytest.raises(ValueError, match=r"^rows: expected ok gqa rows"):
        fit_tunables(rows, H200, kind="gqa")


def test_defaults_are_scored_as_measured_not_by_their_nearest_count():
    # Session 25's tune, 128 heads 8k x 1: the default (36 splits) measured 20.0 us; the fit's
    # scoring had credited it with 32's 18.5.
    shape = {"kind": "mla", "heads": 128, "kv_heads": 1, "context": 8192, "batch": 1, "qlen": 1,
             "head_dim": 576, "provider": "splitkv", "status": "ok", "label": ""}  # fmt: skip
    rows = [
        {**shape, "variant": f"num_splits={n}", "num_splits": n, "p50_us": t}
        for n, t in ((16, 24.5), (32, 18.5), (64, 20.1))
    ]
    rows.append({**shape, "variant": "default", "num_splits": 36, "p50_us": 20.0})
    rows.append({**shape, "variant": "num_splits=8", "num_splits": 8, "status": "wrong: nan",
                 "p50_us": 0.001})  # fmt: skip
    other = {**shape, "context": 68096, "variant": "default", "num_splits": 16,
             "schedule": "balanced x 132 programs", "p50_us": 140.0}  # fmt: skip
    rows += [other, {**other, "variant": "num_splits=16", "schedule": "uniform", "p50_us": 150.0}]
    report = defaults_against_best(rows)
    assert [(d["default_splits"], d["best_variant"]) for d in report] == [
        (36, "num_splits=32"),
        (16, "default"),
    ]
    assert report[0]["slowdown"] == pytest.approx(20.0 / 18.5) and report[1]["slowdown"] == 1.0
    assert report[1]["default_schedule"].startswith("balanced")
    # The fit sees the default's own count as measured (36: 20.0), not as 32's time.
    assert best_times(rows)[best_key(rows[0])][36] == 20.0


def best_key(row):
    return next(key for key in best_times([row]))


def test_saved_table_is_what_the_preset_loads(tmp_path, monkeypatch):
    truth = with_tunables(H200, programs_per_sm=(3, 1), wave_fill=0.8)
    fit = fit_tunables(synthetic_sweep(truth), H200)
    path = save_tuned(fit, "h200", source="synthetic", directory=tmp_path)
    record = json.loads(path.read_text())
    assert record["tunables"]["fitted"] is True and record["fit_mla"]["source"] == "synthetic"
    monkeypatch.setattr(device, "TUNED_DIR", tmp_path)
    loaded = device._tuned("h200", H200.tunables)
    assert loaded == dataclasses.replace(fit.tunables, fitted=True)


def test_saving_a_fit_keeps_the_tables_other_records(tmp_path):
    # The committed H200 table holds the GQA fit, the MLA fits and a note: a new MLA fit
    # replaces the constants and its own record, nothing else.
    committed = json.loads((device.TUNED_DIR / "h200.json").read_text())
    (tmp_path / "h200.json").write_text(json.dumps(committed))
    fit = fit_tunables(synthetic_sweep(H200), H200)
    record = json.loads(save_tuned(fit, "h200", "new", directory=tmp_path).read_text())
    assert record["fit_mla"]["source"] == "new"
    assert record["fit_gqa"] == committed["fit_gqa"] and record["note"] == committed["note"]
    fitted = dataclasses.asdict(dataclasses.replace(fit.tunables, fitted=True))
    assert record["tunables"] == json.loads(json.dumps(fitted))  # tuples as JSON lists


def test_gqa_evaluation_uses_each_shapes_head_dim():
    from splitkv.tune import evaluate

    # 8 kv heads at batch 8 x 32k: the H200 rule asks 4 programs per SM at d 64 and 128,
    # i.e. 8 splits, and 16 per SM at d 32 (its key blocks move a quarter of the bytes): 32.
    # At d 64 and 128 the long-split tile then takes half of those 8 (512 programs pass the
    # wave of 2-3 an SM it holds; gqa_tile_rules.gqa_long_split_count); d 32 has no such tile.
    row = {"provider": "splitkv", "status": "ok", "kind": "gqa", "heads": 64, "kv_heads": 8,
           "context": 32768, "batch": 8, "qlen": 1}  # fmt: skip
    rows = [
        {**row, "head_dim": d, "num_splits": n, "p50_us": 100.0 + abs(n - 32)}
        for d in (32, 64, 128)
        for n in (8, 16, 32, 64)
    ]
    fit = evaluate(best_times(rows), DeviceSpec.preset("h200"))
    chosen = {s["head_dim"]: s["chosen_splits"] for s in fit.per_shape}
    assert chosen == {32: 32, 64: 4, 128: 4}


def test_committed_h200_table_matches_the_nvidia_defaults():
    # The table `splitkv tune` fitted on the H200 is what the preset loads; the NVIDIA defaults
    # (H100, B200 without a table of their own) carry the same constants, so they cannot drift.
    assert (device.TUNED_DIR / "h200.json").is_file()
    h200 = DeviceSpec.preset("h200").tunables
    assert h200 == dataclasses.replace(device._NVIDIA_TUNABLES, fitted=True)
