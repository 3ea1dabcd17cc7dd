/* SPDX-License-Identifier: MIT */
/* GigaAM to text against the PyTorch reference (scripts/gigaam/reference.py,
 * fixtures by scripts/gigaam/make-asr-fixtures.py, expectations in
 * tests/fixtures/gigaam-asr-expected.json): the v3 e2e RNN-T (SentencePiece
 * pieces), v2 RNN-T (characters, two LSTM layers) and v3 e2e CTC models'
 * encoder output, joint and CTC log-probabilities, greedy tokens with their
 * frames, text and word times, for three utterances alone and as one batch;
 * the RNN-T path in each precision the CPU runs; and the predictor stepping
 * without recompiling or allocating. */
#include <glib.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>

#include "alloc-counter.h"
#include "fixtures.h"
#include "io/safetensors.h"
#include "jit/morok-jit-recurrent.h"
#include "models/gigaam-encoder-jit.h"
#include "models/rnnt-decode.h"
#include "models/transcript.h"

#define N_UTT 3
#define TOL 1e-4 /* largest error over max (1, largest |reference|) */
/* the same in the reduced precisions: the encoder's and CTC head's
 * documented tolerances (docs/gigaam-model.md, "Precision f16", "Precision
 * bf16"); bf16x3 is held to TOL */
#define F16_TOL 3e-2
#define BF16_TOL 6e-2
/* absolute, batch item against alone: what is left of a batch is a
 * different order of the same sums */
#define BATCH_TOL 1e-5

typedef struct
{
  const char *name; /* the key in gigaam-asr-expected.json */
  JsonObject *expect;
  MorokGigaAm *model;
  MorokSafetensors *ref;
  MorokSafetensors *audio_file;
  float *audio[N_UTT];
  gint64 n[N_UTT];
} Fixture;

static JsonParser *expected;

static JsonObject *
utterance (Fixture *f, guint i)
{
  return json_array_get_object_element (json_object_get_array_member (f->expect, "utterances"), i);
}

static void
fixture_load (Fixture *f, const char *name)
{
  GError *e = NULL;
  memset (f, 0, sizeof *f);
  f->name = name;
  f->expect = json_object_get_object_member (json_node_get_object (json_parser_get_root (expected)),
                                             name);
  g_assert_nonnull (f->expect);
  g_autofree char *path = fixture_path (json_object_get_string_member (f->expect, "model"));
  g_autofree char *ref = fixture_path (json_object_get_string_member (f->expect, "reference"));
  g_autofree char *audio = fixture_path (json_object_get_string_member (f->expect, "audio"));
  f->model = morok_gigaam_load (path, &e);
  g_assert_no_error (e);
  f->ref = morok_safetensors_open (ref, &e);
  g_assert_no_error (e);
  f->audio_file = morok_safetensors_open (audio, &e);
  g_assert_no_error (e);
  for (guint i = 0; i < N_UTT; i++)
    {
      const char *an = json_object_get_string_member (utterance (f, i), "audio");
      const MorokSafetensor *t = morok_safetensors_get (f->audio_file, an, &e);
      g_assert_no_error (e);
      f->audio[i] = morok_safetensor_dup_f32 (t, &e);
      g_assert_no_error (e);
      f->n[i] = t->n_elements;
      g_assert_cmpint (f->n[i], ==, json_object_get_int_member (utterance (f, i), "samples"));
    }
  morok_gigaam_set_limits (f->model, N_UTT, f->n[N_UTT - 1]);
}

static void
fixture_clear (Fixture *f)
{
  for (guint i = 0; i < N_UTT; i++)
    g_free (f->audio[i]);
  morok_safetensors_free (f->audio_file);
  morok_safetensors_free (f->ref);
  morok_gigaam_unref (f->model);
}

/* A reference tensor as f32 (transfer full) and its element count. */
static float *
ref_f32 (Fixture *f, const char *name, gint64 *out_n)
{
  GError *e = NULL;
  const MorokSafetensor *t = morok_safetensors_get (f->ref, name, &e);
  g_assert_no_error (e);
  *out_n = t->n_elements;
  float *v = morok_safetensor_dup_f32 (t, &e);
  g_assert_no_error (e);
  return v;
}

