#!/usr/bin/env bash
# Installs onnxruntime-node (pinned) into .cache/onnxruntime-node for the
# reference scripts and benchmarks. --ignore-scripts: its install script only
# fetches optional GPU libraries from a host that is not reachable here; the
# CPU binding ships inside the npm package. Prints the folder.
set -euo pipefail
ORT_VERSION=1.30.0
dir="$(cd "$(dirname "$0")/.." && pwd)/.cache/onnxruntime-node"
pkg="$dir/node_modules/onnxruntime-node/package.json"
if ! { [ -f "$pkg" ] && grep -q "\"version\": \"$ORT_VERSION\"" "$pkg"; }; then
  command -v npm >/dev/null || { echo "install-onnxruntime: npm is not installed" >&2; exit 1; }
  mkdir -p "$dir"
  [ -f "$dir/package.json" ] || echo '{ "private": true }' > "$dir/package.json"
  (cd "$dir" && npm install --silent --no-audit --no-fund --ignore-scripts "onnxruntime-node@$ORT_VERSION")
fi
echo "$dir"
