#!/usr/bin/env bash
# Silero VAD v5 at 16 kHz, chunk by chunk over the bundled speech sample,
# through Morok's plan, through a hand-written AVX-512 forward pass
# (bench/silero-hand.c, which checks its probabilities against onnxruntime's
# and the plan's within 1e-5) and through onnxruntime, in one run, one
# thread each. Prints µs per chunk (medians) and the ratios.
#
#   bench/compare-silero.sh [passes]
set -euo pipefail
cd "$(dirname "$0")/.."
passes="${1:-10}"
ninja -C build bench/bench-silero bench/silero-hand >/dev/null
./scripts/fetch-silero-models.sh >/dev/null
ort_dir="$(./scripts/install-onnxruntime.sh)"
wav=tests/fixtures/speech-16k.wav

morok=$(MOROK_THREADS=1 build/bench/bench-silero 2>&1 | sed -n 's/^execute per chunk: median \([0-9.]*\) us.*/\1/p')
hand_line=$(build/bench/silero-hand)
hand=$(echo "$hand_line" | sed -n 's/.*median \([0-9.]*\) us.*/\1/p')
ort_line=$(ORT_DIR="$ort_dir" node bench/silero-ort.mjs models/silero_vad_v5.onnx "$wav" "$passes")
ort=$(echo "$ort_line" | sed -n 's/.*median \([0-9.]*\) us.*/\1/p')
echo "Silero VAD v5, 16 kHz, $(nproc) cores, one thread each, $wav:"
printf "  morok        %8.2f us per chunk\n" "$morok"
if [ -n "$hand" ]; then
  printf "  hand-written %8.2f us per chunk (%s)\n" "$hand" "${hand_line#*passes; }"
else
  echo "  hand-written        - ($hand_line)"
fi
printf "  %-12s %8.2f us per chunk\n" "$(echo "$ort_line" | cut -d: -f1)" "$ort"
awk -v m="$morok" -v o="$ort" -v h="$hand" 'BEGIN {
  printf "  ratio        %8.2fx (onnxruntime / morok)\n", o / m
  if (h != "") printf "  ratio        %8.2fx (morok / hand-written)\n", m / h }'
