#!/usr/bin/env bash
# Installs what kiln needs to build, test and run its demo on Debian 12. Idempotent: quick when all
# is there. Every package is named here directly (installed with --no-install-recommends, so nothing
# comes along by recommendation): a fresh, minimal Debian 12 gets exactly this list.
#
#   scripts/install-deps.sh            everything make build, make demo and make test need
#   scripts/install-deps.sh --check    prints what is missing and exits 1 if anything is (no install)
set -euo pipefail

packages=(
  # the build
  build-essential cmake ninja-build ccache pkg-config
  clang libclang-rt-14-dev       # make fuzz (libFuzzer) and make test-asan's runtime
  libprotobuf-dev protobuf-compiler libonnx-dev
  libdnnl-dev ocl-icd-opencl-dev # oneDNN's CMake config looks for OpenCL (a mere recommend of libdnnl-dev)
  libcli11-dev nlohmann-json3-dev libfmt-dev
  libxnnpack-dev libpthreadpool-dev # the xnnpack backend plugin (plugins/xnnpack, docs/backends.md)
  libgtest-dev libgmock-dev libbenchmark-dev
  pybind11-dev python3-dev       # the Python package (make python, python/)
  libsqlite3-dev                 # kiln serve's model registry (src/serve/sqlite_store.cc)
  libcpp-httplib-dev             # kiln serve's HTTP server (src/serve/server.cc; docs/service.md says why)
  libpq-dev                      # kiln serve --db postgresql:// (src/serve/postgres_connection.cc)
  libyaml-cpp-dev                # kiln ci's YAML pipelines (src/serve/yaml_json.cc)
  g++-aarch64-linux-gnu qemu-user # the aarch64 runtime's cross build and its tests under qemu (make aarch64;
                                  # its arm64 libraries: scripts/make-arm64-sysroot.sh, from Debian's archive)
  # the tests, the demo and the benchmarks
  python3 python3-onnx python3-numpy python3-pytest
  python3-venv                   # the README's venv for the Python package (kiln.pth into a venv)
  python3-torch python3-torchvision # exports the test and demo models (tools/models/export.py)
  postgresql                     # PostgreSQL 15: tests/serve/serve_postgres.py runs a throwaway server
  time                           # /usr/bin/time: peak RSS in tests/large and bench/run.sh
  curl                           # the README's service example (ctest readme_service_example runs it)
  chromium                       # renders the HTML reports in tests/report (headless screenshot)
  imagemagick fonts-dejavu-core espeak-ng # text and speech the quantized trained models must read
                                          # and hear as the float ones do (tests/quant/trained_models.py)
)
# ONNX Runtime (onnxruntime-node, from npm) is the reference the model tests compare against: node and
# npm from Debian unless this machine already has a node (e.g. a newer one from elsewhere).
if ! command -v node >/dev/null; then
  packages+=(nodejs npm)
elif ! command -v npm >/dev/null; then
  packages+=(npm)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [[ ${1:-} == --check ]]; then
  ((${#missing[@]})) || { echo "install-deps: nothing missing"; exit 0; }
  echo "install-deps: missing ${missing[*]}"
  exit 1
fi
if ((${#missing[@]})); then
  echo "install-deps: installing ${#missing[@]} Debian packages (${missing[*]})"
  echo "install-deps: a first install on a fresh machine downloads about 1.5 GB (torch, chromium, oneDNN): several minutes"
  sudo=""; [[ $(id -u) == 0 ]] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  echo "install-deps: done"
fi
