/* SPDX-License-Identifier: MIT */
/* docs/jit-wrapper.md, "A first wrapper": a gain stage over a variable
 * number of frames, declared, defined, prepared once and executed per
 * chunk, then once more in a second context of the same program. Exits 1
 * if an output is not what the model computes. */
#include <morok.h>
#include <stdio.h>

/* snippet: model */
/* The model: what the build function reads. */
typedef struct
{
  float gain;
  gint64 max_frames; /* the most frames one call may bring */
} Gain;

static void
gain_free (Gain *gain)
{
  g_free (gain);
}
/* end snippet */

/* snippet: declare */
/* gain-jit.h: one input, one symbolic variable bounded by the model. */
#define GAIN_JIT_INPUTS(X) X (frames)
#define GAIN_JIT_VARS(X) X (t, 1, model->max_frames)
MOROK_JIT_DECLARE (GainJit, gain_jit, Gain, GAIN_JIT_INPUTS, GAIN_JIT_VARS)
/* end snippet */

/* snippet: define */
/* gain-jit.c: frames [max_frames, 8] -> relu (frames[:t] * gain), [t, 8]. */
static MorokTensor *
build (Gain *model, MorokTensor *frames, MorokVariable *t, GError **error)
{
  MorokTensor *x = morok_jit_try_shrink (frames, 0, t, error); /* [t, 8] */
  return morok_tensor_relu (morok_tensor_mul_scalar (x, model->gain, error), error);
}

MOROK_JIT_DEFINE (GainJit, gain_jit, Gain, GAIN_JIT_INPUTS, GAIN_JIT_VARS, build, gain_free)
/* end snippet */

/* relu ((i - 4) * 0.5) over i = 0 .. 8t - 1 */
static gboolean
as_expected (const MorokBuffer *y, gint64 t)
{
  const float *v = y->data;
  return y->shape[0] == t && y->shape[1] == 8 && v[0] == 0 && v[t * 8 - 1] == (t * 8 - 5) * 0.5f;
}

int
main (void)
{
  int wrong = 0;
  /* snippet: use */
  g_autoptr (GError) error = NULL;
  Gain *model = g_new0 (Gain, 1);
  *model = (Gain){ .gain = 0.5f, .max_frames = 100 };
  g_autoptr (GainJit) jit = gain_jit_new (model); /* the wrapper owns the model now */
  g_autoptr (MorokInputSpec) frames = morok_input_spec_f32 (MOROK_SHAPE (100, 8));
  if (!gain_jit_prepare (jit, frames, &error)) /* builds, compiles, allocates: once */
    {
      fprintf (stderr, "prepare: %s\n", error->message);
      return 1;
    }
  for (gint64 t = 1; t <= 3; t++) /* one call per chunk of t frames */
    {
      float *x = gain_jit_frames_mut (jit, &error)->data; /* [100, 8]; rows 0 .. t-1 count */
      for (gint64 i = 0; i < t * 8; i++)
        x[i] = (float) (i - 4);
      MorokVarValue vars[] = { { "t", t } };
      if (!gain_jit_execute_with_vars (jit, vars, G_N_ELEMENTS (vars), &error))
        {
          fprintf (stderr, "execute: %s\n", error->message);
          return 1;
        }
      const MorokBuffer *y = gain_jit_output (jit, &error); /* [t, 8] */
      const float *v = y->data;
      printf ("t=%" G_GINT64_FORMAT ": output [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT
              "], last value %.1f\n",
              t, y->shape[0], y->shape[1], v[t * 8 - 1]);
      wrong += !as_expected (y, t); /* this example checks itself */
    }
  /* end snippet */

  /* snippet: context */
  MorokProgram *program = morok_plan_program (morok_jit_plan (gain_jit_jit (jit)));
  g_autoptr (MorokContext) ctx = morok_context_new (program, &error); /* its own buffers */
  if (!ctx)
    return 1;
  float *x = morok_context_input (ctx, 0)->data; /* input 0: frames */
  for (gint64 i = 0; i < 2 * 8; i++)
    x[i] = (float) (i - 4);
  if (!morok_context_execute (ctx, (MorokVarValue[]){ { "t", 2 } }, 1, &error))
    return 1;
  const MorokBuffer *y = morok_context_output (ctx, 0); /* [2, 8] */
  /* end snippet */
  wrong += !as_expected (y, 2);
  return wrong ? 1 : 0;
}
