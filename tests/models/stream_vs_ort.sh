#!/usr/bin/env bash
# The variable-length stream (`kiln bench --vary`, tools/ort/bench.js --vary) on BERT tiny: kiln's
# outputs on the stream agree with the reference engine's while plans are made, reused and evicted
# (--max-plans 3 over lengths 1..8; and lengths 1..200 with their own plans), and SqueezeNet's at
# batches 1..4 (weights let go of once packed come back for new plans); both runtimes draw the
# same lengths for the same seed (splitmix64, pinned here); a dim the model lacks or a bad range
# is one line and exit 2 on both sides. Not a benchmark: the times are not judged.
#
#   tests/models/stream_vs_ort.sh KILN WORKDIR
set -euo pipefail
kiln=$1
work=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
py=/usr/bin/python3
"$root/scripts/get-models.sh" "$work/models" bert_tiny
"$root/tools/ort/install.sh" || { echo "stream_vs_ort: ONNX Runtime is not available" >&2; exit 1; }
model=$work/models/bert_tiny.onnx
out=$work/stream
mkdir -p "$out"
status=0
fail() { echo "FAIL: $*"; status=1; }

# 1. Lengths 1..8, 3 plans kept: reuse and eviction, every run checked against the reference.
"$kiln" bench "$model" --vary seq=1..8 --iterations 14 --warmup 2 --max-plans 3 --check 16 \
  --threads 2 --json >"$out/small.json" 2>"$out/small.err" || fail "kiln bench --vary seq=1..8: $(tail -1 "$out/small.err")"
# 2. Lengths 1..200 (BERT tiny's positions go to 512), a plan each.
"$kiln" bench "$model" --vary seq=1..200 --iterations 6 --warmup 1 --check 7 --seed 7 \
  --threads 2 --json >"$out/long.json" 2>"$out/long.err" || fail "kiln bench --vary seq=1..200: $(tail -1 "$out/long.err")"
node "$root/tools/ort/bench.js" "$model" --vary seq=1..8 --iterations 14 --warmup 2 --threads 2 \
  --json >"$out/ort_small.json" 2>"$out/ort_small.err" || fail "bench.js --vary: $(tail -1 "$out/ort_small.err")"
node "$root/tools/ort/bench.js" "$model" --vary seq=1..200 --iterations 6 --warmup 1 --seed 7 \
  --threads 2 --json >"$out/ort_long.json" 2>"$out/ort_long.err" || fail "bench.js --vary: $(tail -1 "$out/ort_long.err")"
if ((status == 0)); then
  "$py" - "$out" <<'PY' || status=1
import json, sys
out = sys.argv[1]
load = lambda name: json.load(open(f"{out}/{name}.json"))
ok = True
def check(cond, what):
    global ok
    if not cond:
        print("FAIL:", what)
        ok = False
small, long_, ort_small, ort_long = load("small"), load("long"), load("ort_small"), load("ort_long")
# splitmix64 from seed 0 over 1..8: the first 16 draws (2 warmup + 14 timed), pinned.
expected = [8, 5, 8, 5, 4, 3, 2, 5, 4, 7, 2, 7, 4, 8, 2, 4]
check([r[0] for r in small["stream"]] == expected[2:], f"kiln's draws {[r[0] for r in small['stream']]}")
check([r[0] for r in ort_small["stream"]] == expected[2:], f"bench.js's draws {[r[0] for r in ort_small['stream']]}")
check([r[0] for r in long_["stream"]] == [r[0] for r in ort_long["stream"]], "seed 7: the two sides drew differently")
for name, j, runs in (("small", small, 16), ("long", long_, 7)):
    check(j["checked_runs"] == runs, f"{name}: {j['checked_runs']} runs checked, not {runs}")
p = small["plans"]
check(p["made"] + p["reused"] == 14, f"small: made {p['made']} + reused {p['reused']} != 14 timed runs")
check(p["reused"] > 0 and p["evicted"] > 0 and p["kept"] == 3, f"small: plans {p}")
check(sum(1 for r in small["stream"] if r[2]) == p["made"], "small: runs marked as planning != plans made")
print(f"stream: kiln p50 {small['p50_ms']:.3f} ms, plans {p}; long: plans {long_['plans']}")
sys.exit(0 if ok else 1)
PY
fi

# 3. A conv net at a new batch every few runs, each checked: SqueezeNet 1.1's weights, let go of
# once packed, come back exactly for a plan whose choices differ (Winograd or direct per batch).
# Winograd's transformed weights cannot be unpacked: letting go of the plain ones stopped
# `kiln bench resnet50.onnx --vary batch=1..4` with an internal error.
"$root/scripts/get-models.sh" "$work/models" squeezenet1_1
"$kiln" bench "$work/models/squeezenet1_1.onnx" --vary batch=1..4 --iterations 8 --warmup 0 --check 8 \
  --max-plans 2 --threads 2 >"$out/cnn.txt" 2>&1 || fail "kiln bench squeezenet1_1 --vary batch=1..4: $(tail -1 "$out/cnn.txt")"

# 4. Bad input: one line, exit 2, on both sides.
expect_2() {  # what, command...
  local what=$1 rc=0
  shift
  "$@" >/dev/null 2>"$out/err.txt" || rc=$?
  if [[ $rc != 2 || $(wc -l <"$out/err.txt") != 1 ]] || ! grep -q -- "$what" "$out/err.txt"; then
    fail "$* : exit $rc, stderr:"; cat "$out/err.txt"
  else
    echo "$(basename "$1"): $(cat "$out/err.txt")"
  fi
}
expect_2 "no input has a dim 'tokens'; the model's symbolic dims: batch, seq" \
  "$kiln" bench "$model" --vary tokens=1..8 --iterations 1
expect_2 "1 <= LO <= HI" "$kiln" bench "$model" --vary seq=9..8 --iterations 1
expect_2 "expected NAME=LO..HI" "$kiln" bench "$model" --vary seq=8 --iterations 1
expect_2 "no input has a dim 'tokens'" node "$root/tools/ort/bench.js" "$model" --vary tokens=1..8 --iterations 1
expect_2 "1 <= LO <= HI" node "$root/tools/ort/bench.js" "$model" --vary seq=0..8 --iterations 1
exit $status
