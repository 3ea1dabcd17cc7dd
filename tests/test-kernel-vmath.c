/* SPDX-License-Identifier: MIT */
/* kernels/include/morok-vmath.h, compiled for each ISA by clang with the JIT's
 * flags (kernels/kernel-headers-export.c), against double-precision libm.
 *
 * Each function is swept over every float of its range whose bit pattern is
 * a multiple of a stride (default 211, ~10 M samples per function; set
 * MOROK_TEST_EXHAUSTIVE=1 for every float, which is how the table at the top of
 * morok-vmath.h was measured), through the scalar function in a loop and
 * through the 8- and 16-wide vector versions, on every ISA the CPU runs. The
 * maxima are printed (`meson test -v`) and asserted against the table. */
#include <float.h>
#include <glib.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kernel-test-util.h"

static const MorokKernelExports *const isas[] = {
  &morok_kernel_exports_avx512,
  &morok_kernel_exports_avx2,
  &morok_kernel_exports_portable,
  &morok_kernel_exports_baseline,
};

typedef struct
{
  const char *name;
  MorokVmathFn fn;
  double (*ref) (double);
  double lo, hi;   /* swept range */
  gboolean vector; /* has 8- and 16-wide versions */
  double max_ulp;  /* asserted bounds: the table in morok-vmath.h */
  double max_abs;
} Case;

static double
sigmoid_ref (double x)
{
  return 1.0 / (1.0 + exp (-x));
}

/* The table of morok-vmath.h: exhaustive maxima, rounded up. */
static const Case cases[] = {
  { "exp", MOROK_VMATH_EXP, exp, -104.0, 89.0, TRUE, 1.1, INFINITY },
  { "log", MOROK_VMATH_LOG, log, 0.0, FLT_MAX, TRUE, 0.85, INFINITY },
  { "tanh", MOROK_VMATH_TANH, tanh, -20.0, 20.0, TRUE, 1.35, 8e-8 },
  { "sigmoid", MOROK_VMATH_SIGMOID, sigmoid_ref, -100.0, 100.0, TRUE, 2.45, 9e-8 },
  { "erf", MOROK_VMATH_ERF, erf, -6.0, 6.0, FALSE, 1.4, 8.5e-8 },
  { "sqrt", MOROK_VMATH_SQRT, sqrt, 0.0, FLT_MAX, FALSE, 0.5, INFINITY },
};

/* Error of `got` in ulp of the float nearest `ref`; subnormals have the ulp
 * 2^-149, results past FLT_MAX must be the right infinity. */
static double
ulp_error (float got, double ref)
{
  if (isnan (ref) || isnan (got))
    return isnan (ref) && isnan (got) ? 0 : INFINITY;
  float rounded = (float) ref;
  if (isinf (rounded) || isinf (got))
    return got == rounded ? 0 : INFINITY;
  int e;
  frexp (ref, &e); /* ref = f 2^e, f in [0.5, 1) */
  double ulp = ldexp (1.0, MAX (e - 1, -126) - 23);
  return fabs (got - ref) / ulp;
}

typedef struct
{
  double ulp, abs;
  float ulp_at, abs_at;
} Worst;

static void
worst_update (Worst *w, float x, float got, double ref)
{
  double u = ulp_error (got, ref);
  double a = isnan (ref) || isinf ((float) ref) || isinf (got) ? u : fabs (got - ref);
  if (!(u <= w->ulp))
    w->ulp = u, w->ulp_at = x;
  if (!(a <= w->abs))
    w->abs = a, w->abs_at = x;
}

static guint64
sweep_stride (void)
{
  const char *e = g_getenv ("MOROK_TEST_EXHAUSTIVE");
  return e && *e && strcmp (e, "0") ? 1 : 211;
}

#define BATCH 65536 /* a multiple of 16 */

/* Runs `c` on every ISA and width over the floats of [lo, hi] whose |x| bit
 * pattern is a multiple of the stride, one batch at a time (the reference is
 * computed once per batch), and checks the bounds. */
