#!/usr/bin/env bash
# The full-size GigaAM v3 encoder (16 layers, d_model 768, 16 heads, ff 3072,
# conv kernel 5; seeded random weights) on 10 s and 30 s of audio, batch 1,
# with 1 and 2 threads, through Morok and through onnxruntime in one run.
# Both sides run the same computation: waveform -> log-mel front-end ->
# subsampling -> 16 Conformer layers -> encoder output [1, 768, T'] (no head):
#   Morok  build/bench/bench-gigaam: GigaAmEncoderJit, one plan per thread
#          count (PrepareConfig threads), t bound at 30 s, run at 10 s and 30 s
#   Morok f16, bf16, bf16x3, int8  the same with MOROK_PRECISION set, where
#          this CPU runs it (docs/jit-wrapper.md, "Precision"): f16 products
#          with the weights, f32 sums (AVX512-FP16); one or three bf16
#          products, f32 sums (AMX-BF16, else AVX512-BF16); int8 weights per
#          column and uint8 activations per row, int32 sums (AVX512-VNNI,
#          or any AVX2 CPU: 7-bit activations without AVX-VNNI); "-" in the
#          table where it does not run
#   ORT    bench/gigaam-ort.mjs: the reference encoder exported to ONNX by
#          scripts/gigaam/make-bench-model.py, onnxruntime-node,
#          intraOpNumThreads 1 or 2, graph optimisation 'all'
#   ORT int8  the same model with every MatMul of a constant weight
#          dynamically quantised (scripts/gigaam/quantize-bench-onnx.py:
#          int8 weights per column, uint8 activations per tensor, fused by
#          onnxruntime into DynamicQuantizeMatMul)
# Each side first checks its output on 2 s against the float64 reference.
# Prints prepare times (cold and warm), Morok's per-kernel profile (10 s, one
# thread), a table of median seconds and real-time factors (processing time /
# audio duration), one of onnxruntime's time over each Morok precision's,
# then OpenBLAS against morok_gemm_f32 on the encoder's matmul shapes and the
# packed products of each precision (one thread, build/bench/bench-gemm).
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
onnx_int8=$dir/gigaam-v3-full-int8.onnx
inputs=$dir/gigaam-bench-inputs.safetensors

ninja -C build bench/bench-gigaam >/dev/null
if ! [ -f "$model" ] || ! [ -f "$onnx" ] || ! [ -f "$inputs" ]; then
  if ! /usr/bin/python3 -c 'import torch, torchaudio, onnx' 2>/dev/null; then
    echo "compare-gigaam: making the model needs Debian's python3-torch, python3-torchaudio" \
      "and python3-onnx: apt-get install python3-torch python3-torchaudio python3-onnx" >&2
    exit 1
  fi
  /usr/bin/python3 scripts/gigaam/make-bench-model.py "$dir"
fi
if ! [ -f "$onnx_int8" ]; then
  /usr/bin/python3 scripts/gigaam/quantize-bench-onnx.py "$onnx" "$onnx_int8"
fi
ort_dir="$(./scripts/install-onnxruntime.sh)"
log=$(mktemp)
trap 'rm -f "$log"' EXIT

echo "== Morok =="
# the pool gets every core; each plan's thread count is its PrepareConfig's
env -u MOROK_THREADS build/bench/bench-gigaam --cold "$model" "$inputs" "$reps" 1 2 \
  | tee -a "$log" | grep -v '^RESULT'
for precision in f16 bf16 bf16x3 int8; do
  echo "== Morok, precision $precision =="
  env -u MOROK_THREADS MOROK_PRECISION=$precision BENCH_GIGAAM_TOP=0 build/bench/bench-gigaam \
    "$model" "$inputs" "$reps" 1 2 | tee -a "$log" | grep -v '^RESULT' \
    || echo "(no precision $precision here: the line above says why)"
