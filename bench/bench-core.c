/* SPDX-License-Identifier: MIT */
/* Core numbers: prepare time of a 20-operation graph, cold (the compiler
 * runs) and warm (served from the disk cache), and the kernel count and
 * per-call execute time of a small MLP. Not a test: prints medians.
 *
 *   build/bench/bench-core            (MOROK_THREADS=1 for one thread)
 */
#include "bench-util.h"
#include "prepare/morok-prepare.h"
#include "tensor/morok-tensor.h"
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <time.h>

/* 20 operations: element-wise chains, a reduction, views; @salt changes one
 * constant so each cold run compiles new source. */
static MorokPlan *
prepare_20_ops (double salt, const MorokPlanOptions *opts, double *out_ms)
{
  MorokGraph *g = morok_graph_new ();
  const MorokSym *sh[2];
  morok_tensor_syms (g, (gint64[]){ 64, 48 }, 2, sh);
  MorokTensor *x = morok_tensor_input (g, "x", MOROK_DTYPE_F32, sh, 2);
  MorokTensor *y = x;
  for (int i = 0; i < 6; i++) /* 18 element-wise ops */
    y = morok_tensor_tanh (
        morok_tensor_add_scalar (morok_tensor_mul_scalar (y, 0.9 + salt, NULL), 0.1 * i, NULL),
        NULL);
  y = morok_tensor_sum (morok_tensor_transpose (y, 0, 1, NULL), (gint[]){ 1 }, 1, FALSE,
                        NULL); /* 2 */
  double t0 = bench_now_us ();
  MorokPlan *plan = morok_plan_build (g, &y, 1, &x, 1, opts, NULL);
  *out_ms = (bench_now_us () - t0) / 1e3;
  return plan;
}

static void
bench_prepare (void)
{
  g_autofree char *dir = g_dir_make_tmp ("morok-bench-XXXXXX", NULL);
  MorokPlanOptions opts;
  morok_plan_options_init (&opts);
  opts.compile.cache_dir = dir;
  opts.compile.use_cache = TRUE;
  enum
  {
    RUNS = 9
  };
  double cold[RUNS], warm[RUNS];
  for (int i = 0; i < RUNS; i++)
    {
      morok_plan_free (prepare_20_ops (i * 1e-3, &opts, &cold[i])); /* new source: compiles */
      morok_plan_free (prepare_20_ops (i * 1e-3, &opts, &warm[i])); /* same source: cache hit */
    }
  printf ("prepare, 20-op graph: cold %.1f ms, warm (cache hit) %.2f ms  (median of %d)\n",
          bench_median (cold, RUNS), bench_median (warm, RUNS), RUNS);
}

static void
bench_mlp (void)
{
  enum
  {
    IN = 64,
    H = 128,
    OUT = 10,
    B = 8
  };
  static float w1[H * IN], w2[H * H], w3[OUT * H], b1[H], b2[H], b3[OUT];
  for (int i = 0; i < H * H; i++)
    w2[i] = sinf (i) * 0.1f;
  for (int i = 0; i < H * IN; i++)
    w1[i] = cosf (i) * 0.1f;
  for (int i = 0; i < OUT * H; i++)
    w3[i] = sinf (i * 0.5f) * 0.1f;
  MorokGraph *g = morok_graph_new ();
  const MorokSym *sh[2];
  morok_tensor_syms (g, (gint64[]){ B, IN }, 2, sh);
  MorokTensor *x = morok_tensor_input (g, "x", MOROK_DTYPE_F32, sh, 2);
#define W(name, d, ...)                                                                            \
  morok_tensor_weight (g, name, MOROK_DTYPE_F32, d, (gint64[]){ __VA_ARGS__ },                     \
                       G_N_ELEMENTS (((gint64[]){ __VA_ARGS__ })))
  MorokTensor *h = morok_tensor_relu (
      morok_tensor_linear (x, W ("w1", w1, H, IN), W ("b1", b1, H), NULL), NULL);
  h = morok_tensor_relu (morok_tensor_linear (h, W ("w2", w2, H, H), W ("b2", b2, H), NULL), NULL);
  MorokTensor *y = morok_tensor_linear (h, W ("w3", w3, OUT, H), W ("b3", b3, OUT), NULL);
  g_autoptr (MorokPlan) plan = morok_plan_build (g, &y, 1, &x, 1, NULL, NULL);
  if (!plan)
    return;
  enum
  {
    CALLS = 20000
  };
  static double t[CALLS];
  for (int i = 0; i < CALLS; i++)
    {
      double t0 = bench_now_us ();
      morok_plan_execute (plan, NULL, 0, NULL);
      t[i] = bench_now_us () - t0;
    }
  printf ("MLP [%d x %d] -> %d -> %d -> %d: %u kernels, execute median %.2f us (%d calls)\n", B, IN,
          H, H, OUT, morok_plan_n_steps (plan), bench_median (t, CALLS), CALLS);
}

int
main (void)
{
  bench_prepare ();
  bench_mlp ();
  return 0;
}
