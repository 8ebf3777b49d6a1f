#!/usr/bin/env bash
# kiln's aarch64 runtime on real models (docs/artifact.md, "aarch64"): each model compiled here
# for aarch64-linux, run by the cross-built kiln-run under qemu-aarch64 (scripts/run-aarch64.sh),
# its outputs against the x86 `kiln run` of the .onnx on the same seeded inputs (bench/compare_outputs.py,
# rtol 1e-3, atol 1e-4: another ISA's kernels and another oneDNN build round differently). Then
# the refusals, each one line and exit code 2: the aarch64 artifact by the x86 kiln, an x86
# artifact by kiln-run.
#
#   tests/aarch64/run_artifacts.sh KILN WORKDIR [names...]     (default: mlp mobilenet_v2 bert_tiny)
#
# Needs WORKDIR/models/NAME.onnx (the aarch64_models_get fixture) and build-aarch64/build/kiln-run
# (the aarch64_runtime_build fixture). Batch 1, one run each: qemu is 10-50x slower than the CPU.
set -euo pipefail
kiln=$1
work=$2
shift 2
root=$(cd "$(dirname "$0")/../.." && pwd)
names=("$@")
((${#names[@]})) || names=(mlp mobilenet_v2 bert_tiny)
for tool in aarch64-linux-gnu-g++ qemu-aarch64; do
  command -v "$tool" >/dev/null || { echo "skip: $tool is missing (scripts/install-deps.sh)"; exit 77; }
done
compare="/usr/bin/python3 $root/bench/compare_outputs.py"
run_arm="$root/scripts/run-aarch64.sh"
out=$work/aarch64
mkdir -p "$out"

status=0
for name in "${names[@]}"; do
  model=$work/models/$name.onnx
  if [[ ! -f $model ]]; then
    echo "FAIL $name: no model at $model (the aarch64_models_get fixture exports it)"; status=1; continue
  fi
  dims=(--dim batch=1)
  shapes=(--shapes batch=1)
  if [[ $name == bert* ]]; then dims+=(--dim seq=16); shapes+=(--shapes seq=16); fi
  in=$out/$name.in art=$out/$name.aarch64.kiln log=$out/$name.log
  rm -rf "$in" "$out/$name.arm-out" "$out/$name.x86-out"
  /usr/bin/python3 "$root/tools/models/make_inputs.py" "$model" "$in" "${dims[@]}" >"$log"
  if ! "$kiln" compile "$model" --target aarch64-linux -o "$art" "${shapes[@]}" >>"$log" 2>&1; then
    echo "FAIL $name: kiln compile --target aarch64-linux"; cat "$log"; status=1; continue
  fi
  "$kiln" run "$model" --inputs "$in" --outputs "$out/$name.x86-out" >>"$log" 2>&1
  start=$(date +%s%N)
  if ! "$run_arm" "$art" --inputs "$in" --outputs "$out/$name.arm-out" --threads 2 >>"$log" 2>&1; then
    echo "FAIL $name: kiln-run under qemu-aarch64"; cat "$log"; status=1; continue
  fi
  ms=$((($(date +%s%N) - start) / 1000000))
  if ! msg=$($compare "$out/$name.arm-out" "$out/$name.x86-out"); then
    echo "FAIL $name: aarch64 vs x86: $msg"; status=1; continue
  fi
  err=$(/usr/bin/python3 -c 'import json,sys; print(json.loads(sys.argv[1])["max_abs_error"])' "$msg")
  echo "ok   $name: aarch64 (qemu, $ms ms) = x86 kiln run (max abs error $err; $(du -h "$art" | cut -f1))"
done

# The refusals. The aarch64 artifact on x86 (kiln run) and an x86 artifact on aarch64 (kiln-run).
refused() {  # NAME EXPECTED_TEXT COMMAND...
  local what=$1 want=$2 rc=0
  shift 2
  "$@" >/dev/null 2>"$out/refused.err" || rc=$?
  if ((rc != 2)) || (($(wc -l <"$out/refused.err") != 1)) || ! grep -q -- "$want" "$out/refused.err"; then
    echo "FAIL $what: exit $rc, wanted 2 and one line with '$want':"; cat "$out/refused.err"; status=1
  else
    echo "ok   $what: exit 2, one line: $(cat "$out/refused.err")"
  fi
}
first=${names[0]}
if [[ -f $out/$first.aarch64.kiln ]]; then
  refused "aarch64 artifact on x86" "this machine is x86_64" \
    "$kiln" run "$out/$first.aarch64.kiln" --inputs "$out/$first.in" --outputs "$out/refused.out"
  x86_art=$out/$first.x86-64.kiln
  if "$kiln" compile "$work/models/$first.onnx" --target x86-64 -o "$x86_art" --shapes batch=1 >/dev/null 2>&1; then
    refused "x86-64 artifact on aarch64" "this machine is aarch64" \
      "$run_arm" "$x86_art" --inputs "$out/$first.in" --outputs "$out/refused.out"
  else
    echo "FAIL: kiln compile --target x86-64 of $first"; status=1
  fi
  refused "an .onnx given to kiln-run" "not a compiled artifact" \
    "$run_arm" "$work/models/$first.onnx" --inputs "$out/$first.in" --outputs "$out/refused.out"
fi
exit $status
