#!/usr/bin/env bash
# Runs each libFuzzer target of tests/fuzz (docs/fuzzing.md) for a set time
# and prints, per target, the executions, the coverage libFuzzer reports
# (cov: edges, ft: features) and the findings.
#
#   scripts/fuzz.sh [SECONDS [TARGET...]]   60 s per target, every target, by default
#
# Each target is built with clang's libFuzzer, ASan and UBSan into
# build-fuzz/fuzz-TARGET, from the sources of its replay test in ./build
# (tests/fuzz/meson.build lists them), and linked against ./build's
# libmorok for the rest. It grows a working corpus in
# build-fuzz/corpus/TARGET from the committed seeds (which it leaves alone)
# and stops at its first finding: the input is saved in
# build-fuzz/findings/TARGET/ (crash-*, leak-*, timeout-*, oom-*) and
# libFuzzer's report in build-fuzz/TARGET.log. Once fixed, the input goes
# into tests/fuzz/corpus/TARGET/ so that meson test replays it. Exits 1 when
# a target found something.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-60}
[ $# -gt 0 ] && shift
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(onnx gigaam silero elf)
out=build-fuzz

runtime=$(clang -print-file-name=libclang_rt.fuzzer-x86_64.a)
if [ ! -f "$runtime" ]; then
  echo "fuzz.sh: clang has no libFuzzer runtime (Debian: libclang-rt-14-dev)" >&2
  exit 2
fi
[ -d build ] || meson setup build >/dev/null
meson compile -C build morok-1.0 >/dev/null # the library, by its meson name
mkdir -p "$out"

# The sources of fuzz-replay-TARGET but its main (fuzz-replay.c).
sources_of () {
  meson introspect build --targets | python3 -c '
import json, sys
for t in json.load(sys.stdin):
    if t["name"] == "fuzz-replay-" + sys.argv[1]:
        for group in t["target_sources"]:
            print("\n".join(s for s in group.get("sources", []) if not s.endswith("/fuzz-replay.c")))
' "$1"
}

for t in "${targets[@]}"; do
  mapfile -t sources < <(sources_of "$t")
  if [ ${#sources[@]} -eq 0 ]; then
    echo "fuzz.sh: no target '$t' (tests/fuzz/meson.build)" >&2
    exit 2
  fi
  # shellcheck disable=SC2046 # pkg-config's flags are meant to split
  clang -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer \
    -g -O1 -std=c11 -D_GNU_SOURCE -Wall -Wextra -Wno-unused-parameter -I. -Icore \
    $(pkg-config --cflags glib-2.0 json-glib-1.0) "${sources[@]}" \
    build/libmorok-1.0.so -Wl,-rpath,"$PWD/build" $(pkg-config --libs glib-2.0 json-glib-1.0) -lm \
    -o "$out/fuzz-$t"
done

export ASAN_OPTIONS=detect_leaks=1:halt_on_error=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export G_SLICE=always-malloc

status=0
printf '%-8s %12s %8s %8s %6s  %s\n' target executions cov ft finds "log"
for t in "${targets[@]}"; do
  corpus=$out/corpus/$t
  findings=$out/findings/$t
  log=$out/$t.log
  mkdir -p "$corpus" "$findings"
  # -timeout: seconds per input; -rss_limit_mb: also the largest malloc
  "$out/fuzz-$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$findings/" "$corpus" "tests/fuzz/corpus/$t" \
    >"$log" 2>&1 || true
  execs=$(awk '/stat::number_of_executed_units/ { print $2 }' "$log")
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1 | cut -d' ' -f2)
  ft=$(grep -o 'ft: [0-9]*' "$log" | tail -n 1 | cut -d' ' -f2)
  finds=$(find "$findings" -type f | wc -l)
  printf '%-8s %12s %8s %8s %6s  %s\n' "$t" "${execs:-?}" "${cov:-?}" "${ft:-?}" "$finds" "$log"
  [ "$finds" -eq 0 ] || status=1
done
if [ $status -ne 0 ]; then
  echo "findings:"
  find "$out/findings" -type f | sort
fi
exit $status
