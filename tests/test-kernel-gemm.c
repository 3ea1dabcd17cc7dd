/* SPDX-License-Identifier: MIT */
/* kernels/include/morok-gemm.h, compiled for each ISA by clang with the JIT's
 * flags (kernels/kernel-headers-export.c), against a triple loop in double.
 *
 * Shapes straddle the blocking boundaries of every ISA's path (MR = 4, 6;
 * NR = 4, 16, 64; KC = 128, 256; MC = 12 MR; NC = 256) and include the
 * matrix-vector cases (M or N = 1) and the unpacked small paths (M or N up
 * to 8, Silero VAD's shapes among them; K past their 1024-wide blocks);
 * each runs with A and B stored row-major, transposed, with padded or odd
 * leading dimensions, with arbitrary element strides and broadcast (stride
 * 0), and with accumulate off and on. C has padding between rows, which must
 * stay untouched. An element is right when it is within 1e-5 of the sum of
 * |a b| terms (plus |c| when accumulating): the bound of float summation. */
#include <glib.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernel-test-util.h"
#include "kernels/cpu-features.h"
#include "kernels/weight-pack.h"

static const MorokKernelExports *const isas[]
    = {
        &morok_kernel_exports_avx512,   &morok_kernel_exports_avx2,
        &morok_kernel_exports_portable, &morok_kernel_exports_baseline,
        &morok_kernel_exports_avx2v3, /* the int8 products without VNNI, on every AVX2 CPU */
      };

/* M, N, K */
static const int64_t shapes[][3] = {
  { 1, 1, 1 },     { 1, 1, 700 },     { 1, 7, 5 },     { 7, 1, 5 },     { 1, 100, 300 },
  { 100, 1, 300 }, { 1, 333, 600 },   { 333, 1, 600 }, { 2, 2, 2 },     { 3, 5, 7 },
  { 4, 4, 4 },     { 6, 16, 1 },      { 12, 32, 256 }, { 13, 33, 257 }, { 11, 31, 255 },
  { 24, 64, 512 }, { 25, 65, 513 },   { 5, 17, 9 },    { 2, 1000, 3 },  { 1000, 2, 3 },
  { 145, 70, 20 }, { 50, 260, 40 },   { 47, 129, 19 }, { 97, 47, 300 }, { 17, 300, 33 },
  { 9, 9, 1 },     { 160, 520, 300 }, { 6, 64, 128 },  { 7, 65, 129 },  { 73, 63, 127 },
  { 49, 16, 64 },  { 4, 258, 256 },   { 128, 4, 387 }, { 2, 64, 384 },  { 64, 2, 384 },
  { 1, 512, 128 }, { 8, 70, 1100 },   { 70, 8, 40 },   { 3, 33, 17 },   { 33, 3, 2100 },
};

typedef struct
{
  const char *name;
  gboolean broadcast; /* every row (A) / every k (B) holds the same values */
} Layout;

/* Strides of A for M x K: row m, column k at m*sam + k*sak. */
static const Layout a_layouts[] = { { "row-padded", FALSE },
                                    { "row", FALSE },
                                    { "col", FALSE },
                                    { "strided", FALSE },
                                    { "broadcast", TRUE } };

static void
a_strides (int layout, int64_t M, int64_t K, int64_t *sam, int64_t *sak)
{
  int64_t s[][2] = { { K + 3, 1 }, { K, 1 }, { 1, M + 1 }, { 2 * K + 1, 2 }, { 0, 1 } };
  *sam = s[layout][0], *sak = s[layout][1];
}

/* Strides of B for K x N: row k, column n at k*sbk + n*sbn. */
static const Layout b_layouts[] = { { "row-padded", FALSE },
                                    { "col-padded", FALSE },
                                    { "col", FALSE },
                                    { "strided", FALSE },
                                    { "broadcast", TRUE } };

