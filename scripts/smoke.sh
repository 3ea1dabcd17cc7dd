#!/usr/bin/env bash
# Smoke runs of the tools (not a benchmark): each script of scripts/ and
# bench/ once, with its smallest arguments, so that a rename or a changed
# output breaks CI rather than the next person to run it. A run passes when
# it exits 0 and its output holds the line it exists to print (a table row,
# a ratio, a segment); its figures mean nothing at these sizes. .ci/run
# calls it after scripts/test.sh, which runs setup.sh,
# fetch-silero-models.sh and the suite (the gigaam-reference and
# gigaam-digits tests run scripts/gigaam/check.py and eval-digits.py, and
# check.py imports convert.py, reference.py, safetensors_lite.py,
# sentencepiece_lite.py and make-transcript-fixture.py).
#
#   scripts/smoke.sh [NAME...]     every run by default; NAME as printed
#
# Prints one line per run (ok, SKIPPED and why, or FAILED with the end of
# its log; logs in build/smoke/). Exits 1 when a run failed. Runs whose
# tools are not installed (onnxruntime through npm, PyTorch, clang's
# libFuzzer runtime) are skipped with the reason.
#
# Not run here, for the reason given: the full-size GigaAM benchmarks
# (bench/asr-models.sh, compare-asr.sh, compare-gigaam.sh,
# alternate-gigaam.sh, compare-transcriber.sh, compare-gigaam-folder.sh,
# and the makers of their
# models scripts/gigaam/make-bench-model.py, make-bench-asr.py and
# quantize-bench-onnx.py) need a 2.7 GB model that PyTorch takes minutes to
# make; scripts/gigaam/train-digits.py trains for tens of minutes.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2

logs=build/smoke
mkdir -p "$logs"
only=("$@")
failed=()
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

