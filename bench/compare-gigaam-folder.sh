#!/bin/sh
# SPDX-License-Identifier: MIT
# The full-size GigaAM v3 benchmark model loaded as its converted file and as
# a model hub folder (scripts/gigaam/make-hub-fixtures.py --folder): peak RSS
# (kB), time to PAUSED (ms: the element's prepare, its "prepared ... in N ms"
# log line) and the process's CPU time (s, user + system) of morokencoder on
# 20 s of the bundled speech, one thread, in f32 and int8, the two sides
# alternated, [runs] times each (default 3).
#
#   bench/compare-gigaam-folder.sh [runs]
#
# Needs .cache/gigaam-bench/gigaam-v3-full.safetensors
# (scripts/gigaam/make-bench-model.py, bench/compare-gigaam.sh makes it).
set -eu
cd "$(dirname "$0")/.."
runs="${1:-3}"
dir=.cache/gigaam-bench
file=$dir/gigaam-v3-full.safetensors
folder=$dir/gigaam-v3-full
wav=$dir/s20.wav
[ -f "$file" ] || { echo "compare-gigaam-folder: no $file (run bench/compare-gigaam.sh)" >&2; exit 1; }
[ -d "$folder" ] || /usr/bin/python3 scripts/gigaam/make-hub-fixtures.py --folder "$file" "$folder"
[ -f "$wav" ] || sox tests/fixtures/speech-16k.wav "$wav" trim 0 20
ninja -C build plugin/libgstmorok.so >/dev/null

run () { # model precision -> "rss_kB prepare_ms cpu_s"
  GST_PLUGIN_PATH=build/plugin MOROK_THREADS=1 GST_DEBUG=morokencoder:4 GST_DEBUG_NO_COLOR=1 \
    taskset -c 1 /usr/bin/time -v gst-launch-1.0 -q filesrc location="$wav" ! wavparse ! \
    audioconvert ! audioresample ! morokencoder model="$1" max-duration=30 precision="$2" ! \
    fakesink 2>&1 | awk '/Maximum resident/ { rss = $NF }
      /(User|System) time \(seconds\)/ { cpu += $NF }
      /prepared .* in [0-9.]+ ms/ { for (i = 1; i < NF; i++) if ($i == "in") ms = $(i + 1) }
      END { print rss, ms, cpu }'
}

for precision in f32 int8; do
  run "$file" "$precision" >/dev/null # compiles the kernels into the cache, once
  for i in $(seq "$runs"); do
    for side in file folder; do
      eval model=\$$side
      echo "$precision $side $(run "$model" "$precision")"
    done
  done
done
