#!/usr/bin/env bash
# kiln-run, the runtime alone, on x86: ONNX backend cases compiled into artifacts (numbers, int4,
# strings, optionals), each run by kiln-run and by `kiln run` on the same artifact: the same
# output files, byte for byte (both write them through spec/tensor_file.h, which TensorFile.* holds
# to protobuf). Then a damaged input file and an .onnx, each refused with exit code 2 and one line.
#
#   tests/runtime/kiln_run_vs_kiln.sh KILN_RUN KILN WORKDIR
set -euo pipefail
kiln_run=$1
kiln=$2
work=$3
root=$(cd "$(dirname "$0")/../.." && pwd)
cases=$root/tests/onnx-backend/node
rm -rf "$work"
mkdir -p "$work"
status=0
for c in test_relu test_gemm_all_attributes test_dequantizelinear_int4 test_string_concat \
         test_optional_get_element_tensor; do
  in=$cases/$c/test_data_set_0
  if ! "$kiln" compile "$cases/$c/model.onnx" -o "$work/$c.kiln" >"$work/$c.log" 2>&1; then
    echo "FAIL $c: kiln compile"; cat "$work/$c.log"; status=1; continue
  fi
  "$kiln" run "$work/$c.kiln" --inputs "$in" --outputs "$work/$c.kiln-out" >/dev/null
  if ! "$kiln_run" "$work/$c.kiln" --inputs "$in" --outputs "$work/$c.run-out" >/dev/null 2>"$work/$c.err"; then
    echo "FAIL $c: kiln-run: $(cat "$work/$c.err")"; status=1; continue
  fi
  for f in "$work/$c.kiln-out"/*.pb; do
    if ! cmp -s "$f" "$work/$c.run-out/$(basename "$f")"; then
      echo "FAIL $c: $(basename "$f") differs between kiln run and kiln-run"; status=1; continue 2
    fi
  done
  echo "ok   $c: kiln-run wrote what kiln run wrote ($(ls "$work/$c.kiln-out" | wc -l) files)"
done

refused() {  # WHAT EXPECTED_TEXT ARGS...
  local what=$1 want=$2 rc=0
  shift 2
  "$kiln_run" "$@" >/dev/null 2>"$work/refused.err" || rc=$?
  if ((rc != 2)) || (($(wc -l <"$work/refused.err") != 1)) || ! grep -q -- "$want" "$work/refused.err"; then
    echo "FAIL $what: exit $rc, wanted 2 and one line with '$want':"; cat "$work/refused.err"; status=1
  else
    echo "ok   $what: $(cat "$work/refused.err")"
  fi
}
mkdir -p "$work/damaged"
head -c 7 "$cases/test_relu/test_data_set_0/input_0.pb" >"$work/damaged/input_0.pb"
refused "a truncated input file" "is not a valid serialized onnx.TensorProto" \
  "$work/test_relu.kiln" --inputs "$work/damaged" --outputs "$work/refused.out"
refused "an .onnx" "not a compiled artifact" \
  "$cases/test_relu/model.onnx" --inputs "$cases/test_relu/test_data_set_0" --outputs "$work/refused.out"
exit $status