static void
b_strides (int layout, int64_t K, int64_t N, int64_t *sbk, int64_t *sbn)
{
  int64_t s[][2] = { { N + 2, 1 }, { 1, K + 1 }, { 1, K }, { 2 * N + 1, 2 }, { 0, 1 } };
  *sbk = s[layout][0], *sbn = s[layout][1];
}

/* Logical matrices (row-major, dense) and the exact products in double. */
typedef struct
{
  int64_t M, N, K;
  float *a, *b, *c0; /* M x K, K x N, M x N (initial C) */
  double *sum, *mag; /* sum_k a b and sum_k |a b|, M x N */
} Problem;

static Problem *
problem_new (int64_t M, int64_t N, int64_t K, gboolean a_bcast, gboolean b_bcast, GRand *rand)
{
  Problem *p = g_new0 (Problem, 1);
  p->M = M, p->N = N, p->K = K;
  p->a = g_new (float, M *K + 1);
  p->b = g_new (float, K *N + 1);
  p->c0 = g_new (float, M *N + 1);
  p->sum = g_new0 (double, M *N + 1);
  p->mag = g_new0 (double, M *N + 1);
  for (int64_t m = 0; m < M; m++)
    for (int64_t k = 0; k < K; k++)
      p->a[m * K + k] = a_bcast && m ? p->a[k] : (float) g_rand_double_range (rand, -1, 1);
  for (int64_t k = 0; k < K; k++)
    for (int64_t n = 0; n < N; n++)
      p->b[k * N + n] = b_bcast && k ? p->b[n] : (float) g_rand_double_range (rand, -1, 1);
  for (int64_t i = 0; i < M * N; i++)
    p->c0[i] = (float) g_rand_double_range (rand, -1, 1);
  for (int64_t m = 0; m < M; m++)
    for (int64_t k = 0; k < K; k++)
      {
        double a = p->a[m * K + k];
        for (int64_t n = 0; n < N; n++)
          {
            double t = a * p->b[k * N + n];
            p->sum[m * N + n] += t;
            p->mag[m * N + n] += fabs (t);
          }
      }
  return p;
}

static void
problem_free (Problem *p)
{
  g_free (p->a), g_free (p->b), g_free (p->c0), g_free (p->sum), g_free (p->mag);
  g_free (p);
}

#define SENTINEL 1234.5f

/* Stores the problem in the given layouts, runs the ISA's GEMM and checks
 * every element of C and that C's row padding kept its sentinel. */
static void
check_one (const MorokKernelExports *k, const Problem *p, int al, int bl, int accumulate)
{
  int64_t M = p->M, N = p->N, K = p->K, sam, sak, sbk, sbn, ldc = N + 5;
  a_strides (al, M, K, &sam, &sak);
  b_strides (bl, K, N, &sbk, &sbn);
  float *a = g_new0 (float, (M - 1) * sam + (K - 1) * sak + 1);
  float *b = g_new0 (float, (K - 1) * sbk + (N - 1) * sbn + 1);
  float *c = g_new (float, M *ldc);
  for (int64_t m = 0; m < M; m++)
    for (int64_t i = 0; i < K; i++)
      a[m * sam + i * sak] = p->a[m * K + i];
  for (int64_t i = 0; i < K; i++)
    for (int64_t n = 0; n < N; n++)
      b[i * sbk + n * sbn] = p->b[i * N + n];
  for (int64_t i = 0; i < M * ldc; i++)
    c[i] = i % ldc < N ? p->c0[i / ldc * N + i % ldc] : SENTINEL;

  k->gemm_f32 (M, N, K, a, sam, sak, b, sbk, sbn, c, ldc, accumulate);

  for (int64_t m = 0; m < M; m++)
    {
      for (int64_t n = 0; n < N; n++)
        {
          double c0 = accumulate ? p->c0[m * N + n] : 0.0;
          double want = c0 + p->sum[m * N + n];
          double tol = 1e-5 * (fabs (c0) + p->mag[m * N + n]) + 1e-30;
          double got = c[m * ldc + n];
          if (!(fabs (got - want) <= tol))
            g_error ("%s gemm %ldx%ldx%ld, A %s, B %s, accumulate %d: C[%ld, %ld] = %.9g, "
                     "expected %.9g (tolerance %.3g)",
                     k->name, (long) M, (long) N, (long) K, a_layouts[al].name, b_layouts[bl].name,
                     accumulate, (long) m, (long) n, got, want, tol);
        }
      for (int64_t n = N; n < ldc && m * ldc + n < M * ldc; n++)
        g_assert_cmpfloat (c[m * ldc + n], ==, SENTINEL);
    }
  g_free (a), g_free (b), g_free (c);
}

