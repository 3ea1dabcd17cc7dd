#!/usr/bin/env bash
# N streams in one gst-launch-1.0, one core (MOROK_THREADS=1, taskset):
# each stream a filesrc ! wavparse branch of the bundled speech (looped to
# the given seconds), through the request pads of one morokvad (its chunks
# batched: sink_<i> ! src_<i>), through a morokvad of its own each (the
# elements share one program), and through identity (the pipeline alone).
# Runs alternated; medians. Prints the wall time of each and, minus
# identity's, the cost per stream-chunk.
#
#   bench/pipeline-vad-pads.sh [streams] [runs] [seconds]
set -euo pipefail
cd "$(dirname "$0")/.."
streams="${1:-64}" runs="${2:-3}" seconds="${3:-30}"
ninja -C build plugin/libgstmorok.so >/dev/null
./scripts/fetch-silero-models.sh >/dev/null

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$work/speech.wav" "$seconds" tests/fixtures/speech-16k.wav <<'PY'
import sys, wave
out, seconds, src = sys.argv[1], float(sys.argv[2]), sys.argv[3]
with wave.open(src) as w:
    params, frames = w.getparams(), w.readframes(w.getnframes())
n = int(seconds * params.framerate) * params.sampwidth
data = (frames * (n // len(frames) + 1))[:n]
with wave.open(out, "wb") as w:
    w.setparams(params)
    w.writeframes(data)
PY
chunks=$(awk -v s="$seconds" 'BEGIN { printf "%d", s * 16000 / 512 }')

branches () { # kind → the pipeline's description
  local i
  [ "$1" = pads ] && printf 'morokvad name=v max-streams=%d ' "$streams"
  for i in $(seq 0 $((streams - 1))); do
    printf 'filesrc location=%s ! wavparse ! ' "$work/speech.wav"
    case $1 in
      pads) printf 'v.sink_%d v.src_%d ! fakesink sync=false ' "$i" "$i" ;;
      elements) printf 'morokvad ! fakesink sync=false ' ;;
      identity) printf 'identity ! fakesink sync=false ' ;;
    esac
  done
}
export GST_PLUGIN_PATH="$PWD/build/plugin" MOROK_THREADS=1
run () { # kind → "wall cpu" seconds (cpu: user + system)
  # shellcheck disable=SC2046 # the description is split into words on purpose
  /usr/bin/time -f '%e %U %S' -o "$work/time" taskset -c 1 gst-launch-1.0 -q $(branches "$1") >/dev/null
  awk '{ printf "%.3f %.3f\n", $1, $2 + $3 }' "$work/time"
}
median () { # column → the median of that column of stdin
  awk -v c="$1" '{ print $c }' | sort -g |
    awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}
run pads >/dev/null # warm the kernel cache and the page cache
for _ in $(seq "$runs"); do
  for k in pads elements identity; do
    run "$k" >>"$work/$k"
  done
done
id_wall=$(median 1 <"$work/identity") id_cpu=$(median 2 <"$work/identity")
echo "$streams streams of $seconds s ($chunks chunks each), one core, medians of $runs; load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "  kind        wall s   cpu s   us per stream-chunk (wall, cpu; minus identity)"
for k in pads elements identity; do
  awk -v k="$k" -v w="$(median 1 <"$work/$k")" -v c="$(median 2 <"$work/$k")" \
    -v iw="$id_wall" -v ic="$id_cpu" -v n="$((streams * chunks))" \
    'BEGIN { printf "  %-9s %7.2f %7.2f", k, w, c
             if (k != "identity") printf "   %6.1f %6.1f", (w - iw) / n * 1e6, (c - ic) / n * 1e6
             printf "\n" }'
done
