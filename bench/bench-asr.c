/* SPDX-License-Identifier: MIT */
/* Morok's side of bench/compare-asr.sh: full-size GigaAM v3 from the
 * waveform to text and words, batch 1, next to the encoder alone. Not a test.
 *
 *   build/bench/bench-asr MODEL INPUTS [REPS [THREADS...]]
 *
 * MODEL is a CTC or RNN-T model (make-bench-model.py's gigaam-v3-full,
 * make-bench-asr.py's gigaam-v3-rnnt-full); INPUTS is make-bench-asr.py's
 * gigaam-asr-bench-inputs.safetensors (audio.speech, 60 s; its 10 s and 30 s
 * prefixes are bench-gigaam's cases). For each thread count (default 1 and
 * 2; PrepareConfig threads) and each length ($BENCH_ASR_SECONDS, default
 * "10 30 60"), one untimed and REPS (default 3) timed runs, medians of:
 *
 *   encoder  GigaAmEncoderJit alone: waveform -> [1, 768, T']
 *   jit      the head's plan: GigaAmCtcJit (-> log-probabilities [1, T', C])
 *            or GigaAmRnntJit (-> the joint's encoder projection [1, T', J])
 *   decode   CTC: morok_ctc_greedy_decode; RNN-T: morok_rnnt_decoder_run
 *            (predictor and joint plans, frame loop); then morok_transcript_new
 *   total    jit + decode of the same runs
 *
 * with decode as a share of the encoder alone (decode_pct) and what the whole
 * adds to it (added_pct = total / encoder - 1; the two are timed in separate
 * runs, so it carries their noise). Plans are bound at the longest length.
 * RNN-T also times, on its own (STEP_REPS times, median), one predictor step
 * as the decoder drives it (token's input term copied, state in and out,
 * morok_jit_recurrent_step; step_us, of which exec_us is the plan) and one
 * joint execute (joint_us); rest_us is what the decoding's time leaves after
 * steps * step_us + joints * joint_us (copies, argmax, token bookkeeping):
 *
 *   RESULT asr head=rnnt threads=1 seconds=10 frames=250 encoder=0.8312 jit=0.8401
 *     decode=0.0180 total=0.8581 decode_pct=2.17 added_pct=3.23 steps=84 joints=333
 *     tokens=83 words=31 step_us=60.1 exec_us=55.0 joint_us=22.3 rest_us=900 frame_us=72.0
 *     rtf=0.0858
 *
 * (one line). With BENCH_ASR_PROFILE=1, RNN-T also prints the per-kernel
 * profile (bench-profile.h) of the predictor step's plan and of the joint's,
 * STEP_REPS profiled executes each. The other MOROK_* settings of
 * docs/jit-wrapper.md apply. */
#include <glib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench-profile.h"
#include "bench-util.h"
#include "io/safetensors.h"
#include "jit/morok-jit-recurrent.h"
#include "models/ctc-decode.h"
#include "models/gigaam-encoder-jit.h"
#include "models/gigaam.h"
#include "models/rnnt-decode.h"
#include "models/transcript.h"

#define SR 16000
#define MAX_LENGTHS 8
#define STEP_REPS 1000

typedef struct
{
  MorokGigaAm *model;
  const MorokGigaAmConfig *cfg;
  gboolean rnnt;
  const float *audio;
  guint reps;
} Bench;

/* One plan of the head and, for RNN-T, its decoder. */
typedef struct
{
  GigaAmCtcJit *ctc;
  GigaAmRnntJit *rnnt;
  MorokRnntDecoder *dec;
  MorokCtcToken *tokens; /* CTC: room for one token per frame */
} Head;

typedef struct
{
  double encoder, jit, decode, total; /* medians, s */
  guint64 steps, joints;
  guint tokens, words;
  char *text; /* the transcript's start */
} Case;

static gboolean
fail (GError *error)
{
  fprintf (stderr, "bench-asr: %s\n", error ? error->message : "failed");
  return FALSE;
}