static void
test_vmath_sweep (gconstpointer data)
{
  const Case *c = data;
  guint64 stride = sweep_stride ();
  float *x = g_new (float, BATCH), *y = g_new (float, BATCH), *rounded = g_new (float, BATCH);
  double *ref = g_new (double, BATCH);
  Worst *exact = g_new (Worst, BATCH); /* the errors of `rounded`, per input */
  Worst worst[G_N_ELEMENTS (isas)][3];
  memset (worst, 0, sizeof worst);

  /* Negative half (sign = 1) then positive half, by magnitude bits. */
  for (int sign = 1; sign >= 0; sign--)
    {
      double lo = sign ? MAX (0.0, -c->hi) : MAX (0.0, c->lo);
      double hi = sign ? -c->lo : c->hi;
      if (hi < lo || (sign && c->lo >= 0))
        continue;
      guint64 first = (bits_of ((float) lo) + stride - 1) / stride * stride;
      guint64 last = bits_of ((float) hi);
      for (guint64 u = first; u <= last;)
        {
          int n = 0;
          for (; n < BATCH && u <= last; n++, u += stride)
            x[n] = float_of ((uint32_t) u | (uint32_t) sign << 31);
          for (int i = n; i < BATCH && i % 16; i++)
            x[i] = x[n - 1];
          /* Most results are the correctly rounded float: their errors are
           * computed once here, not once per ISA and width. */
          for (int i = 0; i < (n + 15) / 16 * 16; i++)
            {
              ref[i] = c->ref (x[i]);
              rounded[i] = (float) ref[i];
              memset (&exact[i], 0, sizeof exact[i]);
              worst_update (&exact[i], x[i], rounded[i], ref[i]);
            }
          int padded = (n + 15) / 16 * 16;
          for (gsize k = 0; k < G_N_ELEMENTS (isas); k++)
            for (int w = 0; w < (c->vector ? 3 : 1); w++)
              {
                if (!exports_runnable_here (isas[k]))
                  continue;
                isas[k]->vmath (c->fn, (int[]){ 1, 8, 16 }[w], x, NULL, y, padded);
                Worst *m = &worst[k][w];
                for (int i = 0; i < padded; i++)
                  if (bits_of (y[i]) != bits_of (rounded[i]))
                    worst_update (m, x[i], y[i], ref[i]);
                  else if (!(exact[i].ulp <= m->ulp && exact[i].abs <= m->abs))
                    worst_update (m, x[i], y[i], ref[i]);
              }
        }
    }

  for (gsize k = 0; k < G_N_ELEMENTS (isas); k++)
    for (int w = 0; w < (c->vector ? 3 : 1); w++)
      {
        Worst *m = &worst[k][w];
        if (!exports_runnable_here (isas[k]))
          continue;
        g_test_message ("%s %s width %d, [%g, %g] every %" G_GUINT64_FORMAT
                        ": %.3f ulp (at %a), %.3g abs (at %a)",
                        c->name, isas[k]->name, (int[]){ 1, 8, 16 }[w], c->lo, c->hi, stride,
                        m->ulp, m->ulp_at, m->abs, m->abs_at);
        g_assert_cmpfloat (m->ulp, <=, c->max_ulp);
        g_assert_cmpfloat (m->abs, <=, c->max_abs);
      }
  g_free (x), g_free (y), g_free (rounded), g_free (ref), g_free (exact);
}

/* Runs fn on one input through every ISA and width and checks that all agree
 * with `want` exactly (NaN with NaN, zeros of either sign: the kernels are
 * compiled with -fno-signed-zeros). */
