/* SPDX-License-Identifier: MIT */
/* Many VAD streams on one core: the cost of one stream's chunk for 1, 8, 64
 * and 256 streams, through one batched plan (models/silero-vad-batch.h, all
 * streams in every run) and through one single-stream plan per stream
 * (SileroVadJit + MorokJitRecurrent, stepped in turn), prepared each on its
 * own or as contexts of one program (silero_vad_jit_new_context); the
 * batched plan also in each reduced precision the CPU runs. Each
 * stream reads the fixture speech from its own offset. Not a test; one thread unless
 * MOROK_THREADS says otherwise. bench/compare-vad-streams.sh puts
 * onnxruntime's batched session next to it.
 *
 *   build/bench/bench-vad-streams [v5|v6|v4] [MODEL_DIR]
 *   build/bench/bench-vad-streams [v5|v6|v4] --profile STREAMS
 *
 * The second form prints the batched plan's per-kernel profile at STREAMS
 * streams instead (MODEL_DIR from $MOROK_MODEL_DIR).
 */
#include "bench-profile.h"
#include "bench-wav.h"
#include "jit/morok-jit-recurrent.h"
#include "models/silero-vad-batch.h"
#include "models/silero-vad-jit.h"
#include "prepare/morok-prepare.h"
#include <stdio.h>
#include <string.h>

#define RATE 16000
#define ROUNDS 200

/* Stream i's chunk of round r: a wrap-around walk of the speech. */
static const float *
chunk_of (const float *speech, gsize n, guint N, guint i, guint r)
{
  gsize chunks = n / N;
  return speech + ((i * 37 + r) % chunks) * N;
}

/* µs per stream-chunk, median over ROUNDS runs of all @streams in one
 * batch prepared with @config. */
static double
batched (MorokSileroVad *vad, guint streams, const MorokPrepareConfig *config, const float *speech,
         gsize n, GError **error)
{
  g_autoptr (MorokVadBatch) batch = morok_vad_batch_new (vad, RATE, streams, config, error);
  if (!batch)
    return -1;
  guint N = morok_vad_batch_chunk_len (batch);
  g_autofree MorokVadStream **s = g_new (MorokVadStream *, streams);
  g_autofree const float **chunks = g_new (const float *, streams);
  g_autofree float *probs = g_new (float, streams);
  for (guint i = 0; i < streams; i++)
    s[i] = morok_vad_stream_new (batch);
  double t[ROUNDS];
  for (guint r = 0; r < ROUNDS; r++)
    {
      for (guint i = 0; i < streams; i++)
        chunks[i] = chunk_of (speech, n, N, i, r);
      double t0 = bench_now_us ();
      if (!morok_vad_batch_run (batch, streams, s, chunks, probs, error))
        return -1;
      t[r] = (bench_now_us () - t0) / streams;
    }
  for (guint i = 0; i < streams; i++)
    morok_vad_stream_free (s[i]);
  return bench_median (t, ROUNDS);
}

/* µs per stream-chunk, median over ROUNDS rounds of one step of each
 * stream's own plan: each prepared on its own, or (@shared) contexts of
 * the first one's program (silero_vad_jit_new_context). */
static double
independent (MorokSileroVad *vad, guint streams, gboolean shared, const float *speech, gsize n,
             GError **error)
{
  guint C = morok_silero_vad_context_len (vad, RATE), N = morok_silero_vad_chunk_len (vad, RATE);
  g_autofree SileroVadJit **jit = g_new0 (SileroVadJit *, streams);
  g_autofree MorokJitRecurrent **rec = g_new0 (MorokJitRecurrent *, streams);
  double t[ROUNDS], result = -1;
  g_autoptr (MorokInputSpec) as = morok_input_spec_f32 (MOROK_SHAPE (1, C + N));
  g_autoptr (MorokInputSpec) ss
      = morok_input_spec_f32 (MOROK_SHAPE ((gint64) morok_silero_vad_state_len (vad)));
  for (guint i = 0; i < streams; i++)
    {
      if (shared && i > 0)
        jit[i] = silero_vad_jit_new_context (jit[0], error);
      else if ((jit[i] = silero_vad_jit_new (morok_silero_vad_ref (vad)))
               && !silero_vad_jit_prepare (jit[i], as, ss, error))
        goto out;
      if (!jit[i] || !(rec[i] = silero_vad_jit_recurrent_new (jit[i], error)))
        goto out;
    }
  for (guint r = 0; r < ROUNDS; r++)
    {
      double t0 = bench_now_us ();
      for (guint i = 0; i < streams; i++)
        {
          float *audio = silero_vad_jit_audio_mut (jit[i], NULL)->data;
          memmove (audio, audio + N, C * sizeof (float));
          memcpy (audio + C, chunk_of (speech, n, N, i, r), N * sizeof (float));
          if (!morok_jit_recurrent_step (rec[i], error))
            goto out;
        }
      t[r] = (bench_now_us () - t0) / streams;
    }
  result = bench_median (t, ROUNDS);
out:
  for (guint i = streams; i-- > 0;) /* the first last: the others may borrow its model */
    {
      g_clear_pointer (&rec[i], morok_jit_recurrent_free);
      g_clear_pointer (&jit[i], silero_vad_jit_free);
    }
  return result;
}