/* An i64 reference tensor (transfer full) and its element count. */
static gint64 *
ref_i64 (Fixture *f, const char *name, gint64 *out_n)
{
  GError *e = NULL;
  const MorokSafetensor *t = morok_safetensors_get (f->ref, name, &e);
  g_assert_no_error (e);
  g_assert_true (t->dtype == MOROK_SAFETENSOR_DTYPE_I64);
  *out_n = t->n_elements;
  return g_memdup2 (t->data, t->n_elements * sizeof (gint64));
}

/* Asserts max |got - want| <= @tol * max (1, max |want|) over @n values
 * @got[i * got_stride + j] vs @want[i * n_cols + j]. */
static void
assert_close (const char *what, const float *got, gsize got_stride, const float *want, gsize rows,
              gsize n_cols, double tol)
{
  double err = 0, scale = 1;
  for (gsize i = 0; i < rows; i++)
    for (gsize j = 0; j < n_cols; j++)
      {
        err = MAX (err, fabs ((double) got[i * got_stride + j] - want[i * n_cols + j]));
        scale = MAX (scale, fabs (want[i * n_cols + j]));
      }
  g_test_message ("%s: largest error %.3g (scale %.3g)", what, err, scale);
  g_assert_cmpfloat (err, <=, tol * scale);
}

/* The tokens and frames of @items (n each) equal the JSON's of utterance @i. */
static void
assert_tokens (Fixture *f, guint i, const MorokCtcToken *tokens, guint n)
{
  JsonArray *ids = json_object_get_array_member (utterance (f, i), "tokens");
  JsonArray *frames = json_object_get_array_member (utterance (f, i), "token_frames");
  g_assert_cmpuint (n, ==, json_array_get_length (ids));
  for (guint k = 0; k < n; k++)
    {
      g_assert_cmpuint (tokens[k].id, ==, json_array_get_int_element (ids, k));
      g_assert_cmpint (tokens[k].frame, ==, json_array_get_int_element (frames, k));
    }
}

/* Text and words of @tokens equal the reference's for utterance @i. */
static void
assert_transcript (Fixture *f, guint i, const MorokCtcToken *tokens, guint n)
{
  double s = morok_gigaam_frame_seconds (f->model);
  MorokVocabulary vocab;
  morok_gigaam_vocabulary (f->model, &vocab);
  g_autoptr (MorokTranscript) tr = morok_transcript_new (tokens, n, &vocab, s);
  JsonObject *u = utterance (f, i);
  g_test_message ("%s %u: \"%s\"", f->name, i, tr->text);
  g_assert_cmpstr (tr->text, ==, json_object_get_string_member (u, "text"));
  JsonArray *words = json_object_get_array_member (u, "words");
  g_assert_cmpuint (tr->n_words, ==, json_array_get_length (words));
  g_assert_cmpfloat (s, ==, json_object_get_double_member (f->expect, "frame_seconds"));
  for (guint k = 0; k < tr->n_words; k++)
    {
      JsonObject *w = json_array_get_object_element (words, k);
      g_assert_cmpstr (tr->words[k].text, ==, json_object_get_string_member (w, "word"));
      g_assert_cmpfloat (tr->words[k].start, ==, json_object_get_int_member (w, "start_frame") * s);
      g_assert_cmpfloat (tr->words[k].end, ==, json_object_get_int_member (w, "end_frame") * s);
    }
}

/* The encoder output of utterance @i alone is the reference's within @tol. */
static void
check_encoder (Fixture *f, GigaAmEncoderJit *enc, guint i, double tol)
{
  GError *e = NULL;
  const float *wave = f->audio[i];
  g_assert_true (gigaam_encoder_jit_run (enc, &wave, &f->n[i], 1, &e));
  g_assert_no_error (e);
  const MorokBuffer *out = gigaam_encoder_jit_output (enc, &e); /* [1, d, T'] */
  g_autofree char *name = g_strdup_printf ("alone.%u.encoded", i);
  gint64 n;
  g_autofree float *want = ref_f32 (f, name, &n);
  g_assert_cmpint (n, ==, out->shape[1] * out->shape[2]);
  assert_close (name, out->data, 1, want, 1, n, tol);
}

/* Replays the reference's decisions of utterance @i through the predictor
 * and joint plans prepared with @config: every joint evaluation (its frame,
 * its predictor output) is the reference's within @tol. */
