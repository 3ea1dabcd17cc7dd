/* SPDX-License-Identifier: MIT */
/* Morok's side of bench/compare-gigaam.sh: the full-size GigaAM v3 encoder
 * (scripts/gigaam/make-bench-model.py) through GigaAmEncoderJit, waveform to
 * encoder output [1, 768, T'] (log-mel front-end, subsampling, 16 Conformer
 * layers, the transpose to channels first: the whole plan), batch 1.
 * Not a test.
 *
 *   build/bench/bench-gigaam [--cold] MODEL INPUTS [REPS [THREADS...]]
 *
 * INPUTS is make-bench-model.py's gigaam-bench-inputs.safetensors. For each
 * thread count (default 1 and 2; PrepareConfig threads, the pool has all
 * cores unless MOROK_THREADS says otherwise) one plan is prepared with t
 * bound at 30 s and serves every length: the 2 s check (largest absolute
 * difference from the float64 reference, first thread count only), then
 * 10 s and 30 s (or only $BENCH_GIGAAM_SECONDS), one untimed and REPS
 * (default 5) timed executes each:
 *
 *   RESULT morok threads=1 seconds=10 median=0.8312 min=0.8123
 *
 * (morok-f16, morok-int8, ... under MOROK_PRECISION=f16, int8, ...).
 *
 * With one thread ($BENCH_GIGAAM_PROFILE_THREADS), a per-kernel profile of
 * 10 s ($BENCH_GIGAAM_PROFILE_S seconds; median of 3 profiled executes; the
 * top 10, or $BENCH_GIGAAM_TOP, and the totals by kind). --cold first prepares a
 * throwaway plan into an empty temporary kernel cache (cold: clang runs),
 * and then the timed plans from that cache (warm for the first thread count).
 * The other MOROK_* settings of docs/jit-wrapper.md apply. */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench-util.h"
#include "io/safetensors.h"
#include "models/gigaam-encoder-jit.h"
#include "models/gigaam.h"

#define PROFILE_REPS 3

static gboolean
fail (GError *error)
{
  fprintf (stderr, "bench-gigaam: %s\n", error ? error->message : "failed");
  return FALSE;
}

/* Writes @n samples into the plan's input, lengths[0] = n. */
static gboolean
load_input (GigaAmEncoderJit *jit, const float *samples, gint64 n, GError **error)
{
  MorokBuffer *wav = gigaam_encoder_jit_wav_mut (jit, error);
  MorokBuffer *len = wav ? gigaam_encoder_jit_lengths_mut (jit, error) : NULL;
  if (!len)
    return FALSE;
  memcpy (wav->data, samples, n * sizeof (float));
  ((gint64 *) len->data)[0] = n;
  return TRUE;
}

static gboolean
execute (GigaAmEncoderJit *jit, gint64 n, GError **error)
{
  MorokVarValue vars[] = { { "b", 1 }, { "t", n } };
  return gigaam_encoder_jit_execute_with_vars (jit, vars, G_N_ELEMENTS (vars), error);
}

static GigaAmEncoderJit *
prepare (MorokGigaAm *model, guint threads, const char *cache_dir, double *out_s, GError **error)
{
  GigaAmEncoderJit *jit = gigaam_encoder_jit_new (morok_gigaam_ref (model));
  g_autoptr (MorokPrepareConfig) config = morok_prepare_config_from_env ();
  morok_prepare_config_set_threads (config, threads);
  if (cache_dir)
    morok_prepare_config_set_cache_dir (config, cache_dir);
  g_autoptr (MorokInputSpec) wav
      = morok_input_spec_f32 (MOROK_SHAPE (1, morok_gigaam_max_samples (model)));
  g_autoptr (MorokInputSpec) lengths = morok_input_spec_i64 (MOROK_SHAPE (1));
  double t0 = (bench_now_us () / 1e6);
  if (!gigaam_encoder_jit_prepare_with_config (jit, wav, lengths, config, error))
    {
      gigaam_encoder_jit_free (jit);
      return NULL;
    }
  *out_s = (bench_now_us () / 1e6) - t0;
  return jit;
}

