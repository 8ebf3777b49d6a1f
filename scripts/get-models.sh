#!/usr/bin/env bash
# Exports kiln's test models to OUTDIR/NAME.onnx (opset 17, random weights); models already there are skipped.
#
#   scripts/export-models.sh OUTDIR [names...]     (no names: all; tools/models/export.py --list names them)
#
# Installs Debian's python3-torch and python3-torchvision first when missing. They belong to
# /usr/bin/python3, which is why the exporter is run by that path.
set -euo pipefail

if (($# < 1)); then
  echo "usage: $0 OUTDIR [names...]" >&2
  exit 2
fi
out=$1
shift
root=$(cd "$(dirname "$0")/.." && pwd)

packages=(python3-torch python3-torchvision python3-onnx python3-numpy)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=""
  [[ $(id -u) == 0 ]] || sudo=sudo
  # Refresh the package lists only when apt does not know a package yet.
  for p in "${missing[@]}"; do
    if [[ -z $(apt-cache policy "$p" 2>/dev/null | awk '/Candidate:/ && $2 != "(none)" { print $2 }') ]]; then
      echo "export-models: apt-get update"
      $sudo apt-get update -qq
      break
    fi
  done
  echo "export-models: installing ${missing[*]} (torch is large; this takes a while)"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# torch's exporter warns a lot about things that are fine here (constant folding, shape inference).
exec /usr/bin/python3 -W ignore "$root/tools/models/export.py" --out "$out" "$@"
