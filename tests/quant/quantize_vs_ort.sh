#!/usr/bin/env bash
# kiln quantize on small torch-exported models (an MLP, SqueezeNet 1.1; dynamic with MatMulInteger and
# with ConvInteger, static QDQ and QOperator, fp16, bf16 weights, mixed precision): each quantized file runs
# in ONNX Runtime and in kiln, the two agree within the quantization's tolerance, and both agree
# with the float model (cosine >= 0.99; fp16, bf16 >= 0.999) on held-out input sets. Then the bad inputs:
# exit code 2, one line on stderr, no output file.
#
#   tests/quant/quantize_vs_ort.sh KILN WORKDIR
#
# Big models (ResNet-50, BERT-base) are tests/quant/check_large.sh, outside `make test`.
set -euo pipefail
kiln=$(realpath "$1")
work=$(mkdir -p "$2" && cd "$2" && pwd)
root=$(cd "$(dirname "$0")/../.." && pwd)
here=$root/tests/quant
py=/usr/bin/python3

source "$root/tests/lib/missing.sh"
"$root/tools/ort/install.sh" || missing "ONNX Runtime (onnxruntime-node from npm) cannot be installed"
"$root/scripts/get-models.sh" "$work/models" mlp squeezenet1_1
mkdir -p "$work/q"
cd "$work/q"
rm -rf ./*

status=0
fail() { echo "FAIL: $*"; status=1; }
# ONNX Runtime's u8s8 integer kernels on an x86 CPU without VNNI (AVX2's vpmaddubsw) saturate their
# int16 pair sums, so its int8 outputs can fall below the bar on its own (ORT's quantization docs:
# reduce_range). There the comparisons with ORT are reported, not required; kiln against the float
# model always is.
vnni=0
grep -qE 'avx512_vnni|avx_vnni' /proc/cpuinfo && vnni=1
ort_below() {
  if ((vnni)); then status=1; else echo "  (this CPU has no VNNI: ONNX Runtime's u8s8 kernel saturates here; reported, not required)"; fi
}

# case: model, quantize flags, minimum cosine
check_case() {
  local name=$1 model=$2 min=$3
  shift 3
  local out=$name.onnx
  echo "== $name: kiln quantize $* "
  "$kiln" quantize "$work/models/$model.onnx" -o "$out" --calibrate "sets/$model/calib" \
    --eval "sets/$model/eval" --latency-runs 1 --no-progress --report "$name.json" "$@" ||
    { fail "$name: kiln quantize exited $?"; return; }
  for set in "sets/$model/eval"/test_data_set_*; do
    local k=${set##*_}
    "$kiln" run "$work/models/$model.onnx" --inputs "$set" --outputs "out/$name/float_$k" >/dev/null
    "$kiln" run "$out" --inputs "$set" --outputs "out/$name/kiln_$k" >/dev/null ||
      { fail "$name: kiln cannot run the quantized model"; continue; }
    node "$root/tools/ort/run.js" "$out" --inputs "$set" --outputs "out/$name/ort_$k" >/dev/null ||
      { fail "$name: ONNX Runtime cannot run the quantized model"; continue; }
    $py "$here/compare.py" "$name set $k: kiln vs float" "out/$name/kiln_$k" "out/$name/float_$k" --min-cosine "$min" || status=1
    $py "$here/compare.py" "$name set $k: ORT vs float " "out/$name/ort_$k" "out/$name/float_$k" --min-cosine "$min" || ort_below
    $py "$here/compare.py" "$name set $k: kiln vs ORT  " "out/$name/kiln_$k" "out/$name/ort_$k" --min-cosine "$min" || ort_below
  done
}

for model in mlp squeezenet1_1; do
  $py "$here/make_sets.py" "$work/models/$model.onnx" "sets/$model/calib" 8 --seed 0
  $py "$here/make_sets.py" "$work/models/$model.onnx" "sets/$model/eval" 2 --seed 1000
done
check_case mlp_dynamic mlp 0.99 --mode dynamic
check_case mlp_dynamic_per_channel mlp 0.99 --mode dynamic --per-channel
check_case mlp_static mlp 0.99 --mode static
check_case squeezenet_static_qdq squeezenet1_1 0.99 --mode static
check_case squeezenet_static_qoperator squeezenet1_1 0.99 --mode static --format qoperator
check_case squeezenet_dynamic_conv squeezenet1_1 0.99 --mode dynamic --include-ops Conv
check_case squeezenet_fp16 squeezenet1_1 0.999 --mode fp16
check_case squeezenet_bf16 squeezenet1_1 0.999 --mode bf16
# bf16's default form: every conv's weight a bfloat16 initializer read through Cast(to float),
# no op computing in bf16 (ONNX Runtime's CPU provider has no bf16 kernels but Cast).
$py - squeezenet_bf16.onnx <<'PY' || status=1
import sys, onnx
from onnx import TensorProto
m = onnx.load(sys.argv[1])
init = {i.name: i.data_type for i in m.graph.initializer}
producer = {o: n for n in m.graph.node for o in n.output}
convs = [n for n in m.graph.node if n.op_type == "Conv"]
through_cast = [n for n in convs if n.input[1] in producer and producer[n.input[1]].op_type == "Cast"
                and init.get(producer[n.input[1]].input[0]) == TensorProto.BFLOAT16]
types = {vi.type.tensor_type.elem_type for vi in list(m.graph.value_info) + list(m.graph.output)}
print(f"squeezenet bf16: {len(through_cast)} of {len(convs)} convs read bf16 weights through a Cast; "
      f"value types {sorted(types)}")
sys.exit(0 if convs and len(through_cast) == len(convs) and TensorProto.BFLOAT16 not in types else 1)
PY
# Mixed precision: a budget below the all-int8 loss keeps the most damaging convs float.
check_case squeezenet_mixed squeezenet1_1 0.99 --mode static --max-loss 0.00003
$py - squeezenet_mixed.json <<'PY' || status=1
import json, sys
mp = json.load(open(sys.argv[1]))["mixed_precision"]
kept = mp["kept_float"]
print(f"squeezenet --max-loss {mp['max_loss']}: all int8 loses {mp['loss_all_int8']:.3g}, "
      f"{len(kept)} kept float -> {mp['loss']:.3g}")
ok = mp["loss_all_int8"] > mp["max_loss"] and kept and mp["loss"] < mp["loss_all_int8"]
ok = ok and (not mp["reached"] or mp["loss"] <= mp["max_loss"])
sys.exit(0 if ok else 1)
PY
# QDQ on every conv of the file, per channel, int32 biases: the form ORT's quantize_static writes.
$py - squeezenet_static_qdq.onnx <<'PY' || status=1
import sys, onnx
m = onnx.load(sys.argv[1])
ops = [n.op_type for n in m.graph.node]
convs = ops.count("Conv")
weights = [n for n in m.graph.node if n.op_type == "DequantizeLinear" and any(
    i.name == n.input[0] and i.data_type == onnx.TensorProto.INT8 for i in m.graph.initializer)]
biases = [n for n in m.graph.node if n.op_type == "DequantizeLinear" and any(
    i.name == n.input[0] and i.data_type == onnx.TensorProto.INT32 for i in m.graph.initializer)]
print(f"squeezenet QDQ: {convs} Conv, {len(weights)} int8 weights, {len(biases)} int32 biases, "
      f"{ops.count('QuantizeLinear')} QuantizeLinear")
ok = convs > 0 and len(weights) == convs and len(biases) == convs and "ConvInteger" not in ops
sys.exit(0 if ok else 1)
PY

# Bad input: exit code 2, one line on stderr naming what, and no output written.
refuse() {
  local what=$1 expect=$2
  shift 2
  rm -f refused.onnx
  local rc=0
  "$kiln" quantize "$@" -o refused.onnx --no-progress --latency-runs 0 >/dev/null 2>err.txt || rc=$?
  if [[ $rc != 2 ]]; then fail "$what: exit code $rc, expected 2"; cat err.txt; return; fi
  if [[ $(wc -l <err.txt) != 1 ]] || ! grep -q -- "$expect" err.txt; then
    fail "$what: expected one line naming '$expect'"; cat err.txt; return
  fi
  [[ ! -e refused.onnx ]] || fail "$what: an output was written"
  echo "refused ($what): $(cat err.txt)"
}
mkdir -p empty
refuse "empty calibration folder" "no input_N.pb files" "$work/models/squeezenet1_1.onnx" --mode static --calibrate empty
refuse "sets of another model" "calibration set" "$work/models/squeezenet1_1.onnx" --mode static --calibrate sets/mlp/calib
refuse "unknown node" "no node of that name" "$work/models/mlp.onnx" --exclude-nodes no_such_node
refuse "unknown op" "has no Conv node" "$work/models/mlp.onnx" --exclude-ops Conv
refuse "nothing to quantize" "nothing to quantize" "$work/models/mlp.onnx" --exclude-ops Gemm
refuse "static without sets" "calibration sets" "$work/models/mlp.onnx" --mode static
exit $status