/* Every shape, layout pair and accumulate mode matches the reference. */
static void
test_gemm_matches_reference (gconstpointer data)
{
  const MorokKernelExports *k = data;
  if (skip_unless_runnable (k))
    return;
  GRand *rand = g_rand_new_with_seed (2024);
  for (gsize s = 0; s < G_N_ELEMENTS (shapes); s++)
    {
      int64_t M = shapes[s][0], N = shapes[s][1], K = shapes[s][2];
      Problem *p[2][2]; /* [A broadcast][B broadcast] */
      for (int i = 0; i < 4; i++)
        p[i / 2][i % 2] = problem_new (M, N, K, i / 2, i % 2, rand);
      for (gsize al = 0; al < G_N_ELEMENTS (a_layouts); al++)
        for (gsize bl = 0; bl < G_N_ELEMENTS (b_layouts); bl++)
          for (int acc = 0; acc < 2; acc++)
            check_one (k, p[a_layouts[al].broadcast][b_layouts[bl].broadcast], al, bl, acc);
      for (int i = 0; i < 4; i++)
        problem_free (p[i / 2][i % 2]);
    }
  g_rand_free (rand);
}

/* K = 0 sets C to zero, or leaves it as it is when accumulating; M = 0 or
 * N = 0 writes nothing. */
static void
test_gemm_empty (gconstpointer data)
{
  const MorokKernelExports *k = data;
  if (skip_unless_runnable (k))
    return;
  float a[4] = { 1, 2, 3, 4 }, b[4] = { 5, 6, 7, 8 }, c[6];
  for (int acc = 0; acc < 2; acc++)
    {
      for (int i = 0; i < 6; i++)
        c[i] = 9.0f;
      k->gemm_f32 (2, 2, 0, a, 2, 1, b, 2, 1, c, 3, acc);
      for (int i = 0; i < 6; i++)
        g_assert_cmpfloat (c[i], ==, i % 3 == 2 || acc ? 9.0f : 0.0f);
    }
  for (int i = 0; i < 6; i++)
    c[i] = 9.0f;
  k->gemm_f32 (0, 2, 2, a, 2, 1, b, 2, 1, c, 3, 0);
  k->gemm_f32 (2, 0, 2, a, 2, 1, b, 2, 1, c, 3, 0);
  for (int i = 0; i < 6; i++)
    g_assert_cmpfloat (c[i], ==, 9.0f);
}

/* ---- int8 (kernels/include/morok-gemm-i8.h, kernels/weight-pack.h) ---- */

/* The quantisation int8 specifies, written out plainly: the values x[i*step],
 * i < n, as round (x / s) to nearest even with s = max |x| / @amax (f32
 * arithmetic, as the kernels do it; @amax 127 for the weights, the
 * object's i8_amax for A); returns s. */
static float
ref_quantize (const float *x, int64_t n, int64_t step, int amax, int32_t *q)
{
  float m = 0.0f;
  for (int64_t i = 0; i < n; i++)
    m = fmaxf (m, fabsf (x[i * step]));
  float inv = m > 0.0f ? (float) amax / m : 0.0f;
  for (int64_t i = 0; i < n; i++)
    q[i] = (int32_t) rintf (x[i * step] * inv);
  return m / (float) amax;
}

/* uniform in [-1, 1], with a few rows' or columns' values 50 times larger
 * and some exact zeros, so that scales differ and ties to even occur */