static void
check_special (MorokVmathFn fn, gboolean vector, float in, float in2, float want)
{
  float x[16], x2[16], y[16];
  for (int i = 0; i < 16; i++)
    x[i] = in, x2[i] = in2;
  for (gsize k = 0; k < G_N_ELEMENTS (isas); k++)
    for (int w = 0; w < (vector ? 3 : 1); w++)
      {
        if (!exports_runnable_here (isas[k]))
          continue;
        isas[k]->vmath (fn, (int[]){ 1, 8, 16 }[w], x, x2, y, 16);
        if (isnan (want) ? !isnan (y[0]) : y[0] != want)
          g_error ("%s width %d: function %d (%a, %a) = %a, expected %a", isas[k]->name,
                   (int[]){ 1, 8, 16 }[w], fn, in, in2, y[0], want);
      }
}

/* Infinities, NaN, zeros, overflow and underflow give C's answers. */
static void
test_vmath_special_values (void)
{
  const float inf = INFINITY, nan = NAN;
  check_special (MOROK_VMATH_EXP, TRUE, -inf, 0, 0.0f);
  check_special (MOROK_VMATH_EXP, TRUE, inf, 0, inf);
  check_special (MOROK_VMATH_EXP, TRUE, nan, 0, nan);
  check_special (MOROK_VMATH_EXP, TRUE, 100.0f, 0, inf);
  check_special (MOROK_VMATH_EXP, TRUE, -110.0f, 0, 0.0f);
  check_special (MOROK_VMATH_EXP, TRUE, -100.0f, 0, (float) exp (-100.0)); /* subnormal */
  check_special (MOROK_VMATH_EXP, TRUE, 0.0f, 0, 1.0f);
  check_special (MOROK_VMATH_LOG, TRUE, 0.0f, 0, -inf);
  check_special (MOROK_VMATH_LOG, TRUE, -0.0f, 0, -inf);
  check_special (MOROK_VMATH_LOG, TRUE, -1.0f, 0, nan);
  check_special (MOROK_VMATH_LOG, TRUE, -inf, 0, nan);
  check_special (MOROK_VMATH_LOG, TRUE, inf, 0, inf);
  check_special (MOROK_VMATH_LOG, TRUE, nan, 0, nan);
  check_special (MOROK_VMATH_LOG, TRUE, 1.0f, 0, 0.0f);
  check_special (MOROK_VMATH_TANH, TRUE, inf, 0, 1.0f);
  check_special (MOROK_VMATH_TANH, TRUE, -inf, 0, -1.0f);
  check_special (MOROK_VMATH_TANH, TRUE, 30.0f, 0, 1.0f);
  check_special (MOROK_VMATH_TANH, TRUE, -30.0f, 0, -1.0f);
  check_special (MOROK_VMATH_TANH, TRUE, nan, 0, nan);
  check_special (MOROK_VMATH_TANH, TRUE, 0x1p-140f, 0, 0x1p-140f);
  check_special (MOROK_VMATH_SIGMOID, TRUE, -inf, 0, 0.0f);
  check_special (MOROK_VMATH_SIGMOID, TRUE, inf, 0, 1.0f);
  check_special (MOROK_VMATH_SIGMOID, TRUE, -200.0f, 0, 0.0f);
  check_special (MOROK_VMATH_SIGMOID, TRUE, 200.0f, 0, 1.0f);
  check_special (MOROK_VMATH_SIGMOID, TRUE, nan, 0, nan);
  check_special (MOROK_VMATH_SIGMOID, TRUE, 0.0f, 0, 0.5f);
  check_special (MOROK_VMATH_ERF, FALSE, inf, 0, 1.0f);
  check_special (MOROK_VMATH_ERF, FALSE, -inf, 0, -1.0f);
  check_special (MOROK_VMATH_ERF, FALSE, nan, 0, nan);
  check_special (MOROK_VMATH_ERF, FALSE, 0.0f, 0, 0.0f);
  check_special (MOROK_VMATH_SQRT, FALSE, -1.0f, 0, nan);
  check_special (MOROK_VMATH_SQRT, FALSE, inf, 0, inf);
  check_special (MOROK_VMATH_SQRT, FALSE, 0.0f, 0, 0.0f);
}

/* pow follows C's powf on a grid of special and ordinary arguments: signs of
 * negative bases with odd/even/non-integer exponents, zeros, infinities,
 * NaN, |x| = 1, huge exponents. */
