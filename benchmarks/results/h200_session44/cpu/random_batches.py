"""Session 44, call 6's batches: 160 seeded random GQA batches, planned by v0.2.50's tree
(`.old_src/v50`) and by this tree on the H200 preset (no GPU); prints the 27 whose plan changed
(at v0.2.52) and 4 it left, as `tools/gqa_plan_ab.py --batch` arguments (run from the repo
root). The batches and the comparison are tools/gqa_random_batches.py's, at seed 44:

    mkdir -p .old_src/v50 && git archive 9a60d3c src tools | tar -x -C .old_src/v50
    python benchmarks/results/h200_session44/cpu/random_batches.py
"""

import subprocess
import sys

if __name__ == "__main__":
    subprocess.run([sys.executable, "tools/gqa_random_batches.py", ".old_src/v50", "--count",
                    "160", "--seed", "44", "--most", "30", "--same", "4"], check=True)  # fmt: skip
