"""Session 38's next runs (docs/perf.md "Next runs (session 38)" items 1-2), for a later
session: (1) the 13 short batches of call 1 where v0.2.41's default still took balanced and
one uniform split was 3-13% faster, on both schedules; (2) gpt-oss 4k x 128 / 256 at qlen 4
(one uniform split, 62.6% of DRAM, 2 programs an SM at 177 registers) under tile knobs. One
JSON line a batch: CUDA-graph medians in us. Run from the repository root:
    PYTHONPATH=$PWD/src python3 run81_gqa_next.py"""

import itertools
import json
import os

import torch

from splitkv.bench.providers import prepare_splitkv
from splitkv.bench.shapes import gqa_batch
from splitkv.bench.sweep import build_cases
from splitkv.timing import cuda_graph_times_us

CALL1 = "benchmarks/results/h200_session38/call1/gqa_schedules.jsonl"
MISSES = {  # (model, qlen, batch, longest): call 2's misses of more than 3%
    ("qwen-64-8", 4, 64, 2000), ("llama3-8b", 4, 64, 2012), ("gpt-oss", 1, 128, 2030),
    ("qwen-64-8", 4, 128, 4077), ("qwen-64-8", 4, 128, 2048), ("qwen-64-8", 4, 16, 1975),
    ("gpt-oss", 1, 64, 2010), ("llama3-8b", 4, 48, 2018), ("qwen-64-8", 4, 48, 2031),
    ("qwen-64-8", 4, 128, 16079), ("gpt-oss", 4, 32, 2044), ("qwen-64-8", 4, 16, 3875),
    ("qwen-64-8", 4, 8, 2038),
}  # fmt: skip
TILES = {"default": {}, "merged": {"whole_pieces": False}, "block_n 64": {"block_n": 64},
         "block_n 64, 3 stages": {"block_n": 64, "num_stages": 3},
         "block_n 32, 4 stages": {"block_n": 32, "num_stages": 4}}  # fmt: skip


def median_us(fn) -> float:
    return round(cuda_graph_times_us(fn, rep_ms=20)[1], 1)


def schedule_rows(entries: list[dict]):
    for e in entries:
        key = (e["model"], e["qlen"], e["batch"], max(e["lengths"]))
        if key not in MISSES:
            continue
        case = build_cases(gqa_batch(e["model"], e["lengths"], e["qlen"]))[0]
        row = {"batch": " ".join(map(str, key))}
        for schedule in ("auto", "uniform", "balanced"):
            prep = prepare_splitkv(case, schedule=schedule)
            prep.run()
            row[schedule] = [median_us(prep.run), median_us(prep.stage1_run)]
        yield row
        del case
        torch.cuda.empty_cache()


def tile_rows():
    for batch in (128, 256):
        case = build_cases(gqa_batch("gpt-oss", [4096] * batch, 4))[0]
        row = {"batch": f"gpt-oss 4 {batch} 4096"}
        for name, knobs in TILES.items():
            prep = prepare_splitkv(case, schedule="uniform", num_splits=1, **knobs)
            prep.run()
            row[name] = median_us(prep.run)
        yield row
        del case
        torch.cuda.empty_cache()


def main() -> None:
    with open(CALL1) as f:
        entries = [json.loads(line) for line in f]
    with open(os.path.join(os.environ.get("STEP_OUT", "."), "gqa_next.jsonl"), "w") as out:
        for row in itertools.chain(schedule_rows(entries), tile_rows()):
            print(json.dumps(row), flush=True)
            out.write(json.dumps(row) + "\n")


main()
