#!/usr/bin/env bash
# Many Silero VAD v5 streams on one thread, in one run: µs per stream-chunk
# for 1, 8, 64 and 256 streams through Morok's batched plan (f32 and each
# reduced precision the CPU runs: bf16, bf16x3, f16), through one
# Morok plan per stream (prepared each on its own, and as contexts of one
# program), and through onnxruntime's session batched
# (input [B, 576], state [2, B, 128]).
#
#   bench/compare-vad-streams.sh
set -euo pipefail
cd "$(dirname "$0")/.."
ninja -C build bench/bench-vad-streams >/dev/null
./scripts/fetch-silero-models.sh >/dev/null
ort_dir="$(./scripts/install-onnxruntime.sh)"
morok=$(MOROK_THREADS=1 build/bench/bench-vad-streams v5)
ort=$(ORT_DIR="$ort_dir" node bench/silero-ort-batch.mjs models/silero_vad_v5.onnx \
  tests/fixtures/speech-16k.wav 1 8 64 256)
# bench-vad-streams' table (its batched columns: f32, then each reduced
# precision this CPU runs), onnxruntime's time appended to each row
echo "$morok" | grep -v '^ '
echo "$morok" | grep '^ ' | while IFS= read -r line; do
  n=$(echo "$line" | awk '{ print $1 }')
  o=$(echo "$ort" | awk -v n="$n" '$1 == n { print $2 }')
  printf "%s %14s\n" "$line" "${o:-onnxruntime}"
done