/* The batched plan's kernels at @streams streams, profiled ROUNDS times. */
static gboolean
profile_batched (MorokSileroVad *vad, guint streams, const float *speech, gsize n, GError **error)
{
  guint C = morok_silero_vad_context_len (vad, RATE), N = morok_silero_vad_chunk_len (vad, RATE);
  gsize S = morok_silero_vad_state_len (vad);
  g_autoptr (SileroVadBatchJit) jit = silero_vad_batch_jit_with_b_bound (
      silero_vad_batch_jit_new (morok_silero_vad_ref (vad)), streams);
  g_autoptr (MorokInputSpec) as = morok_input_spec_f32 (MOROK_SHAPE (streams, C + N));
  g_autoptr (MorokInputSpec) ss = morok_input_spec_f32 (MOROK_SHAPE (streams, (gint64) S));
  if (!silero_vad_batch_jit_prepare (jit, as, ss, error))
    return FALSE;
  float *audio = silero_vad_batch_jit_audio_mut (jit, error)->data;
  float *state = silero_vad_batch_jit_state_mut (jit, error)->data;
  const float *out = silero_vad_batch_jit_output (jit, error)->data;
  MorokVarValue b = { "b", streams };
  BenchProfile *profile = bench_profile_new ();
  for (guint r = 0; r < ROUNDS; r++)
    {
      for (guint i = 0; i < streams; i++)
        {
          memcpy (audio + i * (C + N) + C, chunk_of (speech, n, N, i, r), N * sizeof (float));
          if (r > 0)
            memcpy (state + i * S, out + i * (1 + S) + 1, S * sizeof (float));
          else
            memset (state + i * S, 0, S * sizeof (float));
        }
      bench_profile_add (profile,
                         silero_vad_batch_jit_execute_with_vars_profiled (jit, &b, 1, error));
    }
  double t[ROUNDS];
  for (guint r = 0; r < ROUNDS; r++)
    {
      double t0 = bench_now_us ();
      if (!silero_vad_batch_jit_execute_with_vars (jit, &b, 1, error))
        return FALSE;
      t[r] = (bench_now_us () - t0) / streams;
    }
  printf ("Silero 16 kHz, batched plan at %u streams: execute %.2f us per stream-chunk (median of "
          "%d)\n",
          streams, bench_median (t, ROUNDS), ROUNDS);
  bench_profile_print (profile, streams);
  bench_profile_free (profile);
  return TRUE;
}

int
main (int argc, char **argv)
{
  const char *version = argc > 1 ? argv[1] : "v5";
  gboolean profile = argc > 3 && strcmp (argv[2], "--profile") == 0;
  const char *dir = argc > 2 && !profile ? argv[2] : g_getenv ("MOROK_MODEL_DIR");
  g_autofree char *name = g_strdup_printf ("silero_vad_%s.onnx", version);
  g_autofree char *path = g_build_filename (dir ? dir : MOROK_SOURCE_ROOT "/models", name, NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (MorokSileroVad) vad = morok_silero_vad_load (path, &error);
  gsize n = 0;
  g_autofree float *speech
      = bench_read_wav (MOROK_SOURCE_ROOT "/tests/fixtures/speech-16k.wav", &n);
  if (!vad || !speech)
    {
      fprintf (stderr, "%s\n", vad ? "speech-16k.wav not readable" : error->message);
      return 1;
    }
  if (profile)
    {
      if (profile_batched (vad, (guint) atoi (argv[3]), speech, n, &error))
        return 0;
      fprintf (stderr, "%s\n", error->message);
      return 1;
    }
  /* the batched plan in f32 (or as MOROK_PRECISION says) and in each
   * reduced precision this CPU runs that suits Silero (not int8:
   * docs/morokvad.md, "Precision") */
  static const MorokPrecision reduced[]
      = { MOROK_PRECISION_BF16, MOROK_PRECISION_BF16X3, MOROK_PRECISION_F16 };
  MorokPrepareConfig *configs[1 + G_N_ELEMENTS (reduced)] = { morok_prepare_config_from_env () };
  MorokPrecision precision[G_N_ELEMENTS (configs)];
  guint n_configs = 1;
  for (guint p = 0; p < G_N_ELEMENTS (reduced); p++)
    {
      g_autoptr (GError) why = NULL;
      if (!morok_plan_precision_supported (morok_prepare_config_isa (configs[0]), reduced[p], &why))
        {
          printf ("(no %s column: %s)\n", morok_precision_name (reduced[p]), why->message);
          continue;
        }
      precision[n_configs] = reduced[p];
      configs[n_configs] = morok_prepare_config_from_env ();
      morok_prepare_config_set_precision (configs[n_configs++], reduced[p]);
    }
  static const guint counts[] = { 1, 8, 64, 256 };
  printf ("Silero %s 16 kHz, us per stream-chunk, medians of %d rounds:\n", version, ROUNDS);
  printf ("  %7s %12s", "streams", "batched");
  for (guint c = 1; c < n_configs; c++)
    printf (" %8s", morok_precision_name (precision[c]));
  printf (" %14s %14s\n", "independent", "one program");
  int status = 0;
  for (guint k = 0; k < G_N_ELEMENTS (counts) && status == 0; k++)
    {
      double b[G_N_ELEMENTS (configs)];
      for (guint c = 0; c < n_configs && status == 0; c++)
        status = (b[c] = batched (vad, counts[k], configs[c], speech, n, &error)) < 0;
      double i = status ? -1 : independent (vad, counts[k], FALSE, speech, n, &error);
      double o = i >= 0 ? independent (vad, counts[k], TRUE, speech, n, &error) : -1;
      if ((status = o < 0))
        break;
      printf ("  %7u %12.2f", counts[k], b[0]);
      for (guint c = 1; c < n_configs; c++)
        printf (" %8.2f", b[c]);
      printf (" %14.2f %14.2f\n", i, o);
    }
  if (status)
    fprintf (stderr, "%s\n", error->message);
  for (guint c = 0; c < n_configs; c++)
    morok_prepare_config_free (configs[c]);
  return status;
}