static void
check_joint_steps (Fixture *f, const float *enc_proj, guint i, const MorokPrepareConfig *config,
                   double tol)
{
  GError *e = NULL;
  const MorokGigaAmConfig *cfg = morok_gigaam_config (f->model);
  guint J = cfg->joint_hidden, H = cfg->pred_hidden, C = cfg->n_classes;
  g_autofree char *jn = g_strdup_printf ("alone.%u.joint", i);
  g_autofree char *fn = g_strdup_printf ("alone.%u.joint_frames", i);
  gint64 n_joint, n_frames;
  g_autofree float *want = ref_f32 (f, jn, &n_joint);
  g_autofree gint64 *frames = ref_i64 (f, fn, &n_frames);
  g_assert_cmpint (n_joint, ==, n_frames * C);
  g_autoptr (MorokRnntDecoder) dec = morok_rnnt_decoder_new (f->model, 1, config, &e);
  g_assert_no_error (e);
  GigaAmJointJit *joint = morok_rnnt_decoder_joint (dec);
  GigaAmPredictorJit *pred = morok_rnnt_decoder_predictor (dec);
  g_autoptr (MorokJitRecurrent) rec
      = morok_jit_recurrent_new (gigaam_predictor_jit_jit (pred), cfg->pred_layers, H, J, &e);
  g_assert_no_error (e);
  const float *gates = morok_rnnt_decoder_input_gates (dec); /* [C, 4H] */
  float *in = gigaam_predictor_jit_gates_mut (pred, &e)->data;
  memcpy (in, gates + (gsize) cfg->blank_id * 4 * H, 4 * H * sizeof (float)); /* no token yet */
  const float *g = morok_jit_recurrent_step (rec, &e);
  g_assert_no_error (e);
  for (gint64 s = 0; s < n_frames; s++)
    {
      gint64 t = frames[s];
      memcpy (gigaam_joint_jit_enc_mut (joint, &e)->data, enc_proj + t * J, J * sizeof (float));
      memcpy (gigaam_joint_jit_pred_mut (joint, &e)->data, g, J * sizeof (float));
      g_assert_true (gigaam_joint_jit_execute (joint, &e));
      const float *lp = gigaam_joint_jit_output (joint, &e)->data;
      g_assert_no_error (e);
      assert_close (jn, lp, 1, want + s * C, 1, C, tol);
      guint best = 0;
      for (guint k = 1; k < C; k++)
        best = want[s * C + k] > want[s * C + best] ? k : best;
      if (best == cfg->blank_id)
        continue;
      memcpy (in, gates + (gsize) best * 4 * H, 4 * H * sizeof (float));
      g = morok_jit_recurrent_step (rec, &e);
      g_assert_no_error (e);
    }
}

/* CTC (v3 e2e, SentencePiece): log-probabilities, tokens, text and words of
 * each utterance alone. */
static void
test_ctc (gconstpointer data)
{
  GError *e = NULL;
  Fixture f;
  fixture_load (&f, data);
  const MorokGigaAmConfig *cfg = morok_gigaam_config (f.model);
  g_autoptr (GigaAmEncoderJit) enc = gigaam_encoder_jit_new (morok_gigaam_ref (f.model));
  g_autoptr (GigaAmCtcJit) ctc = gigaam_ctc_jit_new (morok_gigaam_ref (f.model));
  g_assert_true (gigaam_encoder_jit_prepare_at_bounds (enc, NULL, &e));
  g_assert_true (gigaam_ctc_jit_prepare_at_bounds (ctc, NULL, &e));
  g_assert_no_error (e);
  for (guint i = 0; i < N_UTT; i++)
    {
      const float *wave = f.audio[i];
      gint64 frames = morok_gigaam_encoded_frames (f.model, f.n[i]);
      check_encoder (&f, enc, i, TOL);
      g_assert_true (gigaam_ctc_jit_run (ctc, &wave, &f.n[i], 1, &e));
      const MorokBuffer *lp = gigaam_ctc_jit_output (ctc, &e); /* [1, T', C] */
      g_assert_no_error (e);
      g_autofree char *name = g_strdup_printf ("alone.%u.log_probs", i);
      gint64 n_want;
      g_autofree float *want = ref_f32 (&f, name, &n_want);
      g_assert_cmpint (n_want, ==, frames * cfg->n_classes);
      assert_close (name, lp->data, 1, want, 1, n_want, TOL);
      g_autofree MorokCtcToken *tokens = g_new (MorokCtcToken, frames);
      guint n = morok_ctc_greedy_decode (lp->data, frames, cfg->n_classes, cfg->n_classes,
                                         cfg->blank_id, tokens);
      assert_tokens (&f, i, tokens, n);
      assert_transcript (&f, i, tokens, n);
    }
  fixture_clear (&f);
}

