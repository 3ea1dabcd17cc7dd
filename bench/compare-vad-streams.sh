#!/usr/bin/env bash
# Many Silero VAD v5 streams on one thread, in one run: µs per stream-chunk
# for 1, 8, 64 and 256 streams through Morok's batched plan (f32 and each
# reduced precision the CPU runs: bf16, bf16x3, f16), through one
# Morok plan per stream (prepared each on its own, and as contexts of one
# program), and through onnxruntime's session batched
# (input [B, 576], state [2, B, 128]).
#
#   bench/compare-vad-streams.sh [runs]
#
# runs (default 1): Morok's program and onnxruntime's script run that many
# times, alternated, and each cell is the median of its runs (these VMs
# change speed between processes by 10-15 %, both sides alike).
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-1}"
ninja -C build bench/bench-vad-streams >/dev/null
./scripts/fetch-silero-models.sh >/dev/null
ort_dir="$(./scripts/install-onnxruntime.sh)"
morok_all="" ort_all=""
for _ in $(seq "$runs"); do
  morok=$(MOROK_THREADS=1 build/bench/bench-vad-streams v5)
  morok_all="$morok_all$(echo "$morok" | grep '^ *[0-9]')"$'\n'
  ort_all="$ort_all$(ORT_DIR="$ort_dir" node bench/silero-ort-batch.mjs models/silero_vad_v5.onnx \
    tests/fixtures/speech-16k.wav 1 8 64 256)"$'\n'
done
# bench-vad-streams' table (its batched columns: f32, then each reduced
# precision this CPU runs), onnxruntime's time appended to each row; each
# cell the median of the runs
echo "$morok" | grep -v '^ '
[ "$runs" -gt 1 ] && echo "(each cell: the median of $runs runs)"
echo "$morok" | grep '^ ' | grep -v '^ *[0-9]' | awk '{ printf "%s %14s\n", $0, "onnxruntime" }'
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
# each row as the last run printed it, its cells replaced by the medians
# at the same widths
echo "$morok" | grep '^ *[0-9]' | while IFS= read -r line; do
  n=$(echo "$line" | awk '{ print $1 }')
  cols=$(echo "$line" | awk '{ print NF }')
  meds=""
  for c in $(seq 2 "$cols"); do
    meds="$meds $(echo "$morok_all" | awk -v n="$n" -v c="$c" '$1 == n { print $c }' | median)"
  done
  o=$(echo "$ort_all" | awk -v n="$n" '$1 == n { print $2 }' | median)
  echo "$line" | awk -v meds="$meds" -v o="$o" '{
    split (meds, m, " ")
    rest = $0; out = ""; i = 0
    while (match (rest, /^ *[^ ]+/)) {
      w = RLENGTH; rest = substr (rest, w + 1)
      out = out (i == 0 ? sprintf ("%*s", w, $1) : sprintf ("%*.2f", w, m[i])); i++
    }
    printf "%s %14.2f\n", out, o
  }'
done