static float *
int8_operand (GRand *rand, int64_t n)
{
  float *x = g_new (float, n);
  for (int64_t i = 0; i < n; i++)
    x[i] = i % 97 == 0 ? 0.0f : (float) g_rand_double_range (rand, -1.0, 1.0) * (i % 13 ? 1 : 50);
  return x;
}

/* A row of max 3 whose other values times 127 / 3 round, in f32, to a tie
 * (n + 1/2) that the exact product is not: a fused multiply-add, which
 * rounds the exact product, would send them the other way. */
static void
tie_row (float *row, int64_t n)
{
  const float inv = 127.0f / 3.0f;
  int64_t got = 1;
  row[0] = 3.0f;
  for (int t = 1; t < 126 && got < n; t++)
    {
      float y = (t + 0.5f) / inv;
      for (int step = 0; step < 8; step++, y = nextafterf (y, 0.0f))
        if (got < n && y * inv == t + 0.5f && (double) y * inv != t + 0.5)
          row[got++] = y;
    }
  g_assert_cmpint (got, >, 10);
  for (; got < n; got++)
    row[got] = 0.0f;
}

/* i8_quantize on every ISA, byte for byte the reference: qa = q + zero and
 * zero past K up to lda (zero = i8_amax + 1: 128, or 64 on AVX2 without
 * VNNI), sa the scale; a row of zeros has scale 0, a row of ties
 * (tie_row) rounds them to even. */
static void
test_i8_quantize (gconstpointer data)
{
  const MorokKernelExports *k = data;
  if (skip_unless_runnable (k))
    return;
  GRand *rand = g_rand_new_with_seed (8);
  const int64_t sizes[][2] = { { 1, 1 }, { 3, 5 }, { 7, 33 }, { 20, 768 }, { 2, 3073 }, { 3, 64 } };
  for (gsize t = 0; t < G_N_ELEMENTS (sizes); t++)
    for (int strided = 0; strided < 2; strided++)
      {
        int64_t M = sizes[t][0], K = sizes[t][1], lda = (K + 3) / 4 * 4;
        /* strided: k-major storage, A[k*M + i] */
        int64_t sam = strided ? 1 : K, sak = strided ? M : 1;
        g_autofree float *a = int8_operand (rand, M * K);
        if (M > 1)
          for (int64_t kk = 0; kk < K; kk++)
            a[sam + kk * sak] = 0.0f; /* row 1: all zero */
        if (M > 2 && K >= 64)
          {
            float row[768];
            tie_row (row, K);
            for (int64_t kk = 0; kk < K; kk++)
              a[2 * sam + kk * sak] = row[kk]; /* row 2: ties of f32, not of the exact product */
          }
        g_autofree uint8_t *qa = g_new (uint8_t, M * lda);
        g_autofree float *sa = g_new (float, M);
        g_autofree int32_t *q = g_new (int32_t, K);
        k->i8_quantize (M, K, a, sam, sak, qa, sa, lda);
        for (int64_t i = 0; i < M; i++)
          {
            float s = ref_quantize (a + i * sam, K, sak, k->i8_amax, q);
            g_assert_cmpfloat (sa[i], ==, s);
            int zero = k->i8_amax + 1;
            for (int64_t kk = 0; kk < lda; kk++)
              g_assert_cmpint (qa[i * lda + kk], ==, kk < K ? q[kk] + zero : zero);
          }
      }
  g_rand_free (rand);
}

/* morok_weight_pack in int8 (host code, every CPU), byte for byte the
 * layout weight-pack.h gives: per column the reference's quantisation,
 * its scale and 128 times its sum over each block of
 * MOROK_WEIGHT_PACK_INT8_KC k; zeros past K (rounded up to 64) and past N
 * (K up to two blocks here). B given [K, N]
 * and as a transposed [N, K]. */
