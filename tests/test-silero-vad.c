/* SPDX-License-Identifier: MIT */
/* Silero VAD v4, v5 and v6 (core/models/silero-vad): the model is recognised
 * from the file, one plan per version and rate replays the fixture WAV chunk
 * by chunk, state carried from the output into the input, and every
 * probability is within 1e-4 of onnxruntime's (tests/fixtures/
 * vad-probs-<version>-<rate>.txt, made by vad-reference.mjs). Bad model
 * files give a MOROK_IO_ERROR naming the file, never a crash.
 *
 * The models come from $MOROK_MODEL_DIR (scripts/fetch-silero-models.sh);
 * tests that need them are skipped when they are absent.
 */
#include "prepare/morok-prepare.h"
#include "fixtures.h"
#include "models/silero-vad-jit.h"
#include "models/silero-vad.h"
#include "onnx-test-util.h"

#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#define PROB_TOL 1e-4

/* ---- fixtures ---- */

/* A 16-bit PCM mono WAV fixture as samples / 32768. (transfer full) */
static float *
read_wav (const char *name, guint *out_rate, gsize *out_n)
{
  g_autofree gint16 *pcm = fixture_read_wav (name, out_rate, out_n);
  float *s = g_new (float, MAX (*out_n, 1));
  for (gsize i = 0; i < *out_n; i++)
    s[i] = pcm[i] / 32768.0f;
  return s;
}

static MorokSileroVad *
load_vad (const char *version)
{
  g_autofree char *path = silero_path (version);
  g_autoptr (GError) error = NULL;
  if (path == NULL)
    return NULL;
  MorokSileroVad *vad = morok_silero_vad_load (path, &error);
  g_assert_no_error (error);
  g_assert_nonnull (vad);
  return vad;
}

/* ---- a plan per version and rate ---- */

/* The plan of one chunk: inputs audio [1, C + N] and state [S]. */
static MorokPlan *
vad_plan (MorokSileroVad *vad, guint rate)
{
  g_autoptr (GError) error = NULL;
  MorokGraph *g = morok_graph_new ();
  MorokSymPool *pool = morok_graph_sym_pool (g);
  const MorokSym *as[] = { morok_sym_const (pool, 1),
                           morok_sym_const (pool, morok_silero_vad_input_len (vad, rate)) };
  const MorokSym *ss[] = { morok_sym_const (pool, (gint64) morok_silero_vad_state_len (vad)) };
  MorokTensor *in[] = { morok_tensor_input (g, "audio", MOROK_DTYPE_F32, as, 2),
                        morok_tensor_input (g, "state", MOROK_DTYPE_F32, ss, 1) };
  MorokTensor *out = morok_silero_vad_forward (vad, rate, in[0], in[1], &error);
  g_assert_no_error (error);
  g_assert_nonnull (out);
  MorokPlanOptions opts;
  morok_plan_options_init (&opts);
  MorokPlan *plan = morok_plan_build (g, &out, 1, in, 2, &opts, &error);
  g_assert_no_error (error);
  g_assert_nonnull (plan);
  const MorokBuffer *o = morok_plan_output (plan, 0);
  g_assert_cmpuint (o->bytes, ==, morok_silero_vad_output_len (vad) * sizeof (float));
  return plan;
}

/* Runs the plan over @samples as vad-reference.mjs does: chunks of N, the
 * last zero-padded, each after the previous chunk's last C samples (zeros
 * first), state zeros first and then the previous output's tail. Returns the
 * probabilities. */