/* Largest |output - check.encoded| on the 2 s check input. */
static gboolean
check (GigaAmEncoderJit *jit, MorokSafetensors *inputs, GError **error)
{
  const MorokSafetensor *a = morok_safetensors_get (inputs, "audio.check", error);
  const MorokSafetensor *r = a ? morok_safetensors_get (inputs, "check.encoded", error) : NULL;
  g_autofree float *audio = r ? morok_safetensor_dup_f32 (a, error) : NULL;
  g_autofree float *ref = audio ? morok_safetensor_dup_f32 (r, error) : NULL;
  if (!ref || !load_input (jit, audio, a->n_elements, error)
      || !execute (jit, a->n_elements, error))
    return FALSE;
  const MorokBuffer *out = gigaam_encoder_jit_output (jit, error);
  if (!out)
    return FALSE;
  if (out->rank != 3 || r->rank != 3 || out->shape[1] != r->dims[1] || out->shape[2] != r->dims[2])
    {
      g_set_error (error, MOROK_JIT_ERROR, MOROK_JIT_ERROR_RUNTIME, "check: output shape differs");
      return FALSE;
    }
  const float *o = out->data;
  double err = 0, big = 0;
  for (gint64 i = 0; i < r->n_elements; i++)
    {
      double d = fabs ((double) o[i] - ref[i]);
      err = d <= err ? err : d; /* a NaN sticks */
      big = fmax (big, fabs (ref[i]));
    }
  printf ("morok check: %" G_GINT64_FORMAT "x%" G_GINT64_FORMAT "x%" G_GINT64_FORMAT
          " encoder output of 2 s, max abs error %.2e against the float64 reference (%.2e of its"
          " max |x|)\n",
          out->shape[0], out->shape[1], out->shape[2], err, err / big);
  return TRUE;
}

/* "morok", or "morok-f16" under MOROK_PRECISION=f16 (bf16, bf16x3, int8 alike) */
static const char *
side (void)
{
  static char name[32];
  const char *p = g_getenv ("MOROK_PRECISION");
  if (!p || !*p || g_str_equal (p, "f32"))
    return "morok";
  g_snprintf (name, sizeof name, "morok-%s", p);
  return name;
}

static guint
profile_threads (void)
{
  const char *t = g_getenv ("BENCH_GIGAAM_PROFILE_THREADS");
  return t ? (guint) atoi (t) : 1;
}

static gboolean
time_lengths (GigaAmEncoderJit *jit, guint threads, const float *bench, guint reps, GError **error)
{
  static const int seconds[] = { 10, 30 };
  g_autofree double *t = g_new (double, reps);
  for (guint s = 0; s < G_N_ELEMENTS (seconds); s++)
    {
      /* $BENCH_GIGAAM_SECONDS: only that length */
      const char *only = g_getenv ("BENCH_GIGAAM_SECONDS");
      if (only && atoi (only) != seconds[s])
        continue;
      gint64 n = seconds[s] * 16000;
      if (!load_input (jit, bench, n, error) || !execute (jit, n, error))
        return FALSE;
      double best = INFINITY;
      for (guint r = 0; r < reps; r++)
        {
          double t0 = (bench_now_us () / 1e6);
          if (!execute (jit, n, error))
            return FALSE;
          t[r] = (bench_now_us () / 1e6) - t0;
          best = fmin (best, t[r]);
        }
      printf ("RESULT %s threads=%u seconds=%d median=%.4f min=%.4f\n", side (), threads,
              seconds[s], bench_median (t, reps), best);
      fflush (stdout);
    }
  return TRUE;
}

typedef struct
{
  const char *name;
  double flops;
  double ms[PROFILE_REPS];
  double median;
} Row;

static int
cmp_row (const void *a, const void *b)
{
  const Row *x = a, *y = b;
  return x->median > y->median ? -1 : x->median < y->median;
}

/* Each kernel's flops at exactly @n samples: the plan's estimates are at the
 * variables' upper bounds, so they come from a second plan, bound at t = n
 * (from the default kernel cache after its first run), whose kernels must
 * have the same names in the same order. NULL if they do not. */
