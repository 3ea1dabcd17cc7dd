/* SPDX-License-Identifier: MIT */
/* docs/jit-wrapper.md, "Symbolic variables": frame energies over a batch
 * of b utterances of t frames, both symbolic; the setters narrow the
 * bounds before prepare, execute_with_vars picks the values per call.
 * Exits 1 if an output shape or value is not the expected one. */
#include <morok.h>
#include <stdio.h>

typedef struct
{
  gint64 max_batch, max_frames;
} Energy;

static void
energy_free (Energy *e)
{
  g_free (e);
}

/* snippet: declare */
#define ENERGY_JIT_INPUTS(X) X (mel)
#define ENERGY_JIT_VARS(X)                                                                         \
  X (b, 1, model->max_batch)                                                                       \
  X (t, 1, model->max_frames)
MOROK_JIT_DECLARE (EnergyJit, energy_jit, Energy, ENERGY_JIT_INPUTS, ENERGY_JIT_VARS)

/* mel [max_batch, max_frames, 4] -> sum over the last axis of mel², [b, t] */
static MorokTensor *
build (Energy *model, MorokTensor *mel, MorokVariable *b, MorokVariable *t, GError **error)
{
  MorokTensor *x = morok_jit_try_shrink (morok_jit_try_shrink (mel, 0, b, error), 1, t, error);
  return morok_tensor_sum (morok_tensor_mul (x, x, error), (gint[]){ -1 }, 1, FALSE, error);
}
/* end snippet */

MOROK_JIT_DEFINE (EnergyJit, energy_jit, Energy, ENERGY_JIT_INPUTS, ENERGY_JIT_VARS, build,
                  energy_free)

static int
run (EnergyJit *jit, const MorokVarValue *vars, gsize n_vars, gint64 want_b, gint64 want_t)
{
  g_autoptr (GError) error = NULL;
  if (!energy_jit_execute_with_vars (jit, vars, n_vars, &error))
    {
      printf ("execute: %s\n", error->message);
      return 1;
    }
  const MorokBuffer *y = energy_jit_output (jit, &error);
  printf ("output [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT "], first energy %.0f\n", y->shape[0],
          y->shape[1], ((const float *) y->data)[0]);
  return y->shape[0] != want_b || y->shape[1] != want_t || ((const float *) y->data)[0] != 4;
}

int
main (void)
{
  int wrong = 0;
  g_autoptr (GError) error = NULL;
  Energy *model = g_new0 (Energy, 1);
  *model = (Energy){ .max_batch = 8, .max_frames = 3000 };
  /* snippet: setters */
  /* the model allows b <= 8 and t <= 3000; this pipeline runs one stream
   * of 4 to 64 frames per call */
  g_autoptr (EnergyJit) jit = energy_jit_new (model);
  energy_jit_with_t_min_bound (energy_jit_with_t_bound (energy_jit_with_b_fixed (jit, 1), 64), 4);
  g_autoptr (MorokInputSpec) mel = morok_input_spec_f32 (MOROK_SHAPE (1, 64, 4));
  if (!energy_jit_prepare (jit, mel, &error))
    {
      fprintf (stderr, "prepare: %s\n", error->message);
      return 1;
    }
  /* end snippet */
  float *x = energy_jit_mel_mut (jit, &error)->data;
  for (int i = 0; i < 64 * 4; i++)
    x[i] = 1;
  /* snippet: execute */
  MorokVarValue t10[] = { { "t", 10 } };
  wrong += run (jit, t10, 1, 1, 10);  /* output [1, 10] */
  wrong += run (jit, NULL, 0, 1, 64); /* t not listed: back at its upper bound, [1, 64] */
  MorokVarValue t2[] = { { "t", 2 } };
  wrong += !run (jit, t2, 1, 1, 2); /* fails: 't' = 2 is outside its bounds [4, 64] */
  /* end snippet */
  return wrong ? 1 : 0;
}
