#!/usr/bin/env bash
# Builds kiln's aarch64 runtime (docs/artifact.md, "aarch64"): the arm64 sysroot first
# (scripts/make-arm64-sysroot.sh), then a cross build of the runtime alone (KILN_RUNTIME_ONLY:
# kiln-run and the CPU kernels' tests) with Debian's g++-aarch64-linux-gnu into
# build-aarch64/build. `make aarch64` and the ctest fixture aarch64_runtime_build run it; quick
# when all is built (ninja finds nothing to do; ccache serves a rebuild).
#
#   scripts/build-aarch64.sh [JOBS]
#
# Exits 77 (ctest's skip) when the cross compiler or qemu-aarch64 is missing, which
# scripts/install-deps.sh installs.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
jobs=${1:-$(nproc)}
out=$root/build-aarch64
for tool in aarch64-linux-gnu-g++ qemu-aarch64; do
  if ! command -v "$tool" >/dev/null; then
    echo "build-aarch64: $tool is missing (scripts/install-deps.sh installs it)" >&2
    exit 77
  fi
done
"$root/scripts/make-arm64-sysroot.sh" "$out/sysroot"
# -O2 without debug info (the x86 build's RelWithDebInfo less -g): on 2 busy cores the cross
# build's time is mostly the compiler's, and -g is a good part of it.
if [[ ! -f $out/build/build.ninja ]]; then
  cmake -S "$root" -B "$out/build" -G Ninja -DCMAKE_TOOLCHAIN_FILE="$root/cmake/aarch64-toolchain.cmake" \
    -DKILN_ARM64_SYSROOT="$out/sysroot" -DKILN_RUNTIME_ONLY=ON -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" -DCMAKE_C_FLAGS_RELEASE="-O2 -DNDEBUG" \
    ${KILN_AARCH64_CMAKE_FLAGS:-} >/dev/null
fi
echo "build-aarch64: building the aarch64 runtime in $out/build ($jobs jobs; a first build compiles ~200 files)"
start=$(date +%s)
cmake --build "$out/build" -j "$jobs"
echo "build-aarch64: $out/build/kiln-run ready ($(($(date +%s) - start)) s)"
