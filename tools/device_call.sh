# Sourced by a device call's script (`benchmarks/results/*/runNNN.sh`, run from the checkout's
# root): the start every call shares and the helpers its parts use.
#   $L        the folder of the call's logs (under $OUT), with rev.txt and gpu_env.txt in it
#             (rev.txt: the copy's HEAD, which may be older than the working tree the call
#             ran, so the tree's version and a digest of its src/ beside it)
#   fits N P  true when part P's N seconds still fit before the call's CALL_LIMIT (580 s)
#   ab NAME LIMIT ARGS...  tools/gqa_plan_ab.py --rounds 2 ARGS, its summary, its wrong results
#   bench NAME LIMIT ARGS...  `splitkv bench ARGS --out $L/NAME --tag NAME`, its log in
#             $L/NAME.txt and its shape and p50 rows printed as they come (a call cut at the
#             device's limit still returns the rows it printed)
#   memcheck LIMIT [PART ...]  tools/memcheck.sh (every part of the memcheck subset, each its
#             own sanitizer process, all at once; or the parts named), its log in
#             $L/memcheck.txt (one process for the whole subset did not finish in 470 s cold:
#             session 76's run245)
#   src_variant NAME FILE SED [FILE SED ...]  a copy of src/ at /tmp/NAME/src with each sed
#             expression applied to its file (a path under src/splitkv/kernels/), each edit's
#             changed lines printed (an A/B of a compile-time constant: PYTHONPATH=/tmp/NAME/src
#             for `splitkv bench` and every tool, which put the checkout's src/ behind
#             PYTHONPATH's trees: tools/checkout_src.py)
#   issue5_on_h200  where the call got an H200: issue 5's standing (12 heads, page 64, qlen
#             1 / 2 / 4, the Triton peer beside it) and the shared-prefix batches (~300 s),
#             the figures the issue is judged on, and true; false on another GPU
#   pack_logs  $L as $OUT/logs.tgz: the device tool returns at most 8 files a call
set -o pipefail
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
L=$OUT/logs
mkdir -p "$L"
# The copy's HEAD may be older than its tree: the digest of src/ names the tree (the same
# line run in a checkout gives the same digest).
src_digest=$(find src -name '*.py' | LC_ALL=C sort | xargs cat | sha1sum | cut -c1-12)
{ git rev-parse HEAD; grep -m1 '^version' pyproject.toml; echo "src $src_digest"; } > "$L/rev.txt"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$L/gpu_env.txt"
CALL_LIMIT=${CALL_LIMIT:-580}

fits() {
  [ $((SECONDS + $1)) -lt "$CALL_LIMIT" ] || { echo "skipped $2 at ${SECONDS} s"; return 1; }
}

ab() {
  local name=$1 limit=$2
  shift 2
  timeout "$limit" python3 tools/gqa_plan_ab.py --rounds 2 "$@" --out "$L/$name.jsonl" \
    > /dev/null 2> "$L/$name.err"
  echo "$name exit $? at ${SECONDS} s"
  python3 tools/ab_summary.py "$L/$name.jsonl" --plans | tee "$L/${name}_summary.txt"
  grep WRONG "$L/$name.err" || echo "$name: every variant within the tolerance"
}

bench() {
  local name=$1 limit=$2
  shift 2
  timeout "$limit" python3 -m splitkv bench "$@" --out "$L/$name" --tag "$name" 2>&1 \
    | tee "$L/$name.txt" | grep --line-buffered -E "^\[|p50|unsupported|wrong|crashed"
  echo "$name exit ${PIPESTATUS[0]} at ${SECONDS} s"  # the bench's own, not grep's
}

memcheck() {
  local limit=$1
  shift
  timeout "$limit" bash tools/memcheck.sh "$@" > "$L/memcheck.txt" 2>&1
  echo "memcheck exit $? at ${SECONDS} s"
  tail -n 3 "$L/memcheck.txt"
}

src_variant() {
  local name=$1
  shift
  rm -rf "/tmp/$name" && mkdir -p "/tmp/$name" && cp -r src "/tmp/$name/"
  while [ $# -ge 2 ]; do
    local file=splitkv/kernels/$1
    sed -i "$2" "/tmp/$name/src/$file"
    if cmp -s "src/$file" "/tmp/$name/src/$file"; then
      echo "src_variant $name: $1 unchanged"
    else
      diff "src/$file" "/tmp/$name/src/$file" | grep "^>"
    fi
    shift 2
  done
}

issue5_on_h200() {
  grep -q H200 "$L/gpu_env.txt" || return 1
  fits 150 standing && bench standing 170 --rep-ms 20 --providers splitkv,triton-peer \
    --special --labels ragged 1x --heads 12 --qlen 1 2 4
  fits 110 prefix && bench prefix 130 --rep-ms 20 --providers splitkv,splitkv-prefix \
    --special --labels 8x327600 48 --heads 12 --qlen 1
  return 0  # it ran, whatever the parts' own exits (a caller may branch on it)
}

pack_logs() {
  tar -czf "$OUT/logs.tgz" -C "$OUT" logs && rm -rf "$L"
}