static GArray *
run_chunks (MorokSileroVad *vad, MorokPlan *plan, guint rate, const float *samples, gsize n)
{
  g_autoptr (GError) error = NULL;
  guint C = morok_silero_vad_context_len (vad, rate), N = morok_silero_vad_chunk_len (vad, rate);
  gsize S = morok_silero_vad_state_len (vad);
  float *audio = morok_plan_input (plan, 0)->data, *state = morok_plan_input (plan, 1)->data;
  GArray *probs = g_array_new (FALSE, FALSE, sizeof (double));
  memset (audio, 0, (C + N) * sizeof (float));
  memset (state, 0, S * sizeof (float));
  for (gsize at = 0; at < n; at += N)
    {
      gsize len = MIN (N, n - at);
      memmove (audio, audio + N, C * sizeof (float));
      memcpy (audio + C, samples + at, len * sizeof (float));
      memset (audio + C + len, 0, (N - len) * sizeof (float));
      g_assert_true (morok_plan_execute (plan, NULL, 0, &error));
      g_assert_no_error (error);
      const float *out = morok_plan_output (plan, 0)->data;
      double p = out[0];
      g_array_append_val (probs, p);
      memcpy (state, out + 1, S * sizeof (float));
    }
  return probs;
}

/* Every chunk's probability is within 1e-4 of onnxruntime's. */
static void
test_matches_onnxruntime (gconstpointer data)
{
  const SileroCase *c = data;
  g_autoptr (MorokSileroVad) vad = load_vad (c->version);
  if (vad == NULL)
    return;
  g_autofree char *wav = g_strdup_printf ("speech-%uk.wav", c->rate / 1000);
  g_autofree char *ref = g_strdup_printf ("vad-probs-%s-%uk.txt", c->version, c->rate / 1000);
  guint rate;
  gsize n;
  g_autofree float *samples = read_wav (wav, &rate, &n);
  g_assert_cmpuint (rate, ==, c->rate);
  g_autoptr (GArray) want = fixture_read_floats (ref);
  g_autoptr (MorokPlan) plan = vad_plan (vad, c->rate);
  g_autoptr (GArray) got = run_chunks (vad, plan, c->rate, samples, n);
  g_assert_cmpuint (got->len, ==, want->len);
  double worst = 0;
  guint at = 0;
  for (guint i = 0; i < got->len; i++)
    {
      double d = fabs (g_array_index (got, double, i) - g_array_index (want, float, i));
      if (d > worst)
        worst = d, at = i;
    }
  g_test_message ("silero %s %u Hz: %u chunks, %u kernels, max |morok - onnxruntime| = %.2e "
                  "at chunk %u",
                  c->version, c->rate, got->len, morok_plan_n_steps (plan), worst, at);
  g_assert_cmpfloat (worst, <=, PROB_TOL);
}

/* Through the kernel library (kernels/kernel-lib.c) a plan computes what
 * the plan whose units compile the headers' bodies computes, bit for bit:
 * every chunk's probability (and so the state each chunk hands on). */
static void
test_library_same_as_inline (void)
{
  const char *why = NULL;
  if (!morok_kernel_lib_find (morok_isa_detect (), NULL, &why))
    {
      g_test_skip_printf ("no kernel library here: %s", why);
      return;
    }
  g_autoptr (MorokSileroVad) vad = load_vad ("v5");
  if (vad == NULL)
    return;
  guint rate;
  gsize n;
  g_autofree float *samples = read_wav ("speech-16k.wav", &rate, &n);
  g_autoptr (MorokPlan) calls = vad_plan (vad, rate);
  g_setenv ("MOROK_KERNEL_LIB", "0", TRUE);
  g_autoptr (MorokPlan) inlined = vad_plan (vad, rate);
  g_unsetenv ("MOROK_KERNEL_LIB");
  g_autoptr (GArray) got = run_chunks (vad, calls, rate, samples, n);
  g_autoptr (GArray) want = run_chunks (vad, inlined, rate, samples, n);
  g_assert_cmpmem (got->data, got->len * sizeof (double), want->data, want->len * sizeof (double));
}

/* ---- the JIT wrapper, driven by MorokJitRecurrent ---- */

/* The stream a recurrent step reads its chunk from. */
typedef struct
{
  const float *samples;
  gsize n, at;
  guint C, N;
  float *window; /* [C + N]: context, then the chunk */
} Feed;

/* The next chunk into the audio input, after the last C samples of the one
 * before (zeros before the first): what a streaming host writes. */
