# Session 56's call 7 (carry run168.sh): v0.2.66's new plans (gpt-oss packed on the unpacked
# one split's grid) under compute-sanitizer memcheck, with caching off so that it sees every
# allocation's bounds: a last page partly filled (8,200 keys) a 3-stage build (30, 26 requests) and 2-stage ones (66, 116).
set -o pipefail
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src PYTORCH_NO_CUDA_MEMORY_CACHING=1
mkdir -p $OUT/logs
cat > /tmp/probe.py <<'PY'
import torch, splitkv
from splitkv.testing import check_against_reference, random_gqa_case
for batch, keys in ((30, 8200), (26, 8192), (66, 8200), (116, 8192)):
    lengths = [keys] * batch
    plan = splitkv.plan_decode(batch, keys, 64, kind="gqa", num_kv_heads=8, head_dim=64, page_size=16,
                               dtype=torch.bfloat16, device="cuda", seq_lens=lengths)
    case = random_gqa_case(lengths, 64, 8, 64, qlen=1, page_size=16, dtype=torch.bfloat16, device="cuda")
    out, lse = splitkv.gqa_decode(*case.args, plan=plan, validate=True)
    error = check_against_reference(out, lse, *splitkv.reference.gqa_decode(*case.args))
    print(f"{batch} x {keys}: splits {plan.num_splits} pack {plan.kv_pack} stages {plan.split_num_stages}, relative error {error:.2e}")
PY
timeout 170 compute-sanitizer --tool memcheck --error-exitcode 9 python3 /tmp/probe.py > $OUT/logs/memcheck.txt 2>&1; echo "memcheck exit $?" | tee -a $OUT/logs/memcheck.txt
grep -v "^=========\s*$" $OUT/logs/memcheck.txt | tail -6
