#!/usr/bin/env bash
# Morok against onnxruntime on the full-size GigaAM encoder, 10 s of audio,
# in alternated rounds, for a machine shared with other jobs where one run
# after the other (bench/compare-gigaam.sh) lets the load change between the
# sides. Each round runs every side once (3 timed executes, the median) in
# turn: Morok at each precision of $PRECISIONS (default "int8";
# build/bench/bench-gigaam with MOROK_PRECISION), then onnxruntime on each
# model of $ORT_MODELS (default "int8": the model of
# scripts/gigaam/quantize-bench-onnx.py; "f32" the float one). One thread is
# pinned to CPU 1, two to CPUs 0-1. CLOCK=cpu (one thread only) times the
# process's CPU time instead of the wall clock (bench/cpu-clock.c: the time
# the scheduler gave to other jobs is not counted; their cache and memory
# traffic still is). Prints each round, then per side the median over the
# rounds, and the median over the rounds of onnxruntime's time over
# Morok's (> 1: Morok is faster).
#
#   bench/alternate-gigaam.sh [rounds [threads]]    (default 5 rounds, 1 thread)
#
# Needs the models of bench/compare-gigaam.sh (run it once first).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${1:-5}" threads="${2:-1}"
dir=.cache/gigaam-bench
inputs=$dir/gigaam-bench-inputs.safetensors
cpus=1
[ "$threads" -gt 1 ] && cpus=0-$((threads - 1))
preload=
if [ "${CLOCK:-wall}" = cpu ]; then
  [ "$threads" = 1 ] || { echo "CLOCK=cpu times one thread only" >&2; exit 1; }
  ninja -C build bench/libbench-cpu-clock.so >/dev/null
  preload=$PWD/build/bench/libbench-cpu-clock.so
fi
ninja -C build bench/bench-gigaam >/dev/null
ort_dir="$(./scripts/install-onnxruntime.sh)"
log=$(mktemp)
trap 'rm -f "$log"' EXIT

for r in $(seq "$rounds"); do
  echo "round $r, $(uptime | sed 's/.*load/load/')"
  for p in ${PRECISIONS:-int8}; do
    env -u MOROK_THREADS LD_PRELOAD=$preload MOROK_PRECISION="$p" BENCH_GIGAAM_SECONDS=10 \
      BENCH_GIGAAM_PROFILE_THREADS=0 taskset -c $cpus build/bench/bench-gigaam \
      $dir/gigaam-v3-full.safetensors "$inputs" 3 "$threads" | grep '^RESULT' | tee -a "$log"
  done
  for m in ${ORT_MODELS:-int8}; do
    onnx=$dir/gigaam-v3-full.onnx label=ort
    [ "$m" = int8 ] && onnx=$dir/gigaam-v3-full-int8.onnx label=ort-int8
    LD_PRELOAD=$preload ORT_DIR="$ort_dir" ORT_LABEL=$label BENCH_GIGAAM_SECONDS=10 \
      taskset -c $cpus node bench/gigaam-ort.mjs "$onnx" "$inputs" 3 "$threads" \
      | grep '^RESULT' | tee -a "$log"
  done
done

echo "== ${CLOCK:-wall} seconds, 10 s of audio, $threads thread(s), $rounds rounds: median over the rounds =="
awk '
  function median(list,   v, n, i, j, x) {
    n = split(list, v, " ")
    for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j - 1] > v[j]; j--) { x = v[j]; v[j] = v[j - 1]; v[j - 1] = x }
    return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
  }
  /^RESULT/ {
    split($5, kv, "="); side = $2
    if (!(side in t)) order[n++] = side
    t[side] = t[side] " " kv[2]; round[side]++; at[side, round[side]] = kv[2]
  }
  END {
    for (i = 0; i < n; i++) printf "%-14s %.3f s  (%s )\n", order[i], median(t[order[i]]), t[order[i]]
    for (i = 0; i < n; i++) {
      if (order[i] !~ /^morok/) continue
      for (j = 0; j < n; j++) {
        if (order[j] !~ /^ort/) continue
        q = ""
        for (k = 1; k <= round[order[i]]; k++) q = q " " sprintf ("%.3f", at[order[j], k] / at[order[i], k])
        printf "%s / %s: %.2fx  (%s )\n", order[j], order[i], median(q), q
      }
    }
  }' "$log"
