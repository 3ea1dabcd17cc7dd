/* SPDX-License-Identifier: MIT */
/* kernels/include/morok-half.h, as compiled for each ISA by clang with the
 * JIT's flags (kernels/kernel-headers-export.c), against references written
 * here in double precision with a different method: the value of a code is
 * computed with ldexp, and rounding to f16/bf16 is rint() on the value scaled
 * to units of the target's ulp. */
#include <glib.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "base/morok-dtype.h"
#include "kernel-test-util.h"

static const MorokKernelExports *const isas[] = {
  &morok_kernel_exports_avx512,
  &morok_kernel_exports_avx2,
  &morok_kernel_exports_portable,
  &morok_kernel_exports_baseline,
};

/* The value of an f16 code: sign, 5-bit exponent (bias 15), 10-bit fraction. */
static double
f16_value (uint16_t h)
{
  int e = (h >> 10) & 31, f = h & 1023;
  double sign = h & 0x8000 ? -1.0 : 1.0;
  if (e == 31)
    return f ? NAN : sign * INFINITY;
  return sign * (e ? ldexp (1024 + f, e - 25) : ldexp (f, -24));
}

/* |v| rounded to nearest even at a precision of `bits` significant bits, the
 * smallest exponent being `emin` (subnormals below), as a double. */
static double
round_to_format (double v, int bits, int emin)
{
  int e;
  frexp (v, &e); /* v = f 2^e, f in [0.5, 1) */
  e = e - 1 < emin ? emin : e - 1;
  double ulp = ldexp (1.0, e - (bits - 1));
  return rint (v / ulp) * ulp; /* rint rounds ties to even */
}

/* Reference f32 -> f16: round the value, then encode it exactly. */
static uint16_t
f16_reference (float x)
{
  uint16_t sign = signbit (x) ? 0x8000 : 0;
  double v = fabs ((double) x);
  if (isnan (x))
    return 0x7e00; /* any NaN; callers compare NaN-ness only */
  v = round_to_format (v, 11, -14);
  if (v >= 65536.0)
    return sign | 0x7c00;
  if (v < ldexp (1.0, -14))
    return sign | (uint16_t) ldexp (v, 24);
  int e;
  double f = frexp (v, &e); /* v = f 2^e, f in [0.5, 1) */
  return sign | (uint16_t) ((e - 1 + 15) << 10) | (uint16_t) (ldexp (f, 11) - 1024);
}

/* Reference f32 -> bf16: same exponent range as f32, 8 significant bits. */
static uint16_t
bf16_reference (float x)
{
  if (isnan (x))
    return 0x7fc0;
  double v = round_to_format (fabs ((double) x), 8, -126);
  float r = v >= ldexp (1.0, 128) ? INFINITY : (float) v; /* exact: v fits bf16 */
  return (uint16_t) (bits_of (signbit (x) ? -r : r) >> 16);
}

static gboolean
is_f16_nan (uint16_t h)
{
  return (h & 0x7c00) == 0x7c00 && (h & 0x3ff);
}

static gboolean
is_bf16_nan (uint16_t h)
{
  return (h & 0x7f80) == 0x7f80 && (h & 0x7f);
}

/* Every one of the 65536 f16 codes decodes to its exact value, and encoding
 * that value gives the code back (NaNs: a NaN of the same sign, quieted). */
static void
test_f16_all_codes_round_trip (gconstpointer data)
{
  const MorokKernelExports *k = data;
  if (skip_unless_runnable (k))
    return;
  uint16_t *codes = g_new (uint16_t, 65536), *back = g_new (uint16_t, 65536);
  float *values = g_new (float, 65536);
  for (int i = 0; i < 65536; i++)
    codes[i] = (uint16_t) i;
  k->f16_to_f32 (codes, values, 65536);
  k->f32_to_f16 (values, back, 65536);
  for (int i = 0; i < 65536; i++)
    {
      double want = f16_value (codes[i]);
      if (isnan (want))
        {
          g_assert_true (isnan (values[i]));
          g_assert_cmpint (signbit (values[i]) != 0, ==, (i & 0x8000) != 0);
          g_assert_true (is_f16_nan (back[i]));
          g_assert_cmphex (back[i] & 0x8200, ==, (i & 0x8000) | 0x200);
          continue;
        }
      g_assert_cmpfloat ((double) values[i], ==, want);
      g_assert_cmpint (signbit (values[i]) != 0, ==, (i & 0x8000) != 0);
      g_assert_cmphex (back[i], ==, codes[i]);
    }
  g_free (codes), g_free (back), g_free (values);
}

/* Same for the 65536 bf16 codes. */
static void
test_bf16_all_codes_round_trip (gconstpointer data)
{
  const MorokKernelExports *k = data;
  if (skip_unless_runnable (k))
    return;
  uint16_t *codes = g_new (uint16_t, 65536), *back = g_new (uint16_t, 65536);
  float *values = g_new (float, 65536);
  for (int i = 0; i < 65536; i++)
    codes[i] = (uint16_t) i;
  k->bf16_to_f32 (codes, values, 65536);
  k->f32_to_bf16 (values, back, 65536);
  for (int i = 0; i < 65536; i++)
    {
      g_assert_cmphex (bits_of (values[i]), ==, (uint32_t) i << 16);
      if (is_bf16_nan (codes[i]))
        {
          g_assert_true (is_bf16_nan (back[i]));
          g_assert_cmphex (back[i] & 0x8040, ==, (i & 0x8000) | 0x40);
        }
      else
        g_assert_cmphex (back[i], ==, codes[i]);
    }
  g_free (codes), g_free (back), g_free (values);
}

