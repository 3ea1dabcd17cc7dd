/* SPDX-License-Identifier: MIT */
/* A batch computes each item as that item alone: for the tiny v3 and v2
 * models, the three fixture utterances (1.0, 1.7 and 2.3 s) as one padded
 * batch give, over each item's valid frames, the encoder output of the item
 * run as a batch of one within BATCH_TOL and the same greedy CTC tokens. The
 * subsampling would otherwise read the padding into the last valid frames
 * (docs/gigaam-model.md, "Batches"). */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "gigaam-fixture.h"
#include "jit/morok-jit.h"
#include "models/ctc-decode.h"

#define N_UTT GIGAAM_FIXTURE_UTTERANCES
/* absolute, on encoder outputs of magnitude up to about 4: what is left
 * of a batch is a different order of the same sums */
#define BATCH_TOL 1e-5
/* the batched features past an item's frames: the log-mel of zeros
 * (ln 1e-9), what the front-end makes of zero-padded samples */
#define PAD_FEATURE -20.7232658f

/* A test plan, lengths in samples: the log-mel features [b, T, F] of the
 * waveform [b, t] (t samples); or the encoder output and the CTC
 * log-probabilities side by side, [b, T', d + C], from the waveform or from
 * the features [b, t, F] (t frames). */
typedef enum
{
  PROBE_FEATURES,
  PROBE_FROM_WAV,
  PROBE_FROM_FEATURES,
} ProbeKind;

typedef struct
{
  MorokGigaAm *m;
  ProbeKind kind;
  gint64 t_min, t_max;
} Probe;

#define PROBE_JIT_INPUTS(X) X (x) X (lengths)
#define PROBE_JIT_VARS(X) X (b, 1, N_UTT) X (t, model->t_min, model->t_max)
MOROK_JIT_DECLARE (ProbeJit, probe_jit, Probe, PROBE_JIT_INPUTS, PROBE_JIT_VARS)

static MorokTensor *
probe_build (Probe *p, MorokTensor *x, MorokTensor *lengths, MorokVariable *b, MorokVariable *t,
             GError **error)
{
  gint64 tail = p->kind == PROBE_FROM_FEATURES ? 0 : morok_gigaam_wave_tail (p->m);
  MorokTensor *in = morok_jit_try_shrink (x, 0, b, error);
  in = morok_tensor_slice (in, 1, morok_sym_const (morok_graph_sym_pool (x->graph), 0),
                           morok_sym_add_c (morok_sym_var (t), tail), error);
  MorokTensor *len = morok_jit_try_shrink (lengths, 0, b, error);
  guint layers = morok_gigaam_config (p->m)->n_layers;
  if (p->kind == PROBE_FEATURES)
    return morok_gigaam_features (p->m, in, len, error);
  MorokTensor *enc = p->kind == PROBE_FROM_WAV
                         ? morok_gigaam_forward (p->m, in, len, layers, error)
                         : morok_gigaam_encoder (p->m, in, len, layers, error);
  MorokTensor *both[] = { enc, morok_gigaam_ctc_log_probs (p->m, enc, error) };
  return morok_tensor_cat (both, 2, 2, error);
}

static void
probe_free (Probe *p)
{
  morok_gigaam_unref (p->m);
  g_free (p);
}

MOROK_JIT_DEFINE (ProbeJit, probe_jit, Probe, PROBE_JIT_INPUTS, PROBE_JIT_VARS, probe_build,
                  probe_free)

static ProbeJit *
probe_new (GigaAmFixture *f, ProbeKind kind)
{
  GError *e = NULL;
  const MorokGigaAmConfig *c = morok_gigaam_config (f->model);
  gint64 longest = f->n[N_UTT - 1];
  Probe *p = g_new0 (Probe, 1);
  p->m = morok_gigaam_ref (f->model);
  p->kind = kind;
  gboolean wav = kind != PROBE_FROM_FEATURES;
  p->t_min = wav ? morok_gigaam_min_samples (f->model) : 1;
  p->t_max = wav ? longest : morok_gigaam_feature_frames (f->model, longest);
  ProbeJit *jit = probe_jit_new (p);
  gint64 tail = morok_gigaam_wave_tail (f->model);
  g_autoptr (MorokInputSpec) x
      = wav ? morok_input_spec_f32 (MOROK_SHAPE (N_UTT, p->t_max + tail))
            : morok_input_spec_f32 (MOROK_SHAPE (N_UTT, p->t_max, c->n_mels));
  g_autoptr (MorokInputSpec) len = morok_input_spec_i64 (MOROK_SHAPE (N_UTT));
  g_assert_true (probe_jit_prepare (jit, x, len, &e));
  g_assert_no_error (e);
  return jit;
}

