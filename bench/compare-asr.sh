#!/usr/bin/env bash
# Full-size GigaAM v3 (16 layers, d_model 768; seeded random weights) from the
# waveform to text and words, CTC and RNN-T, next to the encoder alone, batch
# 1, with 1 and 2 threads, on 10 s, 30 s and 60 s of synthetic speech
# (build/bench/bench-asr; what it times is described at its top):
#   CTC    make-bench-model.py's gigaam-v3-full (34 classes)
#   RNN-T  make-bench-asr.py's gigaam-v3-rnnt-full: v3_e2e_rnnt's head at full
#          size (pred_hidden 320, 1 LSTM layer, joint_hidden 320, 1025
#          classes), the blank's bias set for about 8 tokens/s
# Prints a table: encoder alone, the head's plan, decoding (and its share of
# the encoder), what the whole adds to the encoder alone, the RNN-T decoder's
# predictor steps and joint evaluations, µs per predictor step (its plan's
# share), per joint and per encoded frame, tokens, real-time factor.
#
#   bench/compare-asr.sh [reps]      (default 3 timed runs per case)
#   BENCH_ASR_SECONDS="10 30" bench/compare-asr.sh     (fewer lengths)
#
# The first run makes the models (~2.7 GB in .cache/gigaam-bench, some
# minutes) and fills the kernel cache (a few minutes); a run then takes
# about ten minutes on 2 idle cores.
set -euo pipefail
cd "$(dirname "$0")/.."
reps="${1:-3}"
ninja -C build bench/bench-asr >/dev/null
. bench/asr-models.sh
log=$(mktemp)
trap 'rm -f "$log"' EXIT

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for model in "$ctc" "$rnnt"; do
  # the pool gets every core; each plan's thread count is its PrepareConfig's
  env -u MOROK_THREADS build/bench/bench-asr "$model" "$inputs" "$reps" 1 2 \
    | tee -a "$log" | grep -v '^RESULT'
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

echo "== GigaAM v3 to text, full size, batch 1, median of $reps =="
awk '
  /^RESULT asr/ {
    delete f
    for (i = 3; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
    printf "%-5s %4s %5s %9s %9s %9s %8s %8s %6s %6s %7s %14s %8s %8s %6s %7s\n",
      f["head"], f["seconds"] " s", f["threads"], f["encoder"], f["jit"], f["decode"],
      f["decode_pct"] "%", f["added_pct"] "%", f["steps"], f["joints"],
      f["head"] == "rnnt" ? f["step_us"] : "-",
      f["head"] == "rnnt" ? "(" f["exec_us"] ")" : "", f["head"] == "rnnt" ? f["joint_us"] : "-",
      f["frame_us"], f["tokens"], f["rtf"]
  }
  BEGIN {
    printf "%-5s %4s %5s %9s %9s %9s %8s %8s %6s %6s %7s %14s %8s %8s %6s %7s\n", "head",
      "audio", "thr", "encoder s", "plan s", "decode s", "dec/enc", "added", "steps",
      "joints", "step µs", "(plan µs)", "joint µs", "µs/frame", "tokens", "RTF"
  }
  END {
    print "(encoder: GigaAmEncoderJit alone; plan: GigaAmCtcJit or GigaAmRnntJit; decode: greedy"
    print " decoding and the transcript; dec/enc: decode / encoder; added: (plan + decode) /"
    print " encoder - 1, from separate runs; step µs: one predictor step as the decoder takes it,"
    print " its plan in parentheses; RTF: (plan + decode) / audio seconds)"
  }' "$log"
