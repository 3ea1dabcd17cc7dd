/* SPDX-License-Identifier: MIT */
/* Many streams through one batched Silero plan (models/silero-vad-batch.h):
 * streams of the fixture speech starting and ending at different rounds,
 * one stalled for a while, passed to each run in a changing order, give per
 * stream the probabilities (within 1e-5: the batched products sum in
 * another order) and exactly the speech segments of the stream's own
 * single-stream plan (SileroVadJit driven by MorokJitRecurrent, itself
 * checked against onnxruntime in test-silero-vad), for v4, v5 and v6 at 16
 * and 8 kHz; and in each reduced precision, the probabilities of
 * onnxruntime within that precision's tolerance. */
#include "fixtures.h"
#include "jit/morok-jit-recurrent.h"
#include "models/silero-vad-batch.h"
#include "models/silero-vad-jit.h"
#include "models/vad-segmenter.h"
#include "prepare/morok-prepare.h"
#include "onnx-test-util.h"
#include <math.h>
#include <string.h>

enum
{
  STREAMS = 6,
  MAX_STREAMS = 8,
  ROUNDS = 90
};

/* Stream i: the speech from sample offset[i], in rounds [start, end), not
 * in [stall_from, stall_to). */
static const gsize offset[STREAMS] = { 0, 3000, 17000, 41000, 5555, 20000 };
static const guint start[STREAMS] = { 0, 0, 5, 12, 30, 2 };
static const guint end[STREAMS] = { ROUNDS, 60, ROUNDS, 70, ROUNDS, 45 };
static const guint stall_from = 20, stall_to = 35; /* stream 2 */

static gboolean
ready (guint i, guint round)
{
  return round >= start[i] && round < end[i]
         && !(i == 2 && round >= stall_from && round < stall_to);
}

/* The probabilities of @n_chunks chunks of @samples through a fresh
 * single-stream plan. (transfer full) */
static float *
alone (MorokSileroVad *vad, guint rate, const float *samples, guint n_chunks)
{
  g_autoptr (GError) e = NULL;
  guint C = morok_silero_vad_context_len (vad, rate), N = morok_silero_vad_chunk_len (vad, rate);
  g_autoptr (SileroVadJit) jit = silero_vad_jit_new (morok_silero_vad_ref (vad));
  g_autoptr (MorokInputSpec) as = morok_input_spec_f32 (MOROK_SHAPE (1, C + N));
  g_autoptr (MorokInputSpec) ss
      = morok_input_spec_f32 (MOROK_SHAPE ((gint64) morok_silero_vad_state_len (vad)));
  g_assert_true (silero_vad_jit_prepare (jit, as, ss, &e));
  g_autoptr (MorokJitRecurrent) rec = silero_vad_jit_recurrent_new (jit, &e);
  g_assert_no_error (e);
  float *audio = silero_vad_jit_audio_mut (jit, &e)->data;
  float *probs = g_new (float, n_chunks);
  for (guint k = 0; k < n_chunks; k++)
    {
      memmove (audio, audio + N, C * sizeof (float));
      memcpy (audio + C, samples + (gsize) k * N, N * sizeof (float));
      probs[k] = morok_jit_recurrent_step (rec, &e)[0];
      g_assert_no_error (e);
    }
  return probs;
}

