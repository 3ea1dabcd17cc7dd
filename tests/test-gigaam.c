/* SPDX-License-Identifier: MIT */
/* GigaAM in Morok against the PyTorch reference (scripts/gigaam/reference.py,
 * float64, fixtures made by scripts/gigaam/make-fixtures.py): the tiny v3
 * and v2 models' log-mel features, subsampling and layer outputs, encoder
 * output, log-probabilities and greedy tokens, for each of three utterances
 * alone and for batches of them; one prepared plan serves every batch size
 * and length, without allocating. Tolerances follow docs/gigaam-model.md ("How close an f32
 * implementation can be"); each check logs its largest error (--verbose). */
#include <glib.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "alloc-counter.h"
#include "fixtures.h"
#include <glib/gstdio.h>
#include "gigaam-fixture.h"
#include "models/ctc-decode.h"
#include "models/gigaam-encoder-jit.h"
#include "models/gigaam.h"
#include "kernels/morok-compiler.h"

#define N_UTT GIGAAM_FIXTURE_UTTERANCES
#define MAX_BATCH GIGAAM_FIXTURE_UTTERANCES
/* docs/gigaam-model.md suggests 1e-3 absolute on the log-mel features
 * (values -20.7 .. 7), as an f32 FFT is within 3.2e-4; Morok's exact DFT
 * product (gigaam-frontend.c) is within 2.4e-5, so the test asks 1e-4. */
#define FEATURE_TOL 1e-4
#define ENCODER_TOL 1e-4 /* absolute, or relative above 1 */
#define F16_TOL 3e-2     /* precision f16: docs/gigaam-model.md */
#define BF16_TOL 6e-2    /* precision bf16: docs/gigaam-model.md */

/* ---- fixtures ---- */

typedef GigaAmFixture Fixture;

/* A reference tensor as f32 (transfer full), and its dims. */
static float *
ref_f32 (Fixture *f, const char *name, gint64 *dims)
{
  GError *e = NULL;
  const MorokSafetensor *t = morok_safetensors_get (f->ref, name, &e);
  g_assert_no_error (e);
  for (guint i = 0; i < t->rank; i++)
    dims[i] = t->dims[i];
  float *v = morok_safetensor_dup_f32 (t, &e);
  g_assert_no_error (e);
  return v;
}

static gint64
ref_i64 (Fixture *f, const char *name, guint i)
{
  GError *e = NULL;
  const MorokSafetensor *t = morok_safetensors_get (f->ref, name, &e);
  g_assert_no_error (e);
  g_assert_true (t->dtype == MOROK_SAFETENSOR_DTYPE_I64 && (gint64) i < t->n_elements);
  gint64 v;
  memcpy (&v, (const guint8 *) t->data + 8 * i, 8);
  return v;
}

/* A run: which utterances, batched, and which reference rows they are. */
typedef struct
{
  guint n;
  guint utt[MAX_BATCH];
  const char *prefix[MAX_BATCH]; /* "alone.2" or "batch" */
  guint row[MAX_BATCH];          /* row of that reference */
} Run;

/* Each utterance alone; the three as one batch; and pairs with the longest,
 * whose items are padded as in the batch reference (the longest item is not
 * padded at all, so it is alone.2 as well). The batch reference computes
 * each item as if alone (reference.py's pad_masking), as Morok does. */
static const Run runs[] = {
  { 1, { 0 }, { "alone.0" }, { 0 } },
  { 1, { 1 }, { "alone.1" }, { 0 } },
  { 1, { 2 }, { "alone.2" }, { 0 } },
  { 3, { 0, 1, 2 }, { "batch", "batch", "batch" }, { 0, 1, 2 } },
  { 2, { 2, 0 }, { "alone.2", "batch" }, { 0, 0 } },
  { 2, { 1, 2 }, { "batch", "batch" }, { 1, 2 } },
};

/* Largest |got - want| / max (1, |want|) over a [rows, cols] block, element
 * (r, c) at r * rs + c * cs in each (strides in floats, so channels-first
 * data is compared frame by frame); *out_abs gets the largest |got - want|. */
typedef struct
{
  const float *p;
  gsize rs, cs;
} Block;

