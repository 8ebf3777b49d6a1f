#!/usr/bin/env bash
# `kiln profile --html` renders in a real browser: Debian's chromium, headless, takes a screenshot
# and tests/report/check_png.py checks the charts are drawn (not a blank page).
#
#   tests/report/html_renders.sh KILN WORKDIR
#
# Installs chromium with apt when missing; exits 77 (skipped) when it cannot be installed, and when
# torch cannot export the test model.
set -euo pipefail
kiln=$1
work=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$work/models" "$work/report"

if ! command -v chromium >/dev/null; then
  sudo=""; [[ $(id -u) == 0 ]] || sudo="sudo -n"
  { $sudo apt-get install -y -qq --no-install-recommends chromium >/dev/null 2>&1 ||
    { $sudo apt-get update -qq && $sudo apt-get install -y -qq --no-install-recommends chromium >/dev/null 2>&1; }; } ||
    { echo "cannot install chromium: skipped"; exit 77; }
fi
model=$work/models/small_cnn.onnx
if [[ ! -f $model ]]; then
  /usr/bin/python3 -W ignore "$root/tests/report/export_small_cnn.py" "$model" ||
    { echo "cannot export the test model from torch: skipped"; exit 77; }
fi

html=$work/report/small_cnn.html
shot=$work/report/small_cnn.png
"$kiln" profile "$model" --engine reference --runs 3 --dim batch=2 --html "$html" > /dev/null
rm -f "$shot"
# A fresh profile dir per run: chromium refuses one that another instance holds.
profile_dir=$(mktemp -d)
trap 'rm -rf "$profile_dir"' EXIT
timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
  --user-data-dir="$profile_dir" --window-size=1100,2600 --screenshot="$shot" \
  "file://$html" >/dev/null 2>&1 || true
[[ -s $shot ]] || { echo "chromium wrote no screenshot"; exit 1; }
/usr/bin/python3 "$root/tests/report/check_png.py" "$shot"
