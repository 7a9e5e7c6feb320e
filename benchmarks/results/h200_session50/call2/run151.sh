# Session 50, call 2 (session 48's run148.sh with its analysis moved before the ncu part, so a
# run cut short by the session's device time keeps it): session 48's call 1: (a) next runs (session 47) item 3's data: 32 seeded random gpt-oss qlen 1
# batches of 1-16 requests (tools/gqa_random_batches.py .old_src/v55 --models gpt-oss --qlens 1
# --requests 1 16, --keys 1000 16000 --seed 481 and --keys 16000 131072 --seed 482), the default
# (packed) against kv_pack=1 and packed on kv_pack=1's split count (p2s), 2 rounds; (b) item 5: the sliding window (127 keys left), 32-512
# requests x 4,096; (c) item 4: gpt-oss's GQA cascade v0.2.55 / v0.2.56 / v0.2.55 / v0.2.56;
# (d) item 1: ncu of gpt-oss's ragged stage 1, kv_pack 1 and 2.
# Predictions: docs/perf.md "Session 48: predictions first".
set -o pipefail
export PYTHONUNBUFFERED=1
mkdir -p $OUT/logs
A="gpt-oss:1:5:6048 gpt-oss:1:4:1630 gpt-oss:1:11:1773-9453 gpt-oss:1:12:2439-14251 gpt-oss:1:6:12845 gpt-oss:1:3:1254-6188 gpt-oss:1:6:7768 gpt-oss:1:11:8009 gpt-oss:1:13:1831-9292 gpt-oss:1:13:7266 gpt-oss:1:11:10881 gpt-oss:1:15:6328 gpt-oss:1:5:1731-11069 gpt-oss:1:4:5224 gpt-oss:1:13:6300 gpt-oss:1:11:1166-9712"
B="gpt-oss:1:4:87150 gpt-oss:1:8:42561 gpt-oss:1:16:87309 gpt-oss:1:14:91429 gpt-oss:1:5:52445 gpt-oss:1:12:14048-120566 gpt-oss:1:3:100427 gpt-oss:1:16:14118-127789 gpt-oss:1:10:83317 gpt-oss:1:6:19829 gpt-oss:1:3:103373 gpt-oss:1:10:19727-79742 gpt-oss:1:14:15768-125235 gpt-oss:1:10:18307 gpt-oss:1:14:116544 gpt-oss:1:12:16565"
timeout 300 python3 tools/gqa_plan_ab.py --rounds 2 --variant p1 kv_pack=1 --variant p2s kv_pack=2 num_splits=@p1 --out $OUT/logs/small.jsonl --batch $A $B > $OUT/logs/small.txt 2>&1; echo "small exit $?"
C="gpt-oss:1:1:4096 gpt-oss:1:1:8192 gpt-oss:1:2:4096 gpt-oss:1:4:2048 gpt-oss:1:1:16384 gpt-oss:1:3:3000 gpt-oss:1:2:12000 gpt-oss:1:8:2048"
timeout 120 python3 tools/gqa_plan_ab.py --rounds 2 --variant p1 kv_pack=1 --variant p2s kv_pack=2 num_splits=@p1 --out $OUT/logs/short.jsonl --batch $C > $OUT/logs/short.txt 2>&1; echo "short exit $?"
W=""; for n in 32 64 96 128 192 256 384 512; do W="$W gpt-oss:1:$n:4096"; done
timeout 80 python3 tools/gqa_plan_ab.py --rounds 2 --window-left 127 --variant p1 kv_pack=1 --out $OUT/logs/window.jsonl --batch $W > $OUT/logs/window.txt 2>&1; echo "window exit $?"
for r in 1 2; do
  for tree in .old_src/v55 .; do
    name=$( [ "$tree" = "." ] && echo new || echo old )
    PYTHONPATH=$PWD/$tree/src timeout 45 python3 -m splitkv bench --kind gqa --special --labels 8x131072 '48 in 6' --models gpt-oss --providers splitkv-prefix --out $OUT/logs/prefix_$name$r > $OUT/logs/prefix_${name}_$r.txt 2>&1; echo "prefix $name $r exit $?"
    grep "p50" $OUT/logs/prefix_${name}_$r.txt | cut -c1-110
    rm -rf $OUT/logs/prefix_$name$r
  done
done
python3 - <<'PY'
import json, os, math
out = os.environ["OUT"] + "/logs/"
for name in ("small", "short", "window"):
    logs = []
    for line in open(out + name + ".jsonl"):
        r = json.loads(line)
        a, b = min(r["planned"]), min(r["p1"])
        logs.append(math.log(a / b))
        c = f' packed on p1 splits {min(r["p2s"]):7.1f} {100*(min(r["p2s"])/b-1):+6.1f}%' if "p2s" in r else ""
        print(f'{r["batch"]:28s} packed {a:7.1f} unpacked {b:7.1f} {100*(a/b-1):+6.1f}%{c}  {r["plan planned"]} {r["plan p1"]}')
    print(f"{name}: packed/unpacked geomean {math.exp(sum(logs)/len(logs)):.3f} over {len(logs)}, packed faster {sum(l < 0 for l in logs)}")
# Item 3's candidate: uniform packs only where the packed split streams more than T keys of the
# longest request (max of the batch's lengths / packed splits); balanced plans keep the pack.
rows = []
for name in ("small", "short"):
    for line in open(out + name + ".jsonl"):
        r = json.loads(line)
        keys = r["batch"].split()[3]
        longest = int(keys.split("-")[-1])
        plan = r["plan planned"]
        rows.append((plan[0], longest / plan[1], min(r["planned"]), min(r["p1"])))
for t in (0, 96, 128, 160, 192, 256, 384, 512):
    pick = [p if s != "uniform" or k > t else u for s, k, p, u in rows]
    g = math.exp(sum(math.log(x / u) for x, (_, _, _, u) in zip(pick, rows)) / len(rows))
    worst = max(x / u for x, (_, _, _, u) in zip(pick, rows))
    print(f"rule T={t:4d}: geomean over unpacked {g:.4f}, worst {worst:.3f}")
PY
for p in 1 2; do
  STEP_OUT=$OUT/logs timeout 60 bash tools/ncu_kernel.sh ragged_pack$p "gqa_balanced_kernel" --kind gqa --model gpt-oss --qlen 1 --seq-lens 1 63 64 65 4096 4097 32768 131072 --kv-pack $p --calls 2 > $OUT/logs/ncu_ragged_pack$p.txt 2>&1; echo "ncu pack$p exit $?"
done
grep -h -E "Duration|DRAM Throughput|Registers Per|Achieved Occupancy|No Eligible|Issued Ipc|Executed Instructions  " $OUT/logs/ncu_ragged_pack*.txt
cd $OUT/logs && tar czf ncu_reps.tgz *.ncu-rep *_raw.csv && rm -f *.ncu-rep *_raw.csv
cd - > /dev/null