wanted () { # name: whether this run was asked for
  [ ${#only[@]} -eq 0 ] && return 0
  local n
  for n in "${only[@]}"; do [ "$n" = "$1" ] && return 0; done
  return 1
}

# run NAME PATTERN COMMAND...: runs COMMAND; passes when it exits 0 and
# its output matches the extended regular expression PATTERN.
run () {
  local name=$1 pattern=$2
  shift 2
  wanted "$name" || return 0
  local log=$logs/$name.log t0 rc=0
  t0=$(date +%s)
  "$@" >"$log" 2>&1 || rc=$?
  local s=$(($(date +%s) - t0))
  if [ $rc -eq 0 ] && grep -Eq "$pattern" "$log"; then
    printf 'smoke: %-22s ok (%d s)\n' "$name" "$s"
  else
    printf 'smoke: %-22s FAILED (exit %d, %d s; wanted /%s/), %s ends:\n' "$name" $rc "$s" \
      "$pattern" "$log"
    tail -n 15 "$log" | sed 's/^/    /'
    failed+=("$name")
  fi
}

skip () { # NAME REASON
  wanted "$1" && printf 'smoke: %-22s SKIPPED: %s\n' "$1" "$2"
  return 0
}

ninja -C build >/dev/null || { echo "smoke: the build fails" >&2; exit 1; }
./scripts/fetch-silero-models.sh >/dev/null || { echo "smoke: no Silero models" >&2; exit 1; }

# ---- scripts/ ----

run run-vad 'speech-start +at' scripts/run-vad.sh

# minutes of audio through morokvad and through the encoder: a few
# seconds' run, whose RSS growth says nothing (the limit is for hours)
run soak 'growth after warm-up' \
  env SOAK_VAD_HOURS=0.1 SOAK_ENCODER_HOURS=0.03 SOAK_INTERVAL=0.5 SOAK_MAX_GROWTH_KB=10000000 \
  MOROK_CACHE_DIR="$PWD/build/smoke/cache" scripts/soak.sh

if [ -f "$(clang -print-file-name=libclang_rt.fuzzer-x86_64.a 2>/dev/null)" ]; then
  run fuzz '^elf +[0-9]+ ' scripts/fuzz.sh 2
else
  skip fuzz "clang has no libFuzzer runtime (Debian: libclang-rt-14-dev)"
fi

# The fixture makers, into a folder of their own: make-fixtures.py and
# make-utterances-wav.py are deterministic, so what they make is what is
# committed. make-asr-fixtures.py's files do not match the committed ones
# byte for byte (check.py checks those against reference.py): it is only
# run.
if /usr/bin/python3 -c 'import torch' 2>/dev/null; then
  same_as_committed () { # DIR: each file made equals the committed one
    local f
    for f in "$1"/*; do cmp "$f" "tests/fixtures/${f##*/}" || return 1; done
    echo "same as tests/fixtures: $(cd "$1" && echo *)"
  }
  fixtures () {
    mkdir -p "$tmp/fixtures" && /usr/bin/python3 scripts/gigaam/make-fixtures.py "$tmp/fixtures" &&
      /usr/bin/python3 scripts/gigaam/make-utterances-wav.py "$tmp/fixtures" &&
      same_as_committed "$tmp/fixtures"
  }
  run make-fixtures 'same as tests/fixtures' fixtures
  asr_fixtures () {
    mkdir -p "$tmp/asr" && cp tests/fixtures/gigaam-audio.safetensors "$tmp/asr" &&
      /usr/bin/python3 scripts/gigaam/make-asr-fixtures.py "$tmp/asr"
  }
  run make-asr-fixtures 'gigaam-asr-expected.json' asr_fixtures
  run make-digits-audio '"words"' \
    bash -c "/usr/bin/python3 scripts/gigaam/make-digits-audio.py --sequences 1 '$tmp/digits.wav' &&
      cat '$tmp/digits.json'"
else
  for n in make-fixtures make-asr-fixtures make-digits-audio; do
    skip "$n" "PyTorch is not installed (Debian: python3-torch)"
  done
fi

# ---- bench/ ----

run pipeline-vad 'per chunk' bench/pipeline-vad.sh 1 0.1
run live-latency '^| digits:f32:1' bench/live-latency.sh --smoke
run live-wer '^RESULT live-wer' bench/live-wer.py tests/fixtures/gigaam-digits.safetensors \
  tests/fixtures/digits-16k.wav
run pipeline-vad-pads 'per stream-chunk' bench/pipeline-vad-pads.sh 2 1 2
run bench-core '[0-9]' build/bench/bench-core
run bench-jit-overhead '_execute' build/bench/bench-jit-overhead
run bench-vad-instances '[0-9]' env GST_PLUGIN_PATH="$PWD/build/plugin" \
  build/bench/bench-vad-instances 2
# the CPU-time clock that alternate-gigaam.sh's CLOCK=cpu preloads
# shellcheck disable=SC2016 # expanded by the inner shell
run bench-cpu-clock '_execute' bash -c 'ninja -C build bench/libbench-cpu-clock.so &&
  LD_PRELOAD="$PWD/build/bench/libbench-cpu-clock.so" build/bench/bench-jit-overhead'
if [ -x build/bench/isa-peaks ]; then
  run isa-peaks 'FMA' build/bench/isa-peaks
else
  skip isa-peaks "x86-64 only"
fi
# grep reads all of ninja's list: -q would stop early, and pipefail see ninja's SIGPIPE
if ninja -C build -t targets all 2>/dev/null | grep '^bench/bench-gemm:' >/dev/null; then
  run bench-gemm 'openblas' bash -c 'ninja -C build bench/bench-gemm && build/bench/bench-gemm --best 64 64 64'
else
  skip bench-gemm "OpenBLAS or clang not found at configure (Debian: libopenblas-dev)"
fi

# onnxruntime's side: only where it is installed already (npm takes
# minutes to fetch it), then install-onnxruntime.sh only finds it
if [ -d .cache/onnxruntime-node/node_modules/onnxruntime-node ] && command -v node >/dev/null; then
  run install-onnxruntime 'onnxruntime-node$' scripts/install-onnxruntime.sh
  run compare-silero 'onnxruntime / morok' bench/compare-silero.sh 1 1
  run compare-vad-streams 'onnxruntime' bench/compare-vad-streams.sh 1
else
  for n in install-onnxruntime compare-silero compare-vad-streams; do
    skip "$n" "onnxruntime-node is not installed (scripts/install-onnxruntime.sh, npm)"
  done
fi

if [ ${#failed[@]} -gt 0 ]; then
  echo "smoke: FAILED: ${failed[*]}"
  exit 1
fi