static void
test_i8_pack (void)
{
  GRand *rand = g_rand_new_with_seed (9);
  const int64_t sizes[][3] = { { 5, 70, 16 }, { 33, 64, 64 }, { 1030, 130, 64 } }; /* K, N, NR */
  for (gsize t = 0; t < G_N_ELEMENTS (sizes); t++)
    for (int transposed = 0; transposed < 2; transposed++)
      {
        int64_t K = sizes[t][0], N = sizes[t][1], nr = sizes[t][2], k4 = (K + 63) / 64 * 16;
        int64_t panels = (N + nr - 1) / nr, sbk = transposed ? 1 : N, sbn = transposed ? K : 1;
        g_autofree float *b = int8_operand (rand, K * N);
        gsize bytes = morok_weight_pack_bytes (K, N, nr, MOROK_PRECISION_INT8);
        int64_t blocks = (K + MOROK_WEIGHT_PACK_INT8_KC - 1) / MOROK_WEIGHT_PACK_INT8_KC;
        g_assert_cmpuint (bytes, ==, panels * nr * (k4 * 4 + 4 + 4 * blocks));
        g_autofree int8_t *dst = g_malloc (bytes);
        morok_weight_pack (b, K, N, sbk, sbn, nr, MOROK_PRECISION_INT8, dst);
        const float *scale = (const float *) (dst + panels * k4 * nr * 4);
        const int32_t *corr = (const int32_t *) (scale + panels * nr);
        g_autofree int32_t *q = g_new (int32_t, K);
        for (int64_t col = 0; col < panels * nr; col++)
          {
            float s = col < N ? ref_quantize (b + col * sbn, K, sbk, 127, q) : 0.0f;
            int32_t sum[2] = { 0, 0 }; /* per block */
            for (int64_t kk = 0; kk < k4 * 4; kk++)
              {
                int32_t want = col < N && kk < K ? q[kk] : 0;
                sum[kk / MOROK_WEIGHT_PACK_INT8_KC] += want;
                g_assert_cmpint (dst[((col / nr * k4 + kk / 4) * nr + col % nr) * 4 + kk % 4], ==,
                                 want);
              }
            g_assert_cmpfloat (scale[col], ==, s);
            for (int64_t blk = 0; blk < blocks; blk++)
              g_assert_cmpint (corr[blk * panels * nr + col], ==, 128 * sum[blk]);
          }
      }
  g_rand_free (rand);
}

/* morok_weight_pack in f32, f16, bf16 and bf16x3 (host code, every CPU),
 * element for element the layouts weight-pack.h gives, zeros in the
 * padding; B read [K, N], as a transposed [N, K] and every other column
 * of every other row of a larger matrix (neither stride 1). K and N
 * straddle the packer's blocks of 16 rows and the panels. */