static double *
flops_at (MorokGigaAm *model, gint64 n, const float *bench, guint n_kernels, GArray *names,
          GError **error)
{
  g_autoptr (GigaAmEncoderJit) jit = gigaam_encoder_jit_new (morok_gigaam_ref (model));
  gigaam_encoder_jit_with_t_bound (jit, n);
  g_autoptr (MorokPrepareConfig) config = morok_prepare_config_from_env ();
  morok_prepare_config_set_threads (config, 1);
  g_autoptr (MorokInputSpec) wav = morok_input_spec_f32 (MOROK_SHAPE (1, n));
  g_autoptr (MorokInputSpec) lengths = morok_input_spec_i64 (MOROK_SHAPE (1));
  if (!gigaam_encoder_jit_prepare_with_config (jit, wav, lengths, config, error)
      || !load_input (jit, bench, n, error))
    return NULL;
  MorokVarValue vars[] = { { "b", 1 }, { "t", n } };
  g_autoptr (GArray) prof
      = gigaam_encoder_jit_execute_with_vars_profiled (jit, vars, G_N_ELEMENTS (vars), error);
  if (!prof)
    return NULL;
  if (prof->len != n_kernels)
    return NULL;
  double *flops = g_new (double, n_kernels);
  for (guint i = 0; i < n_kernels; i++)
    {
      const MorokKernelProfile *p = &g_array_index (prof, MorokKernelProfile, i);
      if (!g_str_equal (p->name, g_array_index (names, const char *, i)))
        {
          g_free (flops);
          return NULL;
        }
      flops[i] = p->flops;
    }
  return flops;
}

static gboolean
profile (GigaAmEncoderJit *jit, MorokGigaAm *model, const float *bench, guint threads,
         GError **error)
{
  const char *seconds = g_getenv ("BENCH_GIGAAM_PROFILE_S");
  const gint64 n = (seconds ? atoi (seconds) : 10) * 16000;
  const gint64 frames = morok_gigaam_encoded_frames (model, n);
  if (!load_input (jit, bench, n, error))
    return FALSE;
  MorokVarValue vars[] = { { "b", 1 }, { "t", n } };
  g_autoptr (GArray) rows = g_array_new (FALSE, TRUE, sizeof (Row));
  for (guint rep = 0; rep < PROFILE_REPS; rep++)
    {
      g_autoptr (GArray) prof
          = gigaam_encoder_jit_execute_with_vars_profiled (jit, vars, G_N_ELEMENTS (vars), error);
      if (!prof)
        return FALSE;
      if (rep == 0)
        g_array_set_size (rows, prof->len);
      for (guint i = 0; i < prof->len; i++)
        {
          const MorokKernelProfile *p = &g_array_index (prof, MorokKernelProfile, i);
          Row *r = &g_array_index (rows, Row, i);
          r->name = p->name;
          r->ms[rep] = p->elapsed_ns / 1e6;
        }
    }
  g_autoptr (GArray) names = g_array_new (FALSE, FALSE, sizeof (const char *));
  for (guint i = 0; i < rows->len; i++)
    g_array_append_val (names, g_array_index (rows, Row, i).name);
  g_autofree double *flops = flops_at (model, n, bench, rows->len, names, error);
  if (!flops)
    {
      if (error && *error)
        return FALSE;
      fprintf (stderr, "bench-gigaam: the %d s plan has other kernels; no GFLOP figures\n",
               (int) (n / 16000));
    }
  for (guint i = 0; i < rows->len; i++)
    g_array_index (rows, Row, i).flops = flops ? flops[i] : NAN;
  double total = 0, mm_ms = 0, mm_flops = 0, all_flops = 0;
  guint n_mm = 0;
  for (guint i = 0; i < rows->len; i++)
    {
      Row *r = &g_array_index (rows, Row, i);
      total += r->median = bench_median (r->ms, PROFILE_REPS);
      all_flops += r->flops;
      if (strstr (r->name, "matmul"))
        mm_ms += r->median, mm_flops += r->flops, n_mm++;
    }
  g_array_sort (rows, cmp_row);
  const char *top_env = g_getenv ("BENCH_GIGAAM_TOP");
  guint top = top_env ? (guint) atoi (top_env) : 10;
  printf ("morok profile, %d s (T' = %" G_GINT64_FORMAT "), %u thread(s), %u kernels, median of %d "
          "profiled executes;\nGFLOP: the estimates of the same kernels in a plan bound at %d s"
          ":\n%9s %6s %9s %8s  %s\n",
          (int) (n / 16000), frames, threads, rows->len, PROFILE_REPS, (int) (n / 16000), "ms",
          "share", "GFLOP", "GFLOP/s", "kernel");
  for (guint i = 0; i < MIN (top, rows->len); i++)
    {
      Row *r = &g_array_index (rows, Row, i);
      printf ("%9.2f %5.1f%% %9.3f %8.1f  %.100s\n", r->median, 100 * r->median / total,
              r->flops / 1e9, r->flops / r->median / 1e6, r->name);
    }
  printf ("%9.2f %5.1f%% %9.3f %8.1f  all %u matmul kernels\n", mm_ms, 100 * mm_ms / total,
          mm_flops / 1e9, mm_flops / mm_ms / 1e6, n_mm);
  printf ("%9.2f %5.1f%% %9.3f %8.1f  all %u other kernels\n", total - mm_ms,
          100 * (total - mm_ms) / total, (all_flops - mm_flops) / 1e9,
          (all_flops - mm_flops) / (total - mm_ms) / 1e6, rows->len - n_mm);
  printf ("%9.2f                     sum of the kernels' medians\n", total);
  return TRUE;
}