/* Row i of the input holds rows[i] ([n_rows[i], row_size] floats; a
 * waveform with its tail, morok_gigaam_pack_wave), the rest @pad;
 * lengths[i] = @samples[i]; executes with b = @n and t = the longest row.
 * (transfer none) the output, until the next run. */
static const MorokBuffer *
probe_run (ProbeJit *jit, const float *const *rows, const gint64 *n_rows, gsize row_size,
           const gint64 *samples, guint n, float pad)
{
  GError *e = NULL;
  MorokJit *j = probe_jit_jit (jit);
  MorokBuffer *x = morok_jit_input_mut (j, 0, &e);
  MorokBuffer *len = morok_jit_input_mut (j, 1, &e);
  g_assert_no_error (e);
  gsize stride = x->bytes / sizeof (float) / N_UTT;
  float *data = x->data;
  for (gsize k = 0; k < stride * N_UTT; k++)
    data[k] = pad;
  gint64 t = 0;
  for (guint i = 0; i < n; i++)
    {
      if (probe_jit_model (jit)->kind == PROBE_FROM_FEATURES)
        memcpy (data + i * stride, rows[i], n_rows[i] * row_size * sizeof (float));
      else
        morok_gigaam_pack_wave (probe_jit_model (jit)->m, rows[i], n_rows[i], data + i * stride);
      ((gint64 *) len->data)[i] = samples[i];
      t = MAX (t, n_rows[i]);
    }
  MorokVarValue vars[] = { { "b", n }, { "t", t } };
  g_assert_true (morok_jit_execute_with_vars (j, vars, 2, &e));
  g_assert_no_error (e);
  const MorokBuffer *out = probe_jit_output (jit, &e);
  g_assert_no_error (e);
  return out;
}

/* Largest |got - want| over @frames rows of @cols, rows @got_stride and
 * @want_stride floats apart. */
static double
max_abs_diff (const float *got, gsize got_stride, const float *want, gsize want_stride,
              gint64 frames, gint64 cols)
{
  double worst = 0;
  for (gint64 r = 0; r < frames; r++)
    for (gint64 c = 0; c < cols; c++)
      {
        double d = fabs ((double) got[r * got_stride + c] - want[r * want_stride + c]);
        worst = isnan (d) ? INFINITY : fmax (worst, d);
      }
  return worst;
}

/* Item @i of the batch @got against @alone, the same item as a batch of
 * one (both [.., T', d + C]): encoder outputs within BATCH_TOL over its
 * frames, and the same greedy tokens. */
static void
check_item (GigaAmFixture *f, const MorokBuffer *got, guint i, const float *alone,
            gint64 alone_frames, const char *what)
{
  const MorokGigaAmConfig *c = morok_gigaam_config (f->model);
  gint64 frames = morok_gigaam_encoded_frames (f->model, f->n[i]);
  gsize cols = (gsize) got->shape[2];
  g_assert_cmpint (cols, ==, c->d_model + c->n_classes);
  g_assert_cmpint (alone_frames, ==, frames);
  const float *row = (const float *) got->data + i * got->shape[1] * cols;
  double diff = max_abs_diff (row, cols, alone, cols, frames, c->d_model);
  g_test_message ("%s %s, item %u (%" G_GINT64_FORMAT " of %" G_GINT64_FORMAT
                  " frames): max abs difference from alone %.3g",
                  f->version, what, i, frames, got->shape[1], diff);
  MorokCtcToken batch_tok[256], alone_tok[256];
  g_assert_cmpint (frames, <=, G_N_ELEMENTS (batch_tok));
  guint nb = morok_ctc_greedy_decode (row + c->d_model, frames, cols, c->n_classes, c->blank_id,
                                      batch_tok);
  guint na = morok_ctc_greedy_decode (alone + c->d_model, frames, cols, c->n_classes, c->blank_id,
                                      alone_tok);
  g_assert_cmpfloat (diff, <=, BATCH_TOL);
  g_assert_cmpuint (nb, ==, na);
  for (guint k = 0; k < nb; k++)
    g_assert_cmpint (batch_tok[k].id, ==, alone_tok[k].id);
}