static void
test_float_pack (void)
{
  GRand *rand = g_rand_new_with_seed (12);
  const int64_t sizes[][3] = { { 5, 70, 16 }, { 33, 64, 64 }, { 47, 130, 64 }, { 1, 3, 4 } };
  const MorokPrecision formats[]
      = { MOROK_PRECISION_F32, MOROK_PRECISION_F16, MOROK_PRECISION_BF16, MOROK_PRECISION_BF16X3 };
  for (gsize t = 0; t < G_N_ELEMENTS (sizes); t++)
    for (int layout = 0; layout < 3; layout++)
      for (gsize f = 0; f < G_N_ELEMENTS (formats); f++)
        {
          int64_t K = sizes[t][0], N = sizes[t][1], nr = sizes[t][2];
          int64_t panels = (N + nr - 1) / nr, k2 = morok_weight_pack_pairs (K, formats[f]);
          int64_t sbk = layout == 0 ? N : layout == 1 ? 1 : 4 * N, sbn = layout == 1 ? K : 2;
          g_autofree float *b = g_new (float, 4 * K * N);
          for (int64_t i = 0; i < 4 * K * N; i++)
            b[i] = (float) g_rand_double_range (rand, -2.0, 2.0);
          gsize bytes = morok_weight_pack_bytes (K, N, nr, formats[f]);
          g_autofree guint8 *dst = g_malloc (bytes);
          memset (dst, 0xa5, bytes); /* so that unwritten padding shows */
          morok_weight_pack (b, K, N, sbk, sbn, nr, formats[f], dst);
          const guint16 *hi = (const guint16 *) dst, *lo = hi + bytes / 4;
          for (int64_t col = 0; col < panels * nr; col++)
            for (int64_t kk = 0; kk < (formats[f] == MOROK_PRECISION_F32 ? K : 2 * k2); kk++)
              {
                float v = col < N && kk < K ? b[kk * sbk + col * sbn] : 0.0f;
                int64_t p = col / nr, j = col % nr;
                gsize pair = (gsize) (((p * k2 + kk / 2) * nr + j) * 2 + kk % 2);
                switch (formats[f])
                  {
                  case MOROK_PRECISION_F32:
                    g_assert_cmpfloat (((const float *) dst)[(p * K + kk) * nr + j], ==, v);
                    break;
                  case MOROK_PRECISION_F16:
                    g_assert_cmpuint (hi[pair], ==, morok_f32_to_f16 (v));
                    break;
                  case MOROK_PRECISION_BF16:
                    g_assert_cmpuint (hi[pair], ==, morok_f32_to_bf16 (v));
                    break;
                  default:
                    g_assert_cmpuint (hi[pair], ==, morok_f32_to_bf16 (v));
                    g_assert_cmpuint (lo[pair], ==,
                                      morok_f32_to_bf16 (v - morok_bf16_to_f32 (hi[pair])));
                  }
              }
        }
  g_rand_free (rand);
}

/* gemm_f32_packed with B packed by morok_weight_pack, against the
 * reference within check_one's bound, accumulate off and on. K straddles
 * the blocks of k (128 or 256, stretched by an eighth where that saves a
 * short last block: 129 and 258 run as blocks of 129, 145 as two) and N
 * the panels. */
static void
test_f32_packed (gconstpointer data)
{
  const MorokKernelExports *k = data;
  if (skip_unless_runnable (k))
    return;
  GRand *rand = g_rand_new_with_seed (11);
  const int64_t nr = k->isa == MOROK_EXPORT_ISA_AVX512 ? 64
                     : k->isa == MOROK_EXPORT_ISA_AVX2 ? 16
                                                       : 4;
  const int64_t sizes[][3] = { { 7, 65, 129 }, { 64, 129, 144 }, { 13, 64, 145 }, { 73, 127, 258 },
                               { 6, 17, 287 }, { 5, 33, 288 },   { 9, 128, 387 }, { 3, 5, 1 } };
  for (gsize t = 0; t < G_N_ELEMENTS (sizes); t++)
    for (int acc = 0; acc < 2; acc++)
      {
        int64_t M = sizes[t][0], N = sizes[t][1], K = sizes[t][2];
        Problem *p = problem_new (M, N, K, FALSE, FALSE, rand);
        gsize bytes = (morok_weight_pack_bytes (K, N, nr, MOROK_PRECISION_F32) + 63) / 64 * 64;
        float *bp = aligned_alloc (64, bytes);
        morok_weight_pack (p->b, K, N, N, 1, nr, MOROK_PRECISION_F32, bp);
        g_autofree float *c = g_memdup2 (p->c0, M * N * sizeof (float));
        k->gemm_f32_packed (M, N, K, p->a, K, 1, bp, c, N, acc);
        for (int64_t i = 0; i < M * N; i++)
          {
            double c0 = acc ? p->c0[i] : 0.0, want = c0 + p->sum[i];
            g_assert_cmpfloat (fabs (c[i] - want), <=, 1e-5 * (fabs (c0) + p->mag[i]) + 1e-30);
          }
        free (bp);
        problem_free (p);
      }
  g_rand_free (rand);
}

typedef void (*GemmI8Fn) (int64_t M, int64_t N, const uint8_t *qa, const float *sa, int64_t lda,
                          const int8_t *bq, const float *sb, const int32_t *corr, int64_t cs,
                          float *C, int64_t ldc, int accumulate);