static MorokPrepareConfig *
config_new (guint threads)
{
  MorokPrepareConfig *config = morok_prepare_config_from_env ();
  morok_prepare_config_set_threads (config, threads);
  return config;
}

static void
head_clear (Head *h)
{
  g_clear_pointer (&h->ctc, gigaam_ctc_jit_free);
  g_clear_pointer (&h->rnnt, gigaam_rnnt_jit_free);
  g_clear_pointer (&h->dec, morok_rnnt_decoder_free);
  g_clear_pointer (&h->tokens, g_free);
}

static gboolean
head_prepare (Bench *b, Head *h, guint threads, GError **error)
{
  g_autoptr (MorokPrepareConfig) config = config_new (threads);
  if (!b->rnnt)
    {
      h->ctc = gigaam_ctc_jit_new (morok_gigaam_ref (b->model));
      h->tokens
          = g_new (MorokCtcToken,
                   morok_gigaam_encoded_frames (b->model, morok_gigaam_max_samples (b->model)));
      return gigaam_ctc_jit_prepare_at_bounds (h->ctc, config, error);
    }
  h->rnnt = gigaam_rnnt_jit_new (morok_gigaam_ref (b->model));
  if (!gigaam_rnnt_jit_prepare_at_bounds (h->rnnt, config, error))
    return FALSE;
  h->dec = morok_rnnt_decoder_new (b->model, 1, config, error);
  return h->dec != NULL;
}

static gboolean
head_run (Bench *b, Head *h, gint64 n, GError **error)
{
  if (h->ctc)
    return gigaam_ctc_jit_run (h->ctc, &b->audio, &n, 1, error);
  return gigaam_rnnt_jit_run (h->rnnt, &b->audio, &n, 1, error);
}

/* The head's output of the last run of @n samples to text and words.
 * (transfer full) */
static MorokTranscript *
head_decode (Bench *b, Head *h, gint64 n, guint *out_tokens, GError **error)
{
  gint64 frames = morok_gigaam_encoded_frames (b->model, n);
  const MorokCtcToken *tokens = h->tokens;
  guint n_tokens;
  guint C = b->cfg->n_classes;
  if (h->ctc)
    {
      const MorokBuffer *lp = gigaam_ctc_jit_output (h->ctc, error);
      if (!lp)
        return NULL;
      n_tokens = morok_ctc_greedy_decode (lp->data, frames, C, C, b->cfg->blank_id, h->tokens);
    }
  else
    {
      const MorokBuffer *proj = gigaam_rnnt_jit_output (h->rnnt, error);
      if (!proj || !morok_rnnt_decoder_run (h->dec, proj->data, proj->shape[1], &frames, 1, error))
        return NULL;
      tokens = morok_rnnt_decoder_tokens (h->dec, 0, &n_tokens);
    }
  *out_tokens = n_tokens;
  MorokVocabulary vocab;
  morok_gigaam_vocabulary (b->model, &vocab);
  return morok_transcript_new (tokens, n_tokens, &vocab, morok_gigaam_frame_seconds (b->model));
}

/* Medians of the encoder alone at each length into cases[i].encoder. */
static gboolean
time_encoder (Bench *b, guint threads, const int *seconds, guint n_lengths, Case *cases,
              GError **error)
{
  g_autoptr (MorokPrepareConfig) config = config_new (threads);
  g_autoptr (GigaAmEncoderJit) jit = gigaam_encoder_jit_new (morok_gigaam_ref (b->model));
  double t0 = bench_now_us ();
  if (!gigaam_encoder_jit_prepare_at_bounds (jit, config, error))
    return FALSE;
  printf ("prepare encoder, %u thread(s): %.2f s\n", threads, (bench_now_us () - t0) / 1e6);
  g_autofree double *t = g_new (double, b->reps);
  for (guint s = 0; s < n_lengths; s++)
    {
      gint64 n = (gint64) seconds[s] * SR;
      for (guint r = 0; r <= b->reps; r++)
        {
          double t1 = bench_now_us ();
          if (!gigaam_encoder_jit_run (jit, &b->audio, &n, 1, error))
            return FALSE;
          if (r > 0)
            t[r - 1] = (bench_now_us () - t1) / 1e6;
        }
      cases[s].encoder = bench_median (t, b->reps);
    }
  return TRUE;
}

