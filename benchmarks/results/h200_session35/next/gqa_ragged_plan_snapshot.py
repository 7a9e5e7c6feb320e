"""The schedule, split count and grid of 320 seeded ragged GQA plans (4 models x qlen 1 and 4 x
2-128 requests x longest 4k-131k, lengths from a 40th of the longest to it; H200 preset,
"meta" device), as JSON: run before and after `gqa_model_uniform_splits.patch` (session 35: 5
of the 320 move from uniform to balanced).

    python gqa_ragged_plan_snapshot.py /tmp/before.json
    git apply gqa_model_uniform_splits.patch && python gqa_ragged_plan_snapshot.py /tmp/after.json
"""

import itertools
import json
import random
import sys

import splitkv
from splitkv.bench.shapes import GQA_MODELS
from splitkv.device import DeviceSpec

MODELS = ("llama3-70b-tp8", "llama3-8b", "gpt-oss", "qwen-64-8")
BATCHES, LONGEST = (2, 4, 8, 16, 32, 48, 64, 128), (4096, 16384, 32768, 65536, 131072)


def snapshot() -> list[dict]:
    spec, rng, rows = DeviceSpec.preset("h200"), random.Random(0), []
    for model, qlen, batch, longest in itertools.product(MODELS, (1, 4), BATCHES, LONGEST):
        heads, kv_heads, dim, _ = GQA_MODELS[model]
        lengths = [rng.randint(max(1, longest // 40), longest) for _ in range(batch)]
        plan = splitkv.plan_decode(batch, -(-max(lengths) // 16) * 16, heads, qlen=qlen,
                                   page_size=16, device="meta", kind="gqa",
                                   num_kv_heads=kv_heads, head_dim=dim, seq_lens=lengths,
                                   device_spec=spec)  # fmt: skip
        rows.append({"model": model, "qlen": qlen, "seq_lens": lengths,
                     "plan": [plan.schedule, plan.num_splits, plan.num_programs]})  # fmt: skip
    return rows


if __name__ == "__main__":
    rows = snapshot()
    with open(sys.argv[1], "w") as f:
        json.dump(rows, f)
    print(f"{len(rows)} plans -> {sys.argv[1]}")