static void
test_streams_equal_alone (gconstpointer data)
{
  const SileroCase *c = data;
  g_autofree char *path = silero_path (c->version);
  if (!path)
    return;
  g_autoptr (GError) e = NULL;
  g_autoptr (MorokSileroVad) vad = morok_silero_vad_load (path, &e);
  g_assert_no_error (e);
  g_autofree char *wav = g_strdup_printf ("speech-%uk.wav", c->rate / 1000);
  gsize n;
  g_autofree gint16 *pcm = fixture_read_wav (wav, NULL, &n);
  g_autofree float *speech = g_new (float, n);
  for (gsize i = 0; i < n; i++)
    speech[i] = pcm[i] / 32768.0f;
  g_autoptr (MorokVadBatch) batch = morok_vad_batch_new (vad, c->rate, MAX_STREAMS, NULL, &e);
  g_assert_no_error (e);
  const guint N = morok_vad_batch_chunk_len (batch);

  float *want[STREAMS];
  guint done[STREAMS] = { 0 };
  MorokVadStream *streams[STREAMS];
  GArray *got[STREAMS];
  for (guint i = 0; i < STREAMS; i++)
    {
      guint chunks = 0;
      for (guint r = 0; r < ROUNDS; r++)
        chunks += ready (i, r);
      g_assert_cmpuint (offset[i] / (c->rate / 8000) + (gsize) chunks * N, <=, n);
      want[i] = alone (vad, c->rate, speech + offset[i] / (c->rate / 8000), chunks);
      streams[i] = morok_vad_stream_new (batch);
      got[i] = g_array_new (FALSE, FALSE, sizeof (float));
    }
  guint64 builds = morok_plan_build_count ();
  for (guint r = 0; r < ROUNDS; r++)
    {
      MorokVadStream *run[STREAMS];
      const float *chunks[STREAMS];
      guint who[STREAMS], k = 0;
      for (guint j = 0; j < STREAMS; j++)
        {
          guint i = (j + r) % STREAMS; /* a different order each round */
          if (!ready (i, r))
            continue;
          run[k] = streams[i];
          chunks[k] = speech + offset[i] / (c->rate / 8000) + (gsize) done[i]++ * N;
          who[k++] = i;
        }
      if (k == 0)
        continue;
      float probs[STREAMS];
      g_assert_true (morok_vad_batch_run (batch, k, run, chunks, probs, &e));
      g_assert_no_error (e);
      for (guint j = 0; j < k; j++)
        g_array_append_val (got[who[j]], probs[j]);
    }
  g_assert_cmpuint (morok_plan_build_count (), ==, builds);
  double worst = 0;
  MorokVadParams params;
  morok_vad_params_init (&params, (gint) c->rate);
  guint n_segments = 0;
  for (guint i = 0; i < STREAMS; i++)
    {
      g_assert_cmpuint (got[i]->len, ==, done[i]);
      for (guint k = 0; k < got[i]->len; k++)
        worst = MAX (worst, fabs (g_array_index (got[i], float, k) - want[i][k]));
      g_autoptr (GArray) a = g_array_new (FALSE, FALSE, sizeof (MorokVadSegment));
      g_autoptr (GArray) b = g_array_new (FALSE, FALSE, sizeof (MorokVadSegment));
      morok_vad_segments (want[i], done[i], (gint64) done[i] * N, &params, a);
      morok_vad_segments ((float *) got[i]->data, done[i], (gint64) done[i] * N, &params, b);
      g_assert_cmpuint (a->len, ==, b->len);
      for (guint k = 0; k < a->len; k++)
        {
          g_assert_cmpint (g_array_index (a, MorokVadSegment, k).start, ==,
                           g_array_index (b, MorokVadSegment, k).start);
          g_assert_cmpint (g_array_index (a, MorokVadSegment, k).end, ==,
                           g_array_index (b, MorokVadSegment, k).end);
        }
      n_segments += a->len;
      g_free (want[i]);
      g_array_unref (got[i]);
      morok_vad_stream_free (streams[i]);
    }
  g_test_message ("%s %u Hz: %u streams, %u segments, max |batched - alone| = %.3g", c->version,
                  c->rate, STREAMS, n_segments, worst);
  g_assert_cmpuint (n_segments, >=, STREAMS); /* speech in the streams */
  /* the batched products sum in another order than the small ones alone */
  g_assert_cmpfloat (worst, <=, 1e-5);
}

/* Reduced precision through the batch: WHOLE streams of all of the
 * fixture speech, starting at different rounds (stream 3 stalled for a
 * while), each chunk's probability against the onnxruntime reference
 * (vad-probs-<version>-<rate>.txt) for every precision the CPU runs; a
 * precision it does not run is skipped with what it lacks. */
enum
{
  WHOLE = 8
};

typedef struct
{
  const SileroCase *model;
  MorokPrecision precision;
  double tol;
} PrecisionCase;

/* The largest |p - p_ref| allowed in each precision (docs/morokvad.md,
 * "Precision": about 1.5 times the largest seen over the six models; int8,
 * up to 0.36 off, is not one for Silero). */
static const struct
{
  MorokPrecision precision;
  double tol;
} reduced[] = {
  { MOROK_PRECISION_F16, 3e-2 },
  { MOROK_PRECISION_BF16, 6e-2 },
  { MOROK_PRECISION_BF16X3, 2e-4 },
};

static PrecisionCase precision_cases[G_N_ELEMENTS (silero_cases) * G_N_ELEMENTS (reduced)];

