"""p2s_uniform.jsonl from output_tail.txt (session 52, for `tools/wave_model.py --fit`): call
2's uniform gpt-oss batches as `tools/gqa_plan_ab.py` JSON lines, variants planned (packed),
p1 (kv_pack=1) and p2s (packed on p1's split count). The tail printed no p2s plan: it is
planned again here (`--plans-only`, v0.2.60) where today's planned and p1 plans are those
recorded, and for three batches v0.2.60 plans on half the splits (14 x 91,429, 10 x 83,317,
14 x 116,544) it is the packed plan on p1's recorded count (the 2-stage tile, as the session
reported). Run from the repository root."""

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROW = re.compile(r"(gpt-oss \d+ \d+ \d+)\s+packed\s+([\d.]+) unpacked\s+([\d.]+)\s+\S+ packed on "
                 r"p1 splits\s+([\d.]+)\s+\S+\s+(\[.*?\]) (\[.*?\])$")  # fmt: skip
HALVED_NOW = ("91429", "83317", "116544")

rows = []
for line in (HERE / "output_tail.txt").read_text().splitlines():
    match = ROW.match(line.strip())
    if match and ast.literal_eval(match.group(5))[0] == "uniform":
        name, packed, unpacked, p2s, plan, plan_p1 = match.groups()
        rows.append({"batch": name, "planned": [float(packed)], "p1": [float(unpacked)],
                     "p2s": [float(p2s)], "plan planned": ast.literal_eval(plan),
                     "plan p1": ast.literal_eval(plan_p1)})  # fmt: skip
done = subprocess.run([sys.executable, "tools/gqa_plan_ab.py", "--plans-only", "--variant", "p1",
                       "kv_pack=1", "--variant", "p2s", "kv_pack=2", "num_splits=@p1", "--batch",
                       *(r["batch"].replace(" ", ":") for r in rows)],
                      capture_output=True, text=True, check=True)  # fmt: skip
with open(HERE / "p2s_uniform.jsonl", "w") as out:
    for row, now in zip(rows, map(json.loads, done.stdout.splitlines()), strict=True):
        if now["plan p1"] == row["plan p1"]:
            row["plan p2s"] = now["plan p2s"]
        elif row["batch"].split()[3] in HALVED_NOW:
            row["plan p2s"] = [*row["plan planned"][:1], row["plan p1"][1],
                               *row["plan planned"][2:]]  # fmt: skip
        else:
            continue
        out.write(json.dumps(row) + "\n")
