#!/usr/bin/env bash
# Fuzzes kiln's model loader for SECONDS seconds (default 60).
#
#   scripts/run-fuzz.sh BUILD [SECONDS]      (BUILD made by `make fuzz`: clang, -DKILN_FUZZ=ON, ASan+UBSan)
#
# The corpus starts from ~20 small valid models of the ONNX backend tests (tests/onnx-backend/node),
# copied into a temporary folder. Crashes, leaks and hangs land in BUILD/fuzz-artifacts/; reproduce
# one with `BUILD/fuzz_load BUILD/fuzz-artifacts/crash-...`. Set FUZZ_KEEP_CORPUS=DIR to keep
# (and later reuse) the grown corpus in DIR instead of a temporary folder.
set -euo pipefail

if (($# < 1 || $# > 2)); then
  echo "usage: $0 BUILD [SECONDS]" >&2
  exit 2
fi
build=$1
seconds=${2:-60}
root=$(cd "$(dirname "$0")/.." && pwd)
fuzzer=$build/fuzz_load
if [[ ! -x $fuzzer ]]; then
  echo "error: $fuzzer not found; build it with: make fuzz (or cmake -DKILN_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++)" >&2
  exit 2
fi

if [[ -n ${FUZZ_KEEP_CORPUS:-} ]]; then
  corpus=$FUZZ_KEEP_CORPUS
  mkdir -p "$corpus"
else
  corpus=$(mktemp -d -t kiln-fuzz-corpus.XXXXXX)
  trap 'rm -rf "$corpus"' EXIT
fi

# Seeds: small models covering tensors, attributes, subgraphs (If, Loop, Scan), sequences, optionals.
seeds=(
  test_add test_matmul_2d test_gather_0 test_reshape_extended_dims test_cast_FLOAT_to_FLOAT16
  test_conv_with_strides_padding test_maxpool_2d_default test_batchnorm_epsilon
  test_layer_normalization_2d_axis0 test_softmax_axis_0 test_resize_upsample_scales_linear
  test_einsum_batch_matmul test_split_equal_parts_1d_opset18 test_constantofshape_int_zeros
  test_lstm_defaults test_gru_defaults test_if test_loop11 test_scan9_sum
  test_sequence_insert_at_back test_optional_get_element_sequence test_celu_expanded
)
n=0
for s in "${seeds[@]}"; do
  f=$root/tests/onnx-backend/node/$s/model.onnx
  if [[ -f $f ]]; then
    cp "$f" "$corpus/$s.onnx"
    n=$((n + 1))
  fi
done
echo "run-fuzz: $n seed models in $corpus; fuzzing for ${seconds}s"

artifacts=$build/fuzz-artifacts
mkdir -p "$artifacts"
status=0
"$fuzzer" "$corpus" \
  -max_total_time="$seconds" \
  -timeout=20 \
  -rss_limit_mb=4096 \
  -max_len=65536 \
  -print_final_stats=1 \
  -artifact_prefix="$artifacts/" || status=$?
if ((status != 0)); then
  echo "run-fuzz: the fuzzer found a problem (exit $status); inputs in $artifacts/" >&2
fi
exit $status
