#!/usr/bin/env bash
# Writes the seed corpus of fuzz_artifact: small ONNX backend cases compiled into artifacts (a few
# KB each: convs and matmuls with pre-packed weights, If/Loop/Scan subgraphs, sequences), plus
# an MLP with weights as inputs' initializers and a declared shape profile.
#
#   tests/fuzz/make_artifact_seeds.sh KILN [OUTDIR]   (default OUTDIR: tests/fuzz/corpus/fuzz_artifact)
set -euo pipefail
kiln=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${2:-$root/tests/fuzz/corpus/fuzz_artifact}
mkdir -p "$out"
cases=(add_bcast batchnorm_epsilon conv_with_strides_padding gather_0 gemm_all_attributes if loop11
       matmul_2d maxpool_2d_pads relu reshape_reduced_dims scan9_sum sequence_insert_at_back
       softmax_axis_1 layer_normalization_2d_axis0)
for c in "${cases[@]}"; do
  for target in native x86-64; do
    "$kiln" compile "$root/tests/onnx-backend/node/test_$c/model.onnx" --target "$target" \
      -o "$out/$c.$target.kiln" --runs 0 >/dev/null
  done
done
echo "wrote $(ls "$out" | wc -l) seeds ($(du -sh "$out" | cut -f1)) to $out"