/* Medians of the head's plan, the decoding and both, at each length. */
static gboolean
time_head (Bench *b, Head *h, const int *seconds, guint n_lengths, Case *cases, GError **error)
{
  g_autofree double *jit = g_new (double, b->reps);
  g_autofree double *dec = g_new (double, b->reps);
  g_autofree double *total = g_new (double, b->reps);
  for (guint s = 0; s < n_lengths; s++)
    {
      gint64 n = (gint64) seconds[s] * SR;
      for (guint r = 0; r <= b->reps; r++)
        {
          double t0 = bench_now_us ();
          if (!head_run (b, h, n, error))
            return FALSE;
          double t1 = bench_now_us ();
          guint n_tokens;
          g_autoptr (MorokTranscript) tr = head_decode (b, h, n, &n_tokens, error);
          if (!tr)
            return FALSE;
          double t2 = bench_now_us ();
          if (r == 0)
            {
              Case *c = &cases[s];
              if (h->dec)
                morok_rnnt_decoder_counts (h->dec, &c->steps, &c->joints);
              c->words = tr->n_words;
              c->text = g_utf8_substring (tr->text, 0, MIN (g_utf8_strlen (tr->text, -1), 48));
              c->tokens = n_tokens;
              continue;
            }
          jit[r - 1] = (t1 - t0) / 1e6;
          dec[r - 1] = (t2 - t1) / 1e6;
          total[r - 1] = (t2 - t0) / 1e6;
        }
      cases[s].jit = bench_median (jit, b->reps);
      cases[s].decode = bench_median (dec, b->reps);
      cases[s].total = bench_median (total, b->reps);
    }
  return TRUE;
}

typedef struct
{
  const float *gates; /* [C, 4H] */
  guint H, C, token;
} StepToken;

/* A token's input term into the predictor's gates input, then the next
 * token. */
static gboolean
write_token (GigaAmPredictorJit *pred, StepToken *st, GError **error)
{
  MorokBuffer *in = gigaam_predictor_jit_gates_mut (pred, error);
  if (!in)
    return FALSE;
  gsize G = 4 * (gsize) st->H;
  memcpy (in->data, st->gates + st->token * G, G * sizeof (float));
  st->token = (st->token * 31 + 7) % (st->C - 1);
  return TRUE;
}

/* Medians over STEP_REPS of one predictor step as the decoder takes it, its
 * plan's share, and one joint execute, in µs. */
static gboolean
time_steps (Bench *b, Head *h, double *out_step, double *out_exec, double *out_joint,
            GError **error)
{
  const MorokGigaAmConfig *cfg = b->cfg;
  GigaAmPredictorJit *pred = morok_rnnt_decoder_predictor (h->dec);
  GigaAmJointJit *joint = morok_rnnt_decoder_joint (h->dec);
  g_autoptr (MorokJitRecurrent) rec
      = morok_jit_recurrent_new (gigaam_predictor_jit_jit (pred), cfg->pred_layers,
                                 cfg->pred_hidden, cfg->joint_hidden, error);
  if (!rec)
    return FALSE;
  StepToken st = { morok_rnnt_decoder_input_gates (h->dec), cfg->pred_hidden, cfg->n_classes, 1 };
  g_autofree double *step = g_new (double, STEP_REPS);
  g_autofree double *exec = g_new (double, STEP_REPS);
  g_autofree double *jt = g_new (double, STEP_REPS);
  for (guint i = 0; i < STEP_REPS; i++)
    {
      double t0 = bench_now_us ();
      if (!write_token (pred, &st, error) || !morok_jit_recurrent_step (rec, error))
        return FALSE;
      double t1 = bench_now_us ();
      if (!gigaam_joint_jit_execute (joint, error))
        return FALSE;
      jt[i] = bench_now_us () - t1;
      step[i] = t1 - t0;
      exec[i] = morok_jit_recurrent_last_timing (rec).execute_ns / 1e3;
    }
  *out_step = bench_median (step, STEP_REPS);
  *out_exec = bench_median (exec, STEP_REPS);
  *out_joint = bench_median (jt, STEP_REPS);
  return TRUE;
}