static void
test_pow_special_values (void)
{
  const float v[]
      = { 0.0f,     -0.0f,     0.5f,  -0.5f,     1.0f,           -1.0f,          2.0f,
          -2.0f,    3.0f,      -3.0f, 0x1p-140f, -0x1p-140f,     1e30f,          -1e30f,
          INFINITY, -INFINITY, NAN,   0x1p24f,   0x1p24f + 2.0f, 0x1p23f + 1.0f, -(0x1p23f + 1.0f),
          1e10f,    -1e10f,    2.5f,  -2.5f };
  for (gsize i = 0; i < G_N_ELEMENTS (v); i++)
    for (gsize j = 0; j < G_N_ELEMENTS (v); j++)
      {
        float want = powf (v[i], v[j]);
        float x[16], y[16], out[16];
        for (int l = 0; l < 16; l++)
          x[l] = v[i], y[l] = v[j];
        for (gsize k = 0; k < G_N_ELEMENTS (isas); k++)
          {
            if (!exports_runnable_here (isas[k]))
              continue;
            isas[k]->vmath (MOROK_VMATH_POW, 1, x, y, out, 16);
            gboolean same = isnan (want) ? isnan (out[0])
                            : isinf (want) || want == 0.0f
                                ? out[0] == want
                                : ulp_error (out[0], pow (v[i], v[j])) <= 1.0;
            if (!same || (isinf (want) && signbit (want) != signbit (out[0])))
              g_error ("%s: pow (%a, %a) = %a, expected %a", isas[k]->name, v[i], v[j], out[0],
                       want);
          }
      }
}

/* pow within 1 ulp of pow in double, on random bases over 60 binades with
 * random exponents, and negative bases with integer exponents; results that
 * overflow or underflow must be inf or 0 (or the right subnormal). */
static void
test_pow_random (void)
{
  enum
  {
    N = 1 << 16
  };
  int rounds = sweep_stride () == 1 ? 1600 : 160;
  float *x = g_new (float, N), *y = g_new (float, N), *out = g_new (float, N);
  GRand *rand = g_rand_new_with_seed (7);
  Worst worst[G_N_ELEMENTS (isas)];
  memset (worst, 0, sizeof worst);
  for (int r = 0; r < rounds; r++)
    {
      for (int i = 0; i < N; i++)
        {
          uint32_t e = 127 + g_rand_int_range (rand, -30, 30);
          x[i] = float_of (e << 23 | (g_rand_int (rand) & 0x7fffff));
          y[i] = (float) g_rand_double_range (rand, -40.0, 40.0);
          if (i % 4 == 0)
            x[i] = -x[i], y[i] = rintf (y[i]);
        }
      for (gsize k = 0; k < G_N_ELEMENTS (isas); k++)
        {
          if (!exports_runnable_here (isas[k]))
            continue;
          isas[k]->vmath (MOROK_VMATH_POW, 1, x, y, out, N);
          for (int i = 0; i < N; i++)
            worst_update (&worst[k], x[i], out[i], pow (x[i], y[i]));
        }
    }
  for (gsize k = 0; k < G_N_ELEMENTS (isas); k++)
    {
      if (!exports_runnable_here (isas[k]))
        continue;
      g_test_message ("pow %s, %d random pairs: %.3f ulp (at x = %a)", isas[k]->name, rounds * N,
                      worst[k].ulp, worst[k].ulp_at);
      g_assert_cmpfloat (worst[k].ulp, <=, 0.51);
    }
  g_rand_free (rand);
  g_free (x), g_free (y), g_free (out);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/kernel-vmath/%s/sweep", cases[i].name);
      g_test_add_data_func (path, &cases[i], test_vmath_sweep);
    }
  g_test_add_func ("/kernel-vmath/special-values", test_vmath_special_values);
  g_test_add_func ("/kernel-vmath/pow/special-values", test_pow_special_values);
  g_test_add_func ("/kernel-vmath/pow/random", test_pow_random);
  return g_test_run ();
}
