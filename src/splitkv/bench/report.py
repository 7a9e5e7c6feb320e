"""Results on disk: JSON (everything), CSV (one row per measurement), a markdown table and a
roofline plot (PNG, when matplotlib is installed)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

CSV_FIELDS = [
    "provider", "variant", "label", "heads", "context", "batch", "qlen", "page_size", "dtype",
    "shared_prefix", "num_splits", "schedule", "p20_us", "p50_us", "p80_us", "gb_per_s",
    "tflop_per_s", "frac_read_ceiling", "unique_frac_read_ceiling", "frac_matmul", "merge_p50_us",
    "merge_share", "stage1_p50_us", "merge_added_share", "rel_error", "status", "gpu", "command",
]  # fmt: skip


def write_results(result: dict, out_dir: str | Path, stem: str) -> list[Path]:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / f"{stem}.json", out / f"{stem}.csv", out / f"{stem}.md"]
    paths[0].write_text(json.dumps(result, indent=1, default=str))  # knobs may hold dtypes
    with paths[1].open("w", newline="") as f:
        writer = csv.DictWriter(f, CSV_FIELDS, extrasaction="ignore")
        writer.writeheader()
        for row in result["rows"]:
            writer.writerow({**row, "gpu": result["env"]["gpu"]})
    paths[2].write_text(markdown(result))
    png = out / f"{stem}.png"
    if roofline_png(result, png):
        paths.append(png)
    return paths


def markdown(result: dict) -> str:
    env, ceil = result["env"], result["ceilings"]
    lines = [
        f"# splitkv bench: {env['gpu']}",
        "",
        f"splitkv {env['splitkv']}, torch {env['torch']}, triton {env['triton']}, "
        f"CUDA {env['cuda']}. Command: `{env['command']}`",
        "",
        "Ceilings measured in this run: streaming read "
        f"{ceil['read_bytes_per_s'] / 1e12:.2f} TB/s, "
        f"bf16 matmul {ceil['matmul_flops_per_s'] / 1e12:.0f} TFLOP/s.",
        "",
        "| provider | variant | heads | shape | qlen | splits | schedule | p50 us (p20-p80) "
        "| GB/s | of read ceiling | TFLOP/s | of matmul | merge share alone (added) | status |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in result["rows"]:
        shape = r["label"] or f"{r['context']} x {r['batch']}"
        head = f"| {r['provider']} | {r.get('variant', '')} | {r['heads']} | {shape} | {r['qlen']} "
        if r.get("status") == "ok":
            merge = f"{r['merge_share']:.1%}" if "merge_share" in r else ""
            if "merge_added_share" in r:
                merge += f" (adds {r['merge_added_share']:.1%})"
            timing = f"{r['p50_us']:.1f} ({r['p20_us']:.1f}-{r['p80_us']:.1f})"
            lines.append(
                f"{head}| {r['num_splits']} | {r.get('schedule', '')} | {timing} "
                f"| {r['gb_per_s']:.0f} "
                f"| {r['frac_read_ceiling']:.1%} | {r['tflop_per_s']:.1f} "
                f"| {r['frac_matmul']:.1%} | {merge} | ok |"
            )
        else:
            splits = f"{r.get('num_splits', '')} | {r.get('schedule', '')}"
            lines.append(f"{head}| {splits} | | | | | | | {r.get('status')} |")
    return "\n".join(lines) + "\n"


def roofline_png(result: dict, path: Path) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    ceil = result["ceilings"]
    bw, peak = ceil["read_bytes_per_s"], ceil["matmul_flops_per_s"]
    fig, ax = plt.subplots(figsize=(8, 5.5))
    ok = [r for r in result["rows"] if r.get("status") == "ok"]
    for provider in sorted({r["provider"] for r in ok}):
        mine = [r for r in ok if r["provider"] == provider]
        ax.scatter(
            [r["flops"] / r["bytes_read"] for r in mine],
            [r["tflop_per_s"] for r in mine],
            label=provider,
            s=18,
        )
    intensities = [0.5 * 2 ** (i / 16) for i in range(16 * 14)]  # dense enough to show the ridge
    ax.plot(
        intensities,
        [min(bw * i, peak) / 1e12 for i in intensities],
        "k--",
        label=f"roof: {bw / 1e12:.2f} TB/s read, {peak / 1e12:.0f} TFLOP/s",
    )
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.set_xlabel("FLOP per byte read")
    ax.set_ylabel("TFLOP/s achieved")
    ax.set_title(f"MLA decode on {result['env']['gpu']}")
    ax.legend(fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def splits_png(rows: list[dict], path: Path, chosen: dict | None = None) -> bool:
    """Time vs num_splits, one panel per head count, one line per (context, batch); `chosen`
    maps (heads, context, batch) to the planner's pick, drawn as a ring."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    ok = [r for r in rows if r.get("status") == "ok" and not r.get("label")]
    heads = sorted({r["heads"] for r in ok})
    if not heads:
        return False
    fig, axes = plt.subplots(1, len(heads), figsize=(5.5 * len(heads), 4.5), squeeze=False)
    for ax, h in zip(axes[0], heads, strict=True):
        for ctx, bs in sorted({(r["context"], r["batch"]) for r in ok if r["heads"] == h}):
            mine = sorted(
                (r for r in ok if (r["heads"], r["context"], r["batch"]) == (h, ctx, bs)),
                key=lambda r: r["num_splits"],
            )
            best = min(r["p50_us"] for r in mine)
            xs = [r["num_splits"] for r in mine]
            (line,) = ax.plot(
                xs, [r["p50_us"] / best for r in mine], marker=".", label=f"{ctx} x {bs}"
            )
            pick = (chosen or {}).get((h, ctx, bs))
            at = [r["p50_us"] / best for r in mine if r["num_splits"] == pick]
            if at:
                ax.plot([pick], at, "o", mfc="none", ms=10, color=line.get_color())
        ax.set_xscale("log", base=2)
        ax.set_ylim(0.95, 2.0)
        ax.set_title(f"{h} heads: time / best (ring: planner's choice)")
        ax.set_xlabel("num_splits")
        ax.legend(fontsize=6, ncol=2)
        ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True
