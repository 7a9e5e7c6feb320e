# Session 40, call 7: issue 5's GQA ragged / one-long batches at v0.2.44 beside the Triton peer
# (its best split count) and the read ceiling, one run; qlen 1 (the peer decodes one token).
set -o pipefail
export PYTHONUNBUFFERED=1
mkdir -p $OUT/logs
timeout 170 python3 -m splitkv bench --kind gqa --special --labels ragged 1x --models llama3-8b gpt-oss qwen-64-8 llama3-70b-tp8 --qlen 1 --providers splitkv,triton-peer --out $OUT/logs/standing > $OUT/logs/standing.txt 2>&1; echo "exit $?"
grep -E "^\[|splitkv|peer" $OUT/logs/standing.txt | cut -c1-150 | tail -30