static double
max_error (Block got, Block want, gint64 rows, gint64 cols, double *out_abs)
{
  double worst = 0, worst_abs = 0;
  for (gint64 r = 0; r < rows; r++)
    for (gint64 c = 0; c < cols; c++)
      {
        double d
            = fabs ((double) got.p[r * got.rs + c * got.cs] - want.p[r * want.rs + c * want.cs]);
        double rel = d / fmax (1.0, fabs (want.p[r * want.rs + c * want.cs]));
        worst_abs = isnan (d) ? INFINITY : fmax (worst_abs, d);
        worst = isnan (rel) ? INFINITY : fmax (worst, rel);
        if (isnan (d))
          r = rows; /* one NaN is enough */
      }
  *out_abs = worst_abs;
  return worst;
}

/* ---- probes: features and per-layer outputs, for the tests only ---- */

typedef struct
{
  MorokGigaAm *m;
  gboolean features; /* TRUE: [b, F, T]; FALSE: [L + 1, b, T', d] (pre_encode, layers) */
} Probe;

#define PROBE_JIT_INPUTS(X) X (wav) X (lengths)
#define PROBE_JIT_VARS(X)                                                                          \
  X (b, 1, MAX_BATCH)                                                                              \
  X (t, morok_gigaam_min_samples (model->m), morok_gigaam_max_samples (model->m))
MOROK_JIT_DECLARE (ProbeJit, probe_jit, Probe, PROBE_JIT_INPUTS, PROBE_JIT_VARS)

