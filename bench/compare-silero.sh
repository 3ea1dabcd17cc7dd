#!/usr/bin/env bash
# Silero VAD v5 at 16 kHz, chunk by chunk over the bundled speech sample,
# through Morok's plan, through a hand-written AVX-512 forward pass
# (bench/silero-hand.c, which checks its probabilities against onnxruntime's
# and the plan's within 1e-5) and through onnxruntime, in one run, one
# thread each. The plan and the hand-written pass run ROUNDS times one after
# the other (these VMs change speed between processes, by a quarter at
# times: one pair can say 0.91x and the next 1.14x), onnxruntime once.
# silero-hand also runs the plan step by step in its own process, its
# passes alternating with the hand-written ones, so that both see the same
# speed of the machine: that ratio, the median over the rounds, is the one
# to quote. Prints µs per chunk (medians; the plan's and the hand-written
# pass's of each round, then the median over the rounds) and the ratios.
#
#   bench/compare-silero.sh [passes] [rounds]   (onnxruntime's passes: 10;
#                                                rounds: 5)
set -euo pipefail
cd "$(dirname "$0")/.."
passes="${1:-10}"
rounds="${2:-5}"
ninja -C build bench/bench-silero bench/silero-hand >/dev/null
./scripts/fetch-silero-models.sh >/dev/null
ort_dir="$(./scripts/install-onnxruntime.sh)"
wav=tests/fixtures/speech-16k.wav

morok_all="" hand_all="" same_all="" hand_line=""
for _ in $(seq "$rounds"); do
  m=$(MOROK_THREADS=1 build/bench/bench-silero 2>&1 | sed -n 's/^execute per chunk: median \([0-9.]*\) us.*/\1/p')
  hand_line=$(build/bench/silero-hand)
  h=$(echo "$hand_line" | sed -n 's/.*median \([0-9.]*\) us.*/\1/p')
  r=$(echo "$hand_line" | sed -n 's/.*same process [0-9.]* us (\([0-9.]*\)x).*/\1/p')
  morok_all="$morok_all $m" hand_all="$hand_all ${h:--}" same_all="$same_all ${r:--}"
done
median() { tr ' ' '\n' | grep -v '^-\?$' | sort -g | awk '{v[NR] = $1} END {
  if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
morok=$(echo "$morok_all" | median)
hand=$(echo "$hand_all" | median)
ratio=$(paste -d' ' <(echo "$morok_all" | tr ' ' '\n' | sed '/^$/d') \
                   <(echo "$hand_all" | tr ' ' '\n' | sed '/^$/d') |
        awk '$2 != "-" {printf "%s ", $1 / $2}' | median)
same=$(echo "$same_all" | median)
ort_line=$(ORT_DIR="$ort_dir" node bench/silero-ort.mjs models/silero_vad_v5.onnx "$wav" "$passes")
ort=$(echo "$ort_line" | sed -n 's/.*median \([0-9.]*\) us.*/\1/p')
echo "Silero VAD v5, 16 kHz, $(nproc) cores, one thread each, $wav, $rounds rounds:"
printf "  morok        %8.2f us per chunk (rounds:%s)\n" "$morok" "$morok_all"
if [ -n "$hand" ]; then
  printf "  hand-written %8.2f us per chunk (rounds:%s; %s)\n" "$hand" "$hand_all" "${hand_line#*passes; }"
  printf "  in one process, the plan's step / the hand-written pass: %.2fx (rounds:%s)\n" "$same" "$same_all"
else
  echo "  hand-written        - ($hand_line)"
fi
printf "  %-12s %8.2f us per chunk\n" "$(echo "$ort_line" | cut -d: -f1)" "$ort"
awk -v m="$morok" -v o="$ort" -v r="$ratio" 'BEGIN {
  printf "  ratio        %8.2fx (onnxruntime / morok)\n", o / m
  if (r != "") printf "  ratio        %8.2fx (morok / hand-written, separate processes, median of the rounds)\n", r }'
