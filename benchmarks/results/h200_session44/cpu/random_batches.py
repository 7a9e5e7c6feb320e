"""Session 44, call 6's batches: 160 seeded random GQA batches, planned by v0.2.50's tree
(`.old_src/v50`) and by this tree on the H200 preset (no GPU); prints the 27 whose plan changed
and 4 it left, as `tools/gqa_plan_ab.py --batch` arguments (run from the repo root).

    mkdir -p .old_src/v50 && git archive <v0.2.50's commit> src tools | tar -x -C .old_src/v50
    python benchmarks/results/h200_session44/cpu/random_batches.py
"""

import random
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[4] / "tools"))
from gqa_ab_compare import plans_in

MODELS = ["gpt-oss", "llama3-8b", "qwen-64-8", "llama3-70b-tp8"]
KV_HEADS = {"gpt-oss": 8, "llama3-8b": 8, "qwen-64-8": 8, "llama3-70b-tp8": 1}


def random_batches(count: int, seed: int = 44) -> list[str]:
    """MODEL:QLEN:REQUESTS:KEYS batches: 8-40 requests at 8 kv heads, 60-320 at one; a third
    ragged (LO-HI)."""
    rng = random.Random(seed)
    batches = []
    while len(batches) < count:
        model, qlen = rng.choice(MODELS), rng.choice([1, 2, 4, 8])
        lo, hi = (8, 40) if KV_HEADS[model] == 8 else (60, 320)
        requests = rng.randint(lo, hi)
        if rng.random() < 0.3:
            shortest = rng.randint(50, 400)
            keys = f"{shortest}-{rng.randint(shortest + 200, 2500)}"
        else:
            keys = str(rng.randint(100, 2500))
        batches.append(f"{model}:{qlen}:{requests}:{keys}")
    return batches


def plans(tool: str, batches: list[str]) -> list[list]:
    done = subprocess.run([sys.executable, tool, "--plans-only", "--batch", *batches],
                          capture_output=True, text=True, check=True)  # fmt: skip
    return list(plans_in(done.stdout).values())


if __name__ == "__main__":
    batches = random_batches(160)
    old = plans(".old_src/v50/tools/gqa_plan_ab.py", batches)
    new = plans("tools/gqa_plan_ab.py", batches)
    pairs = list(zip(batches, old, new, strict=True))
    changed = [batch for batch, before, after in pairs if before != after]
    same = [batch for batch, before, after in pairs if before == after]
    print(len(changed), len(same), file=sys.stderr)
    print(" ".join(changed[:30] + same[:4]))
