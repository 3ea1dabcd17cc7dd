#!/usr/bin/env bash
# moroktranscriber in a GStreamer pipeline on 60 s of speech, full-size
# GigaAM v3 (seeded weights; bench/asr-models.sh), CTC and RNN-T, one
# thread, next to the encoder alone (build/bench/bench-asr, the same audio):
#
#   filesrc location=.cache/gigaam-bench/speech-60s.wav ! wavparse !
#     moroktranscriber model=MODEL max-duration=60 ! fakesink
#
# with MOROK_THREADS=1. The element's time is its run of the one 60 s
# utterance, which it logs at GST_DEBUG=moroktranscriber:4 ("ran 1
# utterances, 60.000 s of audio, in N ms": the plan, decoding and pushing the
# words); wall is gst-launch-1.0's whole run (loading the model, preparing
# the plans, reading the file). Medians of REPS runs after one untimed one.
#
#   bench/compare-transcriber.sh [reps]      (default 3)
set -euo pipefail
cd "$(dirname "$0")/.."
reps="${1:-3}"
ninja -C build >/dev/null
. bench/asr-models.sh

median () { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# element: "run_ms wall_s" of one pipeline run
element () {
  local t0 t1 ms
  t0=$(date +%s.%N)
  ms=$(MOROK_THREADS=1 GST_PLUGIN_PATH=build/plugin GST_DEBUG=moroktranscriber:4 \
       GST_DEBUG_NO_COLOR=1 gst-launch-1.0 -q filesrc location="$dir/speech-60s.wav" ! \
       wavparse ! moroktranscriber model="$1" max-duration=60 ! fakesink 2>&1 |
       sed -n 's/.*ran 1 utterances, 60.000 s of audio, in \([0-9.]*\) ms.*/\1/p')
  t1=$(date +%s.%N)
  [ -n "$ms" ] || { echo "no 60 s run logged for $1" >&2; exit 1; }
  echo "$ms $(echo "$t1 - $t0" | bc)"
}

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
printf "%-6s %10s %10s %10s %9s %9s %8s\n" head "encoder s" "bench s" "element s" \
  "RTF" "elem/enc" "wall s"
for model in "$ctc" "$rnnt"; do
  res=$(BENCH_ASR_SECONDS=60 env -u MOROK_THREADS build/bench/bench-asr "$model" "$inputs" \
        "$reps" 1 | grep '^RESULT asr')
  field () { echo "$res" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
  element "$model" >/dev/null
  runs=$(for _ in $(seq "$reps"); do element "$model"; done)
  ms=$(echo "$runs" | cut -d' ' -f1 | median)
  wall=$(echo "$runs" | cut -d' ' -f2 | median)
  enc=$(field encoder)
  printf "%-6s %10.3f %10.3f %10.3f %9.4f %8.1f%% %8.1f\n" "$(field head)" "$enc" \
    "$(field total)" "$(echo "$ms / 1000" | bc -l)" "$(echo "$ms / 60000" | bc -l)" \
    "$(echo "100 * ($ms / 1000 / $enc - 1)" | bc -l)" "$wall"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "(encoder: GigaAmEncoderJit alone, bench-asr; bench: its plan + decode; element: the"
echo " element's run of the 60 s utterance; RTF: element / 60 s; elem/enc: element / encoder - 1)"
