/* SPDX-License-Identifier: MIT */
/* A wrapper with two symbolic variables, prepared once and executed with 50
 * combinations of their values: every output matches a reference, and
 * nothing is rebuilt or recompiled after prepare. */
#include "jit/morok-jit.h"
#include <math.h>

enum
{
  MAX_B = 4,
  MAX_T = 12,
  D = 5,
  CALLS = 50
};

/* Pooled features: x [b, t, D] -> sum over t of relu (x * scale + bias), [b, D]. */
typedef struct
{
  float scale;
  float bias[D];
} Pool;

#define POOL_JIT_INPUTS(X) X (x)
#define POOL_JIT_VARS(X) X (b, 1, MAX_B) X (t, 1, MAX_T)
MOROK_JIT_DECLARE (PoolJit, pool_jit, Pool, POOL_JIT_INPUTS, POOL_JIT_VARS)

static MorokTensor *
pool_build (Pool *model, MorokTensor *x, MorokVariable *b, MorokVariable *t, GError **error)
{
  MorokTensor *bias
      = morok_tensor_weight (x->graph, "bias", MOROK_DTYPE_F32, model->bias, (gint64[]){ D }, 1);
  MorokTensor *xs = morok_jit_try_shrink (morok_jit_try_shrink (x, 0, b, error), 1, t, error);
  MorokTensor *h
      = morok_tensor_add (morok_tensor_mul_scalar (xs, model->scale, error), bias, error);
  return morok_tensor_sum (morok_tensor_relu (h, error), (gint[]){ 1 }, 1, FALSE, error);
}

MOROK_JIT_DEFINE (PoolJit, pool_jit, Pool, POOL_JIT_INPUTS, POOL_JIT_VARS, pool_build, NULL)

/* x is read at its maximal layout [MAX_B, MAX_T, D] */
static double
reference (const Pool *m, const float *x, gint64 bi, gint64 t, gint64 d)
{
  double acc = 0;
  for (gint64 ti = 0; ti < t; ti++)
    {
      double h = (double) x[(bi * MAX_T + ti) * D + d] * m->scale + m->bias[d];
      acc += h > 0 ? h : 0;
    }
  return acc;
}

/* 50 calls with (b, t) drawn from [1, 4] x [1, 12] (the four corners
 * included) and new data each time; outputs agree to 1e-5 relative, and
 * the build and compile counters do not move after prepare. */
static void
test_fifty_combinations_one_prepare (void)
{
  GError *e = NULL;
  g_autoptr (GRand) rng = g_rand_new_with_seed (7);
  Pool model = { .scale = 1.5f };
  for (int d = 0; d < D; d++)
    model.bias[d] = (float) g_rand_double_range (rng, -0.5, 0.5);
  g_autoptr (PoolJit) jit = pool_jit_new (&model);
  g_autoptr (MorokInputSpec) spec = morok_input_spec_f32 (MOROK_SHAPE (MAX_B, MAX_T, D));
  g_assert_true (pool_jit_prepare (jit, spec, &e));
  g_assert_no_error (e);

  guint64 builds = morok_plan_build_count (), compiles = morok_compile_count_invocations ();
  guint64 hits = morok_compile_count_cache_hits ();
  float *x = pool_jit_x_mut (jit, &e)->data;
  const MorokBuffer *out = pool_jit_output (jit, &e);
  static const gint64 corners[][2] = { { 1, 1 }, { 1, MAX_T }, { MAX_B, 1 }, { MAX_B, MAX_T } };
  for (int call = 0; call < CALLS; call++)
    {
      gint64 b = call < 4 ? corners[call][0] : g_rand_int_range (rng, 1, MAX_B + 1);
      gint64 t = call < 4 ? corners[call][1] : g_rand_int_range (rng, 1, MAX_T + 1);
      for (int i = 0; i < MAX_B * MAX_T * D; i++)
        x[i] = (float) g_rand_double_range (rng, -1, 1);
      MorokVarValue vars[] = { { "t", t }, { "b", b } };
      g_assert_true (pool_jit_execute_with_vars (jit, vars, G_N_ELEMENTS (vars), &e));
      g_assert_no_error (e);
      g_assert_cmpint (out->shape[0], ==, b);
      g_assert_cmpint (out->shape[1], ==, D);
      const float *y = out->data;
      for (gint64 bi = 0; bi < b; bi++)
        for (gint64 d = 0; d < D; d++)
          {
            double want = reference (&model, x, bi, t, d);
            g_assert_cmpfloat_with_epsilon (y[bi * D + d], want, 1e-5 * fmax (1, fabs (want)));
          }
    }
  g_assert_cmpuint (morok_plan_build_count (), ==, builds);
  g_assert_cmpuint (morok_compile_count_invocations (), ==, compiles);
  g_assert_cmpuint (morok_compile_count_cache_hits (), ==, hits);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/jit/symbolic/fifty-combinations-one-prepare",
                   test_fifty_combinations_one_prepare);
  return g_test_run ();
}
