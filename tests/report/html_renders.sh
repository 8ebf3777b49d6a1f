#!/usr/bin/env bash
# kiln's HTML reports render in a real browser: Debian's chromium, headless, takes a screenshot of
# `kiln profile --html`, `kiln optimize --report X.html`, `kiln bench --compare --html` and `kiln analyze --html` pages,
# and tests/report/check_png.py checks their charts are drawn (not a blank page).
#
#   tests/report/html_renders.sh KILN WORKDIR
#
# Installs chromium with apt when missing; fails when it cannot be installed, or when torch cannot
# export the test model (tests/lib/missing.sh: KILN_ALLOW_SKIP=1 makes those a skip).
set -euo pipefail
kiln=$1
work=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
source "$root/tests/lib/missing.sh"
mkdir -p "$work/models" "$work/report"

if ! command -v chromium >/dev/null; then
  sudo=""; [[ $(id -u) == 0 ]] || sudo="sudo -n"
  { $sudo apt-get install -y -qq --no-install-recommends chromium >/dev/null 2>&1 ||
    { $sudo apt-get update -qq && $sudo apt-get install -y -qq --no-install-recommends chromium >/dev/null 2>&1; }; } ||
    missing "chromium cannot be installed"
fi
model=$work/models/small_cnn.onnx
if [[ ! -f $model ]]; then
  /usr/bin/python3 -W ignore "$root/tests/report/export_small_cnn.py" "$model" ||
    missing "torch cannot export the test model"
fi

# A fresh profile dir per screenshot: chromium refuses one that another instance holds.
profile_dir=$(mktemp -d)
trap 'rm -rf "$profile_dir"' EXIT
shoot() {  # page, screenshot, check_png.py flags...
  local html=$1 shot=$2
  shift 2
  rm -f "$shot"
  rm -rf "${profile_dir:?}"/*
  timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
    --user-data-dir="$profile_dir" --window-size=1100,2600 --screenshot="$shot" \
    "file://$html" >/dev/null 2>&1 || true
  [[ -s $shot ]] || { echo "chromium wrote no screenshot of $html"; exit 1; }
  /usr/bin/python3 "$root/tests/report/check_png.py" "$shot" "$@"
}

report=$work/report
echo "== kiln profile --html"
"$kiln" profile "$model" --engine reference --runs 3 --dim batch=2 --html "$report/small_cnn.html" > /dev/null
shoot "$report/small_cnn.html" "$report/small_cnn.png"

echo "== kiln optimize --report .html"
"$kiln" optimize "$model" -o "$report/small_cnn.opt.onnx" --verify 1 --dim batch=2 \
  --report "$report/small_cnn.optimize.html" > /dev/null
grep -q "Nodes by op type" "$report/small_cnn.optimize.html"
shoot "$report/small_cnn.optimize.html" "$report/small_cnn.optimize.png" --expect colour1,colour2,colour3

echo "== kiln bench --compare --html"
"$kiln" bench "$model" --compare --iterations 20 --warmup 2 --dim batch=2 \
  --html "$report/small_cnn.bench.html" > /dev/null
grep -q "Latency histogram" "$report/small_cnn.bench.html"
shoot "$report/small_cnn.bench.html" "$report/small_cnn.bench.png" --expect colour1,colour2

echo "== kiln analyze --html (the graph colored by backend: xnnpack, and cpu for the Add it is told to leave)"
KILN_BACKEND_OPTIONS_XNNPACK=exclude=Add "$kiln" analyze "$model" --backends xnnpack,cpu --dim batch=2 \
  --html "$report/small_cnn.analyze.html" > /dev/null
grep -q "Target x86-64" "$report/small_cnn.analyze.html"  # native: this machine's row (x86-64-v3, -v4)
shoot "$report/small_cnn.analyze.html" "$report/small_cnn.analyze.png" --expect colour1,backend_cpu --min-ink 0.01