static void
feed_next (SileroVadJit *jit, Feed *f)
{
  float *audio = silero_vad_jit_audio_mut (jit, NULL)->data;
  gsize len = MIN (f->N, f->n - f->at);
  memmove (audio, f->window + f->N, f->C * sizeof (float));
  memcpy (audio + f->C, f->samples + f->at, len * sizeof (float));
  memset (audio + f->C + len, 0, (f->N - len) * sizeof (float));
  memcpy (f->window, audio, (f->C + f->N) * sizeof (float));
  f->at += f->N;
}

/* A SileroVadJit of @vad prepared for @rate (the audio spec's length). */
static SileroVadJit *
prepared_jit (MorokSileroVad *vad, guint rate)
{
  g_autoptr (GError) error = NULL;
  guint C = morok_silero_vad_context_len (vad, rate), N = morok_silero_vad_chunk_len (vad, rate);
  SileroVadJit *jit = silero_vad_jit_new (morok_silero_vad_ref (vad));
  g_autoptr (MorokInputSpec) as = morok_input_spec_f32 (MOROK_SHAPE (1, C + N));
  g_autoptr (MorokInputSpec) ss
      = morok_input_spec_f32 (MOROK_SHAPE ((gint64) morok_silero_vad_state_len (vad)));
  g_assert_true (silero_vad_jit_prepare (jit, as, ss, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (silero_vad_jit_sample_rate (jit), ==, rate);
  return jit;
}

/* Steps @jit through the fixture speech of @c's rate with MorokJitRecurrent
 * (head 1, state [h | c] carried on the host): the probabilities of
 * onnxruntime within 1e-4, without a rebuild after prepare. */
static void
check_recurrent (SileroVadJit *jit, const SileroCase *c, guint C, guint N)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (MorokJitRecurrent) rec = silero_vad_jit_recurrent_new (jit, &error);
  g_assert_no_error (error);
  g_autofree char *wav = g_strdup_printf ("speech-%uk.wav", c->rate / 1000);
  g_autofree char *ref = g_strdup_printf ("vad-probs-%s-%uk.txt", c->version, c->rate / 1000);
  guint rate;
  gsize n;
  g_autofree float *samples = read_wav (wav, &rate, &n);
  g_autoptr (GArray) want = fixture_read_floats (ref);
  g_autofree float *window = g_new0 (float, C + N);
  Feed feed = { samples, n, 0, C, N, window };
  guint64 builds = morok_plan_build_count ();
  double worst = 0;
  guint steps = 0;
  for (; feed.at < n; steps++)
    {
      feed_next (jit, &feed);
      const float *p = morok_jit_recurrent_step (rec, &error);
      g_assert_no_error (error);
      g_assert_cmpuint (steps, <, want->len);
      worst = MAX (worst, fabs (p[0] - g_array_index (want, float, steps)));
    }
  g_assert_cmpuint (steps, ==, want->len);
  g_assert_cmpuint (morok_plan_build_count (), ==, builds);
  g_test_message ("SileroVadJit %s %u Hz: %u recurrent steps, max |morok - onnxruntime| = %.2e",
                  c->version, c->rate, steps, worst);
  g_assert_cmpfloat (worst, <=, PROB_TOL);
}

static void
test_jit_recurrent (gconstpointer data)
{
  const SileroCase *c = data;
  g_autoptr (MorokSileroVad) vad = load_vad (c->version);
  if (vad == NULL)
    return;
  g_autoptr (SileroVadJit) jit = prepared_jit (vad, c->rate);
  check_recurrent (jit, c, morok_silero_vad_context_len (vad, c->rate),
                   morok_silero_vad_chunk_len (vad, c->rate));
}

/* One load serves both rates (as in morokvad): two wrappers hold references
 * to one model; the 8 kHz one still matches onnxruntime after the loader's
 * reference and the 16 kHz wrapper are gone (a use after free would show
 * under ASan and valgrind). */
static void
test_jit_one_model_both_rates (void)
{
  MorokSileroVad *vad = load_vad ("v5");
  if (vad == NULL)
    return;
  guint C = morok_silero_vad_context_len (vad, 8000), N = morok_silero_vad_chunk_len (vad, 8000);
  SileroVadJit *wide = prepared_jit (vad, 16000);
  g_autoptr (SileroVadJit) narrow = prepared_jit (vad, 8000);
  morok_silero_vad_unref (vad);
  silero_vad_jit_free (wide);
  check_recurrent (narrow, &(SileroCase){ "v5", 8000 }, C, N);
}

/* An audio spec of no rate's length is a build error naming the lengths. */
static void
test_jit_rejects_unknown_length (void)
{
  MorokSileroVad *vad = load_vad ("v5");
  if (vad == NULL)
    return;
  g_autoptr (GError) error = NULL;
  g_autoptr (SileroVadJit) jit = silero_vad_jit_new (vad);
  g_autoptr (MorokInputSpec) as = morok_input_spec_f32 (MOROK_SHAPE (1, 512));
  g_autoptr (MorokInputSpec) ss = morok_input_spec_f32 (MOROK_SHAPE (256));
  g_assert_false (silero_vad_jit_prepare (jit, as, ss, &error));
  g_assert_nonnull (error);
  g_test_message ("%s", error->message);
  g_assert_nonnull (strstr (error->message, "[B, 576] at 16 kHz, [B, 288] at 8 kHz"));
  g_assert_cmpuint (silero_vad_jit_sample_rate (jit), ==, 0);
}

/* ---- loading ---- */

/* Each file is recognised from its structure and weights, with both rates. */
static void
test_load_identifies_version (void)
{
  static const struct
  {
    const char *file;
    MorokSileroVadVersion version;
    guint layers, hidden, context16, context8;
  } want[] = {
    { "v4", MOROK_SILERO_VAD_V4, 2, 64, 0, 0 },
    { "v5", MOROK_SILERO_VAD_V5, 1, 128, 64, 32 },
    { "v6", MOROK_SILERO_VAD_V6, 1, 128, 64, 32 },
  };
  for (guint i = 0; i < G_N_ELEMENTS (want); i++)
    {
      g_autoptr (MorokSileroVad) vad = load_vad (want[i].file);
      if (vad == NULL)
        return;
      guint n;
      const guint *rates = morok_silero_vad_sample_rates (vad, &n);
      g_assert_cmpint (morok_silero_vad_version (vad), ==, want[i].version);
      g_assert_cmpstr (morok_silero_vad_version_name (want[i].version), ==, want[i].file);
      g_assert_cmpuint (n, ==, 2);
      g_assert_cmpuint (rates[0], ==, 16000);
      g_assert_cmpuint (rates[1], ==, 8000);
      g_assert_false (morok_silero_vad_supports_rate (vad, 44100));
      g_assert_cmpuint (morok_silero_vad_lstm_layers (vad), ==, want[i].layers);
      g_assert_cmpuint (morok_silero_vad_lstm_hidden (vad), ==, want[i].hidden);
      g_assert_cmpuint (morok_silero_vad_state_len (vad), ==, 2 * want[i].layers * want[i].hidden);
      g_assert_cmpuint (morok_silero_vad_output_len (vad), ==,
                        1 + 2 * want[i].layers * want[i].hidden);
      g_assert_cmpuint (morok_silero_vad_chunk_len (vad, 16000), ==, 512);
      g_assert_cmpuint (morok_silero_vad_chunk_len (vad, 8000), ==, 256);
      g_assert_cmpuint (morok_silero_vad_context_len (vad, 16000), ==, want[i].context16);
      g_assert_cmpuint (morok_silero_vad_context_len (vad, 8000), ==, want[i].context8);
      g_assert_cmpuint (morok_silero_vad_input_len (vad, 44100), ==, 0);
    }
}

/* Loading @path fails with a MOROK_IO_ERROR whose message names the file. */
static void
assert_load_fails (const char *path, gint code)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (MorokSileroVad) vad = morok_silero_vad_load (path, &error);
  g_assert_null (vad);
  g_assert_nonnull (error);
  g_assert_true (error->domain == MOROK_IO_ERROR);
  if (code >= 0)
    g_assert_cmpint (error->code, ==, code);
  g_autofree char *base = g_path_get_basename (path);
  g_test_message ("%s", error->message);
  g_assert_nonnull (strstr (error->message, base));
}

