"""`splitkv tune`: sweep num_splits on this GPU, fit the planner, write the per-device table."""

from __future__ import annotations

from pathlib import Path

import torch

from splitkv.bench.report import splits_png, write_results
from splitkv.bench.shapes import GQA_MODELS, gqa_shapes, grid_shapes
from splitkv.bench.sweep import Trial, environment, measure_ceilings, run_shapes
from splitkv.device import TUNED_DIR, DeviceSpec, match_preset
from splitkv.tune import SWEEP_SPLITS, defaults_against_best, fit_tunables, save_tuned


def run_tune(
    heads: list[int],
    contexts: list[int],
    batches: list[int],
    *,
    kind: str = "mla",
    models: list[str] | None = None,
    qlens: list[int] | tuple[int, ...] = (1,),
    dtype: str = "bf16",
    preset: str | None,
    out_dir: str,
    tag: str,
    save: bool,
    rep_ms: int = 30,
    progress=print,
) -> int:
    """Sweep, fit, save; `save=False` writes the table beside the results only."""
    props = torch.cuda.get_device_properties(0)
    if preset is None:
        match = match_preset(props.name, getattr(props, "gcnArchName", ""))
        if match is None:
            raise ValueError(f"preset: {props.name} matches no preset; name one with --preset")
        preset = match.name
    spec = DeviceSpec.from_torch("cuda")
    if kind == "gqa":
        shapes = gqa_shapes(models or list(GQA_MODELS), contexts, batches, qlens, dtype=dtype)
    else:
        shapes = grid_shapes(heads, contexts, batches, qlens, dtype=dtype)
    progress(
        f"tuning {preset}: {len(shapes)} shapes x ({len(SWEEP_SPLITS)} split counts + the default)"
    )
    ceilings = measure_ceilings()
    result = {"env": environment(), "ceilings": ceilings, "rows": []}
    rows = run_shapes(
        shapes,
        ["splitkv"],
        ceilings,
        # The plan's own default too: target 6 is scored on it as measured (a default between
        # two swept counts, or on another schedule, has a time of its own).
        trials=[Trial("default")]
        + [Trial(f"num_splits={n}", {"num_splits": n}) for n in SWEEP_SPLITS],
        measure_merge=True,
        rep_ms=rep_ms,
        progress=progress,
        checkpoint=lambda r: write_results({**result, "rows": r}, out_dir, tag),
    )
    result["rows"] = rows
    result["defaults_against_best"] = defaults_against_best(rows)
    write_results(result, out_dir, tag)
    measured = [d["slowdown"] for d in result["defaults_against_best"]]
    if measured:
        progress(
            f"the defaults as planned, measured: worst {max(measured):.3f}x the best row of "
            f"their shape ({sum(m > 1.05 for m in measured)} of {len(measured)} past 5%)"
        )
    fit = fit_tunables(rows, spec, kind=kind)
    progress(f"fit: {fit.tunables}")
    progress(
        f"chosen vs best: geometric mean {fit.mean_slowdown:.3f}x, worst {fit.worst_slowdown:.3f}x"
    )
    for shape in fit.per_shape:
        if shape["slowdown"] > 1.05:
            progress(f"  off by more than 5%: {shape}")
    chosen = {(s["heads"], s["context"], s["batch"]): s["chosen_splits"] for s in fit.per_shape}
    # (GQA models share head counts, e.g. 32 q heads with 8 or 32 kv: the plot shows the first.)
    splits_png(rows, Path(out_dir) / f"{tag}_splits.png", chosen)
    source = f"benchmarks/results/{tag}.json"
    table = save_tuned(
        fit, preset, source, directory=TUNED_DIR if save else Path(out_dir), kind=kind
    )
    if save and Path(out_dir) != TUNED_DIR:  # a copy beside the results travels back too
        (Path(out_dir) / f"{tag}_{preset}.json").write_text(table.read_text())
    progress(f"wrote {table}")
    return 0