static void
test_reduced_precision (gconstpointer data)
{
  const PrecisionCase *pc = data;
  const SileroCase *c = pc->model;
  g_autoptr (GError) e = NULL;
  g_autoptr (MorokPrepareConfig) config = morok_prepare_config_new ();
  morok_prepare_config_set_precision (config, pc->precision);
  if (!morok_plan_precision_supported (morok_prepare_config_isa (config), pc->precision, &e))
    {
      g_test_skip (e->message);
      return;
    }
  g_autofree char *path = silero_path (c->version);
  if (!path)
    return;
  g_autoptr (MorokSileroVad) vad = morok_silero_vad_load (path, &e);
  g_assert_no_error (e);
  g_autofree char *wav = g_strdup_printf ("speech-%uk.wav", c->rate / 1000);
  g_autofree char *refname = g_strdup_printf ("vad-probs-%s-%uk.txt", c->version, c->rate / 1000);
  g_autoptr (GArray) ref = fixture_read_floats (refname);
  gsize n;
  g_autofree gint16 *pcm = fixture_read_wav (wav, NULL, &n);
  g_autoptr (MorokVadBatch) batch = morok_vad_batch_new (vad, c->rate, WHOLE, config, &e);
  g_assert_no_error (e);
  const guint N = morok_vad_batch_chunk_len (batch), chunks = ref->len;
  g_assert_cmpuint ((gsize) chunks * N, >=, n); /* the reference's last chunk ends in zeros */
  g_autofree float *speech = g_new0 (float, (gsize) chunks *N);
  for (gsize i = 0; i < n; i++)
    speech[i] = pcm[i] / 32768.0f;

  MorokVadStream *streams[WHOLE];
  guint done[WHOLE] = { 0 };
  float *got[WHOLE];
  for (guint i = 0; i < WHOLE; i++)
    streams[i] = morok_vad_stream_new (batch), got[i] = g_new (float, chunks);
  double worst = 0;
  for (guint r = 0; r < chunks + 13 * WHOLE + 40; r++)
    {
      MorokVadStream *run[WHOLE];
      const float *in[WHOLE];
      guint who[WHOLE], k = 0;
      for (guint i = 0; i < WHOLE; i++)
        if (r >= 13 * i && done[i] < chunks && !(i == 3 && r >= 200 && r < 240))
          {
            run[k] = streams[i], in[k] = speech + (gsize) done[i] * N, who[k++] = i;
          }
      if (k == 0)
        continue;
      float probs[WHOLE];
      g_assert_true (morok_vad_batch_run (batch, k, run, in, probs, &e));
      g_assert_no_error (e);
      for (guint j = 0; j < k; j++)
        {
          guint i = who[j];
          worst = MAX (worst, fabs (probs[j] - g_array_index (ref, float, done[i])));
          got[i][done[i]++] = probs[j];
        }
    }
  /* A chunk is speech at p >= 0.5, silence below 0.35, neither between;
   * the segments follow from these classes alone. So each chunk must have
   * the reference's class unless the reference lies within the tolerance
   * of a threshold (a near tie), and a stream with no class changed must
   * have exactly the reference's segments. */
  MorokVadParams params;
  morok_vad_params_init (&params, (gint) c->rate);
  const double hi = params.threshold, lo = MAX (hi - 0.15, 0.01);
  g_autoptr (GArray) want = g_array_new (FALSE, FALSE, sizeof (MorokVadSegment));
  morok_vad_segments ((float *) ref->data, chunks, (gint64) chunks * N, &params, want);
  guint same = 0, ties = 0;
  for (guint i = 0; i < WHOLE; i++)
    {
      g_assert_cmpuint (done[i], ==, chunks);
      guint changed = 0;
      for (guint k = 0; k < chunks; k++)
        {
          double p = got[i][k], q = g_array_index (ref, float, k);
          if ((p >= hi) == (q >= hi) && (p < lo) == (q < lo))
            continue;
          changed++;
          g_assert_cmpfloat (MIN (fabs (q - hi), fabs (q - lo)), <=, pc->tol);
        }
      g_autoptr (GArray) seg = g_array_new (FALSE, FALSE, sizeof (MorokVadSegment));
      morok_vad_segments (got[i], chunks, (gint64) chunks * N, &params, seg);
      gboolean equal = seg->len == want->len;
      for (guint k = 0; equal && k < seg->len; k++)
        equal = g_array_index (seg, MorokVadSegment, k).start
                    == g_array_index (want, MorokVadSegment, k).start
                && g_array_index (seg, MorokVadSegment, k).end
                       == g_array_index (want, MorokVadSegment, k).end;
      g_assert_true (equal || changed > 0);
      same += equal, ties += changed;
      morok_vad_stream_free (streams[i]);
      g_free (got[i]);
    }
  g_test_message ("%s %u Hz %s: max |p - onnxruntime| = %.3g (tolerance %.0e); %u near-tie "
                  "chunks of another class; %u of %u streams with the reference's %u segments",
                  c->version, c->rate, morok_precision_name (pc->precision), worst, pc->tol, ties,
                  same, WHOLE, want->len);
  g_assert_cmpfloat (worst, <=, pc->tol);
}

