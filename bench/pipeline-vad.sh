#!/usr/bin/env bash
# morokvad's cost per chunk inside a real pipeline, timed as a user would:
# gst-launch-1.0 over a long file (the bundled speech, looped) and over a
# one-second one, each once with morokvad and once with identity in its
# place, runs alternated and pinned to one core. The long run minus the
# short one takes out start-up and prepare; morokvad minus identity, over
# the chunks, is what the element adds per chunk. bench-silero's plan-alone
# figure (same machine, same run) comes next to it.
#
#   bench/pipeline-vad.sh [runs] [minutes]
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-5}" minutes="${2:-10}"
ninja -C build bench/bench-silero plugin/libgstmorok.so >/dev/null
./scripts/fetch-silero-models.sh >/dev/null

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
make_wav () { # path minutes
python3 - "$1" "$2" tests/fixtures/speech-16k.wav <<'PY'
import sys, wave
out, minutes, src = sys.argv[1], float(sys.argv[2]), sys.argv[3]
with wave.open(src) as w:
    params, frames = w.getparams(), w.readframes(w.getnframes())
n = int(minutes * 60 * params.framerate) * params.sampwidth
data = (frames * (n // len(frames) + 1))[:n]
with wave.open(out, "wb") as w:
    w.setparams(params)
    w.writeframes(data)
PY
}
make_wav "$work/long.wav" "$minutes"
make_wav "$work/short.wav" "$(awk 'BEGIN { print 1 / 60 }')"
chunks=$(awk -v m="$minutes" 'BEGIN { printf "%d", (m * 60 - 1) * 16000 / 512 }')

export GST_PLUGIN_PATH="$PWD/build/plugin" MOROK_THREADS=1
run () { # file element → seconds
  local t0 t1 wav=$1
  shift
  t0=$(date +%s.%N)
  taskset -c 1 gst-launch-1.0 -q filesrc location="$wav" ! wavparse ! audioconvert \
    ! audio/x-raw,format=F32LE ! "$@" ! fakesink sync=false
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f\n", b - a }'
}
median () { sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
run "$work/long.wav" identity >/dev/null # warm the kernel cache and the page cache
run "$work/long.wav" morokvad >/dev/null
for _ in $(seq "$runs"); do
  for f in long short; do
    run "$work/$f.wav" morokvad >>"$work/vad-$f"
    run "$work/$f.wav" identity >>"$work/id-$f"
  done
done
for k in vad-long vad-short id-long id-short; do
  eval "${k//-/_}=$(median <"$work/$k")"
done
# shellcheck disable=SC2154 # set by the eval above
vad=$(awk -v a="$vad_long" -v b="$vad_short" 'BEGIN { print a - b }')
# shellcheck disable=SC2154
id=$(awk -v a="$id_long" -v b="$id_short" 'BEGIN { print a - b }')
plan=$(taskset -c 1 build/bench/bench-silero 2>&1 | sed -n 's/^execute per chunk: median \([0-9.]*\) us.*/\1/p')
echo "Silero v5 16 kHz, $minutes min of speech ($chunks chunks), one thread, pinned, medians of $runs:"
printf "  pipeline with identity   %7.3f s (long minus one-second file)\n" "$id"
printf "  pipeline with morokvad   %7.3f s (long minus one-second file)\n" "$vad"
awk -v v="$vad" -v i="$id" -v n="$chunks" -v p="$plan" 'BEGIN {
  printf "  morokvad per chunk       %7.2f us  (the plan alone: %.2f us)\n", (v - i) / n * 1e6, p }'
