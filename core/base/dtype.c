/* SPDX-License-Identifier: MIT */
#include "base/morok-dtype.h"

static const struct
{
  const char *name;
  gsize size;
  gboolean is_float;
} dtype_info[MOROK_DTYPE_COUNT] = {
  [MOROK_DTYPE_F32] = { "f32", 4, TRUE },  [MOROK_DTYPE_F16] = { "f16", 2, TRUE },
  [MOROK_DTYPE_BF16] = { "bf16", 2, TRUE }, [MOROK_DTYPE_I32] = { "i32", 4, FALSE },
  [MOROK_DTYPE_I64] = { "i64", 8, FALSE }, [MOROK_DTYPE_U8] = { "u8", 1, FALSE },
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
