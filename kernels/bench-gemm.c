/* SPDX-License-Identifier: MIT */
/* GFLOP/s of morok_gemm_f32 (kernels/include/morok-gemm.h) on one thread, per
 * ISA path, next to OpenBLAS's cblas_sgemm on the same operands: the yardstick
 * of DESIGN.md. Not a test; built only where OpenBLAS is found:
 *
 *   ninja -C build bench/bench-gemm
 *   OPENBLAS_CORETYPE=SkylakeX OPENBLAS_NUM_THREADS=1 build/bench/bench-gemm [--best] [M N K ...]
 *   build/bench/bench-gemm --packed [M N K ...]
 *
 * --best measures only the best ISA this CPU runs (the one plans use) and
 * prints "-" for the others. --packed measures, on AVX-512 (else AVX2),
 * the products a plan runs with a constant weight ([N, K], packed by
 * morok_weight_pack): f32, bf16 and bf16x3 on vdpbf16ps (AVX512-BF16) and
 * int8 (vpdpbusd with VNNI, else vpmaddubsw + vpmaddwd; A quantised, or
 * rounded to bf16, in each call, as in a plan), "-" where this CPU lacks the instructions, each
 * with its largest error against a double product relative to the largest |C|; int8 counts 2 M N K
 * operations. Each shape runs with B stored [K, N] ("nn") and [N, K] ("nt", PyTorch's Linear
 * weight); A is [M, K], C is [M, N]. Each figure is the best of a few runs of at least 0.2 s, after
 * one untimed call. The largest difference from OpenBLAS, relative to the row's sum of |a||b|, is
 * printed as a sanity check.
 *
 * Results: docs/benchmarks.md, "GEMM against OpenBLAS". M = 1 is bound by
 * reading B from memory; the AVX2 path runs at its own peak (8-wide FMA).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cblas.h>

#include "kernel-headers-export.h"
#include "kernels/weight-pack.h"
#include "base/cache-line.h"

static double
now (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

typedef struct
{
  int64_t M, N, K;
  int trans_b;
  const float *a, *b;
  float *c;
  const MorokKernelExports *k; /* NULL: OpenBLAS */
} Run;

static void
run_once (const Run *r)
{
  int64_t M = r->M, N = r->N, K = r->K;
  if (!r->k)
    cblas_sgemm (CblasRowMajor, CblasNoTrans, r->trans_b ? CblasTrans : CblasNoTrans, M, N, K, 1.0f,
                 r->a, K, r->b, r->trans_b ? K : N, 0.0f, r->c, N);
  else if (r->trans_b)
    r->k->gemm_f32 (M, N, K, r->a, K, 1, r->b, 1, K, r->c, N, 0);
  else
    r->k->gemm_f32 (M, N, K, r->a, K, 1, r->b, N, 1, r->c, N, 0);
}

/* Best GFLOP/s of @flops per call of once (r) over 3 timed runs of >= 0.2 s
 * each, after one untimed call. */
static double
measure_calls (void (*once) (const void *r), const void *r, double flops)
{
  double best = 0;
  once (r);
  for (int rep = 0; rep < 3; rep++)
    {
      int64_t iters = 0;
      double t0 = now (), t;
      do
        {
          once (r);
          iters++;
          t = now () - t0;
        }
      while (t < 0.2);
      double g = flops * iters / t * 1e-9;
      best = g > best ? g : best;
    }
  return best;
}

static void
run_call (const void *r)
{
  run_once (r);
}

static double
measure (const Run *r)
{
  return measure_calls (run_call, r, 2.0 * r->M * r->N * r->K);
}

static float *
random_floats (int64_t n)
{
  float *p = aligned_alloc (64, morok_round_64 (n * sizeof (float)));
  for (int64_t i = 0; i < n; i++)
    p[i] = (float) rand () / RAND_MAX * 2.0f - 1.0f;
  return p;
}

/* ---- --packed ---- */

typedef struct
{
  int64_t M, N, K;
  MorokPrecision precision;
  const float *a;
  const void *bp; /* packed */
  size_t bytes;
  uint8_t *qa; /* int8: A quantised, bf16: rounded; morok_weight_pack_a_rows (M) rows */
  float *sa, *c;
  const MorokKernelExports *k;
  int64_t nr; /* the ISA's panel width */
  int amx;    /* int8 on AMX tiles */
} PackedRun;

