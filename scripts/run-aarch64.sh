#!/usr/bin/env bash
# Runs a compiled artifact with kiln's aarch64 runtime under qemu-aarch64 (docs/artifact.md,
# "aarch64"): the same files as `kiln run ARTIFACT`, input_N.pb in, output_N.pb out.
#
#   scripts/run-aarch64.sh ARTIFACT --inputs DIR --outputs DIR [--threads N]
#
# ARTIFACT is one `kiln compile MODEL --target aarch64-linux -o X.kiln` wrote. The runtime is
# build-aarch64/build/kiln-run (`make aarch64` builds it; KILN_AARCH64_BUILD names another build
# folder), run over the sysroot of Debian's arm64 libraries beside it (build-aarch64/sysroot, or
# KILN_ARM64_SYSROOT). Exit codes are kiln-run's (2: bad input or an artifact it cannot run).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${KILN_AARCH64_BUILD:-$root/build-aarch64/build}
sysroot=${KILN_ARM64_SYSROOT:-$root/build-aarch64/sysroot}
runtime=$build/kiln-run
if [[ ! -x $runtime ]]; then
  echo "run-aarch64: no aarch64 runtime at $runtime (make aarch64 builds it)" >&2
  exit 2
fi
if [[ ! -f $sysroot/.complete ]]; then
  echo "run-aarch64: no arm64 sysroot at $sysroot (scripts/make-arm64-sysroot.sh makes it)" >&2
  exit 2
fi
qemu=$(command -v qemu-aarch64 || true)
if [[ -z $qemu ]]; then
  echo "run-aarch64: qemu-aarch64 is not installed (apt-get install qemu-user; scripts/install-deps.sh has it)" >&2
  exit 2
fi
# kiln sets libgomp's spin count by re-executing itself (engine/threads.cc); under qemu without
# binfmt that exec fails harmlessly, with binfmt it would start a second emulator: set it here.
export GOMP_SPINCOUNT=${GOMP_SPINCOUNT:-10000}
exec "$qemu" -L "$sysroot" "$runtime" "$@"
