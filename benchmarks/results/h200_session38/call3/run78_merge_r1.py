"""Session 38, call 3: the merge alone with one row a program, v0.2.41 against HEAD (run under
PYTHONPATH=.old_src/src): MLA 12 heads uniform 8k x 1 / 48 and 68k x 8, 128 heads 8k x 48
(their uniform merges), and the ragged and one-long batches at qlen 4 (balanced). One JSON
line a batch: CUDA-graph medians in us of the whole call and of the merge alone."""

import json
import os
import sys

from splitkv.bench.providers import prepare_splitkv
from splitkv.bench.shapes import BenchShape, special_shapes
from splitkv.bench.sweep import build_cases
from splitkv.timing import cuda_graph_times_us

UNIFORM = [(12, 8192, 1), (12, 8192, 48), (12, 68096, 8), (128, 8192, 48)]


def median_us(fn) -> float | None:
    return None if fn is None else round(cuda_graph_times_us(fn, rep_ms=25)[1], 1)


def main() -> None:
    shapes = [BenchShape(h, ctx, b, 1) for h, ctx, b in UNIFORM]
    shapes += [s for s in special_shapes(12, "bf16", 4) if s.label.startswith(("ragged", "1x"))]
    path = os.path.join(os.environ.get("STEP_OUT", "."), f"merge_r1_{sys.argv[1]}.jsonl")
    with open(path, "w") as f:
        for shape in shapes:
            prep = prepare_splitkv(build_cases(shape)[0])
            prep.run()
            row = {"shape": shape.describe() if hasattr(shape, "describe") else str(shape)[:80],
                   "call": median_us(prep.run), "merge": median_us(prep.merge_run)}  # fmt: skip
            print(json.dumps(row), flush=True)
            f.write(json.dumps(row) + "\n")


main()
