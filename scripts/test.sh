#!/usr/bin/env bash
# Builds Morok and runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
./scripts/fetch-silero-models.sh
ninja -C build
meson test -C build --print-errorlogs --num-processes 2 "$@"