/* A copy of @data in a temporary file named like @name. (transfer full) path */
static char *
write_tmp (const char *name, const void *data, gsize len)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *tmpl = g_strdup_printf ("morok-XXXXXX-%s", name);
  char *path = NULL;
  gint fd = g_file_open_tmp (tmpl, &path, &error);
  g_assert_no_error (error);
  close (fd);
  g_assert_true (g_file_set_contents (path, data, (gssize) len, &error));
  g_assert_no_error (error);
  return path;
}

/* Files that are not Silero models: missing, another ONNX model, a
 * safetensors file, an empty file. */
static void
test_load_rejects_other_files (void)
{
  g_autofree char *tiny = g_test_build_filename (G_TEST_DIST, "fixtures", "onnx-tiny.onnx", NULL);
  g_autofree char *st
      = g_test_build_filename (G_TEST_DIST, "fixtures", "gigaam-v3-tiny.safetensors", NULL);
  assert_load_fails ("/nonexistent/silero_vad_v5.onnx", MOROK_IO_ERROR_OPEN);
  assert_load_fails (tiny, MOROK_IO_ERROR_NOT_FOUND);
  assert_load_fails (st, -1);
  g_autofree char *empty = write_tmp ("empty.onnx", "", 0);
  assert_load_fails (empty, -1);
  g_unlink (empty);
}

