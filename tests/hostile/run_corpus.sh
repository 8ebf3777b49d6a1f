#!/usr/bin/env bash
# Runs `KILN inspect` on every case of a corpus written by make_corpus.py.
#
#   tests/hostile/run_corpus.sh KILN OUTDIR
#
# manifest.tsv cases (CASE<TAB>substring[<TAB>exit code]) must fail cleanly: exit code 2 (or the
# third column), exactly one line on stderr, containing the substring.
# manifest_ok.tsv cases must load: exit code 0.
# No case may time out (20 s) or print sanitizer reports ("AddressSanitizer", "runtime error" ...).
# Prints one line per failure, then "N passed, N failed"; exits 1 on any failure.
set -uo pipefail

if (($# != 2)); then
  echo "usage: $0 KILN OUTDIR" >&2
  exit 2
fi
kiln=$1
dir=$2
timeout_s=${KILN_CORPUS_TIMEOUT:-20}
[[ -x $kiln ]] || { echo "error: $kiln is not an executable" >&2; exit 2; }
[[ -f $dir/manifest.tsv ]] || { echo "error: no $dir/manifest.tsv (run make_corpus.py first)" >&2; exit 2; }

passed=0
failed=0
out=$(mktemp)
err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT

fail() {
  echo "FAIL $1: $2"
  failed=$((failed + 1))
}

# run CASE EXPECTED_CODE SUBSTRING(empty for ok cases)
run_case() {
  local name=$1 want_code=$2 want_text=$3
  local model=$dir/$name/model.onnx
  if [[ ! -e $model ]]; then
    fail "$name" "missing $model"
    return
  fi
  timeout -k 5 "$timeout_s" "$kiln" inspect "$model" >"$out" 2>"$err" </dev/null
  local code=$?
  local first
  first=$(head -c 300 "$err" | head -n 1)
  if ((code == 124 || code == 137)); then
    fail "$name" "timed out after ${timeout_s}s"
    return
  fi
  if grep -qE 'AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|runtime error:|Segmentation fault' "$out" "$err"; then
    fail "$name" "sanitizer report: $(grep -m1 -hE 'AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|runtime error:' "$out" "$err" | head -c 200)"
    return
  fi
  if ((code != want_code)); then
    fail "$name" "exit code $code, expected $want_code${first:+; stderr: $first}"
    return
  fi
  if [[ -n $want_text ]]; then
    local lines
    lines=$(awk 'END { print NR }' "$err")  # counts a last line without a newline too
    if ((lines != 1)); then
      fail "$name" "$lines lines on stderr, expected 1${first:+; first: $first}"
      return
    fi
    if ! grep -qiF -- "$want_text" "$err"; then
      fail "$name" "stderr lacks '$want_text': $first"
      return
    fi
  fi
  passed=$((passed + 1))
}

while IFS=$'\t' read -r name text code _; do
  [[ -z $name || $name == \#* ]] && continue
  run_case "$name" "${code:-2}" "$text"
done <"$dir/manifest.tsv"

if [[ -f $dir/manifest_ok.tsv ]]; then
  while IFS=$'\t' read -r name _; do
    [[ -z $name || $name == \#* ]] && continue
    run_case "$name" 0 ""
  done <"$dir/manifest_ok.tsv"
fi

echo "$passed passed, $failed failed"
((failed == 0))
