#!/usr/bin/env bash
# Turns exported models into test cases laid out like the ONNX backend tests, with ONNX Runtime's
# outputs as the expected ones:
#
#   tests/models/make_cases.sh MODELS_DIR OUTDIR [names...]
#
# gives OUTDIR/NAME/model.onnx (a symlink) and OUTDIR/NAME/test_data_set_0/{input,output}_N.pb for
# every MODELS_DIR/NAME.onnx (or the names given). Inputs are seeded random (tools/models/make_inputs.py)
# with batch=2, and seq=16 for the sequence models; the npm models' inputs are make_inputs.py's presets. Needs tools/ort installed
# (ONNXRUNTIME_NODE_INSTALL=skip npm install --prefix tools/ort).
set -euo pipefail

if (($# < 2)); then
  echo "usage: $0 MODELS_DIR OUTDIR [names...]" >&2
  exit 2
fi
models=$(cd "$1" && pwd)
out=$2
shift 2
root=$(cd "$(dirname "$0")/../.." && pwd)

names=("$@")
if ((${#names[@]} == 0)); then
  for f in "$models"/*.onnx; do
    [[ -e $f ]] && names+=("$(basename "$f" .onnx)")
  done
fi

status=0
for name in "${names[@]}"; do
  model=$models/$name.onnx
  case_dir=$out/$name
  data=$case_dir/test_data_set_0
  dims=(--dim batch=2)
  case $name in
    bert*) dims+=(--dim seq=16) ;;
    lstm | gru) dims+=(--dim seq=16) ;;
    ppocr_* | silero_*) dims=() ;;
  esac
  rm -rf "$case_dir"
  mkdir -p "$data"
  ln -s "$model" "$case_dir/model.onnx"
  start=$(date +%s%N)
  if /usr/bin/python3 "$root/tools/models/make_inputs.py" "$model" "$data" "${dims[@]}" >/dev/null &&
     node "$root/tools/ort/run.js" "$model" --inputs "$data" --outputs "$data"; then
    ms=$(( ($(date +%s%N) - start) / 1000000 ))
    printf '%s: %s outputs (%d.%ds)\n' "$name" "$(ls "$data" | grep -c '^output_')" $((ms / 1000)) $((ms % 1000 / 100))
  else
    echo "$name: FAILED" >&2
    status=1
  fi
done
exit $status