/* Truncated copies of the v5 file fail cleanly, at many cut points. */
static void
test_load_rejects_truncated (void)
{
  gsize len;
  g_autofree char *d = silero_contents ("v5", &len);
  if (d == NULL)
    return;
  for (gsize cut = 1; cut < len; cut = cut * 3 + 17)
    {
      g_autofree char *tmp = write_tmp ("cut.onnx", d, cut);
      assert_load_fails (tmp, -1);
      g_unlink (tmp);
    }
}

/* Corrupt copies (8 bytes overwritten, anywhere or in the first 40 kB where
 * the v4 file keeps its structure) either load or fail with a MOROK_IO_ERROR
 * naming the file; none crashes. */
static void
test_load_survives_corruption (void)
{
  gsize len;
  guint failed = 0;
  g_autofree char *d = silero_contents ("v4", &len);
  if (d == NULL)
    return;
  GRand *rng = g_rand_new_with_seed (7);
  for (guint k = 0; k < 40; k++)
    {
      g_autofree char *bad = g_memdup2 (d, len);
      gsize at = g_rand_int_range (rng, 0, (gint32) (k % 2 ? MIN (len, 40000) : len));
      for (guint j = 0; j < 8 && at + j < len; j++)
        bad[at + j] = (char) g_rand_int (rng);
      g_autofree char *tmp = write_tmp ("bad.onnx", bad, len);
      g_autoptr (GError) error = NULL;
      g_autoptr (MorokSileroVad) vad = morok_silero_vad_load (tmp, &error);
      if (vad == NULL)
        {
          g_autofree char *base = g_path_get_basename (tmp);
          g_assert_true (error->domain == MOROK_IO_ERROR);
          g_assert_nonnull (strstr (error->message, base));
          failed++;
        }
      g_unlink (tmp);
    }
  g_test_message ("%u of 40 corrupt copies failed to load, the others loaded", failed);
  g_rand_free (rng);
}

/* Every occurrence of @was in @d replaced by @now (same length); returns the count. */
static guint
patch_all (char *d, gsize len, const void *was, const void *now, gsize n)
{
  guint count = 0;
  for (gsize at = 0; at + n <= len; at++)
    if (memcmp (d + at, was, n) == 0)
      memcpy (d + at, now, n), count++;
  return count;
}

/* A missing weight is named, with the graph it was looked for in: the v5
 * file with 'decoder.rnn.weight_hh' renamed everywhere. */
