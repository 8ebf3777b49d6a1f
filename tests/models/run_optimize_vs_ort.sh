#!/usr/bin/env bash
# kiln optimize -O2 on whole models, judged by ONNX Runtime: the optimized file loads and runs in
# ORT with the original's outputs (rtol 1e-3, atol 1e-4), and has no more nodes than ORT's own
# basic-level optimized graph of the same model. Uses the cases run_vs_ort.sh made (models
# exported from torch, and the npm models of tools/models/npm_models.tsv; kiln verifies on the
# case's inputs) and the ONNX "light" models (Caffe2 exports, vendored with the backend tests,
# their expected outputs included).
#
#   tests/models/run_optimize_vs_ort.sh KILN WORKDIR [names...]
set -euo pipefail
kiln=$1
work=$2
shift 2
root=$(cd "$(dirname "$0")/../.." && pwd)
names=("$@")
if ((${#names[@]} == 0)); then
  names=(resnet50 mobilenet_v2 efficientnet_b0 bert_base lstm gru mlp control_flow
         ppocr_det ppocr_rec ppocr_cls silero_vad silero_vad_legacy)
  for d in "$root"/tests/onnx-backend/light/light_*; do names+=("$(basename "$d")"); done
fi

source "$root/tests/lib/missing.sh"
"$root/tools/ort/install.sh" || missing "ONNX Runtime (onnxruntime-node from npm) cannot be installed"
status=0
for name in "${names[@]}"; do
  case_dir=$work/cases/$name
  [[ $name == light_* ]] && case_dir=$root/tests/onnx-backend/light/$name
  out=$work/optimized/$name
  rm -rf "$out"
  mkdir -p "$out/ort_outputs"
  if [[ ! -e $case_dir/model.onnx ]]; then
    echo "$name: no case in $case_dir (run tests/models/run_vs_ort.sh first)"
    status=1
    continue
  fi
  if ! "$kiln" optimize "$case_dir/model.onnx" -o "$out/model.onnx" -O2 --inputs "$case_dir/test_data_set_0" \
         --report "$out/report.json" > "$out/optimize.log" 2>&1; then
    echo "$name: kiln optimize failed:"; tail -5 "$out/optimize.log"
    status=1
    continue
  fi
  node "$root/tools/ort/bench.js" "$case_dir/model.onnx" --iterations 0 \
    --optimized-out "$out/ort_basic.onnx" > /dev/null
  node "$root/tools/ort/run.js" "$out/model.onnx" --inputs "$case_dir/test_data_set_0" \
    --outputs "$out/ort_outputs" > /dev/null
  /usr/bin/python3 "$root/tests/models/check_optimized.py" "$out/model.onnx" "$out/ort_basic.onnx" \
    "$case_dir/test_data_set_0" "$out/ort_outputs" || status=1
done
exit $status
