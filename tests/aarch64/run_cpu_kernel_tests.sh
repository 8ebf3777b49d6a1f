#!/usr/bin/env bash
# kiln's CPU kernels' tests (src/engine/cpu/*_test.cc: the math functions' ulp bounds over the
# whole float range, the elementwise, softmax, normalization, reduce, resize, transpose ... kernels
# against the reference ones) cross-built for aarch64 and run under qemu-aarch64, on each ISA the
# emulated CPU has: scalar and neon (docs/artifact.md, "aarch64").
#
#   tests/aarch64/run_cpu_kernel_tests.sh [gtest flags...]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${KILN_AARCH64_BUILD:-$root/build-aarch64/build}
sysroot=${KILN_ARM64_SYSROOT:-$root/build-aarch64/sysroot}
command -v qemu-aarch64 >/dev/null || { echo "skip: qemu-aarch64 is missing (scripts/install-deps.sh)"; exit 77; }
command -v aarch64-linux-gnu-g++ >/dev/null || { echo "skip: aarch64-linux-gnu-g++ is missing"; exit 77; }
tests=$build/kiln_cpu_kernel_tests
[[ -x $tests ]] || { echo "FAIL: no $tests (make aarch64 builds it)"; exit 1; }
exec qemu-aarch64 -L "$sysroot" "$tests" "$@"
