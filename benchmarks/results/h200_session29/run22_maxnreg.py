"""Balanced GQA 32-row programs under ptxas's register cap (`maxnreg`): 194-196 registers hold
2 programs an SM; 168 would hold 3 for 80 bytes of stack (`tools/inspect_gqa.py --maxnreg`).
Each case: the default, the capped build on the default grid, and the capped build on grids of
whole waves at 3 an SM (PROGRAMS_<model>_<label>), two rounds alternating, every output checked
against the fp32 reference. The cap reaches the launch through a stand-in for the kernel
object that `gqa._launch` looks up (no plan knob yet)."""

import json
import os

import torch

import splitkv
import splitkv.gqa as gqa_module
from splitkv.bench.ceilings import read_ceiling_bytes_per_s
from splitkv.bench.shapes import gqa_special_shapes
from splitkv.bench.sweep import _build_cases
from splitkv.testing import check_against_reference
from splitkv.timing import cuda_graph_times_us

CAP = int(os.environ.get("CAP", "168"))
CASES = [("llama3-70b-tp8", 4), ("llama3-8b", 8)]
# Programs (num_programs) putting (num_programs + batch) x kv heads on whole waves of 3 an SM.
EXTRA = {
    ("llama3-70b-tp8", "ragged"): (388,),
    ("llama3-70b-tp8", "1x131072+47"): (348,),
    ("llama3-8b", "ragged"): (91, 140),
    ("llama3-8b", "1x131072+47"): (51, 100),
}


class CappedLaunch:
    """The kernel object with `maxnreg` added to its launches while `cap` is set."""

    def __init__(self, kernel):
        self.kernel, self.cap = kernel, None

    def __getitem__(self, grid):
        launch = self.kernel[grid]
        if self.cap is None:
            return launch
        return lambda *args, **kwargs: launch(*args, maxnreg=self.cap, **kwargs)


def main():
    capped = CappedLaunch(gqa_module.gqa_balanced_kernel)
    gqa_module.gqa_balanced_kernel = capped
    ceiling = read_ceiling_bytes_per_s()
    rows = [{"ceiling_TBps": ceiling / 1e12, "cap": CAP}]
    print(json.dumps(rows[0]), flush=True)
    for model, qlen in CASES:
        for shape in gqa_special_shapes(models=(model,), qlen=qlen):
            case = _build_cases(shape, 0, 1)[0]
            lengths = list(shape.lengths)
            common = dict(qlen=qlen, page_size=shape.page_size, kind="gqa",
                          num_kv_heads=shape.kv_heads, head_dim=shape.head_dim,
                          dtype=torch.bfloat16, device="cuda", seq_lens=lengths)  # fmt: skip
            default = splitkv.plan_decode(len(lengths), max(lengths), shape.heads, **common)
            label = shape.label.split()[0]
            configs = [("default", None, default), ("cap", CAP, default)]
            for p in EXTRA.get((model, label), ()):
                plan = splitkv.plan_decode(len(lengths), max(lengths), shape.heads, **common,
                                           num_programs=p)  # fmt: skip
                configs += [(f"programs {p}", None, plan), (f"cap programs {p}", CAP, plan)]
            ref = splitkv.reference.gqa_decode(*case.args, sinks=case.sinks)
            for round_ in (1, 2):
                for name, cap, plan in configs if round_ == 1 else configs[::-1]:

                    def run(plan=plan, case=case):
                        return splitkv.gqa_decode(*case.args, plan=plan, sinks=case.sinks)

                    capped.cap = cap
                    row = {"model": model, "label": shape.label, "qlen": qlen, "config": name,
                           "round": round_, "num_programs": plan.num_programs}  # fmt: skip
                    try:
                        out, lse = run()
                        torch.cuda.synchronize()
                        if round_ == 1:
                            check_against_reference(out, lse, *ref)
                        p50 = cuda_graph_times_us(run, rep_ms=60)[1]
                        row.update(p50_us=round(p50, 1),
                                   pct_ceiling=round(100 * shape.bytes_read / (p50 * 1e-6)
                                                     / ceiling, 1))  # fmt: skip
                    except Exception as e:  # a build that fails is a result too
                        row["error"] = repr(e)[:300]
                    rows.append(row)
                    print(json.dumps(row), flush=True)
                    with open(os.path.join(os.environ.get("STEP_OUT", "."), "cap.json"), "w") as f:
                        json.dump(rows, f, indent=1)
            capped.cap = None


main()
