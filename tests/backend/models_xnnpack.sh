#!/usr/bin/env bash
# ResNet-50 and MobileNetV2 placed on the xnnpack plugin and kiln's cpu backend, against ONNX
# Runtime's outputs on the same seeded inputs (the cases of tests/models/make_cases.sh):
#   1. --backends xnnpack,cpu --strict: every node on xnnpack (one partition);
#   2. the plugin told not to take Add (KILN_BACKEND_OPTIONS_XNNPACK=exclude=Add): the graph split
#      between xnnpack and cpu at every residual and skip Add;
#   3. the plugin told to fail compiling the partition with Gemm: it falls back to cpu, said on stderr;
# then `kiln analyze --json` on both models (tests/backend/check_analysis.py), --strict naming
# the nodes that would fall back, and `kiln compile --backends xnnpack,cpu`: the placement recorded
# in the artifact and made again when `kiln run` loads it (outputs against ONNX Runtime's), a
# forced compile failure recorded with its reason.
#
#   tests/backend/models_xnnpack.sh KILN WORKDIR
set -euo pipefail
kiln=$1
work=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
names=(resnet50 mobilenet_v2)

source "$root/tests/lib/missing.sh"
"$root/tools/ort/install.sh" || missing "ONNX Runtime (onnxruntime-node from npm) cannot be installed"
"$root/scripts/get-models.sh" "$work/models" "${names[@]}"
"$root/tests/models/make_cases.sh" "$work/models" "$work/cases" "${names[@]}"
cases=("${names[@]/#/$work/cases/}")
out=$work/backend_models
mkdir -p "$out"

echo "== all on xnnpack (--strict)"
"$kiln" test --backends xnnpack,cpu --strict --rtol 1e-3 --atol 1e-4 --timeout 600 "${cases[@]}"

echo "== split between xnnpack and cpu (xnnpack does not take Add)"
KILN_BACKEND_OPTIONS_XNNPACK=exclude=Add "$kiln" test --backends xnnpack,cpu --rtol 1e-3 --atol 1e-4 \
  --timeout 600 "${cases[@]}"

echo "== xnnpack fails compiling the partition with Gemm: it falls back to cpu"
KILN_BACKEND_OPTIONS_XNNPACK="exclude=Add;fail_compile=Gemm" "$kiln" run "$work/cases/resnet50/model.onnx" \
  --backends xnnpack,cpu --inputs "$work/cases/resnet50/test_data_set_0" --outputs "$out/fallback" \
  2> "$out/fallback.err"
grep -q "could not compile a partition of .* fail_compile=Gemm; they run on the next backend" "$out/fallback.err" ||
  { cat "$out/fallback.err"; echo "FAIL: the fallback was not said"; exit 1; }

echo "== kiln analyze --json"
for name in "${names[@]}"; do
  "$kiln" analyze "$work/models/$name.onnx" --targets native,x86-64,aarch64-linux --json \
    --html "$out/$name.html" > "$out/$name.json"
  KILN_BACKEND_OPTIONS_XNNPACK=exclude=Add "$kiln" analyze "$work/models/$name.onnx" --backends xnnpack,cpu \
    --json > "$out/$name.split.json"
  /usr/bin/python3 "$root/tests/backend/check_analysis.py" "$out/$name.json" "$out/$name.split.json"
done

echo "== --strict names the nodes that would fall back"
set +e
KILN_BACKEND_OPTIONS_XNNPACK=exclude=Add "$kiln" analyze "$work/models/resnet50.onnx" --backends xnnpack,cpu \
  --strict > /dev/null 2> "$out/strict.err"
rc=$?
set -e
[[ $rc == 2 ]] || { echo "FAIL: --strict exited $rc, expected 2"; exit 1; }
[[ $(wc -l < "$out/strict.err") == 1 ]] || { cat "$out/strict.err"; echo "FAIL: not one line"; exit 1; }
grep -q "16 nodes would fall back from 'xnnpack'" "$out/strict.err" || { cat "$out/strict.err"; exit 1; }
echo "== kiln compile --backends xnnpack,cpu: the placement in the artifact, made again at load"
compare="/usr/bin/python3 $root/bench/compare_outputs.py"
case=$work/cases/mobilenet_v2/test_data_set_0
"$kiln" compile "$work/models/mobilenet_v2.onnx" --backends xnnpack,cpu --shapes batch=2 --runs 1 --json \
  -o "$out/mnv2.xnnpack.kiln" > "$out/mnv2.xnnpack.json"
/usr/bin/python3 - "$out/mnv2.xnnpack.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
p = m["placement"]
xnn = [q for q in p["partitions"] if q["backend"] == "xnnpack"]
assert p["outside_engine"] and p["compiled"] and xnn, p
assert p["order"][:2] == ["xnnpack", "cpu"], p["order"]
assert any(b["name"] == "xnnpack" and not b["in_engine"] for b in m["backends"]), m["backends"]
assert m["measured"]["outputs_match"], m["measured"]
print(f"placement recorded: {p['summary']}")
PY
"$kiln" run "$out/mnv2.xnnpack.kiln" --inputs "$case" --outputs "$out/mnv2.xnnpack.out"
$compare "$out/mnv2.xnnpack.out" "$case"
KILN_BACKEND_OPTIONS_XNNPACK=fail_compile=all "$kiln" compile "$work/models/mobilenet_v2.onnx" \
  --backends xnnpack,cpu --runs 0 --json -o "$out/mnv2.fallback.kiln" > "$out/mnv2.fallback.json"
/usr/bin/python3 - "$out/mnv2.fallback.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))["placement"]
assert not p["outside_engine"] and p["fallbacks"], p
assert all(f["backend"] == "xnnpack" and "fail_compile" in f["reason"] for f in p["fallbacks"]), p["fallbacks"]
print(f"fallback recorded: {len(p['fallbacks'])} partitions, first reason: {p['fallbacks'][0]['reason']}")
PY
echo "ok"
