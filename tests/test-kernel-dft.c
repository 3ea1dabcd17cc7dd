/* SPDX-License-Identifier: MIT */
/* kernels/include/morok-dft.h, compiled for each ISA by clang with the JIT's
 * flags (kernels/kernel-headers-export.c), against the DFT summed in double:
 * every power of two it takes, 1 to 16 frames, strided samples and window,
 * the frames anywhere in memory. An FFT's error grows as eps log2 L times
 * the spectrum's norm (sqrt (L) times the windowed frame's): each bin is
 * held to 2 eps log2 (L) sqrt (L) |w x|_2 (about 10x the largest error
 * seen). */
#include <glib.h>
#include <math.h>
#include <stdint.h>

#include "kernel-test-util.h"

static const MorokKernelExports *const isas[] = {
  &morok_kernel_exports_avx512,   &morok_kernel_exports_avx2,   &morok_kernel_exports_portable,
  &morok_kernel_exports_baseline, &morok_kernel_exports_avx2v3,
};

/* cos then sin of 2 pi j / L, j = 0 .. L/2, as the renderer writes them */
static float *
twiddles (int64_t L)
{
  float *tw = g_new (float, L + 2);
  for (int64_t j = 0; j <= L / 2; j++)
    tw[j] = (float) cos (2 * G_PI * j / L), tw[L / 2 + 1 + j] = (float) sin (2 * G_PI * j / L);
  return tw;
}

typedef struct
{
  int64_t L, rows, se, sw;
} Shape;

/* One call on random frames; returns the largest error over its bound. */
static double
check_one (const MorokKernelExports *k, const Shape *s, GRand *rng)
{
  const int64_t L = s->L, F = L / 2 + 1;
  g_autofree float *tw = twiddles (L);
  g_autofree float *win = g_new (float, L * s->sw);
  g_autofree float *data = g_new (float, s->rows *(L * s->se + 7));
  g_autofree float *out = g_new (float, s->rows *F);
  const float *frames[16];
  for (int64_t n = 0; n < L * s->sw; n++)
    win[n] = (float) g_rand_double_range (rng, 0, 1);
  for (int64_t i = 0; i < s->rows * (L * s->se + 7); i++)
    data[i] = (float) g_rand_double_range (rng, -1, 1);
  for (int64_t r = 0; r < s->rows; r++) /* frames in reverse order, 7 floats apart */
    frames[r] = data + (s->rows - 1 - r) * (L * s->se + 7) + r % 7;
  k->dft_mag_f32 (s->rows, L, frames, s->se, win, s->sw, tw, out);
  double worst = 0;
  for (int64_t r = 0; r < s->rows; r++)
    {
      double norm = 0;
      for (int64_t n = 0; n < L; n++)
        norm += pow ((double) win[n * s->sw] * frames[r][n * s->se], 2);
      double bound = 2 * 0x1p-24 * log2 ((double) L) * sqrt ((double) L * norm);
      for (int64_t b = 0; b < F; b++)
        {
          double re = 0, im = 0;
          for (int64_t n = 0; n < L; n++)
            {
              double v = (double) win[n * s->sw] * frames[r][n * s->se], a = 2 * G_PI * b * n / L;
              re += v * cos (a), im -= v * sin (a);
            }
          worst = MAX (worst, fabs (out[r * F + b] - hypot (re, im)) / bound);
        }
    }
  return worst;
}

static void
test_dft_against_double (void)
{
  /* 1 to 4 frames split into parts (16, 8, 4 and 4 of them at 256 points:
   * each a path of morok_dft_parts_in), then one frame a lane */
  static const int64_t rows[] = { 1, 2, 3, 4, 5, 15, 16 };
  g_autoptr (GRand) rng = g_rand_new_with_seed (7);
  for (gsize i = 0; i < G_N_ELEMENTS (isas); i++)
    {
      if (!exports_runnable_here (isas[i]))
        {
          g_test_message ("%s: does not run here, not tested", isas[i]->name);
          continue;
        }
      double worst = 0;
      for (int64_t L = 32; L <= 512; L *= 2)
        for (gsize r = 0; r < G_N_ELEMENTS (rows); r++)
          for (int64_t se = 1; se <= 3; se += 2)
            {
              Shape s = { L, rows[r], se, se == 1 ? 1 : 2 };
              double w = check_one (isas[i], &s, rng);
              if (w > 1)
                g_error ("%s L %" G_GINT64_FORMAT " rows %" G_GINT64_FORMAT
                         " stride %" G_GINT64_FORMAT ": error %.2f x the bound",
                         isas[i]->name, L, rows[r], se, w);
              worst = MAX (worst, w);
            }
      g_test_message ("%s: largest error %.3f of the bound", isas[i]->name, worst);
    }
}

/* The frames are lanes of one computation (a frame a lane, or with 4
 * frames 4 lanes a frame): a NaN or an infinity in one frame leaves no bin of that frame finite and
 * leaves the others' exactly as without it. */
static void
test_dft_frames_independent (void)
{
  const int64_t L = 256, F = 129;
  g_autofree float *tw = twiddles (L);
  float win[256], x[16][256], ref[16 * 129], out[16 * 129];
  const float *frames[16];
  for (int n = 0; n < L; n++)
    win[n] = (float) (0.5 - 0.5 * cos (2 * G_PI * n / L));
  for (int r = 0; r < 16; r++)
    {
      for (int n = 0; n < L; n++)
        x[r][n] = (float) sin (0.01 * (r + 1) * n + r);
      frames[r] = x[r];
    }
  for (gsize i = 0; i < G_N_ELEMENTS (isas); i++)
    {
      if (!exports_runnable_here (isas[i]))
        continue;
      for (int rows = 4; rows <= 16; rows += 12)
        {
          const int bad = rows == 4 ? 1 : 5, inf = rows == 4 ? 2 : 9;
          const float keep_bad = x[bad][17], keep_inf = x[inf][200];
          isas[i]->dft_mag_f32 (rows, L, frames, 1, win, 1, tw, ref);
          x[bad][17] = NAN, x[inf][200] = INFINITY;
          isas[i]->dft_mag_f32 (rows, L, frames, 1, win, 1, tw, out);
          x[bad][17] = keep_bad, x[inf][200] = keep_inf;
          for (int r = 0; r < rows; r++)
            for (int b = 0; b < F; b++)
              if (r == bad || r == inf)
                g_assert_false (isfinite (out[r * F + b]));
              else
                g_assert_cmpfloat (out[r * F + b], ==, ref[r * F + b]);
        }
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/kernel-dft/against-double", test_dft_against_double);
  g_test_add_func ("/kernel-dft/frames-independent", test_dft_frames_independent);
  return g_test_run ();
}
