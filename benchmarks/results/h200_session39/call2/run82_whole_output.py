"""Session 39, call 2: GQA uniform plans of one split, the kernel writing the output itself
(`whole_pieces`, the default) against partials and a merge (`whole_pieces=False`), which was
8.6-12% faster for gpt-oss at qlen 4 in call 1; then the registers and spills of every
`gqa_split_kernel` build that ran. One JSON line a batch: CUDA-graph medians in us,
[whole call, stage 1]. Run from the repository root:
    PYTHONPATH=$PWD/src python3 run82_whole_output.py"""

import dataclasses
import json
import os

import torch

from splitkv.bench.providers import prepare_splitkv
from splitkv.bench.shapes import gqa_batch
from splitkv.bench.sweep import build_cases
from splitkv.kernels.gqa_split import gqa_split_kernel
from splitkv.timing import cuda_graph_times_us

VARIANTS = {"whole": {}, "merged": {"whole_pieces": False}}
GPT_OSS_Q4 = {
    "block_n 64 whole": {"block_n": 64},
    "block_n 64 merged": {"block_n": 64, "whole_pieces": False},
}


def median_us(fn) -> float:
    return round(cuda_graph_times_us(fn, rep_ms=20)[1], 1)


def timed(case, knobs) -> list[float]:
    prep = prepare_splitkv(case, schedule="uniform", num_splits=1, **knobs)
    prep.run()
    return [median_us(prep.run), median_us(prep.stage1_run)]


def rows():
    for model in ("gpt-oss", "llama3-8b", "qwen-64-8", "llama3-70b-tp8"):
        for qlen in (1, 4):
            for batch in (64, 128):
                case = build_cases(gqa_batch(model, [4096] * batch, qlen))[0]
                row = {"batch": f"{model} {qlen} {batch} 4096"}
                variants = dict(VARIANTS)
                if model == "gpt-oss" and qlen == 4:
                    variants.update(GPT_OSS_Q4)
                for name, knobs in variants.items():
                    row[name] = timed(case, knobs)
                if case.sinks is not None:
                    plain = dataclasses.replace(case, sinks=None)
                    for name, knobs in VARIANTS.items():
                        row[name + ", no sinks"] = timed(plain, knobs)
                yield row
                del case
                torch.cuda.empty_cache()


def builds():
    for caches in gqa_split_kernel.device_caches.values():
        for key, kernel in caches[0].items():
            kernel._init_handles()
            meta = kernel.metadata
            yield {
                "regs": kernel.n_regs,
                "spills": kernel.n_spills,
                "warps": meta.num_warps,
                "stages": meta.num_stages,
                "shared": meta.shared,
                "key": str(key)[-700:],
            }


def main() -> None:
    where = os.environ.get("STEP_OUT", ".")
    with open(os.path.join(where, "whole_output.jsonl"), "w") as out:
        for row in rows():
            print(json.dumps(row), flush=True)
            out.write(json.dumps(row) + "\n")
    with open(os.path.join(where, "builds.jsonl"), "w") as out:
        for build in builds():
            print({k: v for k, v in build.items() if k != "key"}, flush=True)
            out.write(json.dumps(build) + "\n")


main()
