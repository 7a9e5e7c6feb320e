"""Session 67: the plans `plan_decode` makes for issue 5's ragged batch at pages 1, 100 and 64,
for a device preset, planned on the CPU ("meta" device, no allocation):

    python benchmarks/results/session67/plans_by_page.py [--device h100]

At 128 heads x qlen 1 and 12 heads x qlen 4 on the H100 preset, pages 1 and 100 plan the same
(128 heads: 66 programs, 8 splits, 32-key blocks, alternating consumers, piece cost 8); page
64 differs only in `copy_rows` (bulk copies). So run219's page-1 / page-100 gap is not a plan's.
"""

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "src"))
from splitkv.bench.shapes import special_shapes
from splitkv.device import DeviceSpec
from splitkv.plan import plan_decode

FIELDS = ("schedule", "num_programs", "num_splits", "block_n", "block_h", "program_loop",
          "piece_cost", "warp_specialized", "alternate_blocks", "consumer_groups", "copy_rows",
          "kv_tma")  # fmt: skip

parser = argparse.ArgumentParser()
parser.add_argument("--device", default="h100")
args = parser.parse_args()
spec = DeviceSpec.preset(args.device)
for heads, qlen in ((128, 1), (12, 4)):
    ragged = next(s.lengths for s in special_shapes(heads) if s.label == "ragged")
    for page_size in (1, 100, 64):
        plan = plan_decode(len(ragged), max(ragged), heads, qlen=qlen, page_size=page_size,
                           seq_lens=ragged, device_spec=spec, device="meta")  # fmt: skip
        knobs = ", ".join(f"{name}={getattr(plan, name)}" for name in FIELDS)
        print(f"{heads} heads x qlen {qlen}, page {page_size}: {knobs}")