static void
packed_once (const PackedRun *r)
{
  const MorokKernelExports *k = r->k;
  int64_t M = r->M, N = r->N, K = r->K, nr = r->nr, panels = (N + nr - 1) / nr;
  if (r->precision == MOROK_PRECISION_F32)
    k->gemm_f32_packed (M, N, K, r->a, K, 1, r->bp, r->c, N, 0);
  else if (r->precision == MOROK_PRECISION_INT8)
    {
      int64_t lda = morok_weight_pack_quads (K) * 4;
      const float *sb = (const float *) ((const int8_t *) r->bp + panels * nr * lda);
      k->i8_quantize (M, K, r->a, K, 1, r->qa, r->sa, lda);
      (r->amx ? k->gemm_i8_amx_packed : k->gemm_i8_packed) (M, N, r->qa, r->sa, lda, r->bp, sb,
                                                            (const int32_t *) (sb + panels * nr),
                                                            panels * nr, r->c, N, 0);
    }
  else
    {
      const uint16_t *lo
          = r->precision == MOROK_PRECISION_BF16X3 ? (const uint16_t *) r->bp + r->bytes / 4 : NULL;
      /* A rounded first where a plan would (more than one block of 128
       * columns), else a block at a time in the call */
      int64_t lda = morok_weight_pack_pairs (K, r->precision);
      uint32_t *ahi = N > MOROK_WEIGHT_PACK_TASK_COLS ? (uint32_t *) r->qa : NULL;
      uint32_t *alo = ahi && lo ? ahi + morok_weight_pack_a_rows (M) * lda : NULL;
      if (ahi)
        k->bf16_round (M, K, r->a, K, 1, ahi, alo, lda);
      k->gemm_bf16_packed (M, N, K, r->a, K, 1, ahi, alo, lda, r->bp, lo, lda, r->c, N, 0);
    }
}

static void
packed_call (const void *r)
{
  packed_once (r);
}

static int
bench_packed (int64_t (*shapes)[3], int n_shapes)
{
  const MorokKernelExports *k = &morok_kernel_exports_avx512;
  MorokIsa isa = MOROK_ISA_AVX512;
  if (!morok_kernel_exports_runnable (k))
    k = &morok_kernel_exports_avx2, isa = MOROK_ISA_AVX2;
  if (!morok_kernel_exports_runnable (k))
    {
      printf ("no AVX-512 or AVX2 here\n");
      return 0;
    }
  int64_t nr = morok_weight_pack_nr (isa);
  printf ("%s products (panels of %ld columns)\n", k->name, (long) nr);
  static const MorokPrecision precisions[]
      = { MOROK_PRECISION_F32, MOROK_PRECISION_BF16, MOROK_PRECISION_BF16X3, MOROK_PRECISION_INT8 };
  /* int8 twice where the CPU has AMX-INT8: on vpdpbusd, then on the tiles */
  int amx = k->gemm_i8_amx_packed && morok_weight_pack_int8_amx (nr);
  printf ("%-18s %18s %18s %18s %18s %18s\n", "M x N x K", "f32 GF/s (err)", "bf16", "bf16x3",
          "int8 GOP/s", amx ? "int8 on AMX" : "");
  for (int s = 0; s < n_shapes; s++)
    {
      int64_t M = shapes[s][0], N = shapes[s][1], K = shapes[s][2];
      float *a = random_floats (M * K), *b = random_floats (N * K), *c = random_floats (M * N);
      double *ref = calloc (M * N, sizeof *ref), cmax = 0;
      for (int64_t m = 0; m < M; m++)
        for (int64_t n = 0; n < N; n++)
          {
            for (int64_t kk = 0; kk < K; kk++)
              ref[m * N + n] += (double) a[m * K + kk] * b[n * K + kk];
            cmax = fmax (cmax, fabs (ref[m * N + n]));
          }
      char name[64], cell[5][32] = { "", "", "", "", "" };
      snprintf (name, sizeof name, "%ld x %ld x %ld", (long) M, (long) N, (long) K);
      for (int p = 0; p < 4 + amx; p++)
        {
          MorokPrecision pr = precisions[p < 4 ? p : 3];
          int has = pr == MOROK_PRECISION_F32    ? 1
                    : pr == MOROK_PRECISION_INT8 ? k->gemm_i8_packed != NULL
                                                 : k->gemm_bf16_packed != NULL;
          if (!has || morok_weight_pack_missing (isa, pr))
            {
              snprintf (cell[p], sizeof cell[p], "-");
              continue;
            }
          size_t bytes = morok_weight_pack_bytes (K, N, nr, pr);
          void *bp = aligned_alloc (64, morok_round_64 (bytes));
          morok_weight_pack (b, K, N, 1, K, nr, pr, bp); /* B = W^T, W [N, K] */
          /* int8's quads, or bf16x3's hi and lo pairs: 4 (K + 64) bytes a row */
          int64_t rows = morok_weight_pack_a_rows (M), lda = 4 * (K + 64);
          PackedRun r = { M,
                          N,
                          K,
                          pr,
                          a,
                          bp,
                          bytes,
                          aligned_alloc (64, rows * lda),
                          calloc (rows, sizeof (float)),
                          c,
                          k,
                          nr,
                          p == 4 };
          double g = measure_calls (packed_call, &r, 2.0 * M * N * K), err = 0;
          for (int64_t i = 0; i < M * N; i++)
            err = fmax (err, fabs (c[i] - ref[i]));
          snprintf (cell[p], sizeof cell[p], "%.1f (%.1e)", g, err / cmax);
          free (bp), free (r.qa), free (r.sa);
        }
      printf ("%-18s %18s %18s %18s %18s %18s\n", name, cell[0], cell[1], cell[2], cell[3],
              cell[4]);
      fflush (stdout);
      free (a), free (b), free (c), free (ref);
    }
  return 0;
}

