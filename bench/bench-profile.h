/* SPDX-License-Identifier: MIT */
/* Per-kernel profiles of the benchmark programs: the MorokKernelProfile
 * arrays of many profiled executes of one plan, summed up as each
 * kernel's median, printed slowest first.
 *
 *   BenchProfile *p = bench_profile_new ();
 *   for (...)
 *     bench_profile_add (p, morok_plan_execute_profiled (plan, NULL, 0, NULL));
 *   bench_profile_print (p, 1);  // per chunk; 64 at 64 streams: per stream
 *   bench_profile_free (p);
 */
#pragma once

#include "bench-util.h"
#include "runtime/morok-runtime.h"
#include <glib.h>
#include <stdio.h>

typedef struct
{
  const char *name;
  double flops, bytes;
  GArray *us; /* double, one per profiled execute */
  double median;
} BenchProfileRow;

typedef struct
{
  GArray *rows; /* BenchProfileRow, in the plan's order */
  guint runs;
} BenchProfile;

static inline BenchProfile *
bench_profile_new (void)
{
  BenchProfile *p = g_new0 (BenchProfile, 1);
  p->rows = g_array_new (FALSE, TRUE, sizeof (BenchProfileRow));
  return p;
}

/* Adds the timings of one profiled execute; takes @prof (transfer full). */
static inline void
bench_profile_add (BenchProfile *p, GArray *prof)
{
  if (prof == NULL)
    return;
  for (guint i = p->rows->len; i < prof->len; i++)
    {
      const MorokKernelProfile *k = &g_array_index (prof, MorokKernelProfile, i);
      BenchProfileRow r
          = { k->name, k->flops, k->bytes, g_array_new (FALSE, FALSE, sizeof (double)), 0 };
      g_array_append_val (p->rows, r);
    }
  for (guint i = 0; i < prof->len; i++)
    {
      double us = g_array_index (prof, MorokKernelProfile, i).elapsed_ns / 1e3;
      g_array_append_val (g_array_index (p->rows, BenchProfileRow, i).us, us);
    }
  p->runs++;
  g_array_unref (prof);
}

static inline int
bench_profile_cmp (const void *a, const void *b)
{
  const BenchProfileRow *x = a, *y = b;
  return x->median > y->median ? -1 : x->median < y->median;
}

/* Each kernel's median µs per execute (and that over @per, e.g. the
 * streams of a batch), its share, MFLOP, kB and GFLOP/s, slowest first,
 * then their sum. */
static inline void
bench_profile_print (BenchProfile *p, guint per)
{
  double total = 0;
  for (guint i = 0; i < p->rows->len; i++)
    {
      BenchProfileRow *r = &g_array_index (p->rows, BenchProfileRow, i);
      total += r->median = bench_median ((double *) r->us->data, r->us->len);
    }
  g_array_sort (p->rows, bench_profile_cmp);
  printf ("profile (median per execute over %u profiled executes%s):\n%9s %7s %6s %10s %10s %7s"
          "  %s\n",
          p->runs, per > 1 ? ", and per stream" : "", "us", per > 1 ? "/strm" : "", "share",
          "MFLOP", "kB", "GFLOP/s", "kernel");
  for (guint i = 0; i < p->rows->len; i++)
    {
      BenchProfileRow *r = &g_array_index (p->rows, BenchProfileRow, i);
      printf ("%9.2f %7.3f %5.1f%% %10.3f %10.1f %7.1f  %s\n", r->median, r->median / per,
              100.0 * r->median / total, r->flops / 1e6, r->bytes / 1e3,
              r->median > 0 ? r->flops / r->median / 1e3 : 0.0, r->name);
    }
  printf ("%9.2f %7.3f        sum of the kernels' medians\n", total, total / per);
}

static inline void
bench_profile_free (BenchProfile *p)
{
  if (p == NULL)
    return;
  for (guint i = 0; i < p->rows->len; i++)
    g_array_unref (g_array_index (p->rows, BenchProfileRow, i).us);
  g_array_unref (p->rows);
  g_free (p);
}