/* The encoder output of each utterance of the three as one batch is the
 * one it has alone within BATCH_TOL absolute, over its frames ([b, d, T']
 * rows, channels first). */
static void
check_encoder_batch (Fixture *f)
{
  GError *e = NULL;
  g_autoptr (GigaAmEncoderJit) enc = gigaam_encoder_jit_new (morok_gigaam_ref (f->model));
  g_assert_true (gigaam_encoder_jit_prepare_at_bounds (enc, NULL, &e));
  g_assert_no_error (e);
  float *alone[N_UTT];
  gint64 alone_t[N_UTT];
  for (guint i = 0; i < N_UTT; i++)
    {
      const float *wave = f->audio[i];
      g_assert_true (gigaam_encoder_jit_run (enc, &wave, &f->n[i], 1, &e));
      const MorokBuffer *out = gigaam_encoder_jit_output (enc, &e);
      g_assert_no_error (e);
      alone[i] = g_memdup2 (out->data, out->bytes);
      alone_t[i] = out->shape[2];
    }
  const float *waves[N_UTT] = { f->audio[0], f->audio[1], f->audio[2] };
  g_assert_true (gigaam_encoder_jit_run (enc, waves, f->n, N_UTT, &e));
  const MorokBuffer *out = gigaam_encoder_jit_output (enc, &e);
  g_assert_no_error (e);
  gint64 d = out->shape[1], t = out->shape[2];
  for (guint i = 0; i < N_UTT; i++)
    {
      gint64 frames = morok_gigaam_encoded_frames (f->model, f->n[i]);
      const float *row = (const float *) out->data + i * d * t;
      double worst = 0;
      for (gint64 c = 0; c < d; c++)
        for (gint64 j = 0; j < frames; j++)
          worst = fmax (worst, fabs ((double) row[c * t + j] - alone[i][c * alone_t[i] + j]));
      g_test_message ("%s item %u: encoder output %.3g from alone", f->name, i, worst);
      g_assert_cmpfloat (worst, <=, BATCH_TOL);
      g_free (alone[i]);
    }
}

/* The three utterances as one batch: each item's encoder output is its
 * output alone (check_encoder_batch), and they decode to the tokens and
 * frames each gets alone (the encoder masks padding and frames each item
 * at its own end, "Batches" in docs/gigaam-model.md; the RNN-T rows run in
 * one greedy loop). */
static void
test_batch_equals_alone (gconstpointer data)
{
  GError *e = NULL;
  Fixture f;
  fixture_load (&f, data);
  check_encoder_batch (&f);
  const MorokGigaAmConfig *cfg = morok_gigaam_config (f.model);
  gboolean rnnt = cfg->head == MOROK_GIGAAM_HEAD_RNNT;
  g_autoptr (GigaAmRnntJit) proj = rnnt ? gigaam_rnnt_jit_new (morok_gigaam_ref (f.model)) : NULL;
  g_autoptr (GigaAmCtcJit) ctc = rnnt ? NULL : gigaam_ctc_jit_new (morok_gigaam_ref (f.model));
  g_autoptr (MorokRnntDecoder) dec = NULL;
  if (rnnt)
    {
      g_assert_true (gigaam_rnnt_jit_prepare_at_bounds (proj, NULL, &e));
      dec = morok_rnnt_decoder_new (f.model, N_UTT, NULL, &e);
    }
  else
    g_assert_true (gigaam_ctc_jit_prepare_at_bounds (ctc, NULL, &e));
  g_assert_no_error (e);
  const float *waves[N_UTT] = { f.audio[0], f.audio[1], f.audio[2] };
  gint64 frames[N_UTT];
  for (guint i = 0; i < N_UTT; i++)
    frames[i] = morok_gigaam_encoded_frames (f.model, f.n[i]);
  if (rnnt)
    {
      g_assert_true (gigaam_rnnt_jit_run (proj, waves, f.n, N_UTT, &e));
      const MorokBuffer *p = gigaam_rnnt_jit_output (proj, &e);
      g_assert_true (morok_rnnt_decoder_run (dec, p->data, p->shape[1], frames, N_UTT, &e));
      g_assert_no_error (e);
      for (guint i = 0; i < N_UTT; i++)
        {
          guint n;
          const MorokCtcToken *tokens = morok_rnnt_decoder_tokens (dec, i, &n);
          assert_tokens (&f, i, tokens, n);
        }
    }
  else
    {
      g_assert_true (gigaam_ctc_jit_run (ctc, waves, f.n, N_UTT, &e));
      const MorokBuffer *lp = gigaam_ctc_jit_output (ctc, &e); /* [3, T', C] */
      g_assert_no_error (e);
      for (guint i = 0; i < N_UTT; i++)
        {
          g_autofree MorokCtcToken *tokens = g_new (MorokCtcToken, frames[i]);
          const float *item = (const float *) lp->data + i * lp->shape[1] * cfg->n_classes;
          guint n = morok_ctc_greedy_decode (item, frames[i], cfg->n_classes, cfg->n_classes,
                                             cfg->blank_id, tokens);
          assert_tokens (&f, i, tokens, n);
        }
    }
  fixture_clear (&f);
}