static void
remove_dir (const char *dir)
{
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;
  while (d && (name = g_dir_read_name (d)))
    {
      g_autofree char *path = g_build_filename (dir, name, NULL);
      if (g_file_test (path, G_FILE_TEST_IS_DIR))
        remove_dir (path);
      else
        g_remove (path);
    }
  g_rmdir (dir);
}

int
main (int argc, char **argv)
{
  gboolean cold = argc > 1 && g_str_equal (argv[1], "--cold");
  argv += cold, argc -= cold;
  if (argc < 3)
    {
      fprintf (stderr, "usage: bench-gigaam [--cold] MODEL INPUTS [REPS [THREADS...]]\n");
      return 2;
    }
  guint reps = argc > 3 ? (guint) atoi (argv[3]) : 5;
  guint threads[8] = { 1, 2 }, n_threads = 2;
  if (argc > 4)
    for (n_threads = 0; n_threads < G_N_ELEMENTS (threads) && n_threads + 4 < (guint) argc;
         n_threads++)
      threads[n_threads] = (guint) atoi (argv[4 + n_threads]);
  if (reps < 1)
    reps = 1;
  g_autoptr (GError) error = NULL;

  double t0 = (bench_now_us () / 1e6);
  g_autoptr (MorokGigaAm) model = morok_gigaam_load (argv[1], &error);
  g_autoptr (MorokSafetensors) inputs = model ? morok_safetensors_open (argv[2], &error) : NULL;
  const MorokSafetensor *b = inputs ? morok_safetensors_get (inputs, "audio.bench", &error) : NULL;
  g_autofree float *bench = b ? morok_safetensor_dup_f32 (b, &error) : NULL;
  if (!bench)
    return !fail (error);
  if (b->n_elements < 30 * 16000)
    {
      fprintf (stderr, "bench-gigaam: audio.bench is shorter than 30 s\n");
      return 1;
    }
  morok_gigaam_set_limits (model, 1, 30 * 16000);
  const MorokGigaAmConfig *cfg = morok_gigaam_config (model);
  printf ("morok: %s, %u layers, d_model %u, %u heads, ff %u, kernel %u; loaded in %.2f s; "
          "pool of %u thread(s)\n",
          morok_gigaam_path (model), cfg->n_layers, cfg->d_model, cfg->n_heads, cfg->ff_dim,
          cfg->conv_kernel, (bench_now_us () / 1e6) - t0, morok_thread_pool_size ());

  g_autofree char *cache_dir = NULL;
  if (cold)
    {
      cache_dir = g_dir_make_tmp ("morok-bench-gigaam-XXXXXX", &error);
      double s;
      GigaAmEncoderJit *jit = cache_dir ? prepare (model, threads[0], cache_dir, &s, &error) : NULL;
      if (!jit)
        return !fail (error);
      printf ("morok prepare, %u thread(s), cold (empty kernel cache): %.2f s, %u kernels\n",
              threads[0], s, gigaam_encoder_jit_prepared_kernels (jit, NULL));
      gigaam_encoder_jit_free (jit);
    }
  for (guint i = 0; i < n_threads; i++)
    {
      double s;
      g_autoptr (GigaAmEncoderJit) jit = prepare (model, threads[i], cache_dir, &s, &error);
      if (!jit)
        return !fail (error);
      printf ("morok prepare, %u thread(s)%s: %.2f s, %u kernels, t bound %" G_GINT64_FORMAT
              " samples\n",
              threads[i], cold && i == 0 ? ", warm (kernel cache filled just before)" : "", s,
              gigaam_encoder_jit_prepared_kernels (jit, NULL), morok_gigaam_max_samples (model));
      fflush (stdout);
      if ((i == 0 && !check (jit, inputs, &error))
          || !time_lengths (jit, threads[i], bench, reps, &error)
          || (threads[i] == profile_threads () && !profile (jit, model, bench, threads[i], &error)))
        return !fail (error);
    }
  if (cache_dir)
    remove_dir (cache_dir);
  return 0;
}
