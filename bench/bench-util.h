/* SPDX-License-Identifier: MIT */
/* Timing helpers of the benchmark programs: a monotonic clock and medians. */
#pragma once

#include <stdlib.h>
#include <time.h>

/* Monotonic time in µs. */
static inline double
bench_now_us (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static inline int
bench_cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

/* The median of @n values (sorts @v in place). */
static inline double
bench_median (double *v, size_t n)
{
  qsort (v, n, sizeof *v, bench_cmp_double);
  return v[n / 2];
}