/* BENCH_ASR_PROFILE=1: each kernel of the predictor step and of the joint. */
static void
profile_steps (Head *h)
{
  if (g_strcmp0 (g_getenv ("BENCH_ASR_PROFILE"), "1") != 0)
    return;
  BenchProfile *pred = bench_profile_new (), *joint = bench_profile_new ();
  for (guint i = 0; i < STEP_REPS; i++)
    {
      bench_profile_add (pred, gigaam_predictor_jit_execute_profiled (
                                   morok_rnnt_decoder_predictor (h->dec), NULL));
      bench_profile_add (
          joint, gigaam_joint_jit_execute_profiled (morok_rnnt_decoder_joint (h->dec), NULL));
    }
  printf ("predictor step, per execute:\n");
  bench_profile_print (pred, 1);
  printf ("joint, per execute:\n");
  bench_profile_print (joint, 1);
  bench_profile_free (pred);
  bench_profile_free (joint);
}

static void
report (Bench *b, guint threads, int seconds, const Case *c, double step_us, double exec_us,
        double joint_us)
{
  gint64 frames = morok_gigaam_encoded_frames (b->model, (gint64) seconds * SR);
  double rest_us = c->decode * 1e6 - c->steps * step_us - c->joints * joint_us;
  printf ("%s, %u thread(s), %d s (%" G_GINT64_FORMAT " frames): encoder %.4f s, %s %.4f s + "
          "decoding %.4f s (%.2f%% of the encoder); %u tokens, %u words: \"%s...\"\n",
          b->rnnt ? "RNN-T" : "CTC", threads, seconds, frames, c->encoder,
          b->rnnt ? "GigaAmRnntJit" : "GigaAmCtcJit", c->jit, c->decode,
          100 * c->decode / c->encoder, c->tokens, c->words, c->text);
  printf ("RESULT asr head=%s threads=%u seconds=%d frames=%" G_GINT64_FORMAT
          " encoder=%.4f jit=%.4f decode=%.5f total=%.4f decode_pct=%.3f added_pct=%.2f"
          " steps=%" G_GUINT64_FORMAT " joints=%" G_GUINT64_FORMAT " tokens=%u words=%u"
          " step_us=%.1f exec_us=%.1f joint_us=%.1f rest_us=%.0f frame_us=%.1f rtf=%.4f\n",
          b->rnnt ? "rnnt" : "ctc", threads, seconds, frames, c->encoder, c->jit, c->decode,
          c->total, 100 * c->decode / c->encoder, 100 * (c->total / c->encoder - 1), c->steps,
          c->joints, c->tokens, c->words, step_us, exec_us, joint_us, b->rnnt ? rest_us : 0,
          c->decode * 1e6 / frames, c->total / seconds);
  fflush (stdout);
}

/* The lengths of $BENCH_ASR_SECONDS (default 10 30 60); their number. */
static guint
lengths (int *seconds)
{
  const char *env = g_getenv ("BENCH_ASR_SECONDS");
  g_auto (GStrv) words = g_strsplit (env && *env ? env : "10 30 60", " ", -1);
  guint n = 0;
  for (guint i = 0; words[i] && n < MAX_LENGTHS; i++)
    if (atoi (words[i]) > 0)
      seconds[n++] = atoi (words[i]);
  return n;
}

