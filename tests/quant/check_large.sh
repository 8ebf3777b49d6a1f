#!/usr/bin/env bash
# The big-model figures of docs/quantization.md, outside `make test` (minutes, GBs): ResNet-50
# static int8 (per channel, calibrated on 16 seeded random sets) and BERT-base dynamic int8
# (seq 128), each measured on held-out input sets: cosine of every output with the float model
# (kiln and ONNX Runtime running the quantized file), the file sizes, and the p50 latencies of
# kiln (`kiln bench`) and ONNX Runtime (tools/ort/bench.js) on the float and quantized files.
#
#   tests/quant/check_large.sh KILN WORKDIR [THREADS [names...]]
#       (names: resnet50 bert_base, and their bf16 forms resnet50_bf16 bert_base_bf16)
#
# Calibration and evaluation sets come from one distribution (make_sets.py: normal(0, 1) floats,
# seeds 0.. for calibration, 1000.. held out for evaluation); random inputs say little about the
# accuracy on real data, but calibrating on one distribution and measuring on another says less.
set -euo pipefail
kiln=$(realpath "$1")
work=$(mkdir -p "$2" && cd "$2" && pwd)
threads=${3:-2}
shift $(($# < 3 ? $# : 3))
names=("$@")
((${#names[@]})) || names=(resnet50 bert_base)
root=$(cd "$(dirname "$0")/../.." && pwd)
here=$root/tests/quant
py=/usr/bin/python3
source "$root/tests/lib/missing.sh"
"$root/tools/ort/install.sh" || missing "ONNX Runtime (onnxruntime-node from npm) cannot be installed"
"$root/scripts/get-models.sh" "$work/models" "${names[@]%_bf16}"
cd "$work"
status=0
iters=${ITERATIONS:-10}

p50() { $py -c 'import json,sys; print("%.2f" % json.loads(sys.stdin.read().strip().splitlines()[-1])["p50_ms"])'; }

measure() {
  local name=$1 model=$2 quantized=$3 set=$4
  echo "== $name: outputs on $set"
  "$kiln" run "$model" --inputs "$set" --outputs "out/$name/float" >/dev/null
  "$kiln" run "$quantized" --inputs "$set" --outputs "out/$name/kiln" >/dev/null
  node "$root/tools/ort/run.js" "$quantized" --inputs "$set" --outputs "out/$name/ort" >/dev/null
  $py "$here/compare.py" "$name kiln vs float" "out/$name/kiln" "out/$name/float" || status=1
  $py "$here/compare.py" "$name ORT vs float " "out/$name/ort" "out/$name/float" || status=1
  $py "$here/compare.py" "$name kiln vs ORT  " "out/$name/kiln" "out/$name/ort" || status=1
  echo "== $name: latency, $threads threads, $iters iterations (p50 ms)"
  local kf kq of oq
  kf=$("$kiln" bench "$model" --inputs "$set" --threads "$threads" --iterations "$iters" --warmup 2 --json 2>/dev/null | p50)
  kq=$("$kiln" bench "$quantized" --inputs "$set" --threads "$threads" --iterations "$iters" --warmup 2 --json 2>/dev/null | p50)
  of=$(node "$root/tools/ort/bench.js" "$model" --inputs "$set" --threads "$threads" --iterations "$iters" --warmup 2 --json | p50)
  oq=$(node "$root/tools/ort/bench.js" "$quantized" --inputs "$set" --threads "$threads" --iterations "$iters" --warmup 2 --json | p50)
  printf '%-10s %12s %12s %12s %12s %10s %10s\n' "" "kiln fp32" "kiln quant" "ORT fp32" "ORT quant" "MB fp32" "MB quant"
  printf '%-10s %12s %12s %12s %12s %10.1f %10.1f\n' "$name" "$kf" "$kq" "$of" "$oq" \
    "$(($(stat -c %s "$model")))e-6" "$(($(stat -c %s "$quantized")))e-6"
}

resnet50() {
  $py "$here/make_sets.py" models/resnet50.onnx sets/resnet50_calib 16 --seed 0
  $py "$here/make_sets.py" models/resnet50.onnx sets/resnet50 2 --seed 1000
  "$kiln" quantize models/resnet50.onnx -o resnet50_int8.onnx --mode static --per-channel \
    --calibrate sets/resnet50_calib --eval sets/resnet50 --threads "$threads" --report resnet50_int8.json
  measure resnet50 models/resnet50.onnx resnet50_int8.onnx sets/resnet50/test_data_set_0
}

bert_base() {
  $py "$here/make_sets.py" models/bert_base.onnx sets/bert_base 2 --seed 1000 --dim batch=1 --dim seq=128
  "$kiln" quantize models/bert_base.onnx -o bert_base_int8.onnx --mode dynamic --eval sets/bert_base \
    --threads "$threads" --latency-runs 2 --report bert_base_int8.json
  measure bert_base models/bert_base.onnx bert_base_int8.onnx sets/bert_base/test_data_set_0
}

# bf16 weights (--mode bf16's default form) of the same models: names resnet50_bf16, bert_base_bf16.
resnet50_bf16() {
  $py "$here/make_sets.py" models/resnet50.onnx sets/resnet50 2 --seed 1000
  "$kiln" quantize models/resnet50.onnx -o resnet50_bf16.onnx --mode bf16 --eval sets/resnet50 \
    --threads "$threads" --report resnet50_bf16.json
  measure resnet50_bf16 models/resnet50.onnx resnet50_bf16.onnx sets/resnet50/test_data_set_0
}

bert_base_bf16() {
  $py "$here/make_sets.py" models/bert_base.onnx sets/bert_base 2 --seed 1000 --dim batch=1 --dim seq=128
  "$kiln" quantize models/bert_base.onnx -o bert_base_bf16.onnx --mode bf16 --eval sets/bert_base \
    --threads "$threads" --latency-runs 2 --report bert_base_bf16.json
  measure bert_base_bf16 models/bert_base.onnx bert_base_bf16.onnx sets/bert_base/test_data_set_0
}

for name in "${names[@]}"; do
  "$name"
done
exit $status