int
main (int argc, char **argv)
{
  static const int64_t default_shapes[][3] = {
    { 512, 512, 512 },  { 250, 3072, 768 }, { 250, 768, 3072 }, { 250, 768, 768 },
    { 125, 3072, 768 }, { 64, 768, 768 },   { 1, 768, 768 },    { 1, 3072, 768 },
  };
  int64_t (*shapes)[3] = (int64_t (*)[3]) default_shapes;
  int n_shapes = sizeof (default_shapes) / sizeof (default_shapes[0]);
  int best_only = argc > 1 && strcmp (argv[1], "--best") == 0;
  int packed = argc > 1 && strcmp (argv[1], "--packed") == 0;
  argc -= best_only + packed, argv += best_only + packed;
  if (argc > 1)
    {
      n_shapes = (argc - 1) / 3;
      shapes = calloc (n_shapes, sizeof *shapes);
      for (int i = 0; i < n_shapes * 3; i++)
        shapes[i / 3][i % 3] = atoll (argv[1 + i]);
    }
  if (packed)
    return bench_packed (shapes, n_shapes);
  const MorokKernelExports *isas[] = { &morok_kernel_exports_avx512, &morok_kernel_exports_avx2,
                                       &morok_kernel_exports_portable };

  printf ("%-18s %-3s %9s %9s %9s %9s %10s\n", "M x N x K", "B", "avx512", "avx2", "portable",
          "openblas", "max diff");
  for (int s = 0; s < n_shapes; s++)
    for (int trans_b = 0; trans_b < 2; trans_b++)
      {
        int64_t M = shapes[s][0], N = shapes[s][1], K = shapes[s][2];
        float *a = random_floats (M * K), *b = random_floats (K * N);
        float *c = random_floats (M * N), *ref = random_floats (M * N);
        Run r = { M, N, K, trans_b, a, b, ref, NULL };
        double blas = measure (&r);
        double g[3];
        double diff = 0;
        int measured = 0;
        r.c = c;
        for (int i = 0; i < 3; i++)
          {
            r.k = isas[i];
            int run = morok_kernel_exports_runnable (isas[i]) && !(best_only && measured);
            g[i] = run ? measure (&r) : NAN;
            measured += run;
            if (!run)
              continue;
            for (int64_t m = 0; m < M; m++)
              for (int64_t n = 0; n < N; n++)
                {
                  double scale = 0;
                  for (int64_t k = 0; k < K; k += 1 + K / 64)
                    scale += fabs (a[m * K + k] * (trans_b ? b[n * K + k] : b[k * N + n]));
                  scale = scale * (1 + K / 64) + 1e-30;
                  double d = fabs (c[m * N + n] - ref[m * N + n]) / scale;
                  diff = d > diff ? d : diff;
                }
          }
        char name[64];
        snprintf (name, sizeof name, "%ld x %ld x %ld", (long) M, (long) N, (long) K);
        char gs[3][16];
        for (int i = 0; i < 3; i++)
          snprintf (gs[i], sizeof gs[i], isnan (g[i]) ? "-" : "%.1f", g[i]);
        printf ("%-18s %-3s %9s %9s %9s %9.1f %10.1e\n", name, trans_b ? "nt" : "nn", gs[0], gs[1],
                gs[2], blas, diff);
        fflush (stdout);
        free (a), free (b), free (c), free (ref);
      }
  return 0;
}
