#!/usr/bin/env bash
# The demo: export ResNet-50 (random weights, opset 17, dynamic batch) once, then the main job on
# it: inspect, optimize with proof, benchmark side by side with ONNX Runtime, profile. The reports
# land in BUILD/demo/.
#
#   scripts/demo.sh BUILD       (`make demo` builds first, then runs this)
set -euo pipefail

build=${1:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
model=$root/build/models/resnet50.onnx
out=$build/demo
kiln=$build/kiln
mkdir -p "$out"

# stage "WHAT" COMMAND...: says which of the demo's stages runs, and the command, then runs it.
stages=4
n=0
stage() {
  local what=$1
  shift
  n=$((n + 1))
  echo
  echo "== demo [$n/$stages] $what"
  echo "   \$ $*"
  "$@"
}

if [[ ! -f $model ]]; then
  stages=5
  n=1
  echo "== demo [1/$stages] exporting ResNet-50 from torch to $model (first run only: about a minute)"
  "$root/scripts/get-models.sh" "$root/build/models" resnet50
fi
stage "inspecting the model: inputs, outputs, ops, parameters, FLOPs" "$kiln" inspect "$model"
# -O2, then the original and the optimized model on 2 seeded inputs on the reference runtime.
stage "optimizing it (-O2) and proving the outputs did not change (--verify 2, on the reference runtime)" \
  "$kiln" optimize "$model" -o "$out/resnet50.opt.onnx" -O2 --verify 2 --report "$out/optimize.html"
# kiln and ONNX Runtime back to back on the same inputs and threads; outputs compared.
if ! stage "benchmarking kiln against ONNX Runtime on the same inputs and threads" \
  "$root/bench/run.sh" --kiln "$kiln" --work "$out/bench" --models-dir "$root/build/models" \
  --models resnet50 --iterations 20 --warmup 3; then
  echo "(no side-by-side: ONNX Runtime is not available here; kiln alone, -O 0 against -O 2)"
  n=$((n - 1))
  stage "benchmarking kiln alone, -O 0 against -O 2" \
    "$kiln" bench "$model" --compare --iterations 20 --warmup 3 --html "$out/bench.html"
fi
stage "profiling the optimized model: where the time goes, against this machine's peak" \
  "$kiln" profile "$out/resnet50.opt.onnx" --runs 5 --top 8 --html "$out/profile.html" \
  --trace "$out/trace.json"
echo
echo "reports: $out/optimize.html (rewrites), $out/profile.html (where the time goes),"
echo "         $out/trace.json (chrome://tracing or ui.perfetto.dev)"