static gboolean
bench_threads (Bench *b, guint threads, const int *seconds, guint n_lengths, GError **error)
{
  Case cases[MAX_LENGTHS] = { 0 };
  if (!time_encoder (b, threads, seconds, n_lengths, cases, error))
    return FALSE;
  Head h = { 0 };
  double t0 = bench_now_us ();
  gboolean ok = head_prepare (b, &h, threads, error);
  if (ok)
    printf ("prepare %s, %u thread(s): %.2f s\n",
            b->rnnt ? "GigaAmRnntJit + decoder" : "GigaAmCtcJit", threads,
            (bench_now_us () - t0) / 1e6);
  ok = ok && time_head (b, &h, seconds, n_lengths, cases, error);
  double step_us = 0, exec_us = 0, joint_us = 0;
  ok = ok && (!b->rnnt || time_steps (b, &h, &step_us, &exec_us, &joint_us, error));
  if (ok && b->rnnt)
    profile_steps (&h);
  head_clear (&h);
  for (guint s = 0; s < n_lengths; s++)
    {
      if (ok)
        report (b, threads, seconds[s], &cases[s], step_us, exec_us, joint_us);
      g_free (cases[s].text);
    }
  return ok;
}

int
main (int argc, char **argv)
{
  if (argc < 3)
    {
      fprintf (stderr, "usage: bench-asr MODEL INPUTS [REPS [THREADS...]]\n");
      return 2;
    }
  guint reps = argc > 3 ? MAX (1, atoi (argv[3])) : 3;
  guint threads[8] = { 1, 2 }, n_threads = 2;
  if (argc > 4)
    for (n_threads = 0; n_threads < G_N_ELEMENTS (threads) && n_threads + 4 < (guint) argc;
         n_threads++)
      threads[n_threads] = (guint) atoi (argv[4 + n_threads]);
  int seconds[MAX_LENGTHS];
  guint n_lengths = lengths (seconds);
  int longest = 0;
  for (guint s = 0; s < n_lengths; s++)
    longest = MAX (longest, seconds[s]);

  g_autoptr (GError) error = NULL;
  g_autoptr (MorokGigaAm) model = morok_gigaam_load (argv[1], &error);
  g_autoptr (MorokSafetensors) inputs = model ? morok_safetensors_open (argv[2], &error) : NULL;
  const MorokSafetensor *a = inputs ? morok_safetensors_get (inputs, "audio.speech", &error) : NULL;
  g_autofree float *audio = a ? morok_safetensor_dup_f32 (a, &error) : NULL;
  if (!audio)
    return !fail (error);
  if (n_lengths == 0 || a->n_elements < (gint64) longest * SR)
    {
      fprintf (stderr, "bench-asr: audio.speech holds %.1f s, BENCH_ASR_SECONDS wants %d s\n",
               a->n_elements / (double) SR, longest);
      return 1;
    }
  morok_gigaam_set_limits (model, 1, (gint64) longest * SR);
  const MorokGigaAmConfig *cfg = morok_gigaam_config (model);
  Bench b = { model, cfg, cfg->head == MOROK_GIGAAM_HEAD_RNNT, audio, reps };
  printf ("%s: %u layers, d_model %u; %s head, %u classes", morok_gigaam_path (model),
          cfg->n_layers, cfg->d_model, b.rnnt ? "RNN-T" : "CTC", cfg->n_classes);
  if (b.rnnt)
    printf (", pred_hidden %u, %u LSTM layer(s), joint_hidden %u", cfg->pred_hidden,
            cfg->pred_layers, cfg->joint_hidden);
  printf ("; median of %u; pool of %u thread(s)\n", reps, morok_thread_pool_size ());
  for (guint i = 0; i < n_threads; i++)
    if (!bench_threads (&b, threads[i], seconds, n_lengths, &error))
      return !fail (error);
  return 0;
}