static void
test_load_names_missing_tensor (void)
{
  gsize len;
  g_autofree char *d = silero_contents ("v5", &len);
  if (d == NULL)
    return;
  g_assert_cmpuint (patch_all (d, len, "decoder.rnn.weight_hh", "decoder.rnn.weight_hx", 21), >=,
                    2);
  g_autofree char *tmp = write_tmp ("renamed.onnx", d, len);
  g_autoptr (GError) error = NULL;
  g_autoptr (MorokSileroVad) vad = morok_silero_vad_load (tmp, &error);
  g_assert_error (error, MOROK_IO_ERROR, MOROK_IO_ERROR_NOT_FOUND);
  g_test_message ("%s", error->message);
  g_assert_nonnull (strstr (error->message, "'decoder.rnn.weight_hh'"));
  g_assert_nonnull (strstr (error->message, "If_0:then_branch"));
  g_unlink (tmp);
}

/* A weight of the wrong shape is named, with both shapes: the v5 head
 * weight [1, 128, 1] rewritten as [1, 1, 128] (dims are varints: the file's
 * length does not change). */
static void
test_load_rejects_wrong_shape (void)
{
  gsize len;
  g_autofree char *d = silero_contents ("v5", &len);
  if (d == NULL)
    return;
  /* dims 1, 128, 1; data_type FLOAT; name (24 bytes) */
  static const guint8 was[] = { 0x08, 0x01, 0x08, 0x80, 0x01, 0x08, 0x01, 0x10, 0x01, 0x42, 0x18 };
  static const guint8 now[] = { 0x08, 0x01, 0x08, 0x01, 0x08, 0x80, 0x01, 0x10, 0x01, 0x42, 0x18 };
  const char *name = "decoder.decoder.2.weight";
  guint patched = 0;
  for (gsize at = 0; at + sizeof was + strlen (name) <= len; at++)
    if (memcmp (d + at, was, sizeof was) == 0
        && memcmp (d + at + sizeof was, name, strlen (name)) == 0)
      memcpy (d + at, now, sizeof now), patched++;
  g_assert_cmpuint (patched, ==, 2);
  g_autofree char *tmp = write_tmp ("shape.onnx", d, len);
  g_autoptr (GError) error = NULL;
  g_autoptr (MorokSileroVad) vad = morok_silero_vad_load (tmp, &error);
  g_assert_error (error, MOROK_IO_ERROR, MOROK_IO_ERROR_MALFORMED);
  g_assert_nonnull (strstr (error->message, "'decoder.decoder.2.weight'"));
  g_test_message ("%s", error->message);
  g_assert_nonnull (strstr (error->message, "[1,1,128], expected [1,128,1]"));
  g_unlink (tmp);
}

/* A weight holding Inf is named, not run (it would make every probability
 * 0 or NaN): the first value of 'decoder.decoder.2.weight' of the v5 file,
 * in both rates' copies, set to +Inf. The tensor is found by its name
 * followed by its raw_data field (tag 0x4a, 512 bytes: varint 0x80 0x04). */
static void
test_load_rejects_non_finite_weight (void)
{
  gsize len;
  g_autofree char *d = silero_contents ("v5", &len);
  if (d == NULL)
    return;
  static const guint8 raw_data[] = { 0x4a, 0x80, 0x04 };
  const float inf = INFINITY;
  const char *name = "decoder.decoder.2.weight";
  gsize name_len = strlen (name);
  guint patched = 0;
  for (gsize at = 0; at + name_len + sizeof raw_data + sizeof inf <= len; at++)
    if (memcmp (d + at, name, name_len) == 0
        && memcmp (d + at + name_len, raw_data, sizeof raw_data) == 0)
      {
        guint32 bits;
        memcpy (&bits, &inf, 4);
        bits = GUINT32_TO_LE (bits);
        memcpy (d + at + name_len + sizeof raw_data, &bits, 4);
        patched++;
      }
  g_assert_cmpuint (patched, ==, 2);
  g_autofree char *tmp = write_tmp ("inf.onnx", d, len);
  g_autoptr (GError) error = NULL;
  g_autoptr (MorokSileroVad) vad = morok_silero_vad_load (tmp, &error);
  g_assert_null (vad);
  g_assert_error (error, MOROK_IO_ERROR, MOROK_IO_ERROR_MALFORMED);
  g_test_message ("%s", error->message);
  g_autofree char *base = g_path_get_basename (tmp);
  g_assert_nonnull (strstr (error->message, base));
  g_assert_nonnull (
      strstr (error->message, "'decoder.decoder.2.weight' holds a non-finite value at 0"));
  g_unlink (tmp);
}

