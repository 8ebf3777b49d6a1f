#!/usr/bin/env bash
# Compiled artifacts against the .onnx and ONNX Runtime (docs/artifact.md): every model compiled
# for every x86 target this CPU runs, then `kiln run` on the artifact gives the outputs `kiln run`
# gives on the .onnx under the same ISA caps (bit for bit) and ONNX Runtime's (rtol 1e-3, atol
# 1e-4; the cases of tests/models/make_cases.sh: batch 2, BERT at seq 16); and the v4 artifact,
# under KILN_CPU_ISA=avx2, is refused with exit code 2 and one line.
#
#   tests/artifact/run_artifacts.sh KILN WORKDIR [names...]
#
# Needs WORKDIR/cases (the models_vs_onnxruntime fixture makes them).
set -euo pipefail
kiln=$1
work=$2
shift 2
root=$(cd "$(dirname "$0")/../.." && pwd)
names=("$@")
((${#names[@]})) || names=(mlp resnet50 mobilenet_v2 bert_base)
compare="/usr/bin/python3 $root/bench/compare_outputs.py"
out=$work/artifacts
mkdir -p "$out"

# The caps under which the .onnx runs the kernels an artifact for the target runs.
caps() {
  case $1 in
    x86-64) echo "KILN_CPU_ISA=scalar DNNL_MAX_CPU_ISA=SSE41" ;;
    x86-64-v3) echo "KILN_CPU_ISA=avx2 DNNL_MAX_CPU_ISA=AVX2" ;;
    *) echo "" ;;
  esac
}

status=0
for name in "${names[@]}"; do
  case_dir=$work/cases/$name/test_data_set_0
  if [[ ! -d $case_dir ]]; then
    echo "FAIL $name: no case at $case_dir (the models_vs_onnxruntime fixture makes it)"
    status=1
    continue
  fi
  shapes=(--shapes batch=2)
  [[ $name == bert* ]] && shapes+=(--shapes seq=16)
  for target in x86-64 x86-64-v3 x86-64-v4; do
    art=$out/$name.$target.kiln
    log=$out/$name.$target.log
    if ! "$kiln" compile "$work/models/$name.onnx" --target "$target" -o "$art" "${shapes[@]}" \
        --runs 2 >"$log" 2>&1; then
      echo "FAIL $name $target: kiln compile"; cat "$log"; status=1; continue
    fi
    if grep -q "does not run here" "$log"; then
      echo "skip $name $target: this CPU cannot run it"; continue
    fi
    rm -rf "$out/$name.$target.out" "$out/$name.$target.onnx-out"
    if ! "$kiln" run "$art" --inputs "$case_dir" --outputs "$out/$name.$target.out" >>"$log" 2>&1; then
      echo "FAIL $name $target: kiln run on the artifact"; cat "$log"; status=1; continue
    fi
    env $(caps "$target") "$kiln" run "$work/models/$name.onnx" --inputs "$case_dir" \
      --outputs "$out/$name.$target.onnx-out" >>"$log" 2>&1
    if ! msg=$($compare "$out/$name.$target.out" "$out/$name.$target.onnx-out" --exact); then
      echo "FAIL $name $target: artifact vs .onnx: $msg"; status=1; continue
    fi
    if ! msg=$($compare "$out/$name.$target.out" "$case_dir"); then
      echo "FAIL $name $target: artifact vs ONNX Runtime: $msg"; status=1; continue
    fi
    echo "ok   $name $target ($(du -h "$art" | cut -f1); $(grep -o 'session creation [0-9.]* ms' "$log" | head -1))"
  done
  # The ISA mismatch through the command line: a v4 artifact under kiln's kernels capped at AVX2 is
  # refused with exit code 2 and one line saying what to recompile with.
  art=$out/$name.x86-64-v4.kiln
  if [[ -f $art ]] && ! grep -q "does not run here" "$out/$name.x86-64-v4.log"; then
    rc=0
    KILN_CPU_ISA=avx2 "$kiln" run "$art" --inputs "$case_dir" --outputs "$out/$name.capped" \
      >/dev/null 2>"$out/$name.capped.err" || rc=$?
    if ((rc != 2)) || (($(wc -l <"$out/$name.capped.err") != 1)) ||
        ! grep -q "recompile it with .*--target x86-64-v3" "$out/$name.capped.err"; then
      echo "FAIL $name: a v4 artifact under KILN_CPU_ISA=avx2 gave exit $rc:"; cat "$out/$name.capped.err"
      status=1
    else
      echo "ok   $name x86-64-v4 refused under KILN_CPU_ISA=avx2 (exit 2, one line)"
    fi
  fi
done
exit $status