static MorokTensor *
probe_build (Probe *p, MorokTensor *wav, MorokTensor *lengths, MorokVariable *b, MorokVariable *t,
             GError **error)
{
  MorokTensor *w = morok_jit_try_shrink (wav, 0, b, error);
  w = morok_tensor_slice (w, 1, morok_sym_const (morok_graph_sym_pool (wav->graph), 0),
                          morok_sym_add_c (morok_sym_var (t), morok_gigaam_wave_tail (p->m)),
                          error);
  MorokTensor *len = morok_jit_try_shrink (lengths, 0, b, error);
  MorokTensor *feat = morok_gigaam_features (p->m, w, len, error);
  if (p->features)
    return morok_tensor_transpose (feat, 1, 2, error);
  guint n = morok_gigaam_config (p->m)->n_layers;
  MorokTensor *outs[8];
  g_assert_cmpuint (n + 1, <=, G_N_ELEMENTS (outs));
  for (guint l = 0; l <= n; l++)
    outs[l] = morok_tensor_unsqueeze (morok_gigaam_encoder (p->m, feat, len, l, error), 0, error);
  return morok_tensor_cat (outs, n + 1, 0, error);
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
probe_new (Fixture *f, gboolean features)
{
  GError *e = NULL;
  Probe *p = g_new0 (Probe, 1);
  p->m = morok_gigaam_ref (f->model);
  p->features = features;
  ProbeJit *jit = probe_jit_new (p);
  gint64 width = f->n[N_UTT - 1] + morok_gigaam_wave_tail (f->model);
  g_autoptr (MorokInputSpec) wav = morok_input_spec_f32 (MOROK_SHAPE (MAX_BATCH, width));
  g_autoptr (MorokInputSpec) len = morok_input_spec_i64 (MOROK_SHAPE (MAX_BATCH));
  g_assert_true (probe_jit_prepare (jit, wav, len, &e));
  g_assert_no_error (e);
  return jit;
}

/* Packs @run's waveforms like gigaam_*_jit_run and executes @jit. */
static void
probe_run (MorokJit *jit, Fixture *f, const Run *run)
{
  GError *e = NULL;
  MorokBuffer *wav = morok_jit_input_mut (jit, 0, &e);
  MorokBuffer *len = morok_jit_input_mut (jit, 1, &e);
  g_assert_no_error (e);
  gint64 t = 0;
  memset (wav->data, 0xff, wav->bytes); /* NaN: the plan must not read past a tail */
  for (guint i = 0; i < run->n; i++)
    {
      gint64 n = f->n[run->utt[i]];
      morok_gigaam_pack_wave (f->model, f->audio[run->utt[i]], n,
                              (float *) wav->data + i * wav->shape[1]);
      ((gint64 *) len->data)[i] = n;
      t = MAX (t, n);
    }
  MorokVarValue vars[] = { { "b", run->n }, { "t", t } };
  g_assert_true (morok_jit_execute_with_vars (jit, vars, 2, &e));
  g_assert_no_error (e);
}

/* ---- tests ---- */

/* Log-mel features of every run match the reference over each item's
 * frames within FEATURE_TOL. */
static void
check_features (gconstpointer data)
{
  const char *version = data;
  Fixture f;
  gigaam_fixture_load (&f, version);
  g_autoptr (ProbeJit) jit = probe_new (&f, TRUE);
  const MorokGigaAmConfig *c = morok_gigaam_config (f.model);
  double worst_all = 0;
  for (guint r = 0; r < G_N_ELEMENTS (runs); r++)
    {
      probe_run (probe_jit_jit (jit), &f, &runs[r]);
      GError *e = NULL;
      const MorokBuffer *out = probe_jit_output (jit, &e); /* [b, F, T] */
      g_assert_no_error (e);
      for (guint i = 0; i < runs[r].n; i++)
        {
          gint64 dims[3];
          g_autofree char *name = g_strdup_printf ("%s.features", runs[r].prefix[i]);
          g_autofree float *want = ref_f32 (&f, name, dims);
          gint64 frames = morok_gigaam_feature_frames (f.model, f.n[runs[r].utt[i]]);
          g_autofree char *ln = g_strdup_printf ("%s.feature_lengths", runs[r].prefix[i]);
          g_assert_cmpint (frames, ==, ref_i64 (&f, ln, runs[r].row[i]));
          /* both [F, T] per item: frames are rows, bands columns */
          Block got = { (const float *) out->data + i * out->shape[1] * out->shape[2], 1,
                        (gsize) out->shape[2] };
          Block want_b = { want + runs[r].row[i] * dims[1] * dims[2], 1, (gsize) dims[2] };
          double worst;
          max_error (got, want_b, frames, c->n_mels, &worst);
          g_test_message ("%s features, run %u item %u (%s row %u): max abs error %.3g", version, r,
                          i, runs[r].prefix[i], runs[r].row[i], worst);
          worst_all = fmax (worst_all, worst);
        }
    }
  g_test_message ("%s features: max abs error %.3g", version, worst_all);
  g_assert_cmpfloat (worst_all, <=, FEATURE_TOL);
  gigaam_fixture_clear (&f);
}

/* Subsampling and layer outputs ([b, T', d]) of alone.0 and of the batch
 * match the reference's traces over each item's encoded frames. */
static void
check_traces (gconstpointer data)
{
  const char *version = data;
  Fixture f;
  gigaam_fixture_load (&f, version);
  g_autoptr (ProbeJit) jit = probe_new (&f, FALSE);
  const MorokGigaAmConfig *c = morok_gigaam_config (f.model);
  const guint which[] = { 0, 3 }; /* the runs with traces: alone.0 and batch */
  double worst_all = 0;
  for (guint k = 0; k < G_N_ELEMENTS (which); k++)
    {
      const Run *run = &runs[which[k]];
      probe_run (probe_jit_jit (jit), &f, run);
      GError *e = NULL;
      const MorokBuffer *out = probe_jit_output (jit, &e); /* [L + 1, b, T', d] */
      g_assert_no_error (e);
      g_assert_cmpint (out->shape[0], ==, c->n_layers + 1);
      g_assert_cmpint (out->shape[1], ==, run->n);
      g_assert_cmpint (out->shape[3], ==, c->d_model);
      for (guint l = 0; l <= c->n_layers; l++)
        for (guint i = 0; i < run->n; i++)
          {
            const char *prefix = run->prefix[i];
            guint row = run->row[i];
            g_autofree char *name = l == 0 ? g_strdup_printf ("%s.pre_encode", prefix)
                                           : g_strdup_printf ("%s.layers.%u", prefix, l - 1);
            gint64 dims[3];
            g_autofree float *want = ref_f32 (&f, name, dims);
            gint64 frames = morok_gigaam_encoded_frames (f.model, f.n[run->utt[i]]);
            g_autofree char *ln = g_strdup_printf ("%s.encoded_lengths", prefix);
            g_assert_cmpint (frames, ==, ref_i64 (&f, ln, row));
            Block got = { (const float *) out->data
                              + ((l * out->shape[1]) + i) * out->shape[2] * out->shape[3],
                          c->d_model, 1 };
            Block want_b = { want + row * dims[1] * dims[2], (gsize) dims[2], 1 };
            double abs_err, err = max_error (got, want_b, frames, c->d_model, &abs_err);
            g_test_message ("%s %s item %u: max error %.3g (abs %.3g)", version, name, i, err,
                            abs_err);
            worst_all = fmax (worst_all, err);
          }
    }
  g_test_message ("%s layer outputs: max error %.3g", version, worst_all);
  g_assert_cmpfloat (worst_all, <=, ENCODER_TOL);
  gigaam_fixture_clear (&f);
}

/* ---- the wrappers ---- */

/* Frames whose best class differs between @got and @want ([frames, C]
 * rows); each must be a near tie in the reference, its best two classes
 * less than @tie apart, with @got picking the second. */
static guint
near_tie_flips (const float *got, const float *want, gint64 frames, gint64 classes, double tie)
{
  guint flips = 0;
  for (gint64 t = 0; t < frames; t++)
    {
      const float *g = got + t * classes, *w = want + t * classes;
      gint64 gb = 0, w1 = 0, w2 = -1;
      for (gint64 c = 1; c < classes; c++)
        gb = g[c] > g[gb] ? c : gb;
      for (gint64 c = 1; c < classes; c++)
        if (w[c] > w[w1])
          w2 = w1, w1 = c;
        else if (w2 < 0 || w[c] > w[w2])
          w2 = c;
      if (gb == w1)
        continue;
      g_test_message ("frame %" G_GINT64_FORMAT ": class %" G_GINT64_FORMAT " for %" G_GINT64_FORMAT
                      ", the reference's margin %.2g",
                      t, gb, w1, w[w1] - w[w2]);
      g_assert_cmpint (gb, ==, w2);
      g_assert_cmpfloat (w[w1] - w[w2], <, tie);
      flips++;
    }
  return flips;
}

/* Reference greedy tokens of row @row of @prefix. */
static void
check_tokens (Fixture *f, const char *prefix, guint row, const MorokCtcToken *got, guint n_got)
{
  GError *e = NULL;
  g_autofree char *name = strcmp (prefix, "batch") == 0 ? g_strdup_printf ("batch.tokens.%u", row)
                                                        : g_strdup_printf ("%s.tokens", prefix);
  const MorokSafetensor *t = morok_safetensors_get (f->ref, name, &e);
  g_assert_no_error (e);
  g_assert_cmpint (n_got, ==, t->n_elements);
  for (guint k = 0; k < n_got; k++)
    {
      gint64 id;
      memcpy (&id, (const guint8 *) t->data + 8 * k, 8);
      g_assert_cmpint (got[k].id, ==, id);
    }
}

/* One prepared GigaAmCtcJit serves every run (batch sizes 1 to 3, all three
 * lengths): log-probabilities within ENCODER_TOL over each item's encoded
 * frames, the reference's greedy tokens, and no build, compile or
 * allocation after prepare. */
static void
check_ctc (const char *version, MorokPrecision precision, double tol)
{
  GError *e = NULL;
  Fixture f;
  gigaam_fixture_load (&f, version);
  g_autoptr (MorokPrepareConfig) config = morok_prepare_config_new ();
  morok_prepare_config_set_precision (config, precision);
  const MorokGigaAmConfig *c = morok_gigaam_config (f.model);
  g_autoptr (GigaAmCtcJit) jit = gigaam_ctc_jit_new (morok_gigaam_ref (f.model));
  gint64 t0 = g_get_monotonic_time ();
  g_assert_true (gigaam_ctc_jit_prepare_at_bounds (jit, config, &e));
  g_assert_no_error (e);
  g_test_message ("%s GigaAmCtcJit: prepare %.1f ms, %u kernels", version,
                  (g_get_monotonic_time () - t0) / 1e3, gigaam_ctc_jit_prepared_kernels (jit, &e));
  gint allocations = 0;
  guint64 builds = morok_plan_build_count (), compiles = morok_compile_count_invocations ();
  guint64 hits = morok_compile_count_cache_hits ();
  double worst = 0;
  for (guint r = 0; r < G_N_ELEMENTS (runs); r++)
    {
      const Run *run = &runs[r];
      const float *waves[MAX_BATCH];
      gint64 n[MAX_BATCH], longest = 0;
      for (guint i = 0; i < run->n; i++)
        {
          waves[i] = f.audio[run->utt[i]];
          n[i] = f.n[run->utt[i]];
          longest = MAX (longest, n[i]);
        }
      alloc_counter_start ();
      gboolean ok = gigaam_ctc_jit_run (jit, waves, n, run->n, &e);
      allocations += alloc_counter_stop ();
      g_assert_no_error (e);
      g_assert_true (ok);
      const MorokBuffer *out = gigaam_ctc_jit_output (jit, &e); /* [b, T', C] */
      g_assert_cmpint (out->shape[0], ==, run->n);
      g_assert_cmpint (out->shape[1], ==, morok_gigaam_encoded_frames (f.model, longest));
      g_assert_cmpint (out->shape[2], ==, c->n_classes);
      for (guint i = 0; i < run->n; i++)
        {
          gint64 dims[3], frames = morok_gigaam_encoded_frames (f.model, n[i]);
          const char *prefix = run->prefix[i];
          guint row = run->row[i];
          g_autofree char *name = g_strdup_printf ("%s.log_probs", prefix);
          g_autofree float *want = ref_f32 (&f, name, dims);
          const float *lp = (const float *) out->data + i * out->shape[1] * out->shape[2];
          Block got = { lp, c->n_classes, 1 };
          Block want_b = { want + row * dims[1] * dims[2], (gsize) dims[2], 1 };
          double abs_err, err = max_error (got, want_b, frames, c->n_classes, &abs_err);
          g_test_message ("%s %s log-probs, run %u item %u (%s): max error %.3g (abs %.3g)",
                          version, morok_precision_name (precision), r, i, prefix, err, abs_err);
          worst = fmax (worst, err);
          MorokCtcToken tokens[256];
          g_assert_cmpint (frames, <=, G_N_ELEMENTS (tokens));
          guint n_tok = morok_ctc_greedy_decode (lp, frames, c->n_classes, c->n_classes,
                                                 c->blank_id, tokens);
          /* f32 and bf16x3 decide every frame as the reference does; f16
           * and bf16 may take the other class where the reference's two
           * best are closer than their error (two frames of the v2
           * fixture: 7e-4 and 2.3e-3) */
          guint flips = precision == MOROK_PRECISION_F32 || precision == MOROK_PRECISION_BF16X3
                            ? 0
                            : near_tie_flips (lp, want_b.p, frames, c->n_classes, tol);
          if (flips == 0)
            check_tokens (&f, prefix, row, tokens, n_tok);
        }
    }
  g_test_message ("%s %s log-probs: max error %.3g", version, morok_precision_name (precision),
                  worst);
  g_assert_cmpfloat (worst, <=, tol);
  g_assert_cmpuint (morok_plan_build_count (), ==, builds);
  g_assert_cmpuint (morok_compile_count_invocations (), ==, compiles);
  g_assert_cmpuint (morok_compile_count_cache_hits (), ==, hits);
  if (alloc_counter_works ())
    g_assert_cmpint (allocations, ==, 0);
  else
    g_test_message ("allocations are not counted here (AddressSanitizer or valgrind)");

  /* the 2.3 s utterance alone: execute time, median of 9 */
  gint64 us[9];
  for (guint k = 0; k < G_N_ELEMENTS (us); k++)
    {
      gint64 t1 = g_get_monotonic_time ();
      g_assert_true (gigaam_ctc_jit_run (jit, &f.audio[2], &f.n[2], 1, &e));
      us[k] = g_get_monotonic_time () - t1;
    }
  for (guint a = 0; a < G_N_ELEMENTS (us); a++)
    for (guint b = a + 1; b < G_N_ELEMENTS (us); b++)
      if (us[b] < us[a])
        {
          gint64 tmp = us[a];
          us[a] = us[b], us[b] = tmp;
        }
  g_test_message ("%s GigaAmCtcJit: %.2f s utterance in %.2f ms (median of 9)", version,
                  (double) f.n[2] / c->sample_rate, us[4] / 1e3);

  /* what does not fit the bounds fails, changing nothing */
  const float *four[] = { f.audio[0], f.audio[0], f.audio[0], f.audio[0] };
  const gint64 n4[] = { f.n[0], f.n[0], f.n[0], f.n[0] };
  g_assert_false (gigaam_ctc_jit_run (jit, four, n4, 4, &e));
  g_assert_error (e, MOROK_JIT_ERROR, MOROK_JIT_ERROR_RUNTIME);
  g_clear_error (&e);
  const gint64 too_long = f.n[2] + 1;
  g_assert_false (gigaam_ctc_jit_run (jit, &f.audio[2], &too_long, 1, &e));
  g_assert_error (e, MOROK_JIT_ERROR, MOROK_JIT_ERROR_RUNTIME);
  g_clear_error (&e);
  gigaam_fixture_clear (&f);
}

/* precision f16 needs AVX512-FP16, bf16x3 AMX-BF16 */
static gboolean
skip_unsupported (MorokPrecision precision)
{
  g_autoptr (GError) e = NULL;
  if (morok_plan_precision_supported (morok_isa_detect (), precision, &e))
    return FALSE;
  g_test_skip (e->message);
  return TRUE;
}

/* GigaAmEncoderJit's output, [b, d, T'] channels first, matches the
 * reference encoder output for every run, from one prepared plan. */
static void
check_encoder (const char *version, MorokPrecision precision, double tol, gboolean release)
{
  GError *e = NULL;
  Fixture f;
  gigaam_fixture_load (&f, version);
  morok_gigaam_set_release_packed (f.model, release);
  g_autoptr (MorokPrepareConfig) config = morok_prepare_config_new ();
  morok_prepare_config_set_precision (config, precision);
  const MorokGigaAmConfig *c = morok_gigaam_config (f.model);
  g_autoptr (GigaAmEncoderJit) jit = gigaam_encoder_jit_new (morok_gigaam_ref (f.model));
  g_assert_true (gigaam_encoder_jit_prepare_at_bounds (jit, config, &e));
  g_assert_no_error (e);
  guint64 builds = morok_plan_build_count (), compiles = morok_compile_count_invocations ();
  double worst = 0;
  for (guint r = 0; r < G_N_ELEMENTS (runs); r++)
    {
      const Run *run = &runs[r];
      const float *waves[MAX_BATCH];
      gint64 n[MAX_BATCH];
      for (guint i = 0; i < run->n; i++)
        waves[i] = f.audio[run->utt[i]], n[i] = f.n[run->utt[i]];
      g_assert_true (gigaam_encoder_jit_run (jit, waves, n, run->n, &e));
      g_assert_no_error (e);
      const MorokBuffer *out = gigaam_encoder_jit_output (jit, &e); /* [b, d, T'] */
      g_assert_cmpint (out->shape[0], ==, run->n);
      g_assert_cmpint (out->shape[1], ==, c->d_model);
      for (guint i = 0; i < run->n; i++)
        {
          gint64 dims[3], frames = morok_gigaam_encoded_frames (f.model, n[i]);
          const char *prefix = run->prefix[i];
          guint row = run->row[i];
          g_autofree char *name = g_strdup_printf ("%s.encoded", prefix);
          g_autofree float *want = ref_f32 (&f, name, dims); /* [B, d, T'] */
          /* both [d, T'] per item: frames are rows, channels columns */
          Block got = { (const float *) out->data + i * out->shape[1] * out->shape[2], 1,
                        (gsize) out->shape[2] };
          Block want_b = { want + row * dims[1] * dims[2], 1, (gsize) dims[2] };
          double abs_err, err = max_error (got, want_b, frames, c->d_model, &abs_err);
          worst = fmax (worst, err);
        }
    }
  g_test_message ("%s %s encoder output: max error %.3g", version, morok_precision_name (precision),
                  worst);
  g_assert_cmpfloat (worst, <=, tol);
  g_assert_cmpuint (morok_plan_build_count (), ==, builds);
  g_assert_cmpuint (morok_compile_count_invocations (), ==, compiles);
  if (release)
    {
      /* the packed weights left the model: a second graph cannot be built */
      g_autoptr (GigaAmEncoderJit) again = gigaam_encoder_jit_new (morok_gigaam_ref (f.model));
      g_assert_false (gigaam_encoder_jit_prepare_at_bounds (again, config, &e));
      g_assert_nonnull (e);
      g_test_message ("%s", e->message);
      g_assert_nonnull (strstr (e->message, "was freed once a plan had packed it"));
      g_clear_error (&e);
    }
  gigaam_fixture_clear (&f);
}

/* With the model releasing its packed weights (as the elements run it), the
 * plan's results are the same: it holds each of those weights once, in its
 * panels. */
static void
test_encoder_weights_released (gconstpointer version)
{
  check_encoder (version, MOROK_PRECISION_F32, ENCODER_TOL, TRUE);
}

/* The encoder output of three utterances in one batch from @model, prepared
 * with the model releasing its packed weights. (transfer full) */
static float *
encode_released (MorokGigaAm *model, const GigaAmFixture *f, gsize *out_n)
{
  GError *e = NULL;
  morok_gigaam_set_release_packed (model, TRUE);
  g_autoptr (GigaAmEncoderJit) jit = gigaam_encoder_jit_new (morok_gigaam_ref (model));
  g_assert_true (gigaam_encoder_jit_prepare_at_bounds (jit, NULL, &e));
  g_assert_no_error (e);
  g_assert_true (gigaam_encoder_jit_run (jit, f->audio, f->n, N_UTT, &e));
  g_assert_no_error (e);
  const MorokBuffer *out = gigaam_encoder_jit_output (jit, &e);
  g_assert_no_error (e);
  *out_n = out->shape[0] * out->shape[1] * out->shape[2];
  return g_memdup2 (out->data, *out_n * sizeof (float));
}

/* Weights read in place from an f32 file (the fixture stored as f32: the
 * same values) give bit for bit the encoder output that the model's f32
 * copies of the fixture's f16 (v3) or bf16 (v2) weights give; once the plan
 * has packed them, the model owns no copy of a weight (the reordered
 * subsampling weights are packed too) and reads the rest from the file. */
static void
test_encoder_in_place (gconstpointer version)
{
  GError *e = NULL;
  Fixture f;
  gigaam_fixture_load (&f, version);
  g_autofree char *name = g_strdup_printf ("gigaam-%s-tiny.safetensors", (const char *) version);
  g_autofree char *dir = g_dir_make_tmp ("morok-gigaam-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, name, NULL);
  fixture_write_f32 (name, path);
  g_autoptr (MorokGigaAm) m = morok_gigaam_load (path, &e);
  g_assert_no_error (e);
  morok_gigaam_set_limits (m, morok_gigaam_max_batch (f.model), morok_gigaam_max_samples (f.model));
  gsize n_copied, n_in_place;
  g_autofree float *copied = encode_released (f.model, &f, &n_copied);
  g_autofree float *in_place = encode_released (m, &f, &n_in_place);
  g_assert_cmpuint (n_in_place, ==, n_copied);
  g_assert_cmpmem (in_place, n_in_place * sizeof (float), copied, n_copied * sizeof (float));
  g_assert_cmpuint (morok_gigaam_weight_bytes_owned (m), ==, 0);
  /* and after the execute none of the file's pages is mapped: what kernels
   * read in place (biases, norms) they read from the program's copies */
  MorokSafetensors *st = morok_safetensors_open (path, &e);
  g_assert_no_error (e);
  gsize start = G_MAXSIZE, end = 0;
  for (guint i = 0; i < morok_safetensors_n_tensors (st); i++)
    {
      const MorokSafetensor *t = morok_safetensors_nth (st, i);
      start = MIN (start, t->offset), end = MAX (end, t->offset + t->n_bytes);
    }
  morok_safetensors_free (st); /* its mapping gone: only the model's is left */
  gint64 resident = fixture_mapped_pages_resident (path, start, end - start);
  g_test_message ("%s: %" G_GINT64_FORMAT " pages of the model's weights mapped after an execute",
                  name, resident);
  if (resident >= 0) /* -1: no /proc/self/pagemap */
    g_assert_cmpint (resident, ==, 0);
  g_unlink (path);
  g_rmdir (dir);
  gigaam_fixture_clear (&f);
}

/* Through the kernel library (kernels/kernel-lib.c) the encoder, attention
 * and all, computes what it computes with the headers' bodies compiled
 * into its units, bit for bit. */
static void
test_encoder_library_same_as_inline (gconstpointer version)
{
  const char *why = NULL;
  if (!morok_kernel_lib_find (morok_isa_detect (), NULL, &why))
    {
      g_test_skip_printf ("no kernel library here: %s", why);
      return;
    }
  Fixture calls, inlined;
  gigaam_fixture_load (&calls, version);
  gigaam_fixture_load (&inlined, version);
  gsize n_calls, n_inlined;
  g_autofree float *got = encode_released (calls.model, &calls, &n_calls);
  g_setenv ("MOROK_KERNEL_LIB", "0", TRUE);
  g_autofree float *want = encode_released (inlined.model, &inlined, &n_inlined);
  g_unsetenv ("MOROK_KERNEL_LIB");
  g_assert_cmpmem (got, n_calls * sizeof (float), want, n_inlined * sizeof (float));
  gigaam_fixture_clear (&calls);
  gigaam_fixture_clear (&inlined);
}

/* The encoder's layers are one computation over other weights: every layer
 * after the first runs the functions the first compiled, so the program
 * has at least one step per further layer more than it has functions. */
static void
test_encoder_layers_share_functions (gconstpointer version)
{
  GError *e = NULL;
  Fixture f;
  gigaam_fixture_load (&f, version);
  g_autoptr (MorokPrepareConfig) config = morok_prepare_config_new ();
  g_autoptr (GigaAmEncoderJit) jit = gigaam_encoder_jit_new (morok_gigaam_ref (f.model));
  g_assert_true (gigaam_encoder_jit_prepare_at_bounds (jit, config, &e));
  g_assert_no_error (e);
  MorokProgram *program = morok_plan_program (morok_jit_plan (gigaam_encoder_jit_jit (jit)));
  guint steps = morok_program_n_steps (program), functions = morok_program_n_functions (program);
  guint layers = morok_gigaam_config (f.model)->n_layers;
  g_test_message ("%s encoder: %u layers, %u steps, %u distinct functions", (const char *) version,
                  layers, steps, functions);
  g_assert_cmpuint (layers, >=, 2);
  g_assert_cmpuint (functions, >=, 1);
  g_assert_cmpuint (steps - functions, >=, layers - 1);
  gigaam_fixture_clear (&f);
}

/* The wrappers, in each precision the CPU runs. */
typedef struct
{
  const char *version, *kind;
  MorokPrecision precision;
} Variant;

static void
test_wrapper (gconstpointer data)
{
  const Variant *v = data;
  if (skip_unsupported (v->precision))
    return;
  double tol = v->precision == MOROK_PRECISION_F16    ? F16_TOL
               : v->precision == MOROK_PRECISION_BF16 ? BF16_TOL
               : v->precision == MOROK_PRECISION_INT8 ? fixture_int8_tol ()
                                                      : ENCODER_TOL;
  if (g_str_equal (v->kind, "ctc"))
    check_ctc (v->version, v->precision, tol);
  else
    check_encoder (v->version, v->precision, tol, FALSE);
}

int
main (int argc, char **argv)
{
  static const char *const versions[] = { "v3", "v2" };
  static const Variant variants[] = {
    { "v3", "encoder", MOROK_PRECISION_F32 },    { "v2", "encoder", MOROK_PRECISION_F32 },
    { "v3", "ctc", MOROK_PRECISION_F32 },        { "v2", "ctc", MOROK_PRECISION_F32 },
    { "v3", "encoder", MOROK_PRECISION_F16 },    { "v2", "encoder", MOROK_PRECISION_F16 },
    { "v3", "ctc", MOROK_PRECISION_F16 },        { "v2", "ctc", MOROK_PRECISION_F16 },
    { "v3", "encoder", MOROK_PRECISION_BF16 },   { "v2", "encoder", MOROK_PRECISION_BF16 },
    { "v3", "ctc", MOROK_PRECISION_BF16 },       { "v2", "ctc", MOROK_PRECISION_BF16 },
    { "v3", "encoder", MOROK_PRECISION_BF16X3 }, { "v2", "encoder", MOROK_PRECISION_BF16X3 },
    { "v3", "ctc", MOROK_PRECISION_BF16X3 },     { "v2", "ctc", MOROK_PRECISION_BF16X3 },
    { "v3", "encoder", MOROK_PRECISION_INT8 },   { "v2", "encoder", MOROK_PRECISION_INT8 },
    { "v3", "ctc", MOROK_PRECISION_INT8 },       { "v2", "ctc", MOROK_PRECISION_INT8 },
  };
  g_test_init (&argc, &argv, NULL);
  for (guint i = 0; i < G_N_ELEMENTS (versions); i++)
    {
      g_autofree char *features = g_strdup_printf ("/gigaam/%s/features", versions[i]);
      g_autofree char *layers = g_strdup_printf ("/gigaam/%s/layers", versions[i]);
      g_test_add_data_func (features, versions[i], check_features);
      g_test_add_data_func (layers, versions[i], check_traces);
      g_autofree char *released
          = g_strdup_printf ("/gigaam/%s/encoder-weights-released", versions[i]);
      g_test_add_data_func (released, versions[i], test_encoder_weights_released);
      g_autofree char *in_place = g_strdup_printf ("/gigaam/%s/encoder-in-place", versions[i]);
      g_test_add_data_func (in_place, versions[i], test_encoder_in_place);
      g_autofree char *shared
          = g_strdup_printf ("/gigaam/%s/encoder-layers-share-functions", versions[i]);
      g_test_add_data_func (shared, versions[i], test_encoder_layers_share_functions);
      g_autofree char *library
          = g_strdup_printf ("/gigaam/%s/encoder-library-same-as-inline", versions[i]);
      g_test_add_data_func (library, versions[i], test_encoder_library_same_as_inline);
    }
  for (guint i = 0; i < G_N_ELEMENTS (variants); i++)
    {
      const Variant *v = &variants[i];
      g_autofree char *path = v->precision == MOROK_PRECISION_F32
                                  ? g_strdup_printf ("/gigaam/%s/%s", v->version, v->kind)
                                  : g_strdup_printf ("/gigaam/%s/%s-%s", v->version, v->kind,
                                                     morok_precision_name (v->precision));
      g_test_add_data_func (path, v, test_wrapper);
    }
  return g_test_run ();
}