/* ---- forward errors ---- */

/* A rate without a network and misshapen inputs are tensor errors. */
static void
test_forward_rejects_bad_inputs (void)
{
  g_autoptr (MorokSileroVad) vad = load_vad ("v5");
  if (vad == NULL)
    return;
  g_autoptr (MorokGraph) g = morok_graph_new ();
  MorokSymPool *pool = morok_graph_sym_pool (g);
  const MorokSym *as[] = { morok_sym_const (pool, 1), morok_sym_const (pool, 512) };
  const MorokSym *ss[] = { morok_sym_const (pool, 256) };
  MorokTensor *audio = morok_tensor_input (g, "audio", MOROK_DTYPE_F32, as, 2);
  MorokTensor *state = morok_tensor_input (g, "state", MOROK_DTYPE_F32, ss, 1);
  g_autoptr (GError) error = NULL;
  g_assert_null (morok_silero_vad_forward (vad, 44100, audio, state, &error));
  g_assert_error (error, MOROK_TENSOR_ERROR, MOROK_TENSOR_ERROR_ARGUMENT);
  g_clear_error (&error);
  /* v5 at 16 kHz wants 64 + 512 samples */
  g_assert_null (morok_silero_vad_forward (vad, 16000, audio, state, &error));
  g_assert_error (error, MOROK_TENSOR_ERROR, MOROK_TENSOR_ERROR_SHAPE);
  g_assert_nonnull (strstr (error->message, "expected f32 [1, 576]"));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/silero-vad/load/identifies-version", test_load_identifies_version);
  g_test_add_func ("/silero-vad/load/rejects-other-files", test_load_rejects_other_files);
  g_test_add_func ("/silero-vad/load/rejects-truncated-files", test_load_rejects_truncated);
  g_test_add_func ("/silero-vad/load/survives-corruption", test_load_survives_corruption);
  g_test_add_func ("/silero-vad/load/names-missing-tensor", test_load_names_missing_tensor);
  g_test_add_func ("/silero-vad/load/names-misshapen-tensor", test_load_rejects_wrong_shape);
  g_test_add_func ("/silero-vad/load/names-non-finite-tensor", test_load_rejects_non_finite_weight);
  g_test_add_func ("/silero-vad/forward/rejects-bad-inputs", test_forward_rejects_bad_inputs);
  for (guint i = 0; i < G_N_ELEMENTS (silero_cases); i++)
    {
      g_autofree char *name
          = g_strdup_printf ("/silero-vad/%s/%uk/matches-onnxruntime", silero_cases[i].version,
                             silero_cases[i].rate / 1000);
      g_test_add_data_func (name, &silero_cases[i], test_matches_onnxruntime);
      g_autofree char *jit_name
          = g_strdup_printf ("/silero-vad/jit/%s/%uk/recurrent-matches-onnxruntime",
                             silero_cases[i].version, silero_cases[i].rate / 1000);
      g_test_add_data_func (jit_name, &silero_cases[i], test_jit_recurrent);
    }
  g_test_add_func ("/silero-vad/v5/16k/library-same-as-inline", test_library_same_as_inline);
  g_test_add_func ("/silero-vad/jit/rejects-unknown-length", test_jit_rejects_unknown_length);
  g_test_add_func ("/silero-vad/jit/one-model-both-rates", test_jit_one_model_both_rates);
  return g_test_run ();
}