/* Floats to convert: every exponent near and inside both formats' ranges with
 * random mantissas, the halfway points between neighbouring f16 codes (where
 * ties-to-even decides) and their neighbours, and random bit patterns. */
static float *
conversion_inputs (gsize *n_out)
{
  gsize n = 0, cap = 3 << 20;
  float *x = g_new (float, cap);
  GRand *rand = g_rand_new_with_seed (12);
  for (int h = 0; h < 0x7c00; h++)
    {
      float lo = (float) f16_value ((uint16_t) h), hi = (float) f16_value ((uint16_t) (h + 1));
      float mid = (float) (((double) lo + hi) / 2); /* exact: 12 bits */
      x[n++] = mid, x[n++] = nextafterf (mid, 0), x[n++] = nextafterf (mid, INFINITY);
    }
  while (n + 2 < cap / 2)
    {
      uint32_t mant = g_rand_int (rand) & 0x7fffff;
      uint32_t exp = 127 + g_rand_int_range (rand, -30, 20);
      float v = float_of ((exp << 23) | mant);
      x[n++] = v;
      x[n++] = -v;
    }
  while (n < cap)
    x[n++] = float_of (g_rand_int (rand));
  g_rand_free (rand);
  *n_out = n;
  return x;
}

/* f32 -> f16 rounds to nearest even, overflows to inf, handles subnormals. */
static void
test_f16_from_floats (gconstpointer data)
{
  const MorokKernelExports *k = data;
  if (skip_unless_runnable (k))
    return;
  gsize n;
  float *x = conversion_inputs (&n);
  uint16_t *h = g_new (uint16_t, n);
  k->f32_to_f16 (x, h, n);
  for (gsize i = 0; i < n; i++)
    {
      if (isnan (x[i]))
        g_assert_true (is_f16_nan (h[i]));
      else if (h[i] != f16_reference (x[i]))
        g_error ("f32_to_f16 (%a) = 0x%04x, expected 0x%04x", x[i], h[i], f16_reference (x[i]));
    }
  g_free (x), g_free (h);
}

/* f32 -> bf16 rounds to nearest even, overflows to inf, keeps NaN a NaN. */
static void
test_bf16_from_floats (gconstpointer data)
{
  const MorokKernelExports *k = data;
  if (skip_unless_runnable (k))
    return;
  gsize n;
  float *x = conversion_inputs (&n);
  uint16_t *h = g_new (uint16_t, n);
  k->f32_to_bf16 (x, h, n);
  for (gsize i = 0; i < n; i++)
    {
      if (isnan (x[i]))
        g_assert_true (is_bf16_nan (h[i]));
      else if (h[i] != bf16_reference (x[i]))
        g_error ("f32_to_bf16 (%a) = 0x%04x, expected 0x%04x", x[i], h[i], bf16_reference (x[i]));
    }
  g_free (x), g_free (h);
}

/* The host's conversions (base/morok-dtype.h: safetensors reading, weight
 * packing) against the same references: every code to f32, the floats of
 * conversion_inputs back. */
static void
test_host_conversions (void)
{
  for (guint32 c = 0; c < 65536; c++)
    {
      double f = f16_value ((uint16_t) c);
      float hf = morok_f16_to_f32 ((guint16) c), hb = morok_bf16_to_f32 ((guint16) c);
      g_assert_true (isnan (f) ? isnan (hf) : hf == f && !!signbit (hf) == (c >> 15 == 1));
      g_assert_cmphex (bits_of (hb), ==, c << 16); /* bf16 is the top half of the f32 */
    }
  gsize n;
  float *x = conversion_inputs (&n);
  for (gsize i = 0; i < n; i++)
    {
      guint16 h = morok_f32_to_f16 (x[i]), bb = morok_f32_to_bf16 (x[i]);
      g_assert_true (isnan (x[i]) ? is_f16_nan (h) : h == f16_reference (x[i]));
      g_assert_true (isnan (x[i]) ? is_bf16_nan (bb) : bb == bf16_reference (x[i]));
    }
  g_free (x);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  for (gsize i = 0; i < G_N_ELEMENTS (isas); i++)
    {
      const char *isa = isas[i]->name;
      g_autofree char *p1 = g_strdup_printf ("/kernel-half/%s/f16-all-codes-round-trip", isa);
      g_autofree char *p2 = g_strdup_printf ("/kernel-half/%s/bf16-all-codes-round-trip", isa);
      g_autofree char *p3 = g_strdup_printf ("/kernel-half/%s/f16-from-floats", isa);
      g_autofree char *p4 = g_strdup_printf ("/kernel-half/%s/bf16-from-floats", isa);
      g_test_add_data_func (p1, isas[i], test_f16_all_codes_round_trip);
      g_test_add_data_func (p2, isas[i], test_bf16_all_codes_round_trip);
      g_test_add_data_func (p3, isas[i], test_f16_from_floats);
      g_test_add_data_func (p4, isas[i], test_bf16_from_floats);
    }
  g_test_add_func ("/kernel-half/host/conversions-match-references", test_host_conversions);
  return g_test_run ();
}
