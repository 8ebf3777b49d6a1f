#!/usr/bin/env bash
# A model above 2 GB end to end (issues 2 and 4):
#
#   tests/large/run_large.sh KILN WORKDIR
#
# 1. make_large_model.py writes a model with 2 GiB + 32 MiB of weights in external data.
# 2. kiln inspect loads it; kiln optimize -O2 --verify 2 writes it again WITHOUT --external-data:
#    the output passes protobuf's 2 GB limit, so kiln must switch to external data itself and say
#    so (a single file would be broken); the BatchNormalization is fused and the bias Muls folded.
# 3. kiln run of the original (reference runtime) and of the optimized model (fast engine) agree
#    (bench/compare_outputs.py).
# 4. ONNX Runtime (tools/ort, onnxruntime-node) loads the optimized model, external data and all,
#    and agrees too; skipped with a note where onnxruntime-node cannot be installed.
# Peak RSS of kiln optimize is printed (GNU time, where installed): the weights are memory-mapped,
# so it stays near one mapping of the 2 GB. Everything lives in WORKDIR, removed on exit.
set -euo pipefail
kiln=$1
work=$2
root=$(cd "$(dirname "$0")/../.." && pwd)

rm -rf "$work"
mkdir -p "$work"
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
# Runs a command, with its peak RSS in $work/rss_KB (GNU time, where installed) and its time in
# $work/ms (milliseconds).
measured() {
  local t0 rc=0
  t0=$(date +%s%N)
  if [[ -x /usr/bin/time ]]; then /usr/bin/time -f %M -o "$work/rss_KB" "$@" || rc=$?
  else echo 0 > "$work/rss_KB"; "$@" || rc=$?; fi
  echo $(( ($(date +%s%N) - t0) / 1000000 )) > "$work/ms"
  return $rc
}
# "peak RSS of WHAT: N MiB, S s" for the last measured command.
report() {
  local ms; ms=$(cat "$work/ms")
  printf 'peak RSS of %s: %d MiB, %d.%d s\n' "$1" $(($(cat "$work/rss_KB") / 1024)) $((ms / 1000)) $((ms % 1000 / 100))
}

start=$(date +%s)
measured /usr/bin/python3 "$root/tests/large/make_large_model.py" "$work/orig"
report "make_large_model.py"
data_bytes=$(stat -c %s "$work/orig/model.onnx.data")
echo "model: $(stat -c %s "$work/orig/model.onnx") bytes + $data_bytes bytes of external data"
((data_bytes > 2147483648)) || fail "the model's data is not above 2 GiB"

measured "$kiln" inspect "$work/orig/model.onnx" > "$work/inspect.txt" || fail "kiln inspect"
report "kiln inspect"
grep -i "param" "$work/inspect.txt" | head -3

mkdir -p "$work/opt"
measured "$kiln" optimize "$work/orig/model.onnx" -o "$work/opt/model.onnx" -O2 --verify 2 \
  > "$work/optimize.txt" || { cat "$work/optimize.txt"; fail "kiln optimize -O2 --verify 2"; }
cat "$work/optimize.txt"
report "kiln optimize -O2 --verify 2"
grep -q "as external data" "$work/optimize.txt" || fail "kiln optimize did not say it wrote external data"
[[ -f $work/opt/model.onnx.data ]] || fail "no $work/opt/model.onnx.data"
(($(stat -c %s "$work/opt/model.onnx") < 1048576)) || fail "the optimized model.onnx holds the weights"
grep -Eq '^  BatchNormalization +1 +0' "$work/optimize.txt" || fail "BatchNormalization not fused"
grep -Eq '^  Mul +9 +0' "$work/optimize.txt" || fail "the bias Muls were not folded"

# The original on the reference runtime, the optimized one on the fast engine (the default), so
# both engines load 2 GB of external data; the fast engine packs the weights (its own copy).
measured "$kiln" run "$work/orig/model.onnx" --engine reference --inputs "$work/orig/inputs" \
  --outputs "$work/want"
report "kiln run --engine reference (original)"
measured "$kiln" run "$work/opt/model.onnx" --inputs "$work/orig/inputs" --outputs "$work/got"
report "kiln run --engine fast (optimized)"
/usr/bin/python3 "$root/bench/compare_outputs.py" "$work/got" "$work/want" ||
  fail "the optimized model's outputs differ from the original's"

if "$root/tools/ort/install.sh"; then
  measured node "$root/tools/ort/run.js" "$work/opt/model.onnx" --inputs "$work/orig/inputs" --outputs "$work/ort"
  report "ONNX Runtime (optimized)"
  /usr/bin/python3 "$root/bench/compare_outputs.py" "$work/ort" "$work/want" ||
    fail "ONNX Runtime's outputs on the optimized model differ from kiln's on the original"
else
  echo "note: onnxruntime-node could not be installed; the ONNX Runtime check is skipped"
fi
echo "ok ($(($(date +%s) - start)) s)"
