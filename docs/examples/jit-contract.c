/* SPDX-License-Identifier: MIT */
/* docs/jit-wrapper.md, "The data-independence contract": a threshold read
 * inside the build function is baked into the plan, so changing it later
 * changes nothing; the same threshold passed as an input is read on every
 * call. Exits 1 if either behaves otherwise. */
#include <morok.h>
#include <stdio.h>
#include <string.h>

typedef struct
{
  float threshold; /* a user setting that may change while the pipeline runs */
} Gate;

/* snippet: baked */
/* WRONG for a setting that changes: model->threshold is read once, at
 * prepare, and becomes a constant of the compiled kernel. */
#define BAKED_JIT_INPUTS(X) X (x)
#define BAKED_JIT_VARS(X)
MOROK_JIT_DECLARE (BakedJit, baked_jit, Gate, BAKED_JIT_INPUTS, BAKED_JIT_VARS)

static MorokTensor *
baked_build (Gate *model, MorokTensor *x, GError **error)
{
  MorokTensor *above = morok_tensor_gt (x, morok_tensor_scalar_like (x, model->threshold), error);
  return morok_tensor_cast (above, MOROK_DTYPE_F32, error);
}
/* end snippet */

MOROK_JIT_DEFINE (BakedJit, baked_jit, Gate, BAKED_JIT_INPUTS, BAKED_JIT_VARS, baked_build, NULL)

/* snippet: input */
/* RIGHT: the threshold is an input, written before each execute. */
#define LIVE_JIT_INPUTS(X) X (x) X (threshold)
#define LIVE_JIT_VARS(X)
MOROK_JIT_DECLARE (LiveJit, live_jit, Gate, LIVE_JIT_INPUTS, LIVE_JIT_VARS)

static MorokTensor *
live_build (Gate *model, MorokTensor *x, MorokTensor *threshold, GError **error)
{
  return morok_tensor_cast (morok_tensor_gt (x, threshold, error), MOROK_DTYPE_F32, error);
}
/* end snippet */

MOROK_JIT_DEFINE (LiveJit, live_jit, Gate, LIVE_JIT_INPUTS, LIVE_JIT_VARS, live_build, NULL)

/* Elements of the output above zero. */
static int
count_on (const MorokBuffer *y)
{
  int n = 0;
  for (int i = 0; i < 4; i++)
    n += ((const float *) y->data)[i] > 0;
  return n;
}

int
main (void)
{
  g_autoptr (GError) error = NULL;
  static const float x[4] = { 0.1f, 0.4f, 0.6f, 0.9f };
  g_autoptr (MorokInputSpec) spec_x = morok_input_spec_f32 (MOROK_SHAPE (4));
  g_autoptr (MorokInputSpec) spec_t = morok_input_spec_f32 (MOROK_SHAPE (1));

  /* snippet: run */
  Gate gate = { .threshold = 0.5f };
  g_autoptr (BakedJit) baked = baked_jit_new (&gate); /* NULL model_free: gate is ours */
  g_autoptr (LiveJit) live = live_jit_new (&gate);
  if (!baked_jit_prepare (baked, spec_x, &error)
      || !live_jit_prepare (live, spec_x, spec_t, &error))
    {
      fprintf (stderr, "prepare: %s\n", error->message);
      return 1;
    }
  memcpy (baked_jit_x_mut (baked, &error)->data, x, sizeof x);
  memcpy (live_jit_x_mut (live, &error)->data, x, sizeof x);

  gate.threshold = 0.3f; /* the user lowers the threshold */
  ((float *) live_jit_threshold_mut (live, &error)->data)[0] = gate.threshold;
  baked_jit_execute (baked, &error);
  live_jit_execute (live, &error);
  int n_baked = count_on (baked_jit_output (baked, &error)); /* 2: still 0.5 */
  int n_live = count_on (live_jit_output (live, &error));    /* 3: 0.3 */
  printf ("above the threshold: baked %d of 4, input %d of 4\n", n_baked, n_live);
  /* end snippet */
  return n_baked == 2 && n_live == 3 ? 0 : 1;
}
