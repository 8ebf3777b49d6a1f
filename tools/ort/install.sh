#!/usr/bin/env bash
# Installs onnxruntime-node into tools/ort/node_modules when it is not there yet (the version that
# package-lock.json pins; ONNXRUNTIME_NODE_INSTALL=skip keeps its install script from fetching the
# CUDA provider). Exits 77 when node or npm is missing or the registry cannot be reached, so
# callers can report a skip.
set -euo pipefail
dir=$(cd "$(dirname "$0")" && pwd)

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "node/npm missing" >&2
  exit 77
fi
if [[ ! -d $dir/node_modules/onnxruntime-node ]]; then
  (cd "$dir" && ONNXRUNTIME_NODE_INSTALL=skip npm ci --no-audit --no-fund --silent) ||
    { echo "cannot install onnxruntime-node" >&2; exit 77; }
fi
