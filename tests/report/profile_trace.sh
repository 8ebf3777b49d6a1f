#!/usr/bin/env bash
# Issue 6's done-when on models exported from torch: `kiln profile --trace` has an event for every
# executed node in every run, and the depth-0 node events sum to within 5% of the run latency.
#
#   tests/report/profile_trace.sh KILN WORKDIR
#
# Exports a small CNN (tests/report/export_small_cnn.py) and the MLP and control-flow models
# (scripts/export-models.sh). Exits 77 (skipped) only when torch cannot be had.
set -euo pipefail
kiln=$1
work=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$work/models" "$work/report"

if ! "$root/scripts/export-models.sh" "$work/models" mlp control_flow; then
  echo "cannot export models from torch: skipped"; exit 77
fi
[[ -f $work/models/small_cnn.onnx ]] ||
  /usr/bin/python3 -W ignore "$root/tests/report/export_small_cnn.py" "$work/models/small_cnn.onnx"

runs=4
check() {  # name, coverage tolerance, extra kiln flags...
  local name=$1 tolerance=$2
  shift 2
  echo "== $name"
  "$kiln" profile "$work/models/$name.onnx" --engine reference --runs $runs --warmup 1 \
    --trace "$work/report/$name.trace.json" --json "$@" > "$work/report/$name.json"
  /usr/bin/python3 "$root/tests/report/check_trace.py" "$work/report/$name.trace.json" \
    "$work/models/$name.onnx" --runs $runs --coverage "$tolerance"
}
check small_cnn 0.05 --dim batch=4
check mlp 0.05 --dim batch=64
# If and Loop run their bodies as depth-1 nodes; depth-0 events still cover each run.
check control_flow 0.05 --dim batch=64
