#!/usr/bin/env bash
# A sysroot of Debian bookworm's arm64 packages for kiln's aarch64 runtime (docs/artifact.md,
# "aarch64"): the libraries it links (oneDNN, fmt, libgomp, libstdc++, glibc; no protobuf and no
# libonnx, which the runtime does not link: docs/artifact.md "What it links") and their headers,
# unpacked with dpkg-deb from Debian's own archive. The cross compiler (g++-aarch64-linux-gnu)
# links against it and qemu-aarch64 -L runs binaries over it.
#
#   scripts/make-arm64-sysroot.sh [DIR]      (default build-aarch64/sysroot)
#
# Nothing on the host changes: apt runs with its own state under DIR/../apt (arm64 as the only
# architecture, an empty dpkg status, the host's sources.list), so `dpkg --add-architecture` is not
# needed. Idempotent: when DIR/.complete names the same package list it exits at once; the .debs
# stay in DIR/../apt/cache for the next time.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
sysroot=${1:-$root/build-aarch64/sysroot}
mkdir -p "$sysroot"
sysroot=$(cd "$sysroot" && pwd)
apt_dir=$(dirname "$sysroot")/apt

# What the runtime links and what the cross build finds through CMake (dnnl's and fmt's configs,
# GTest for the kernel tests); apt adds what these depend on (glibc, libstdc++, ...).
# nlohmann-json3-dev is architecture-independent headers (the artifact's manifest).
packages=(libdnnl-dev libfmt-dev nlohmann-json3-dev libgtest-dev libstdc++6 libgomp1 ocl-icd-opencl-dev)
stamp="bookworm arm64: ${packages[*]}"
if [[ -f $sysroot/.complete && $(cat "$sysroot/.complete") == "$stamp" ]]; then
  exit 0
fi

mkdir -p "$apt_dir"/{lists/partial,cache/archives/partial,state}
: >"$apt_dir/status"
apt_opts=(-o "Dir::State=$apt_dir/state" -o "Dir::State::Lists=$apt_dir/lists"
          -o "Dir::Cache=$apt_dir/cache" -o "Dir::State::status=$apt_dir/status"
          -o APT::Architecture=arm64 -o "APT::Architectures::=arm64" -o Debug::NoLocking=1
          -o APT::Install-Recommends=false -q)
echo "make-arm64-sysroot: reading Debian's arm64 package lists (apt, state in $apt_dir)"
apt-get "${apt_opts[@]}" update >/dev/null
echo "make-arm64-sysroot: downloading ${packages[*]} and their dependencies (arm64)"
# With an empty status every dependency is "missing", so this downloads the whole closure; the
# debs of an earlier package list go first (unpacked with the rest, they would put back what the
# list dropped: protobuf and libonnx, into sysroots made before 2026-12-03).
rm -f "$apt_dir"/cache/archives/*.deb
apt-get "${apt_opts[@]}" install -y --download-only "${packages[@]}" >/dev/null
rm -rf "$sysroot.tmp"
mkdir -p "$sysroot.tmp"
n=0
for deb in "$apt_dir"/cache/archives/*_arm64.deb "$apt_dir"/cache/archives/*_all.deb; do
  [[ -e $deb ]] || continue
  dpkg-deb -x "$deb" "$sysroot.tmp"
  n=$((n + 1))
done
# Absolute symlinks (e.g. libfoo.so -> /lib/aarch64-linux-gnu/libfoo.so.1) would point into the
# host: make them relative to the sysroot.
while IFS= read -r -d '' link; do
  target=$(readlink "$link")
  [[ $target == /* ]] || continue
  ln -sfn "$(realpath -m --relative-to="$(dirname "$link")" "$sysroot.tmp$target")" "$link"
done < <(find "$sysroot.tmp" -type l -print0)
rm -rf "$sysroot"
mv "$sysroot.tmp" "$sysroot"
echo "$stamp" >"$sysroot/.complete"
echo "make-arm64-sysroot: $n packages unpacked into $sysroot ($(du -sh "$sysroot" | cut -f1))"
