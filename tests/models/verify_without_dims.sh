#!/usr/bin/env bash
# `kiln optimize -O2 --verify 2` with no --dim on models whose inputs have dynamic sizes that 1 does
# not fit (PaddleOCR's pools, Silero VAD's 256-wide STFT window): kiln chooses sizes that run, says
# which, and the verification passes. A --dim naming no dim of the model is an error listing the
# model's dims.
#
#   tests/models/verify_without_dims.sh KILN WORKDIR [names...]
set -euo pipefail
kiln=$1
work=$2
shift 2
root=$(cd "$(dirname "$0")/../.." && pwd)
names=("$@")
((${#names[@]})) || names=(ppocr_det ppocr_rec ppocr_cls silero_vad)
"$root/scripts/get-models.sh" "$work/models" "${names[@]}"
out=$work/verify_without_dims
mkdir -p "$out"
status=0
for name in "${names[@]}"; do
  if "$kiln" optimize "$work/models/$name.onnx" -o "$out/$name.onnx" -O2 --verify 2 >"$out/$name.txt" 2>&1 &&
     grep -q "dims chosen for the random sets" "$out/$name.txt"; then
    echo "$name: $(sed -n 's/^ *dims chosen for the random sets: \(.*\) (--[di][in].*/\1/p' "$out/$name.txt")"
  else
    echo "FAIL: $name:"; cat "$out/$name.txt"; status=1
  fi
done
# A dim the model does not have: exit 2 and one line naming the model's dims.
rc=0
"$kiln" optimize "$work/models/ppocr_cls.onnx" -o "$out/x.onnx" --verify 1 --dim batch=2 >/dev/null 2>"$out/err.txt" || rc=$?
if [[ $rc != 2 || $(wc -l <"$out/err.txt") != 1 ]] || ! grep -q "no input has a dim 'batch'; the model's symbolic dims: " "$out/err.txt"; then
  echo "FAIL: --dim batch=2 on ppocr_cls: exit $rc, stderr:"; cat "$out/err.txt"; status=1
else
  echo "--dim batch=2: $(cat "$out/err.txt")"
fi
exit $status
