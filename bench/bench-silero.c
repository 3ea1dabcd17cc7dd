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
#include "bench-util.h"
#include "prepare/morok-prepare.h"
#include "jit/morok-jit.h"
#include "models/silero-vad.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PASSES 20

/* The samples of a 16-bit PCM mono WAV (no checks beyond the chunk walk:
 * the fixtures are known). */
static float *
read_wav (const char *path, gsize *out_n)
{
  g_autofree guint8 *d = NULL;
  gsize len;
  if (!g_file_get_contents (path, (char **)&d, &len, NULL) || len < 12)
    return NULL;
  for (gsize at = 12; at + 8 <= len;)
    {
      gsize size = d[at + 4] | d[at + 5] << 8 | d[at + 6] << 16 | (gsize)d[at + 7] << 24;
      if (size > len - at - 8)
        return NULL;
      if (memcmp (d + at, "data", 4) == 0)
        {
          *out_n = size / 2;
          float *s = g_new (float, *out_n);
          for (gsize i = 0; i < *out_n; i++)
            s[i] = (gint16)(d[at + 8 + 2 * i] | d[at + 9 + 2 * i] << 8) / 32768.0f;
          return s;
        }
      at += 8 + size + (size & 1);
    }
  return NULL;
}

/* One kernel's times over the profiled passes. */
typedef struct
{
  const char *name;
  double flops, bytes;
  GArray *us; /* double, one per chunk and profiled pass */
  double median;
} Row;

static int
cmp_row (const void *a, const void *b)
{
  const Row *x = a, *y = b;
  return x->median > y->median ? -1 : x->median < y->median;
}

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
  guint rate = argc > 2 ? (guint)atoi (argv[2]) : 16000;
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
  g_autofree float *samples = read_wav (wav, &n);
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
  morok_tensor_syms (g, (gint64[]){ (gint64)S }, 1, ss);
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
  GArray *rows = g_array_new (FALSE, TRUE, sizeof (Row));
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
          GArray *prof = morok_plan_execute_profiled (plan, NULL, 0, NULL);
          if (rows->len == 0)
            for (guint i = 0; i < prof->len; i++)
              {
                const MorokKernelProfile *p = &g_array_index (prof, MorokKernelProfile, i);
                Row r = { p->name, p->flops, p->bytes, g_array_new (FALSE, FALSE, sizeof (double)),
                          0 };
                g_array_append_val (rows, r);
              }
          for (guint i = 0; i < prof->len; i++)
            {
              double us = g_array_index (prof, MorokKernelProfile, i).elapsed_ns / 1e3;
              g_array_append_val (g_array_index (rows, Row, i).us, us);
            }
          g_array_unref (prof);
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
  double total = 0;
  for (guint i = 0; i < rows->len; i++)
    {
      Row *r = &g_array_index (rows, Row, i);
      total += r->median = median_of (r->us);
    }
  g_array_sort (rows, cmp_row);
  printf ("profile (median per chunk over %d profiled passes):\n%8s %6s %10s %10s  %s\n", PASSES,
          "us", "share", "MFLOP", "kB", "kernel");
  for (guint i = 0; i < rows->len; i++)
    {
      Row *r = &g_array_index (rows, Row, i);
      printf ("%8.2f %5.1f%% %10.3f %10.1f  %s\n", r->median, 100.0 * r->median / total,
              r->flops / 1e6, r->bytes / 1e3, r->name);
      g_array_unref (r->us);
    }
  printf ("%8.2f          sum of the kernels' medians\n", total);
  g_array_unref (rows);
  g_array_unref (exec_us);
  g_array_unref (step_us);
  return 0;
}
