# Session 56's call 6 (carry run167.sh): v0.2.66's pack on the unpacked one split's grid
# (gqa_pack.packed_plan_agrees) on held-out gpt-oss qlen-1 batches against the plan v0.2.65
# gave them (`kv_pack=1`: the unpacked one split), then the new plans against the fp32 reference.
# Predictions: docs/perf.md "Session 56: v0.2.66".
set -o pipefail
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
mkdir -p $OUT/logs
git rev-parse HEAD > $OUT/logs/rev.txt
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > $OUT/logs/gpu_env.txt
H="gpt-oss:1:26:8192 gpt-oss:1:30:8192 gpt-oss:1:34:16384 gpt-oss:1:44:131072 gpt-oss:1:52:65536 gpt-oss:1:60:16384 gpt-oss:1:66:8192 gpt-oss:1:116:8192 gpt-oss:1:117:32768 gpt-oss:1:118:16384"
timeout 150 python3 tools/gqa_plan_ab.py --rounds 2 --variant v65 kv_pack=1 --out $OUT/logs/heldout.jsonl --batch $H > /dev/null 2>$OUT/logs/heldout.err; echo "heldout exit $?"
python3 - <<'PY' | tee $OUT/logs/heldout_summary.txt
import json, os
path = os.environ["OUT"] + "/logs/heldout.jsonl"
for line in open(path) if os.path.exists(path) else []:
    r = json.loads(line)
    a, b = min(r["planned"]), min(r["v65"])
    print(f'{r["batch"]:24s} v0.2.66 {a:8.1f} v0.2.65 {b:8.1f} ({100*(a/b-1):+5.1f}%)  {r["plan planned"]} {r["plan v65"]}')
PY
# The new plans against the fp32 reference (fresh random inputs), eager and from a CUDA graph.
timeout 120 python3 - <<'PY' 2>&1 | tee $OUT/logs/check.txt
import torch, splitkv
from splitkv.testing import check_against_reference, random_gqa_case
for batch, keys in ((48, 8192), (36, 32768), (116, 8192), (30, 8200)):
    lengths = [keys] * batch
    plan = splitkv.plan_decode(batch, keys, 64, kind="gqa", num_kv_heads=8, head_dim=64, page_size=16,
                               dtype=torch.bfloat16, device="cuda", seq_lens=lengths)
    case = random_gqa_case(lengths, 64, 8, 64, qlen=1, page_size=16, dtype=torch.bfloat16, device="cuda")
    ref = splitkv.reference.gqa_decode(*case.args)
    out, lse = splitkv.gqa_decode(*case.args, plan=plan, validate=True)
    eager = check_against_reference(out, lse, *ref)
    graph = torch.cuda.CUDAGraph()
    splitkv.gqa_decode(*case.args, plan=plan)
    torch.cuda.synchronize()
    with torch.cuda.graph(graph):
        gout, glse = splitkv.gqa_decode(*case.args, plan=plan)
    graph.replay(); torch.cuda.synchronize()
    replay = check_against_reference(gout, glse, *ref)
    print(f"{batch} x {keys}: splits {plan.num_splits} pack {plan.kv_pack}, relative error eager {eager:.2e} replay {replay:.2e}")
PY
tar -czf $OUT/logs.tgz -C $OUT logs && rm -rf $OUT/logs