/* Silero v5 at 16 kHz for up to two streams a run; NULL when the models
 * are missing (silero_path says so). */
static MorokVadBatch *
v5_batch_of_two (void)
{
  g_autofree char *path = silero_path ("v5");
  if (!path)
    return NULL;
  g_autoptr (GError) e = NULL;
  g_autoptr (MorokSileroVad) vad = morok_silero_vad_load (path, &e);
  g_assert_no_error (e);
  MorokVadBatch *batch = morok_vad_batch_new (vad, 16000, 2, NULL, &e);
  g_assert_no_error (e);
  return batch;
}

/* A reset stream starts over: its first chunk gives what a new stream's
 * does, whatever it heard before. */
static void
test_stream_reset (void)
{
  g_autoptr (MorokVadBatch) batch = v5_batch_of_two ();
  if (!batch)
    return;
  g_autoptr (GError) e = NULL;
  g_assert_cmpuint (morok_vad_batch_max_streams (batch), ==, 2);
  gsize n;
  g_autofree gint16 *pcm = fixture_read_wav ("speech-16k.wav", NULL, &n);
  guint N = morok_vad_batch_chunk_len (batch);
  g_autofree float *speech = g_new (float, 40 * N);
  for (gsize i = 0; i < 40 * N; i++)
    speech[i] = pcm[80 * N + i] / 32768.0f; /* inside speech: the state matters */
  g_autoptr (MorokVadStream) used = morok_vad_stream_new (batch);
  g_autoptr (MorokVadStream) fresh = morok_vad_stream_new (batch);
  float p[2];
  for (guint k = 1; k < 40; k++)
    {
      const float *chunk[] = { speech + k * N };
      g_assert_true (morok_vad_batch_run (batch, 1, &used, chunk, p, &e));
    }
  morok_vad_stream_reset (used);
  MorokVadStream *both[] = { used, fresh };
  const float *chunks[] = { speech, speech };
  g_assert_true (morok_vad_batch_run (batch, 2, both, chunks, p, &e));
  g_assert_no_error (e);
  g_assert_cmpfloat (p[0], ==, p[1]);
}

/* A run of no stream or of more than the bound is an error that moves no stream. */
static void
test_run_checks_count (void)
{
  g_autoptr (MorokVadBatch) batch = v5_batch_of_two ();
  if (!batch)
    return;
  g_autoptr (GError) e = NULL;
  g_autoptr (MorokVadStream) s = morok_vad_stream_new (batch);
  g_autofree float *chunk = g_new0 (float, morok_vad_batch_chunk_len (batch));
  MorokVadStream *three[] = { s, s, s };
  const float *chunks[] = { chunk, chunk, chunk };
  float probs[3];
  g_assert_false (morok_vad_batch_run (batch, 3, three, chunks, probs, &e));
  g_assert_error (e, MOROK_JIT_ERROR, MOROK_JIT_ERROR_RUNTIME);
  g_assert_nonnull (strstr (e->message, "3 streams in a run, the batch takes 1 to 2"));
  g_clear_error (&e);
  g_assert_false (morok_vad_batch_run (batch, 0, three, chunks, probs, &e));
  g_assert_error (e, MOROK_JIT_ERROR, MOROK_JIT_ERROR_RUNTIME);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  for (guint i = 0; i < G_N_ELEMENTS (silero_cases); i++)
    {
      g_autofree char *name
          = g_strdup_printf ("/silero-vad-batch/%s/%uk/streams-equal-alone",
                             silero_cases[i].version, silero_cases[i].rate / 1000);
      g_test_add_data_func (name, &silero_cases[i], test_streams_equal_alone);
    }
  for (guint i = 0; i < G_N_ELEMENTS (silero_cases); i++)
    for (guint p = 0; p < G_N_ELEMENTS (reduced); p++)
      {
        PrecisionCase *pc = &precision_cases[i * G_N_ELEMENTS (reduced) + p];
        *pc = (PrecisionCase){ &silero_cases[i], reduced[p].precision, reduced[p].tol };
        g_autofree char *name
            = g_strdup_printf ("/silero-vad-batch/%s/%uk/%s", silero_cases[i].version,
                               silero_cases[i].rate / 1000, morok_precision_name (pc->precision));
        g_test_add_data_func (name, pc, test_reduced_precision);
      }
  g_test_add_func ("/silero-vad-batch/run-checks-count", test_run_checks_count);
  g_test_add_func ("/silero-vad-batch/stream-reset-starts-over", test_stream_reset);
  return g_test_run ();
}