/* Decoding steps the predictor and the joint many times without building,
 * compiling or (after the first run) allocating anything. */
static void
test_rnnt_steps_reuse_the_plans (void)
{
  GError *e = NULL;
  Fixture f;
  fixture_load (&f, "gigaam-v2-rnnt-tiny");
  g_autoptr (GigaAmRnntJit) proj = gigaam_rnnt_jit_new (morok_gigaam_ref (f.model));
  g_assert_true (gigaam_rnnt_jit_prepare_at_bounds (proj, NULL, &e));
  g_autoptr (MorokRnntDecoder) dec = morok_rnnt_decoder_new (f.model, N_UTT, NULL, &e);
  g_assert_no_error (e);
  const float *wave = f.audio[2];
  gint64 frames = morok_gigaam_encoded_frames (f.model, f.n[2]);
  g_assert_true (gigaam_rnnt_jit_run (proj, &wave, &f.n[2], 1, &e));
  const MorokBuffer *p = gigaam_rnnt_jit_output (proj, &e);
  g_assert_true (morok_rnnt_decoder_run (dec, p->data, p->shape[1], &frames, 1, &e));
  guint64 builds = morok_plan_build_count (), compiles = morok_compile_count_invocations ();
  gint allocations = 0;
  if (alloc_counter_works ())
    alloc_counter_start ();
  for (int k = 0; k < 5; k++)
    g_assert_true (morok_rnnt_decoder_run (dec, p->data, p->shape[1], &frames, 1, &e));
  if (alloc_counter_works ())
    allocations = alloc_counter_stop ();
  else
    g_test_message ("allocations not counted (AddressSanitizer)");
  g_assert_no_error (e);
  guint64 steps, joints;
  morok_rnnt_decoder_counts (dec, &steps, &joints);
  g_test_message ("%" G_GUINT64_FORMAT " predictor steps, %" G_GUINT64_FORMAT " joints a run",
                  steps, joints);
  g_assert_cmpuint (steps, >, 20);
  g_assert_cmpuint (morok_plan_build_count (), ==, builds);
  g_assert_cmpuint (morok_compile_count_invocations (), ==, compiles);
  g_assert_cmpint (allocations, ==, 0);
  fixture_clear (&f);
}

/* ---- reduced precisions ---- */

/* The decisions of a greedy RNN-T search that emitted @tokens from
 * @frames frames: at each frame its tokens, then the blank that moved on
 * (none after MOROK_RNNT_MAX_SYMBOLS tokens). (transfer full) guint ids */
static GArray *
rnnt_decisions (const MorokCtcToken *tokens, guint n, gint64 frames, guint blank)
{
  GArray *d = g_array_new (FALSE, FALSE, sizeof (guint));
  guint k = 0;
  for (gint64 t = 0; t < frames; t++)
    {
      guint at = 0;
      for (; k < n && tokens[k].frame == t; k++, at++)
        g_array_append_val (d, tokens[k].id);
      if (at < MOROK_RNNT_MAX_SYMBOLS)
        g_array_append_val (d, blank);
    }
  return d;
}

