"""Session 66: each partition's register count, instructions and spills in the SASS of the
warp-specialized MLA kernel at 128 heads x qlen 1 (the alternating consumers), compiled for
sm_90 on the CPU from a source tree (default: this checkout):

    python benchmarks/results/session66/partition_spills.py [--root TREE] [--page-size 100]
        [--gather-ids-lead N]

A TREE with another constant: `mkdir /tmp/w1 && cp -r src tools /tmp/w1`, then edit it there
(GATHER_WARPS 1 in src/splitkv/kernels/gathered_keys.py); the page ids' lead needs no copy
(`--gather-ids-lead`, tools/inspect_kernel.py's `set_gather_ids_lead`).
The SASS is cut at each `USETMAXREG` (setmaxnreg): a segment's count is the register count set
at its start. One producer warp against four, page 100: the default consumer at 0xd8 (216)
spilled 15 / 17 against 14 / 16 STL / LDL, and the producer's segment at 0x38 (56) held 540
against 260 instructions. Page 1, four warps with the ids a block ahead against without: the same
spills, the producer's segment 245 against 239 instructions.
"""

import argparse
import sys
from pathlib import Path

parser = argparse.ArgumentParser()
parser.add_argument("--root", default=str(Path(__file__).resolve().parents[3]))
parser.add_argument("--page-size", type=int, default=100)
parser.add_argument("--gather-ids-lead", type=int, default=None, choices=(0, 1, 2))
args = parser.parse_args()
sys.path.insert(0, str(Path(args.root) / "tools"))
import inspect_kernel  # noqa: E402  (puts the tree's src/ on the path)

if args.gather_ids_lead is not None:
    inspect_kernel.set_gather_ids_lead(args.gather_ids_lead)
kernel = inspect_kernel.compile_warp_specialized(
    page_size=args.page_size, heads=128, qlen=1, arch=90, alternate_blocks=True
)
sass = [instruction for _, instruction in inspect_kernel.sass_of(kernel)]
marks = [k for k, instruction in enumerate(sass) if "USETMAXREG" in instruction]
for start, end in zip([0, *marks], [*marks, len(sass)], strict=True):
    segment = sass[start:end]
    registers = sass[start].split()[-1] if start else "entry"
    stores = sum("STL" in instruction for instruction in segment)
    loads = sum("LDL" in instruction for instruction in segment)
    print(f"{registers:>6}: {len(segment):5d} instructions, STL {stores}, LDL {loads}")
