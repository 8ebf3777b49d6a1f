#!/usr/bin/env bash
# The runtime alone links no protobuf, no libonnx and no optimizer (docs/artifact.md, "What it
# links"): kiln-run's symbols and its shared libraries, against kiln's, where the same queries must
# find them (so a query that finds nothing anywhere fails here too).
#
#   tests/runtime/links_no_protobuf.sh KILN_RUN KILN
set -euo pipefail
kiln_run=$1
kiln=$2
# Symbols of protobuf's and libonnx's C++ namespaces, kiln's optimizer, its .onnx front end and
# its protobuf reader; libraries by name.
symbols='google::protobuf::|(^| )onnx::|kiln::opt::|kiln::frontend::|kiln::load_model|kiln::tensor_from_proto'
libraries='libprotobuf|libonnx'

count() { nm -C "$1" | grep -Ec "$symbols" || true; }
needed() { readelf -d "$1" | grep NEEDED | grep -E "$libraries" || true; }

status=0
in_run=$(count "$kiln_run")
in_kiln=$(count "$kiln")
if [[ $in_run -ne 0 ]]; then
  echo "FAIL: $kiln_run has $in_run protobuf/libonnx/optimizer symbols:"
  nm -C "$kiln_run" | grep -E "$symbols" | head -20
  status=1
fi
if [[ -n $(needed "$kiln_run") ]]; then
  echo "FAIL: $kiln_run needs $(needed "$kiln_run" | tr -s ' ' | tr '\n' ' ')"
  status=1
fi
# The control: kiln (the whole command line) has them, so the queries above can find them.
if [[ $in_kiln -eq 0 || -z $(needed "$kiln") ]]; then
  echo "FAIL: the queries find nothing in $kiln either ($in_kiln symbols): they test nothing"
  status=1
fi
[[ $status -eq 0 ]] && echo "ok: kiln-run has 0 protobuf/libonnx/optimizer symbols and needs neither library (kiln: $in_kiln symbols, $(needed "$kiln" | wc -l) such libraries)"
exit $status
