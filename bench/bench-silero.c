/* SPDX-License-Identifier: MIT */
/* Silero VAD per-chunk cost: prepares one plan (version, rate), runs it over
 * the fixture WAV chunk by chunk with the state carried, as a streaming VAD
 * does, and prints the execute time per chunk, the kernel count, and a
 * per-kernel profile summed over the whole file. Not a test. One thread
 * unless MOROK_THREADS says otherwise; the other MOROK_* settings of
 * docs/jit-wrapper.md (MOROK_ISA, MOROK_OPT, MOROK_DUMP_DIR...) apply.
 *
 *   build/bench/bench-silero [v5|v6|v4] [16000|8000] [MODEL_DIR]
 *   (MODEL_DIR defaults to $MOROK_MODEL_DIR, then models/ of the source tree)
 */
#include "bench-profile.h"
#include "bench-wav.h"
#include "prepare/morok-prepare.h"
#include "jit/morok-jit.h"
#include "models/silero-vad.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PASSES 20

static double
median_of (GArray *v)
{
  qsort (v->data, v->len, sizeof (double), bench_cmp_double);
  return g_array_index (v, double, v->len / 2);
}

int
main (int argc, char **argv)
{
  g_setenv ("MOROK_THREADS", "1", FALSE);
  const char *version = argc > 1 ? argv[1] : "v5";
  guint rate = argc > 2 ? (guint) atoi (argv[2]) : 16000;
  const char *dir = argc > 3 ? argv[3] : g_getenv ("MOROK_MODEL_DIR");
  g_autofree char *default_dir = g_build_filename (MOROK_SOURCE_ROOT, "models", NULL);
  g_autofree char *file = g_strdup_printf ("silero_vad_%s.onnx", version);
  g_autofree char *path = g_build_filename (dir ? dir : default_dir, file, NULL);
  g_autofree char *wav_name = g_strdup_printf ("speech-%uk.wav", rate / 1000);
  g_autofree char *wav = g_build_filename (MOROK_SOURCE_ROOT, "tests", "fixtures", wav_name, NULL);
  g_autoptr (GError) error = NULL;

  g_autoptr (MorokSileroVad) vad = morok_silero_vad_load (path, &error);
  if (!vad)
    {
      fprintf (stderr, "bench-silero: %s\n", error->message);
      return 1;
    }
  gsize n;
  g_autofree float *samples = bench_read_wav (wav, &n);
  if (!samples)
    {
      fprintf (stderr, "bench-silero: cannot read %s\n", wav);
      return 1;
    }
  guint C = morok_silero_vad_context_len (vad, rate), N = morok_silero_vad_chunk_len (vad, rate);
  gsize S = morok_silero_vad_state_len (vad);

  MorokGraph *g = morok_graph_new ();
  const MorokSym *as[2], *ss[1];
  morok_tensor_syms (g, (gint64[]){ 1, C + N }, 2, as);
  morok_tensor_syms (g, (gint64[]){ (gint64) S }, 1, ss);
  MorokTensor *in[] = { morok_tensor_input (g, "audio", MOROK_DTYPE_F32, as, 2),
                        morok_tensor_input (g, "state", MOROK_DTYPE_F32, ss, 1) };
  MorokTensor *out = morok_silero_vad_forward (vad, rate, in[0], in[1], &error);
  if (!out)
    {
      morok_graph_free (g);
      fprintf (stderr, "bench-silero: %s\n", error->message);
      return 1;
    }
  /* MOROK_ISA, MOROK_OPT, MOROK_DUMP_DIR... as a JIT wrapper would read them */
  g_autoptr (MorokPrepareConfig) config = morok_prepare_config_from_env ();
  MorokPlanOptions opts;
  if (!morok_prepare_config_to_plan_options (config, &opts, &error))
    {
      morok_graph_free (g);
      fprintf (stderr, "bench-silero: %s\n", error->message);
      return 1;
    }
  double t0 = bench_now_us ();
  g_autoptr (MorokPlan) plan = morok_plan_build (g, &out, 1, in, 2, &opts, &error);
  if (!plan)
    {
      fprintf (stderr, "bench-silero: %s\n", error->message);
      return 1;
    }
  double prepare_ms = (bench_now_us () - t0) / 1e3;

  float *audio = morok_plan_input (plan, 0)->data, *state = morok_plan_input (plan, 1)->data;
  const float *o = morok_plan_output (plan, 0)->data;
  gsize chunks = (n + N - 1) / N;
  GArray *exec_us = g_array_sized_new (FALSE, FALSE, sizeof (double), chunks * PASSES);
  GArray *step_us = g_array_sized_new (FALSE, FALSE, sizeof (double), chunks * PASSES);
  BenchProfile *profile = bench_profile_new ();
  guint speech = 0;
  /* PASSES timed passes over the file, then PASSES profiled ones; medians,
   * since other processes share the machine */
  for (guint pass = 0; pass < 2 * PASSES; pass++)
    {
      gboolean profiled = pass >= PASSES;
      memset (audio, 0, (C + N) * sizeof (float));
      memset (state, 0, S * sizeof (float));
      for (gsize at = 0; at < n; at += N)
        {
          double s0 = bench_now_us ();
          gsize len = MIN (N, n - at);
          memmove (audio, audio + N, C * sizeof (float));
          memcpy (audio + C, samples + at, len * sizeof (float));
          memset (audio + C + len, 0, (N - len) * sizeof (float));
          if (!profiled)
            {
              double e0 = bench_now_us ();
              morok_plan_execute (plan, NULL, 0, NULL);
              double e1 = bench_now_us ();
              memcpy (state, o + 1, S * sizeof (float));
              double s1 = bench_now_us ();
              g_array_append_vals (exec_us, (double[]){ e1 - e0 }, 1);
              g_array_append_vals (step_us, (double[]){ s1 - s0 }, 1);
              speech += pass == 0 && o[0] >= 0.5f;
              continue;
            }
          bench_profile_add (profile, morok_plan_execute_profiled (plan, NULL, 0, NULL));
          memcpy (state, o + 1, S * sizeof (float));
        }
    }
  printf ("silero %s %u Hz (%s): %u kernels, arena %" G_GSIZE_FORMAT " bytes, %u thread(s), "
          "prepare %.0f ms\n",
          morok_silero_vad_version_name (morok_silero_vad_version (vad)), rate, version,
          morok_plan_n_steps (plan), morok_plan_arena_bytes (plan), morok_thread_pool_size (),
          prepare_ms);
  double exec_med = median_of (exec_us);
  printf ("execute per chunk: median %.2f us (p10 %.2f, p90 %.2f); whole step (pack, execute, "
          "state) median %.2f us; %" G_GSIZE_FORMAT " chunks x %d passes, %u chunks >= 0.5\n",
          exec_med, g_array_index (exec_us, double, exec_us->len / 10),
          g_array_index (exec_us, double, exec_us->len * 9 / 10), median_of (step_us), chunks,
          PASSES, speech);
  bench_profile_print (profile, 1);
  bench_profile_free (profile);
  g_array_unref (exec_us);
  g_array_unref (step_us);
  return 0;
}
