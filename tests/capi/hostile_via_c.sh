#!/usr/bin/env bash
# The hostile-model corpus (tests/hostile, written by make_corpus.py) through the C API: the C
# example creates a session on every case (`run_model --info`, which loads, checks, infers and,
# when the dims are known, plans). Malformed cases must end with exit code 2 (or the manifest's
# third column) and one line on stderr holding the manifest's substring; valid ones with 0. None
# may time out or trip a sanitizer.
#
#   tests/capi/hostile_via_c.sh RUN_MODEL CORPUS_DIR
set -uo pipefail
run_model=$1
dir=$2
[[ -f $dir/manifest.tsv ]] || { echo "error: no $dir/manifest.tsv (run tests/hostile/make_corpus.py first)" >&2; exit 2; }
passed=0
failed=0
err=$(mktemp)
trap 'rm -f "$err"' EXIT

check() {  # CASE EXPECTED_CODE SUBSTRING
  local name=$1 want=$2 text=$3
  timeout -k 5 20 "$run_model" "$dir/$name/model.onnx" --info >/dev/null 2>"$err" </dev/null
  local code=$? lines
  lines=$(awk 'END { print NR }' "$err")
  if ((code == 124 || code == 137)); then
    echo "FAIL $name: timed out"
  elif grep -qE 'Sanitizer|runtime error:' "$err"; then
    echo "FAIL $name: sanitizer report: $(head -c 200 "$err")"
  elif ((code != want)); then
    echo "FAIL $name: exit code $code, expected $want: $(head -c 300 "$err")"
  elif [[ -n $text ]] && ((lines != 1)); then
    echo "FAIL $name: $lines lines on stderr, expected 1"
  elif [[ -n $text ]] && ! grep -qiF -- "$text" "$err"; then
    echo "FAIL $name: stderr lacks '$text': $(head -c 300 "$err")"
  else
    passed=$((passed + 1))
    return
  fi
  failed=$((failed + 1))
}

while IFS=$'\t' read -r name text code _; do
  [[ -z $name || $name == \#* ]] && continue
  check "$name" "${code:-2}" "$text"
done <"$dir/manifest.tsv"
while IFS=$'\t' read -r name _; do
  [[ -z $name || $name == \#* ]] && continue
  check "$name" 0 ""
done <"$dir/manifest_ok.tsv"
echo "hostile corpus through the C API: $passed passed, $failed failed"
((failed == 0))
