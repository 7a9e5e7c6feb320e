"""GQA ragged batches: the balanced tile's knobs crossed (programs x block_n x stages x page
prefetch), beside the default and the read ceiling, with what each build compiled to (registers,
spills, shared memory). Session 28: the combined planner rule's data (qlen 1, the defaults
below), then the 32- and 64-row tiles (QLEN=4 / 8, FACTORS, BLOCK_NS, STAGES, LABELS set; that
run also timed v0.2.27's 16-row rule there, now the default); with
UNIFORM="CONTEXTxBATCH ..." the uniform batches of `gqa_shapes` instead, FACTORS then scaling
the default num_splits."""

import json
import os

import torch

import splitkv
from splitkv.bench.ceilings import read_ceiling_bytes_per_s
from splitkv.bench.shapes import gqa_shapes, gqa_special_shapes
from splitkv.bench.sweep import _build_cases
from splitkv.kernels.gqa_split import gqa_balanced_kernel, gqa_split_kernel
from splitkv.timing import cuda_graph_times_us

MODELS = tuple(os.environ.get("MODELS", "llama3-8b gpt-oss llama3-70b-tp8").split())
QLEN = int(os.environ.get("QLEN", "1"))
LABELS = tuple(os.environ.get("LABELS", "ragged 1x131072").split())
ONE_KV_FACTORS = tuple(float(f) for f in os.environ.get("ONE_KV_FACTORS", "0.5 1 2").split())
FACTORS = {"llama3-70b-tp8": ONE_KV_FACTORS}
DEFAULT_FACTORS = tuple(float(f) for f in os.environ.get("FACTORS", "1 2 4").split())
BLOCK_NS = {"gpt-oss": tuple(int(b) for b in os.environ.get("D64_BLOCK_NS", "64 128 256").split())}
DEFAULT_BLOCK_NS = tuple(int(b) for b in os.environ.get("BLOCK_NS", "32 64 128").split())
STAGES = tuple(int(s) for s in os.environ.get("STAGES", "2 3 5").split())
UNIFORM = os.environ.get("UNIFORM", "").split()
# Grids to time with the default tile (e.g. num_programs + batch = whole waves).
EXTRA_PROGRAMS = tuple(int(p) for p in os.environ.get("EXTRA_PROGRAMS", "").split())


def batches():
    """The ragged batches (LABELS), or the uniform ones UNIFORM names."""
    if not UNIFORM:
        shapes = gqa_special_shapes(models=MODELS, qlen=QLEN)
        return [shape for shape in shapes if shape.label.startswith(LABELS)]
    shapes = []
    for item in UNIFORM:
        context, batch = (int(n) for n in item.split("x"))
        shapes += gqa_shapes(models=MODELS, contexts=(context,), batches=(batch,), qlens=(QLEN,))
    return shapes


PLAN_FIELDS = ("schedule", "num_splits", "num_programs", "block_h", "block_n",
               "split_num_warps", "split_num_stages", "page_prefetch")  # fmt: skip


def compiled_kernels():
    """Every build of the GQA stage-1 kernels so far: {id: CompiledKernel}."""
    found = {}
    caches = [*gqa_balanced_kernel.device_caches.values(), *gqa_split_kernel.device_caches.values()]
    for cache in caches:
        table = cache[0] if isinstance(cache, tuple) else cache
        if isinstance(table, dict):
            found.update({id(k): k for k in table.values()})
    return found


def build_info(kernel):
    meta = kernel.metadata
    return {
        "regs": getattr(kernel, "n_regs", None),
        "spills": getattr(kernel, "n_spills", None),
        "shared": getattr(meta, "shared", None),
        "warps": getattr(meta, "num_warps", None),
        "stages": getattr(meta, "num_stages", None),
    }


def time_config(case, plan):
    def run():
        return splitkv.gqa_decode(*case.args, plan=plan, sinks=case.sinks)

    out, _ = run()
    torch.cuda.synchronize()
    _, p50, _ = cuda_graph_times_us(run, rep_ms=40)
    return out, p50


def main():
    ceiling = read_ceiling_bytes_per_s()
    print(json.dumps({"ceiling_TBps": round(ceiling / 1e12, 3)}), flush=True)
    results = [{"ceiling_TBps": ceiling / 1e12}]
    step_out = os.environ.get("STEP_OUT", ".")
    for shape in batches():
        case = _build_cases(shape, 0, 1)[0]
        lengths = list(shape.lengths)
        common = dict(qlen=QLEN, page_size=shape.page_size, kind="gqa",
                      num_kv_heads=shape.kv_heads, head_dim=shape.head_dim,
                      dtype=torch.bfloat16, device="cuda", seq_lens=lengths)  # fmt: skip
        default = splitkv.plan_decode(len(lengths), max(lengths), shape.heads, **common)
        programs = default.num_programs or 1
        grid = "num_splits" if UNIFORM else "num_programs"
        count = default.num_splits if UNIFORM else programs
        configs = [("default", {})]
        configs += [(f"programs {p}", {"num_programs": p}) for p in EXTRA_PROGRAMS]
        for factor in FACTORS.get(shape.model, DEFAULT_FACTORS):
            for block_n in BLOCK_NS.get(shape.model, DEFAULT_BLOCK_NS):
                for stages in STAGES:
                    for prefetch in (False, True):
                        name = f"x{factor:g} bn{block_n} s{stages} pf{int(prefetch)}"
                        knobs = {grid: max(1, int(count * factor)),
                                 "block_n": block_n, "num_stages": stages,
                                 "page_prefetch": prefetch}  # fmt: skip
                        configs.append((name, knobs))
        base = None
        for name, knobs in configs:
            row = {"model": shape.model, "label": shape.label or f"{shape.context}x{shape.batch}",
                   "config": name,
                   "block_h": default.block_h}  # fmt: skip
            before = compiled_kernels()
            try:
                plan = splitkv.plan_decode(len(lengths), max(lengths), shape.heads, **common,
                                           **knobs)  # fmt: skip
                out, p50 = time_config(case, plan)
                if base is None:
                    base = out.float()
                row.update(
                    p50_us=round(p50, 1),
                    pct_ceiling=round(100 * shape.bytes_read / (p50 * 1e-6) / ceiling, 1),
                    max_diff=(out.float() - base).abs().max().item(),
                    plan={k: getattr(plan, k) for k in PLAN_FIELDS},
                )
                new = [k for i, k in compiled_kernels().items() if i not in before]
                if new:
                    row["build"] = build_info(new[0])
            except Exception as e:
                row["error"] = repr(e)[:300]
            results.append(row)
            print(json.dumps(row), flush=True)
            with open(os.path.join(step_out, "gqa_cross.json"), "w") as f:
                json.dump(results, f, indent=1)


main()
