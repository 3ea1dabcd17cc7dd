#!/usr/bin/env bash
# The full-size GigaAM v3 encoder (16 layers, d_model 768, 16 heads, ff 3072,
# conv kernel 5; seeded random weights) on 10 s and 30 s of audio, batch 1,
# with 1 and 2 threads, through Morok and through onnxruntime in one run.
# Both sides run the same computation: waveform -> log-mel front-end ->
# subsampling -> 16 Conformer layers -> encoder output [1, 768, T'] (no head):
#   Morok  build/bench/bench-gigaam: GigaAmEncoderJit, one plan per thread
#          count (PrepareConfig threads), t bound at 30 s, run at 10 s and 30 s
#   Morok f16  the same with MOROK_PRECISION=f16 (products with the weights
#          in f16, f32 sums; AVX512-FP16 CPUs)
#   Morok bf16, bf16x3  MOROK_PRECISION=bf16 or bf16x3 (each product with the
#          weights as one or three bf16 products on AMX, f32 sums; AMX-BF16 CPUs)
#   ORT    bench/gigaam-ort.mjs: the reference encoder exported to ONNX by
#          scripts/gigaam/make-bench-model.py, onnxruntime-node,
#          intraOpNumThreads 1 or 2, graph optimisation 'all'
# Each side first checks its output on 2 s against the float64 reference.
# Prints prepare times (cold and warm), Morok's per-kernel profile (10 s, one
# thread), a table of median seconds, real-time factors (processing time /
# audio duration) and the ratio, then OpenBLAS against morok_gemm_f32 on the
# encoder's matmul shapes (one thread, build/kernels/bench-gemm).
#
#   bench/compare-gigaam.sh [reps]      (default 5 timed runs per case)
#
# The first run makes the model (~1.8 GB in .cache/gigaam-bench, about a
# minute); a run takes about three minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
reps="${1:-5}"
dir=.cache/gigaam-bench
model=$dir/gigaam-v3-full.safetensors
onnx=$dir/gigaam-v3-full.onnx
inputs=$dir/gigaam-bench-inputs.safetensors

ninja -C build bench/bench-gigaam >/dev/null
if ! [ -f "$model" ] || ! [ -f "$onnx" ] || ! [ -f "$inputs" ]; then
  /usr/bin/python3 scripts/gigaam/make-bench-model.py "$dir"
fi
ort_dir="$(./scripts/install-onnxruntime.sh)"
log=$(mktemp)
trap 'rm -f "$log"' EXIT

echo "== Morok =="
# the pool gets every core; each plan's thread count is its PrepareConfig's
env -u MOROK_THREADS build/bench/bench-gigaam --cold "$model" "$inputs" "$reps" 1 2 \
  | tee -a "$log" | grep -v '^RESULT'
for precision in f16 bf16 bf16x3; do
  echo "== Morok, precision $precision =="
  env -u MOROK_THREADS MOROK_PRECISION=$precision BENCH_GIGAAM_TOP=0 build/bench/bench-gigaam \
    "$model" "$inputs" "$reps" 1 2 | tee -a "$log" | grep -v '^RESULT' \
    || echo "(precision $precision does not run on this CPU)"
done
echo "== onnxruntime =="
ORT_DIR="$ort_dir" node bench/gigaam-ort.mjs "$onnx" "$inputs" "$reps" 1 2 \
  | tee -a "$log" | grep -v '^RESULT'

echo "== GigaAM v3 encoder, full size, waveform -> encoder output, batch 1, median of $reps =="
awk '
  function cell(v, secs) { return v ? sprintf ("%.3f (%.4f)", v, v / secs) : "-" }
  function ratio(o, v) { return v ? sprintf ("%.2fx", o / v) : "-" }
  /^RESULT/ {
    for (i = 3; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
    key = f["seconds"] " " f["threads"]
    t[$2, key] = f["median"]
    if (!(key in seen)) { seen[key] = 1; order[n++] = key }
  }
  END {
    printf "%-6s %7s %15s %15s %15s %15s %15s %9s %8s %8s %10s\n", "audio", "threads",
      "morok s (RTF)", "f16 s (RTF)", "bf16 s (RTF)", "bf16x3 s (RTF)", "ort s (RTF)",
      "ort/morok", "ort/f16", "ort/bf16", "ort/bf16x3"
    for (i = 0; i < n; i++) {
      split(order[i], k, " ")
      m = t["morok", order[i]]; h = t["morok-f16", order[i]]; b = t["morok-bf16", order[i]]
      x = t["morok-bf16x3", order[i]]; o = t["ort", order[i]]
      printf "%-6s %7s %15s %15s %15s %15s %15s %8.2fx %8s %8s %10s\n", k[1] " s", k[2],
        cell(m, k[1]), cell(h, k[1]), cell(b, k[1]), cell(x, k[1]), cell(o, k[1]), o / m,
        ratio(o, h), ratio(o, b), ratio(o, x)
    }
    print "(ort/morok > 1: Morok is faster; RTF = seconds / audio seconds; f16: products with"
    print " the weights in f16, f32 sums; bf16, bf16x3: as one or three bf16 products on AMX,"
    print " f32 sums)"
  }' "$log"

if ninja -C build kernels/bench-gemm >/dev/null 2>&1 && [ -x build/kernels/bench-gemm ]; then
  echo "== sgemm, one thread, GFLOP/s: morok_gemm_f32 (AVX-512) and OpenBLAS =="
  echo "   FF1 | FF2 | q,k,v,out,pw2 | pw1 | subsampling conv 2 | scores per head | weights x values | DFT"
  echo "   | one in-plan task of FF1 | of FF2 (the 64-row tasks a plan uses when it must share rows among threads)"
  OPENBLAS_CORETYPE=SkylakeX OPENBLAS_NUM_THREADS=1 taskset -c 1 build/kernels/bench-gemm --best \
    250 3072 768  250 768 3072  250 768 768  250 1536 768  250 768 3840  250 250 48  250 48 250 \
    1000 322 320  64 512 768  64 512 3072
fi
