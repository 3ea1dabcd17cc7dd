/* SPDX-License-Identifier: MIT */
/* MorokInputSpec: the shape and dtype of one input at prepare. */
#define G_LOG_DOMAIN "morok-jit"
#include "jit/morok-jit.h"

MorokInputSpec *
morok_input_spec_new (const gint64 *shape, guint rank, MorokDType dtype)
{
  g_return_val_if_fail (rank <= MOROK_MAX_RANK, NULL);
  g_return_val_if_fail (rank == 0 || shape != NULL, NULL);
  g_return_val_if_fail ((guint) dtype < MOROK_DTYPE_COUNT, NULL);
  for (guint i = 0; i < rank; i++)
    g_return_val_if_fail (shape[i] >= 1, NULL);
  MorokInputSpec *spec = g_new0 (MorokInputSpec, 1);
  spec->dtype = dtype;
  spec->rank = rank;
  for (guint i = 0; i < rank; i++)
    spec->shape[i] = shape[i];
  return spec;
}

MorokInputSpec *
morok_input_spec_f32 (const gint64 *shape, guint rank)
{
  return morok_input_spec_new (shape, rank, MOROK_DTYPE_F32);
}

MorokInputSpec *
morok_input_spec_i32 (const gint64 *shape, guint rank)
{
  return morok_input_spec_new (shape, rank, MOROK_DTYPE_I32);
}

MorokInputSpec *
morok_input_spec_i64 (const gint64 *shape, guint rank)
{
  return morok_input_spec_new (shape, rank, MOROK_DTYPE_I64);
}

gint64
morok_input_spec_numel (const MorokInputSpec *spec)
{
  g_return_val_if_fail (spec != NULL, 0);
  gint64 n = 1;
  for (guint i = 0; i < spec->rank; i++)
    n *= spec->shape[i];
  return n;
}

void
morok_input_spec_free (MorokInputSpec *spec)
{
  g_free (spec);
}
