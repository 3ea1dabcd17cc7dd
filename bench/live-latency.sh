#!/usr/bin/env bash
# Live transcription's delay, compute and accuracy (build/bench/bench-live):
# a recording of spoken digits played in real time through
#
#   appsrc is-live=true format=time ! audioconvert ! audioresample !
#     morokvad remove-silence=true ! moroktranscriber model=MODEL PROPS ! fakesink sync=true
#
# after the same file offline (filesrc ! wavparse ! ...), for each CONFIG,
# MODEL:PRECISION:THREADS (MOROK_THREADS), and each interval and window:
#
#   digits  tests/fixtures/gigaam-digits.safetensors (the trained digits model)
#   ctc     full-size GigaAM v3 CTC, seeded weights (bench/asr-models.sh)
#   rnnt    full-size GigaAM v3 RNN-T, seeded weights
#
# The seeded models' words mean nothing: their WER is against their own
# offline words, and their delays against the offline words' ends; the
# digits model's delays are against the spoken words' ends (the recording's
# JSON); the own delays, of every model, against the live words' own ends.
# A table of the RESULT lines (bench/bench-live.c says what each column is;
# delays in ms, arrival at the sink pad minus the word's end).
#
#   bench/live-latency.sh [--smoke] [--configs "digits:f32:1 ctc:int8:1 ..."]
#     [--interval "250 500"] [--window "4 8"] [--props "NAME=VALUE ..."] [--wav WAV]
#
# --smoke: the digits model on about 5 s of audio, once (well under 30 s).
# --interval (ms) and --window (s) sweep moroktranscriber's properties of
# those names (default: the element's own); --props are set on every run.
# The audio: tests/fixtures/digits-continuous-16k.wav where it is, else 12
# sequences made by scripts/gigaam/make-digits-audio.py into .cache/live-bench.
# The first run with ctc or rnnt makes the seeded models (torch; minutes).
set -euo pipefail
cd "$(dirname "$0")/.."
configs="digits:f32:1 ctc:int8:1 ctc:f32:1 ctc:f32:2 rnnt:int8:1 rnnt:f32:1 rnnt:f32:2"
intervals=- windows=- props="" wav="" smoke=0
while [ $# -gt 0 ]; do
  case "$1" in
    --smoke) smoke=1 configs="digits:f32:1" ;;
    --configs) configs="$2"; shift ;;
    --interval) intervals="$2"; shift ;;
    --window) windows="$2"; shift ;;
    --props) props="$2"; shift ;;
    --wav) wav="$2"; shift ;;
    *) echo "live-latency.sh: unknown argument '$1' (see the comment at its top)" >&2; exit 2 ;;
  esac
  shift
done
ninja -C build bench/bench-live plugin/libgstmorok.so >/dev/null

cache=.cache/live-bench
mkdir -p "$cache"
if [ -z "$wav" ] && [ "$smoke" = 1 ]; then
  wav=$cache/digits-smoke-16k.wav
  [ -f "$wav" ] || /usr/bin/python3 scripts/gigaam/make-digits-audio.py --sequences 2 --seed 6 \
    --voiced "$wav" >/dev/null
elif [ -z "$wav" ] && [ -f tests/fixtures/digits-continuous-16k.wav ]; then
  wav=tests/fixtures/digits-continuous-16k.wav
elif [ -z "$wav" ]; then
  wav=$cache/digits-live-16k.wav
  [ -f "$wav" ] || /usr/bin/python3 scripts/gigaam/make-digits-audio.py --sequences 12 --seed 7 \
    --voiced "$wav" >/dev/null
fi
truth="${wav%.wav}.json"
case "$configs" in *ctc* | *rnnt*) . bench/asr-models.sh ;; esac

export GST_PLUGIN_PATH=build/plugin GST_REGISTRY=build/bench/gst-registry-live.bin
results=$(mktemp)
trap 'rm -f "$results"' EXIT
echo "machine: $(lscpu | sed -n 's/^Model name: *//p'); load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "audio: $wav"
for config in $configs; do
  IFS=: read -r name precision threads <<<"$config"
  case "$name" in
    digits) model=tests/fixtures/gigaam-digits.safetensors; args=(--truth "$truth") ;;
    ctc) model=$ctc; args=() ;;
    rnnt) model=$rnnt; args=() ;;
    *) echo "live-latency.sh: no model '$name' (digits, ctc, rnnt)" >&2; exit 2 ;;
  esac
  args+=(-p "precision=$precision")
  for p in $props; do args+=(-p "$p"); done
  for interval in $intervals; do
    for window in $windows; do
      sweep=()
      [ "$interval" = - ] || sweep+=(-p "interval=$interval")
      [ "$window" = - ] || sweep+=(-p "window=$window")
      line=$(MOROK_THREADS=$threads build/bench/bench-live "${args[@]}" "${sweep[@]}" \
        "$model" "$wav" | grep '^RESULT live')
      echo "config=$name:$precision:$threads interval=$interval window=$window $line" |
        tee -a "$results" >&2
    done
  done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
awk '
  {
    delete f
    for (i = 1; i <= NF; i++) if (split($i, kv, "=") == 2) f[kv[1]] = kv[2]
    if (NR == 1)
      printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n| %s\n", "config",
        "interval ms", "window s", "latency ms", "delay p50/p90/max ms",
        "own delay p50/p90/max ms", "late (least slack ms)", "interim/s", "WER vs offline", "WER vs truth",
        "CPU s/s live", "CPU s/s offline",
        "--- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
    printf "| %s | %s | %s | %s | %s/%s/%s | %s/%s/%s | %d/%d (%s) | %s | %s | %s | %s | %s |\n",
      f["config"], f["interval"], f["window"], f["latency_ms"], f["delay_p50_ms"],
      f["delay_p90_ms"], f["delay_max_ms"], f["own_delay_p50_ms"], f["own_delay_p90_ms"],
      f["own_delay_max_ms"], f["late"], f["words"], f["slack_min_ms"], f["interim_per_s"], f["wer"],
      ("wer_truth" in f) ? f["wer_truth"] : "-", f["cpu_per_s"], f["offline_cpu_per_s"]
  }' "$results"
echo "(- : the element's default; delay: against the truth's or the offline word's end;"
echo " own delay: against the live word's own end; late: words past PTS + latency / words,"
echo " least slack: the closest a word came to PTS + latency (negative: late);"
echo " CPU s/s: the process's CPU seconds per second of audio, all threads)"
