/* SPDX-License-Identifier: MIT */
/* An LD_PRELOAD library for benchmarks on a machine shared with other jobs:
 * clock_gettime (CLOCK_MONOTONIC) answers the process's CPU time instead
 * (CLOCK_PROCESS_CPUTIME_ID), so that a timed run does not count the time
 * the scheduler gave to someone else. Meaningful for a process that
 * computes on one thread (a one-thread plan, onnxruntime with one intra-op
 * thread): with more, the threads' times add up. It does not remove the
 * other jobs' cache and memory traffic. Not a test.
 *
 *   LD_PRELOAD=build/bench/libbench-cpu-clock.so taskset -c 1 \
 *     build/bench/bench-gigaam MODEL INPUTS 5 1
 *
 * Covers bench-gigaam's timings and its per-kernel profile, and node's
 * process.hrtime (bench/gigaam-ort.mjs). CLOCK_REALTIME stays: node and
 * onnxruntime wait on it with deadlines, which CPU time would put in the
 * past (onnxruntime int8 then ran 2x slower). */
#include <dlfcn.h>
#include <time.h>

int
clock_gettime (clockid_t id, struct timespec *ts)
{
  static int (*real) (clockid_t, struct timespec *);
  if (!real)
    real = (int (*) (clockid_t, struct timespec *)) dlsym (RTLD_NEXT, "clock_gettime");
  if (id == CLOCK_MONOTONIC)
    id = CLOCK_PROCESS_CPUTIME_ID;
  return real (id, ts);
}
