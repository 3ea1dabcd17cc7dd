/* SPDX-License-Identifier: MIT */
#include "base/morok-dtype.h"
#include <string.h>

static const struct
{
  const char *name;
  gsize size;
  gboolean is_float;
} dtype_info[MOROK_DTYPE_COUNT] = {
  [MOROK_DTYPE_F32] = { "f32", 4, TRUE },    [MOROK_DTYPE_F16] = { "f16", 2, TRUE },
  [MOROK_DTYPE_BF16] = { "bf16", 2, TRUE },  [MOROK_DTYPE_I32] = { "i32", 4, FALSE },
  [MOROK_DTYPE_I64] = { "i64", 8, FALSE },   [MOROK_DTYPE_U8] = { "u8", 1, FALSE },
  [MOROK_DTYPE_BOOL] = { "bool", 1, FALSE },
};

gsize
morok_dtype_size (MorokDType dtype)
{
  return (guint) dtype < MOROK_DTYPE_COUNT ? dtype_info[dtype].size : 0;
}

const char *
morok_dtype_name (MorokDType dtype)
{
  return (guint) dtype < MOROK_DTYPE_COUNT ? dtype_info[dtype].name : "?";
}

gboolean
morok_dtype_is_float (MorokDType dtype)
{
  return (guint) dtype < MOROK_DTYPE_COUNT && dtype_info[dtype].is_float;
}

const char *
morok_precision_name (MorokPrecision precision)
{
  static const char *const names[] = { "f32", "f16", "bf16", "bf16x3", "int8" };
  G_STATIC_ASSERT (G_N_ELEMENTS (names) == MOROK_PRECISION_COUNT);
  return (guint) precision < MOROK_PRECISION_COUNT ? names[precision] : "?";
}

/* ---- f16 and bf16 on the host (the kernels' own are kernels/include/morok-half.h) ---- */

float
morok_f16_to_f32 (guint16 h)
{
  guint32 sign = (guint32) (h & 0x8000) << 16;
  guint32 exponent = (h >> 10) & 0x1f;
  guint32 mantissa = h & 0x3ff;
  guint32 bits;
  if (exponent == 0x1f) /* inf, nan */
    bits = sign | 0x7f800000u | (mantissa << 13);
  else if (exponent != 0) /* normal: rebias 15 -> 127 */
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  else if (mantissa == 0)
    bits = sign;
  else /* subnormal m * 2^-24: normalise the mantissa */
    {
      exponent = 113;
      while (!(mantissa & 0x400))
        {
          mantissa <<= 1;
          exponent--;
        }
      bits = sign | (exponent << 23) | ((mantissa & 0x3ff) << 13);
    }
  float f;
  memcpy (&f, &bits, sizeof f);
  return f;
}

float
morok_bf16_to_f32 (guint16 h)
{
  guint32 bits = (guint32) h << 16;
  float f;
  memcpy (&f, &bits, sizeof f);
  return f;
}

/* round to nearest even, as the kernels' morok_f32_to_f16 (x86-64 has
 * _Float16 in gcc >= 12 and clang) */
guint16
morok_f32_to_f16 (float v)
{
  _Float16 h = (_Float16) v;
  guint16 u;
  memcpy (&u, &h, sizeof u);
  return u;
}

/* round to nearest even; NaN stays NaN */
guint16
morok_f32_to_bf16 (float v)
{
  guint32 u;
  memcpy (&u, &v, sizeof u);
  if ((u & 0x7fffffffu) > 0x7f800000u)
    return (guint16) ((u >> 16) | 0x40);
  return (guint16) ((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