/* An int8 product @fn of the object @k (vpdpbusd, or AMX tiles): A
 * quantised by i8_quantize, B packed by morok_weight_pack, against the
 * exact sums of the reference's integers times the two scales (double):
 * within 2e-7 of the sum of the terms' magnitudes (or of 1), the f32
 * rounding of the sums of each block of k and of the scales; a misplaced
 * quad or a missing correction is off by a large part of it. Shapes
 * straddle the tiles (6 x 64, 6 or 5 x 16 on avx2, AMX's blocks of 32 x
 * 32), the blocks (1024 k, 256 columns, 72 or 60 rows) and a partial quad, and one row over many
 * panels; accumulate off and on. */
static void
check_i8_packed (const MorokKernelExports *k, GemmI8Fn fn)
{
  GRand *rand = g_rand_new_with_seed (10);
  const int64_t nr = k->isa == MOROK_EXPORT_ISA_AVX512 ? 64 : 16;
  const int64_t sizes[][3] = {
    { 1, 17, 5 },      { 6, 64, 4 },      { 7, 65, 1025 },
    { 73, 300, 1030 }, { 250, 768, 768 }, { 1, 1025, 320 },
  }; /* M, N, K; the last as the RNN-T joint */
  for (gsize t = 0; t < G_N_ELEMENTS (sizes); t++)
    for (int acc = 0; acc < 2; acc++)
      {
        int64_t M = sizes[t][0], N = sizes[t][1], K = sizes[t][2];
        int64_t lda = morok_weight_pack_quads (K) * 4, rows = morok_weight_pack_a_rows (M);
        int64_t panels = (N + nr - 1) / nr;
        g_autofree float *a = int8_operand (rand, M * K), *b = int8_operand (rand, K * N);
        /* row 0 and column 0 at their scales' extremes, signs alternating
         * in A: the largest pair sums a product can make (vpmaddubsw
         * saturates at 32767) */
        for (int64_t kk = 0; kk < K; kk++)
          a[kk] = kk % 4 < 2 ? 1.0f : -1.0f, b[kk * N] = kk % 4 < 2 ? 1.0f : -0.999f;
        /* 64-byte aligned, as the plan's buffers */
        gsize bytes = (morok_weight_pack_bytes (K, N, nr, MOROK_PRECISION_INT8) + 63) / 64 * 64;
        int8_t *bp = aligned_alloc (64, bytes);
        morok_weight_pack (b, K, N, N, 1, nr, MOROK_PRECISION_INT8, bp);
        /* rows past M (a tile's worth) are read, never stored */
        g_autofree uint8_t *qa = g_new0 (uint8_t, rows * lda);
        g_autofree float *sa = g_new0 (float, rows);
        k->i8_quantize (M, K, a, K, 1, qa, sa, lda);
        g_autofree float *c = g_new (float, M *N);
        for (int64_t i = 0; i < M * N; i++)
          c[i] = acc ? 0.5f : NAN;
        const float *sb = (const float *) (bp + panels * nr * lda);
        fn (M, N, qa, sa, lda, bp, sb, (const int32_t *) (sb + panels * nr), panels * nr, c, N,
            acc);
        g_autofree int32_t *qa_ref = g_new (int32_t, M * K), *qb_ref = g_new (int32_t, K * N);
        g_autofree float *sa_ref = g_new (float, M), *sb_ref = g_new (float, N);
        for (int64_t i = 0; i < M; i++)
          sa_ref[i] = ref_quantize (a + i * K, K, 1, k->i8_amax, qa_ref + i * K);
        g_autofree int32_t *col = g_new (int32_t, K);
        for (int64_t j = 0; j < N; j++)
          {
            sb_ref[j] = ref_quantize (b + j, K, N, 127, col);
            for (int64_t kk = 0; kk < K; kk++)
              qb_ref[kk * N + j] = col[kk];
          }
        double worst = 0;
        for (int64_t i = 0; i < M; i++)
          for (int64_t j = 0; j < N; j++)
            {
              int64_t sum = 0, mag = 0;
              for (int64_t kk = 0; kk < K; kk++)
                {
                  int64_t t = (int64_t) qa_ref[i * K + kk] * qb_ref[kk * N + j];
                  sum += t, mag += t < 0 ? -t : t;
                }
              double s = (double) sa_ref[i] * sb_ref[j];
              double want = (acc ? 0.5 : 0.0) + s * (double) sum;
              double e = fabs (c[i * N + j] - want) / fmax (1.0, s * (double) mag);
              worst = fmax (worst, e);
            }
        g_assert_cmpfloat (worst, <=, 2e-7);
        free (bp);
      }
  g_rand_free (rand);
}

