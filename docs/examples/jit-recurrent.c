/* SPDX-License-Identifier: MIT */
/* docs/jit-wrapper.md, "Recurrent execution": a voice-activity-like LSTM
 * cell (4 features in, 16 hidden units, one probability out) driven chunk
 * by chunk through MorokJitRecurrent, its state in the plan's h and c
 * inputs. Exits 1
 * if a probability leaves (0, 1) or a reset does not restart the stream. */
#include <morok.h>
#include <math.h>
#include <stdio.h>

enum
{
  FEATURES = 4,
  HIDDEN = 16
};

typedef struct
{
  float w_ih[4 * HIDDEN * FEATURES], w_hh[4 * HIDDEN * HIDDEN], b[4 * HIDDEN];
  float w_out[HIDDEN], b_out[1];
} Vad;

static void
vad_free (Vad *vad)
{
  g_free (vad);
}

/* snippet: declare */
#define VAD_JIT_INPUTS(X) X (features) X (h) X (c)
#define VAD_JIT_VARS(X)
MOROK_JIT_DECLARE (VadJit, vad_jit, Vad, VAD_JIT_INPUTS, VAD_JIT_VARS)

/* features [1, 4], h and c [1, 16] -> [p | h' | c'], [1, 1 + 16 + 16] */
static MorokTensor *
build (Vad *m, MorokTensor *features, MorokTensor *h, MorokTensor *c, GError **error)
{
  MorokGraph *g = features->graph;
  MorokTensor *w_ih = morok_tensor_weight (g, "w_ih", MOROK_DTYPE_F32, m->w_ih,
                                           (gint64[]){ 4 * HIDDEN, FEATURES }, 2);
  MorokTensor *w_hh = morok_tensor_weight (g, "w_hh", MOROK_DTYPE_F32, m->w_hh,
                                           (gint64[]){ 4 * HIDDEN, HIDDEN }, 2);
  MorokTensor *b = morok_tensor_weight (g, "b", MOROK_DTYPE_F32, m->b, (gint64[]){ 4 * HIDDEN }, 1);
  MorokTensor *w_out
      = morok_tensor_weight (g, "w_out", MOROK_DTYPE_F32, m->w_out, (gint64[]){ 1, HIDDEN }, 2);
  MorokTensor *b_out
      = morok_tensor_weight (g, "b_out", MOROK_DTYPE_F32, m->b_out, (gint64[]){ 1 }, 1);
  MorokTensor *h2, *c2;
  if (!morok_tensor_lstm_cell (features, h, c, w_ih, w_hh, b, NULL, &h2, &c2, error))
    return NULL;
  MorokTensor *p = morok_tensor_sigmoid (morok_tensor_linear (h2, w_out, b_out, error), error);
  MorokTensor *parts[] = { p, h2, c2 }; /* the layout MorokJitRecurrent reads */
  return morok_tensor_cat (parts, 3, 1, error);
}

MOROK_JIT_DEFINE (VadJit, vad_jit, Vad, VAD_JIT_INPUTS, VAD_JIT_VARS, build, vad_free)
/* end snippet */

int
main (void)
{
  Vad *vad = g_new0 (Vad, 1); /* fixed weights: a pattern, not a trained model */
  for (int i = 0; i < 4 * HIDDEN * FEATURES; i++)
    vad->w_ih[i] = 0.3f * sinf (i * 0.7f);
  for (int i = 0; i < 4 * HIDDEN * HIDDEN; i++)
    vad->w_hh[i] = 0.2f * cosf (i * 0.3f);
  for (int i = 0; i < HIDDEN; i++)
    vad->w_out[i] = 0.5f * sinf (i * 1.3f);

  /* snippet: run */
  g_autoptr (GError) error = NULL;
  g_autoptr (VadJit) jit = vad_jit_new (vad);
  g_autoptr (MorokInputSpec) features = morok_input_spec_f32 (MOROK_SHAPE (1, FEATURES));
  g_autoptr (MorokInputSpec) state = morok_input_spec_f32 (MOROK_SHAPE (1, HIDDEN));
  if (!vad_jit_prepare (jit, features, state, state, &error))
    {
      fprintf (stderr, "prepare: %s\n", error->message);
      return 1;
    }
  /* the state inputs are named h and c: one layer of HIDDEN units */
  g_autoptr (MorokJitRecurrent) rec
      = morok_jit_recurrent_new (jit, 1, HIDDEN, 1 /* head: p */, &error);
  if (!rec)
    {
      fprintf (stderr, "recurrent: %s\n", error->message);
      return 1;
    }
  /* the step's own input, written in place: the buffer stays put */
  float *x = vad_jit_features_mut (jit, &error)->data;
  float first = 0;
  for (int step = 0; step < 8; step++)
    {
      for (int i = 0; i < FEATURES; i++)
        x[i] = sinf (step * 0.9f + i);
      const float *p = morok_jit_recurrent_step (rec, &error);
      if (!p)
        {
          fprintf (stderr, "step: %s\n", error->message);
          return 1;
        }
      MorokJitStepTiming t = morok_jit_recurrent_last_timing (rec);
      printf ("step %d: p = %.4f (execute %" G_GINT64_FORMAT " ns, read %" G_GINT64_FORMAT " ns)\n",
              step, p[0], t.execute_ns, t.read_ns);
      if (step == 0)
        first = p[0];
      if (!(p[0] > 0 && p[0] < 1))
        return 1;
    }
  morok_jit_recurrent_reset (rec); /* a new stream: h = c = 0, the plan untouched */
  /* end snippet */
  for (int i = 0; i < FEATURES; i++)
    x[i] = sinf (i);
  const float *p = morok_jit_recurrent_step (rec, &error);
  return p && p[0] == first ? 0 : 1;
}