done
echo "== onnxruntime =="
ORT_DIR="$ort_dir" node bench/gigaam-ort.mjs "$onnx" "$inputs" "$reps" 1 2 \
  | tee -a "$log" | grep -v '^RESULT'
echo "== onnxruntime, int8 =="
ORT_DIR="$ort_dir" ORT_LABEL=ort-int8 node bench/gigaam-ort.mjs "$onnx_int8" "$inputs" "$reps" 1 2 \
  | tee -a "$log" | grep -v '^RESULT'

echo "== GigaAM v3 encoder, full size, waveform -> encoder output, batch 1, median of $reps =="
awk '
  function cell(v, secs) { return v ? sprintf ("%.3f (%.3f)", v, v / secs) : "-" }
  function ratio(o, v) { return o && v ? sprintf ("%.2fx", o / v) : "-" }
  /^RESULT/ {
    for (i = 3; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
    key = f["seconds"] " " f["threads"]
    t[$2, key] = f["median"]
    if (!(key in seen)) { seen[key] = 1; order[n++] = key }
  }
  END {
    ns = split("morok morok-f16 morok-bf16 morok-bf16x3 morok-int8 ort ort-int8", sides, " ")
    split("f32 f16 bf16 bf16x3 int8 ort ort-int8", names, " ")
    printf "seconds (RTF)\n%-6s %7s", "audio", "threads"
    for (s = 1; s <= ns; s++) printf " %14s", names[s]
    printf "\n"
    for (i = 0; i < n; i++) {
      split(order[i], k, " ")
      printf "%-6s %7s", k[1] " s", k[2]
      for (s = 1; s <= ns; s++) printf " %14s", cell(t[sides[s], order[i]], k[1])
      printf "\n"
    }
    printf "\nspeed-up of each Morok precision over onnxruntime f32 | over onnxruntime int8\n"
    printf "%-6s %7s", "audio", "threads"
    for (s = 1; s <= 5; s++) printf " %15s", names[s]
    printf "\n"
    for (i = 0; i < n; i++) {
      split(order[i], k, " ")
      printf "%-6s %7s", k[1] " s", k[2]
      for (s = 1; s <= 5; s++) {
        v = t[sides[s], order[i]]
        printf " %15s", ratio(t["ort", order[i]], v) " | " ratio(t["ort-int8", order[i]], v)
      }
      printf "\n"
    }
    print "(> 1x: Morok is faster; RTF = seconds / audio seconds)"
  }' "$log"

if ninja -C build bench/bench-gemm >/dev/null 2>&1 && [ -x build/bench/bench-gemm ]; then
  # OpenBLAS's AVX-512 kernels where the CPU has AVX-512, else its AVX2 ones
  # (SkylakeX on an AVX2-only CPU ends in SIGILL)
  coretype=Haswell
  grep -qw avx512f /proc/cpuinfo && coretype=SkylakeX
  echo "== sgemm, one thread, GFLOP/s: morok_gemm_f32 (its best ISA here) and OpenBLAS ($coretype) =="
  echo "   FF1 | FF2 | q,k,v,out,pw2 | pw1 | subsampling conv 2 | scores per head | weights x values | DFT"
  echo "   | one in-plan task of FF1 | of FF2 (the 64-row tasks a plan uses when it must share rows among threads)"
  OPENBLAS_CORETYPE=$coretype OPENBLAS_NUM_THREADS=1 taskset -c 1 build/bench/bench-gemm --best \
    250 3072 768  250 768 3072  250 768 768  250 1536 768  250 768 3840  250 250 48  250 48 250 \
    1000 322 320  64 512 768  64 512 3072
  echo "== products with packed weights, one thread: GFLOP/s (int8: GOP/s) and error of max |C| =="
  echo "   FF1 | FF2 | q,k,v,out,pw2 | pw1 | one in-plan task of FF1"
  taskset -c 1 build/bench/bench-gemm --packed 250 3072 768  250 768 3072  250 768 768 \
    250 1536 768  250 128 768
fi
