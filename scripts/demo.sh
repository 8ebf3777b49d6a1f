#!/usr/bin/env bash
# The demo: export ResNet-50 (random weights) once, then show what kiln makes of it.
#
#   scripts/demo.sh BUILD       (`make demo` builds first, then runs this)
set -euo pipefail

build=${1:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
model=$root/build/models/resnet50.onnx

if [[ ! -f $model ]]; then
  echo "== exporting resnet50 to $model (first run only)"
  "$root/scripts/export-models.sh" "$root/build/models" resnet50
fi
echo "== $build/kiln inspect $model"
"$build/kiln" inspect "$model"
