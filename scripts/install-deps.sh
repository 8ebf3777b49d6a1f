#!/usr/bin/env bash
# Installs what kiln needs to build and test on Debian 12. Idempotent: quick when all is there.
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache clang libclang-rt-14-dev
  libprotobuf-dev protobuf-compiler libonnx-dev
  libdnnl-dev libcli11-dev nlohmann-json3-dev libfmt-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  python3-onnx python3-numpy
  chromium  # renders kiln profile --html in tests/report (headless screenshot)
)
if [[ "${KILN_WITH_TORCH:-0}" == 1 ]]; then
  packages+=(python3-torch python3-torchvision)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}"
  sudo=""; [[ $(id -u) == 0 ]] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