/* Runs @jit on each item alone, then on the three as one batch, and checks
 * every item (check_item). rows[i]: the input of item i, n_rows[i] rows of
 * @row_size floats; @pad fills the batch past an item's rows. */
static void
check_batch (GigaAmFixture *f, ProbeJit *jit, const float *const *rows, const gint64 *n_rows,
             gsize row_size, float pad, const char *what)
{
  float *alone[N_UTT];
  gint64 alone_frames[N_UTT];
  for (guint i = 0; i < N_UTT; i++)
    {
      const MorokBuffer *out = probe_run (jit, &rows[i], &n_rows[i], row_size, &f->n[i], 1, pad);
      alone_frames[i] = out->shape[1];
      alone[i] = g_memdup2 (out->data, out->bytes);
    }
  const MorokBuffer *out = probe_run (jit, rows, n_rows, row_size, f->n, N_UTT, pad);
  g_assert_cmpint (out->shape[0], ==, N_UTT);
  for (guint i = 0; i < N_UTT; i++)
    check_item (f, out, i, alone[i], alone_frames[i], what);
  for (guint i = 0; i < N_UTT; i++)
    g_free (alone[i]);
}

/* The encoder on features: each item's own features (its front-end run
 * alone), batched with the log-mel floor past its frames, give its output
 * alone. Covers the subsampling's masks, v3's Conv1d and v2's Conv2d. */
static void
test_encoder_items_equal_alone (gconstpointer data)
{
  GigaAmFixture f;
  gigaam_fixture_load (&f, data);
  const MorokGigaAmConfig *c = morok_gigaam_config (f.model);
  g_autoptr (ProbeJit) feat_jit = probe_new (&f, PROBE_FEATURES);
  float *feat[N_UTT];
  gint64 frames[N_UTT];
  for (guint i = 0; i < N_UTT; i++)
    {
      const MorokBuffer *out = probe_run (feat_jit, &f.audio[i], &f.n[i], 1, &f.n[i], 1, 0.0f);
      frames[i] = out->shape[1];
      g_assert_cmpint (frames[i], ==, morok_gigaam_feature_frames (f.model, f.n[i]));
      feat[i] = g_memdup2 (out->data, out->bytes);
    }
  g_autoptr (ProbeJit) jit = probe_new (&f, PROBE_FROM_FEATURES);
  check_batch (&f, jit, (const float *const *) feat, frames, c->n_mels, PAD_FEATURE,
               "encoder on features");
  for (guint i = 0; i < N_UTT; i++)
    g_free (feat[i]);
  gigaam_fixture_clear (&f);
}

/* The whole plan on waveforms, as the wrappers and the element run it:
 * each item's samples and tail, padded, give its output alone. For v2 the
 * tail is the item's own right reflection; the plan's reflection at the
 * batch's end left the shorter items' last frames 0.23 away
 * (docs/gigaam-model.md, "Batches"). */
static void
test_wav_items_equal_alone (gconstpointer data)
{
  GigaAmFixture f;
  gigaam_fixture_load (&f, data);
  g_autoptr (ProbeJit) jit = probe_new (&f, PROBE_FROM_WAV);
  check_batch (&f, jit, f.audio, f.n, 1, 0.0f, "forward on waveforms");
  gigaam_fixture_clear (&f);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_data_func ("/gigaam/v3/batch/encoder-items-equal-alone", "v3",
                        test_encoder_items_equal_alone);
  g_test_add_data_func ("/gigaam/v2/batch/encoder-items-equal-alone", "v2",
                        test_encoder_items_equal_alone);
  g_test_add_data_func ("/gigaam/v3/batch/wav-items-equal-alone", "v3", test_wav_items_equal_alone);
  g_test_add_data_func ("/gigaam/v2/batch/wav-items-equal-alone", "v2", test_wav_items_equal_alone);
  return g_test_run ();
}