/* @tokens are the reference's of utterance @i, or its search departs from
 * the reference's once, at a near tie: the first decision that differs
 * picks the reference's second best class there, which is less than @tie
 * below its best (test-gigaam.c's near_tie_flips, per joint evaluation).
 * What follows depends on that decision and is not compared. TRUE when
 * they are the reference's. */
static gboolean
assert_tokens_or_near_tie (Fixture *f, guint i, const MorokCtcToken *tokens, guint n, gint64 frames,
                           double tie)
{
  const MorokGigaAmConfig *cfg = morok_gigaam_config (f->model);
  guint C = cfg->n_classes;
  g_autofree char *jn = g_strdup_printf ("alone.%u.joint", i);
  gint64 n_joint;
  g_autofree float *joint = ref_f32 (f, jn, &n_joint); /* [steps, C] */
  g_autoptr (GArray) got = rnnt_decisions (tokens, n, frames, cfg->blank_id);
  guint steps = (guint) (n_joint / C), s = 0;
  while (s < steps && s < got->len)
    {
      const float *w = joint + (gsize) s * C;
      guint w1 = 0, w2 = 1;
      for (guint c = 1; c < C; c++)
        if (w[c] > w[w1])
          w2 = w1, w1 = c;
        else if (c != w1 && (w2 == w1 || w[c] > w[w2]))
          w2 = c;
      guint g = g_array_index (got, guint, s);
      if (g != w1)
        {
          g_test_message ("%s %u: joint %u picks %u for %u, the reference's margin %.2g", f->name,
                          i, s, g, w1, w[w1] - w[w2]);
          g_assert_cmpuint (g, ==, w2);
          g_assert_cmpfloat (w[w1] - w[w2], <, tie);
          return FALSE;
        }
      s++;
    }
  g_assert_cmpuint (got->len, ==, steps);
  assert_tokens (f, i, tokens, n);
  return TRUE;
}

/* RNN-T with the products in @precision: for each utterance alone, the
 * encoder output and every joint evaluation of the reference's search
 * within the precision's tolerance, and its tokens (f32 and bf16x3:
 * exactly; f16, bf16 and int8: up to a near tie), text and words. */
static void
check_rnnt (const char *fixture, MorokPrecision precision)
{
  double tol = precision == MOROK_PRECISION_F16    ? F16_TOL
               : precision == MOROK_PRECISION_BF16 ? BF16_TOL
               : precision == MOROK_PRECISION_INT8 ? fixture_int8_tol ()
                                                   : TOL;
  gboolean exact = tol == TOL; /* f32 and bf16x3 decide every step as the reference */
  GError *e = NULL;
  Fixture f;
  fixture_load (&f, fixture);
  g_autoptr (MorokPrepareConfig) config = morok_prepare_config_new ();
  morok_prepare_config_set_precision (config, precision);
  g_autoptr (GigaAmEncoderJit) enc = gigaam_encoder_jit_new (morok_gigaam_ref (f.model));
  g_autoptr (GigaAmRnntJit) proj = gigaam_rnnt_jit_new (morok_gigaam_ref (f.model));
  g_assert_true (gigaam_encoder_jit_prepare_at_bounds (enc, config, &e));
  g_assert_true (gigaam_rnnt_jit_prepare_at_bounds (proj, config, &e));
  g_autoptr (MorokRnntDecoder) dec = morok_rnnt_decoder_new (f.model, 1, config, &e);
  g_assert_no_error (e);
  for (guint i = 0; i < N_UTT; i++)
    {
      const float *wave = f.audio[i];
      gint64 frames = morok_gigaam_encoded_frames (f.model, f.n[i]);
      check_encoder (&f, enc, i, tol);
      g_assert_true (gigaam_rnnt_jit_run (proj, &wave, &f.n[i], 1, &e));
      const MorokBuffer *p = gigaam_rnnt_jit_output (proj, &e);
      g_assert_no_error (e);
      check_joint_steps (&f, p->data, i, config, tol);
      g_assert_true (morok_rnnt_decoder_run (dec, p->data, p->shape[1], &frames, 1, &e));
      g_assert_no_error (e);
      guint n;
      const MorokCtcToken *tokens = morok_rnnt_decoder_tokens (dec, 0, &n);
      if (assert_tokens_or_near_tie (&f, i, tokens, n, frames, exact ? 0.0 : tol))
        assert_transcript (&f, i, tokens, n);
    }
  fixture_clear (&f);
}

