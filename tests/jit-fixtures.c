/* SPDX-License-Identifier: MIT */
#include "jit-fixtures.h"

/* ---- GainJit ---- */

Gain *
gain_new (float gain, gint64 max_t, gint64 width, int *freed)
{
  Gain *m = g_new0 (Gain, 1);
  *m = (Gain){ gain, max_t, width, freed };
  return m;
}

void
gain_free (Gain *model)
{
  if (model->freed)
    (*model->freed)++;
  g_free (model);
}

static MorokTensor *
gain_build (Gain *model, MorokTensor *x, MorokVariable *t, GError **error)
{
  MorokTensor *frames = morok_jit_try_shrink (x, 0, t, error);
  return morok_tensor_relu (
      morok_tensor_add_scalar (morok_tensor_mul_scalar (frames, model->gain, error), 1, error),
      error);
}

MOROK_JIT_DEFINE (GainJit, gain_jit, Gain, GAIN_JIT_INPUTS, GAIN_JIT_VARS, gain_build, gain_free)

GainJit *
gain_jit_new_prepared (float gain, gint64 max_t, gint64 width)
{
  GError *error = NULL;
  GainJit *jit = gain_jit_new (gain_new (gain, max_t, width, NULL));
  g_autoptr (MorokInputSpec) x = morok_input_spec_f32 (MOROK_SHAPE (max_t, width));
  g_assert_true (gain_jit_prepare (jit, x, &error));
  g_assert_no_error (error);
  return jit;
}

/* ---- WindowJit ---- */

void
window_free (Window *model)
{
  g_free (model);
}

static MorokTensor *
window_build (Window *model, MorokTensor *x, MorokVariable *b, MorokVariable *t, GError **error)
{
  MorokTensor *w = morok_jit_try_shrink (morok_jit_try_shrink (x, 0, b, error), 1, t, error);
  return morok_tensor_add_scalar (w, 1, error);
}

MOROK_JIT_DEFINE (WindowJit, window_jit, Window, WINDOW_JIT_INPUTS, WINDOW_JIT_VARS, window_build,
                  window_free)

WindowJit *
window_jit_new_prepared (gint64 max_b, gint64 max_t)
{
  GError *error = NULL;
  Window *m = g_new0 (Window, 1);
  *m = (Window){ max_b, max_t };
  WindowJit *jit = window_jit_new (m);
  g_autoptr (MorokInputSpec) x = morok_input_spec_f32 (MOROK_SHAPE (max_b, max_t));
  g_assert_true (window_jit_prepare (jit, x, &error));
  g_assert_no_error (error);
  float *xv = window_jit_x_mut (jit, &error)->data;
  for (gint64 i = 0; i < max_b * max_t; i++)
    xv[i] = (float) i;
  return jit;
}

/* ---- ToyJit ---- */

void
toy_free (Toy *model)
{
  g_free (model);
}

static MorokTensor *
toy_build (Toy *model, MorokTensor *x, MorokTensor *h, MorokTensor *c, GError **error)
{
  MorokTensor *h2 = morok_tensor_add_scalar (morok_tensor_mul_scalar (h, 0.5, error), 1, error);
  MorokTensor *parts[]
      = { morok_tensor_mul_scalar (x, 2, error), h2, morok_tensor_add (c, h2, error) };
  return morok_tensor_cat (parts, 3, 1, error);
}

MOROK_JIT_DEFINE (ToyJit, toy_jit, Toy, TOY_JIT_INPUTS, TOY_JIT_VARS, toy_build, toy_free)

ToyJit *
toy_jit_new_prepared (void)
{
  GError *e = NULL;
  ToyJit *jit = toy_jit_new (g_new0 (Toy, 1));
  g_autoptr (MorokInputSpec) sx = morok_input_spec_f32 (MOROK_SHAPE (1, 2));
  g_autoptr (MorokInputSpec) sh = morok_input_spec_f32 (MOROK_SHAPE (1, 3));
  g_assert_true (toy_jit_prepare (jit, sx, sh, sh, &e));
  g_assert_no_error (e);
  return jit;
}

void
toy_write_x (ToyJit *jit, int step)
{
  float *x = toy_jit_x_mut (jit, NULL)->data;
  x[0] = (float) step;
  x[1] = (float) -step;
}
