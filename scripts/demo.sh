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

step() {
  echo
  echo "== $*"
  "$@"
}

if [[ ! -f $model ]]; then
  echo "== exporting resnet50 to $model (first run only)"
  "$root/scripts/get-models.sh" "$root/build/models" resnet50
fi
step "$kiln" inspect "$model"
# -O2, then the original and the optimized model on 2 seeded inputs on the reference runtime.
step "$kiln" optimize "$model" -o "$out/resnet50.opt.onnx" -O2 --verify 2 --report "$out/optimize.html"
# kiln and ONNX Runtime back to back on the same inputs and threads; outputs compared.
if ! step "$root/bench/run.sh" --kiln "$kiln" --work "$out/bench" --models-dir "$root/build/models" \
  --models resnet50 --iterations 20 --warmup 3; then
  echo "(no side-by-side: ONNX Runtime is not available here; kiln alone, -O 0 against -O 2)"
  step "$kiln" bench "$model" --compare --iterations 20 --warmup 3 --html "$out/bench.html"
fi
step "$kiln" profile "$out/resnet50.opt.onnx" --runs 5 --top 8 --html "$out/profile.html" \
  --trace "$out/trace.json"
echo
echo "reports: $out/optimize.html (rewrites), $out/profile.html (where the time goes),"
echo "         $out/trace.json (chrome://tracing or ui.perfetto.dev)"
