#!/usr/bin/env bash
# Differential test on whole models, exported from torch and made by other frameworks (PaddleOCR,
# Silero VAD from npm: tools/models/npm_models.tsv): kiln against ONNX Runtime on the same seeded
# inputs, at rtol 1e-3, atol 1e-4, with both of kiln's engines (fast, then reference).
#
#   tests/models/run_vs_ort.sh KILN WORKDIR [names...]
#
# Installs python3-torch and onnxruntime-node (npm) when missing; where they cannot be had the test
# fails (tests/lib/missing.sh: KILN_ALLOW_SKIP=1 makes it a skip).
set -euo pipefail
kiln=$1
work=$2
shift 2
root=$(cd "$(dirname "$0")/../.." && pwd)
names=("$@")
((${#names[@]})) || names=(resnet50 mobilenet_v2 efficientnet_b0 bert_base lstm gru mlp control_flow
                            densenet121 squeezenet1_1 shufflenet_v2_x1_0
                            ppocr_det ppocr_rec ppocr_cls silero_vad silero_vad_legacy
                            speech_lstm_gru unet_small)

source "$root/tests/lib/missing.sh"
"$root/tools/ort/install.sh" || missing "ONNX Runtime (onnxruntime-node from npm) cannot be installed"
"$root/scripts/get-models.sh" "$work/models" "${names[@]}"
"$root/tests/models/make_cases.sh" "$work/models" "$work/cases" "${names[@]}"
status=0
for engine in fast reference; do
  echo "== kiln test --engine $engine"
  "$kiln" test --engine "$engine" --rtol 1e-3 --atol 1e-4 --timeout 600 "${names[@]/#/$work/cases/}" ||
    status=1
done
exit $status
