#!/usr/bin/env bash
# Soak (not a test): hours of speech through morokvad, then through
# morokvad ! morokencoder, as fast as the CPU runs them, with the RSS of the
# gst-launch-1.0 process sampled from /proc/PID/status. Prints each run's RSS
# table, first/last/max, and the growth after warm-up; exits 1 when a run
# fails or grows by more than SOAK_MAX_GROWTH_KB after warm-up.
#
#   scripts/soak.sh [build-dir]          # default build/
#
# The audio is tests/fixtures/speech-16k.wav (29.4 s, 16 kHz mono, about
# seven speech segments) played end to end as often as the hours need, fed
# through a pipe in 100 ms buffers. Settings (environment):
#   SOAK_VAD_HOURS      audio hours through morokvad (10)
#   SOAK_ENCODER_HOURS  audio hours through morokvad ! morokencoder (1)
#   SOAK_ENCODER_MODEL  GigaAM file (tests/fixtures/gigaam-v3-tiny.safetensors)
#   SOAK_INTERVAL       seconds between RSS samples (1)
#   SOAK_WARMUP         share of the samples that count as warm-up (0.1)
#   SOAK_MAX_GROWTH_KB  allowed RSS growth after warm-up (1024)
# docs/testing.md has the figures measured with it.
set -euo pipefail
cd "$(dirname "$0")/.."

build=${1:-build}
vad_hours=${SOAK_VAD_HOURS:-10}
encoder_hours=${SOAK_ENCODER_HOURS:-1}
encoder_model=${SOAK_ENCODER_MODEL:-tests/fixtures/gigaam-v3-tiny.safetensors}
interval=${SOAK_INTERVAL:-1}
warmup=${SOAK_WARMUP:-0.1}
max_growth_kb=${SOAK_MAX_GROWTH_KB:-1024}

[ -f "$build/plugin/libgstmorok.so" ] || { echo "soak: no $build/plugin/libgstmorok.so: build first" >&2; exit 2; }
export GST_PLUGIN_PATH="$PWD/$build/plugin"
export MOROK_MODEL_DIR="${MOROK_MODEL_DIR:-$PWD/models}"
export MOROK_CACHE_DIR="${MOROK_CACHE_DIR:-$PWD/$build/soak-cache}"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gst-launch-1.0 -q filesrc location=tests/fixtures/speech-16k.wav ! wavparse ! \
  filesink location="$tmp/speech.raw"
bytes=$(stat -c %s "$tmp/speech.raw")
caps="format=pcm pcm-format=s16le sample-rate=16000 num-channels=1"

# soak NAME HOURS ELEMENTS...: plays the speech for HOURS through
# "rawaudioparse ! ELEMENTS ! fakesink" and reports the RSS.
soak () {
  local name=$1 hours=$2
  shift 2
  local loops
  loops=$(awk -v h="$hours" -v b="$bytes" 'BEGIN { n = h * 3600 * 32000 / b; print (n == int (n)) ? n : int (n) + 1 }')
  local audio_s
  audio_s=$(awk -v n="$loops" -v b="$bytes" 'BEGIN { printf "%.0f", n * b / 32000 }')
  local samples="$tmp/$name.rss"
  : >"$samples"

  rm -f "$tmp/audio"
  mkfifo "$tmp/audio"
  (for ((i = 0; i < loops; i++)); do cat "$tmp/speech.raw"; done >"$tmp/audio") &
  local feeder=$!
  local start
  start=$(date +%s.%N)
  # shellcheck disable=SC2086 # $caps and the elements are words on purpose
  gst-launch-1.0 -q fdsrc fd=0 blocksize=3200 ! rawaudioparse $caps ! "$@" ! \
    fakesink sync=false <"$tmp/audio" >"$tmp/$name.log" 2>&1 &
  local pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    local rss
    rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status" 2>/dev/null || true)
    [ -n "$rss" ] && echo "$(awk -v s="$start" -v n="$(date +%s.%N)" 'BEGIN { printf "%.1f", n - s }') $rss" >>"$samples"
    sleep "$interval"
  done
  local rc=0
  wait "$pid" || rc=$?
  local wall
  wall=$(awk -v s="$start" -v n="$(date +%s.%N)" 'BEGIN { printf "%.1f", n - s }')
  wait "$feeder" || true

  echo "== $name: $loops x 29.4 s = $audio_s s of audio in $wall s" \
    "($(awk -v a="$audio_s" -v w="$wall" 'BEGIN { printf "%.0f", a / w }')x real time), exit status $rc"
  echo "   $* "
  if [ "$rc" -ne 0 ]; then
    tail -20 "$tmp/$name.log"
    return 1
  fi
  awk -v warm="$warmup" -v limit="$max_growth_kb" '
    { t[NR] = $1; rss[NR] = $2 }
    END {
      if (NR == 0) { print "   no RSS sample: the run was shorter than SOAK_INTERVAL"; exit 0 }
      step = int ((NR + 24) / 25)              # at most about 25 rows
      printf "   %8s %10s\n", "wall s", "VmRSS kB"
      for (i = 1; i <= NR; i++)
        if ((i - 1) % step == 0 || i == NR)
          printf "   %8.1f %10d\n", t[i], rss[i]
      w = int (NR * warm); if (w < 1) w = 1
      max = 0; after = 0
      for (i = 1; i <= NR; i++) { if (rss[i] > max) max = rss[i]; if (i >= w && rss[i] > after) after = rss[i] }
      printf "   first %d kB, after warm-up (%.1f s) %d kB, last %d kB, max %d kB\n",
             rss[1], t[w], rss[w], rss[NR], max
      printf "   growth after warm-up: last %+d kB, max %+d kB (limit %d kB)\n",
             rss[NR] - rss[w], after - rss[w], limit
      exit (after - rss[w] > limit) ? 1 : 0
    }' "$samples"
}

status=0
soak vad "$vad_hours" morokvad || status=1
soak encoder "$encoder_hours" morokvad remove-silence=true ! \
  morokencoder model="$encoder_model" || status=1
exit $status