/* gemm_i8_packed where the CPU runs it (vpdpbusd with VNNI; on AVX2
 * without, vpmaddubsw and vpmaddwd with A in 7 bits) */
static void
test_i8_packed (gconstpointer data)
{
  const MorokKernelExports *k = data;
  if (skip_unless_runnable (k))
    return;
  const char *missing = morok_weight_pack_missing (
      k->isa == MOROK_EXPORT_ISA_AVX512 ? MOROK_ISA_AVX512 : MOROK_ISA_AVX2, MOROK_PRECISION_INT8);
  if (missing)
    {
      g_test_skip_printf ("%s missing", missing);
      return;
    }
  g_assert_nonnull (k->gemm_i8_packed);
  check_i8_packed (k, k->gemm_i8_packed);
}

/* gemm_i8_amx_packed (TDPBUSD) where the CPU has AMX-INT8, on the same
 * operands */
static void
test_i8_amx_packed (gconstpointer data)
{
  const MorokKernelExports *k = data;
  if (skip_unless_runnable (k))
    return;
  if (!morok_weight_pack_int8_amx (64))
    {
      g_test_skip_printf ("%s missing (or the tiles not granted)",
                          morok_cpu_feature_name (MOROK_CPU_AMX_INT8));
      return;
    }
  /* the object is built with -march=native: a CPU with AMX-INT8 has it */
  g_assert_nonnull (k->gemm_i8_amx_packed);
  check_i8_packed (k, k->gemm_i8_amx_packed);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  for (gsize i = 0; i < G_N_ELEMENTS (isas); i++)
    {
      g_autofree char *p1 = g_strdup_printf ("/kernel-gemm/%s/matches-reference", isas[i]->name);
      g_autofree char *p2 = g_strdup_printf ("/kernel-gemm/%s/empty", isas[i]->name);
      g_test_add_data_func (p1, isas[i], test_gemm_matches_reference);
      g_test_add_data_func (p2, isas[i], test_gemm_empty);
      g_autofree char *p3 = g_strdup_printf ("/kernel-gemm/%s/i8-quantize", isas[i]->name);
      g_test_add_data_func (p3, isas[i], test_i8_quantize);
      g_autofree char *p5 = g_strdup_printf ("/kernel-gemm/%s/f32-packed", isas[i]->name);
      g_test_add_data_func (p5, isas[i], test_f32_packed);
      if (isas[i]->isa == MOROK_EXPORT_ISA_PORTABLE)
        continue;
      g_autofree char *p4 = g_strdup_printf ("/kernel-gemm/%s/i8-packed", isas[i]->name);
      g_test_add_data_func (p4, isas[i], test_i8_packed);
      if (isas[i]->isa != MOROK_EXPORT_ISA_AVX512)
        continue;
      g_autofree char *p6 = g_strdup_printf ("/kernel-gemm/%s/i8-amx-packed", isas[i]->name);
      g_test_add_data_func (p6, isas[i], test_i8_amx_packed);
    }
  g_test_add_func ("/kernel-gemm/i8-pack", test_i8_pack);
  g_test_add_func ("/kernel-gemm/float-pack", test_float_pack);
  return g_test_run ();
}
