# Sourced by the test scripts: what a test does when something it needs cannot be had (node/npm and
# onnxruntime-node, torch, chromium). By default that FAILS the test, so `make test` never passes
# having quietly checked less than it says; KILN_ALLOW_SKIP=1 turns it into a skip (exit 77, which
# ctest lists under "The following tests did not run" in its summary).
#
#   source "$root/tests/lib/missing.sh"; missing "onnxruntime-node (npm) cannot be installed"
missing() {
  if [[ ${KILN_ALLOW_SKIP:-0} == 1 ]]; then
    echo "skipped: $* (KILN_ALLOW_SKIP=1)" >&2
    exit 77
  fi
  echo "FAIL: $*; scripts/install-deps.sh installs it (KILN_ALLOW_SKIP=1 would skip this test instead)" >&2
  exit 1
}
