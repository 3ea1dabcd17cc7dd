/* SPDX-License-Identifier: MIT */
/* docs/jit-wrapper.md, "Contexts and the registry": two users of one model
 * who do not know each other take one prepared prototype from the
 * registry, each runs its own context of it, and the last release frees
 * it. Exits 1 if an output is wrong, the model was prepared twice or the
 * prototype outlives its users. */
#include <morok.h>
#include <stdio.h>

typedef struct
{
  float gain;
} Gain;

static void
gain_free (Gain *gain)
{
  g_free (gain);
}

#define GAIN_JIT_INPUTS(X) X (frames)
#define GAIN_JIT_VARS(X)
MOROK_JIT_DECLARE (GainJit, gain_jit, Gain, GAIN_JIT_INPUTS, GAIN_JIT_VARS)

/* frames [4, 8] -> frames * gain */
static MorokTensor *
build (Gain *model, MorokTensor *frames, GError **error)
{
  return morok_tensor_mul_scalar (frames, model->gain, error);
}

MOROK_JIT_DEFINE (GainJit, gain_jit, Gain, GAIN_JIT_INPUTS, GAIN_JIT_VARS, build, gain_free)

/* snippet: make */
/* The registry calls this once per key, on the first acquire's thread. */
static MorokJit *
make_prototype (gpointer data, GError **error)
{
  Gain *model = g_new0 (Gain, 1);
  model->gain = *(const float *) data;
  g_autoptr (GainJit) jit = gain_jit_new (model);
  g_autoptr (MorokInputSpec) frames = morok_input_spec_f32 (MOROK_SHAPE (4, 8));
  if (!gain_jit_prepare (jit, frames, error))
    return NULL;
  return gain_jit_jit (g_steal_pointer (&jit));
}
/* end snippet */

/* One user: acquires the key, runs its own context on x = 1, 2, ... */
static MorokJitShared *
use (const char *key, float gain, GainJit **out_mine, GError **error)
{
  /* snippet: use */
  MorokJitShared *shared = morok_jit_registry_acquire (key, make_prototype, &gain, error);
  if (!shared)
    return NULL;
  GainJit *prototype = (GainJit *) morok_jit_shared_prototype (shared);
  GainJit *mine = gain_jit_new_context (prototype, error); /* own buffers, shared program */
  /* end snippet */
  float *x = mine ? gain_jit_frames_mut (mine, error)->data : NULL;
  for (guint i = 0; x && i < 32; i++)
    x[i] = (float) (i + 1);
  if (!mine || !gain_jit_execute (mine, error))
    {
      g_clear_pointer (&mine, gain_jit_free);
      morok_jit_registry_release (shared);
      return NULL;
    }
  *out_mine = mine;
  return shared;
}

int
main (void)
{
  g_autoptr (GError) error = NULL;
  /* a key names the model's contents and every option that changes the program */
  const char *key = "gain 0.5, frames [4, 8]";
  GainJit *a = NULL, *b = NULL;
  MorokJitShared *sa = use (key, 0.5f, &a, &error);
  MorokJitShared *sb = sa ? use (key, 0.5f, &b, &error) : NULL;
  if (!sb)
    {
      fprintf (stderr, "%s\n", error->message);
      return 1;
    }
  const float *ya = gain_jit_output (a, NULL)->data, *yb = gain_jit_output (b, NULL)->data;
  printf ("prepares %" G_GUINT64_FORMAT ", users %u, outputs %.1f and %.1f\n",
          morok_jit_registry_prepare_count (), morok_jit_registry_users (key), ya[31], yb[31]);
  int wrong = morok_jit_registry_prepare_count () != 1 || ya[31] != 16.0f || yb[31] != 16.0f;
  /* snippet: release */
  gain_jit_free (a); /* every context before its prototype's release */
  morok_jit_registry_release (sa);
  gain_jit_free (b);
  morok_jit_registry_release (sb); /* the last use: frees the prototype and its model */
  /* end snippet */
  wrong += morok_jit_registry_n_prototypes () != 0;
  return wrong ? 1 : 0;
}
