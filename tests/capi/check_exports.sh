#!/usr/bin/env bash
# libkiln.so exports exactly the C API: every function include/kiln/kiln.h declares, and nothing
# else (no C++ symbol of kiln's static layers, which would clash with a program's own).
#
#   tests/capi/check_exports.sh LIBKILN HEADER
set -euo pipefail
lib=$1
header=$2
exported=$(nm -D --defined-only "$lib" | awk '$2 != "A" { print $3 }' | sed 's/@.*//' | sort -u)
declared=$(grep -oE '^KILN_API [^(]*\b(kiln_[a-z0-9_]+)\(' "$header" | grep -oE 'kiln_[a-z0-9_]+\($' | tr -d '(' | sort -u)
status=0
extra=$(comm -23 <(echo "$exported") <(echo "$declared"))
missing=$(comm -13 <(echo "$exported") <(echo "$declared"))
if [[ -n $extra ]]; then
  echo "FAIL: libkiln.so exports symbols kiln.h does not declare:"
  echo "$extra" | head -20
  status=1
fi
if [[ -n $missing ]]; then
  echo "FAIL: kiln.h declares functions libkiln.so does not export:"
  echo "$missing"
  status=1
fi
n=$(echo "$declared" | wc -l)
((status == 0)) && echo "check_exports: libkiln.so exports the $n functions of kiln.h and nothing else"
exit $status