/* RNN-T in f32: encoder, joint steps, tokens, text, words. */
static void
test_rnnt (gconstpointer data)
{
  check_rnnt (data, MOROK_PRECISION_F32);
}

typedef struct
{
  const char *fixture;
  MorokPrecision precision;
} PrecisionCase;

/* check_rnnt in a reduced precision, where this CPU has its instructions;
 * otherwise skipped, the message naming the instruction missing. */
static void
test_rnnt_precision (gconstpointer data)
{
  const PrecisionCase *pc = data;
  g_autoptr (GError) why = NULL;
  if (morok_plan_precision_supported (morok_isa_detect (), pc->precision, &why))
    check_rnnt (pc->fixture, pc->precision);
  else
    g_test_skip (why->message);
}

/* A CTC model has no RNN-T decoder. */
static void
test_rnnt_decoder_needs_rnnt (void)
{
  GError *e = NULL;
  Fixture f;
  fixture_load (&f, "gigaam-v3-e2e-ctc-tiny");
  g_assert_null (morok_rnnt_decoder_new (f.model, 1, NULL, &e));
  g_assert_error (e, MOROK_JIT_ERROR, MOROK_JIT_ERROR_BUILD);
  g_assert_nonnull (strstr (e->message, "gigaam-v3-e2e-ctc-tiny.safetensors"));
  g_clear_error (&e);
  fixture_clear (&f);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_autofree char *path = fixture_path ("gigaam-asr-expected.json");
  GError *e = NULL;
  expected = json_parser_new ();
  g_assert_true (json_parser_load_from_file (expected, path, &e));
  g_test_add_data_func ("/gigaam-asr/rnnt/v3-e2e-sentencepiece", "gigaam-v3-e2e-rnnt-tiny",
                        test_rnnt);
  g_test_add_data_func ("/gigaam-asr/rnnt/v2-chars-two-layers", "gigaam-v2-rnnt-tiny", test_rnnt);
  g_test_add_data_func ("/gigaam-asr/ctc/v3-e2e-sentencepiece", "gigaam-v3-e2e-ctc-tiny", test_ctc);
  g_test_add_data_func ("/gigaam-asr/batch-equals-alone/v3-e2e-rnnt", "gigaam-v3-e2e-rnnt-tiny",
                        test_batch_equals_alone);
  g_test_add_data_func ("/gigaam-asr/batch-equals-alone/v2-rnnt", "gigaam-v2-rnnt-tiny",
                        test_batch_equals_alone);
  g_test_add_data_func ("/gigaam-asr/batch-equals-alone/v3-e2e-ctc", "gigaam-v3-e2e-ctc-tiny",
                        test_batch_equals_alone);
  g_test_add_func ("/gigaam-asr/rnnt/steps-reuse-the-plans", test_rnnt_steps_reuse_the_plans);
  g_test_add_func ("/gigaam-asr/rnnt/decoder-needs-rnnt", test_rnnt_decoder_needs_rnnt);
  static const PrecisionCase precisions[] = {
    { "gigaam-v3-e2e-rnnt-tiny", MOROK_PRECISION_F16 },
    { "gigaam-v2-rnnt-tiny", MOROK_PRECISION_F16 },
    { "gigaam-v3-e2e-rnnt-tiny", MOROK_PRECISION_BF16 },
    { "gigaam-v2-rnnt-tiny", MOROK_PRECISION_BF16 },
    { "gigaam-v3-e2e-rnnt-tiny", MOROK_PRECISION_BF16X3 },
    { "gigaam-v2-rnnt-tiny", MOROK_PRECISION_BF16X3 },
    { "gigaam-v3-e2e-rnnt-tiny", MOROK_PRECISION_INT8 },
    { "gigaam-v2-rnnt-tiny", MOROK_PRECISION_INT8 },
  };
  for (guint k = 0; k < G_N_ELEMENTS (precisions); k++)
    {
      g_autofree char *path
          = g_strdup_printf ("/gigaam-asr/rnnt-%s/%s",
                             morok_precision_name (precisions[k].precision), precisions[k].fixture);
      g_test_add_data_func (path, &precisions[k], test_rnnt_precision);
    }
  int rc = g_test_run ();
  g_object_unref (expected);
  return rc;
}
