/* SPDX-License-Identifier: MIT */
/* Per-call overhead of the JIT wrapper: the median time of one call over a
 * plan with one tiny kernel (4 floats), for the plan itself, the wrapper's
 * _execute and _execute_with_vars, and a MorokJitRecurrent step over a
 * tiny element-wise cell. What remains above the kernel is the wrapper's
 * cost per call. Not a test: prints medians.
 *
 *   build/bench/bench-jit-overhead          (MOROK_THREADS=1 changes nothing here:
 *                                            tiny steps run on the calling thread)
 */
#include "jit/morok-jit-recurrent.h"
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum
{
  CALLS = 100000
};

static inline gint64
now_ns (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (gint64) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int
cmp_i64 (const void *a, const void *b)
{
  gint64 x = *(const gint64 *) a, y = *(const gint64 *) b;
  return x < y ? -1 : x > y;
}

static gint64
median (gint64 *v)
{
  qsort (v, CALLS, sizeof *v, cmp_i64);
  return v[CALLS / 2];
}

/* ---- a tiny kernel: x [4] -> x[:t] * 2 + 1 ---- */

typedef struct
{
  int unused;
} Tiny;

#define TINY_JIT_INPUTS(X) X (x)
#define TINY_JIT_VARS(X) X (t, 1, 4)
MOROK_JIT_DECLARE (TinyJit, tiny_jit, Tiny, TINY_JIT_INPUTS, TINY_JIT_VARS)

static MorokTensor *
tiny_build (Tiny *model, MorokTensor *x, MorokVariable *t, GError **error)
{
  MorokTensor *xt = morok_jit_try_shrink (x, 0, t, error);
  return morok_tensor_add_scalar (morok_tensor_mul_scalar (xt, 2, error), 1, error);
}

MOROK_JIT_DEFINE (TinyJit, tiny_jit, Tiny, TINY_JIT_INPUTS, TINY_JIT_VARS, tiny_build, NULL)

/* ---- a tiny recurrent cell: x [1, 2], h, c [1, 4] -> [2x | h/2 + x0 | c + h/2] ---- */

#define CELL_JIT_INPUTS(X) X (x) X (h) X (c)
#define CELL_JIT_VARS(X)
MOROK_JIT_DECLARE (CellJit, cell_jit, Tiny, CELL_JIT_INPUTS, CELL_JIT_VARS)

static MorokTensor *
cell_build (Tiny *model, MorokTensor *x, MorokTensor *h, MorokTensor *c, GError **error)
{
  MorokTensor *half = morok_tensor_mul_scalar (h, 0.5, error);
  MorokTensor *parts[]
      = { morok_tensor_mul_scalar (x, 2, error), morok_tensor_add_scalar (half, 1, error),
          morok_tensor_add (c, half, error) };
  return morok_tensor_cat (parts, 3, 1, error);
}

MOROK_JIT_DEFINE (CellJit, cell_jit, Tiny, CELL_JIT_INPUTS, CELL_JIT_VARS, cell_build, NULL)

static gint64 t[CALLS];

int
main (void)
{
  g_autoptr (GError) error = NULL;
  static Tiny model;
  g_autoptr (TinyJit) tiny = tiny_jit_new (&model);
  g_autoptr (MorokInputSpec) spec = morok_input_spec_f32 (MOROK_SHAPE (4));
  if (!tiny_jit_prepare (tiny, spec, &error))
    {
      fprintf (stderr, "prepare: %s\n", error->message);
      return 1;
    }
  MorokPlan *plan = morok_jit_plan (tiny_jit_jit (tiny));
  MorokVarValue vars[] = { { "t", 3 } };

  for (int i = 0; i < CALLS; i++)
    {
      gint64 t0 = now_ns ();
      t[i] = now_ns () - t0;
    }
  gint64 timer = median (t);
  for (int i = 0; i < CALLS; i++)
    {
      gint64 t0 = now_ns ();
      morok_plan_execute (plan, NULL, 0, NULL);
      t[i] = now_ns () - t0;
    }
  gint64 raw = median (t);
  for (int i = 0; i < CALLS; i++)
    {
      gint64 t0 = now_ns ();
      tiny_jit_execute (tiny, NULL);
      t[i] = now_ns () - t0;
    }
  gint64 execute = median (t);
  for (int i = 0; i < CALLS; i++)
    {
      vars[0].value = 1 + i % 4;
      gint64 t0 = now_ns ();
      tiny_jit_execute_with_vars (tiny, vars, 1, NULL);
      t[i] = now_ns () - t0;
    }
  gint64 with_vars = median (t);

  g_autoptr (CellJit) cell = cell_jit_new (&model);
  g_autoptr (MorokInputSpec) sx = morok_input_spec_f32 (MOROK_SHAPE (1, 2));
  g_autoptr (MorokInputSpec) sh = morok_input_spec_f32 (MOROK_SHAPE (1, 4));
  if (!cell_jit_prepare (cell, sx, sh, sh, &error))
    {
      fprintf (stderr, "prepare: %s\n", error->message);
      return 1;
    }
  g_autoptr (MorokJitRecurrent) rec = morok_jit_recurrent_new (cell, 1, 4, 2, &error);
  float *x = cell_jit_x_mut (cell, &error)->data;
  MorokPlan *cell_plan = morok_jit_plan (cell_jit_jit (cell));
  for (int i = 0; i < CALLS; i++)
    {
      gint64 t0 = now_ns ();
      morok_plan_execute (cell_plan, NULL, 0, NULL);
      t[i] = now_ns () - t0;
    }
  gint64 cell_raw = median (t);
  for (int i = 0; i < CALLS; i++)
    {
      gint64 t0 = now_ns ();
      x[0] = x[1] = 0.25f;
      morok_jit_recurrent_step (rec, NULL);
      t[i] = now_ns () - t0;
    }
  gint64 step = median (t);

  printf ("median of %d calls, ns (clock_gettime pair: %" G_GINT64_FORMAT " ns, included)\n", CALLS,
          timer);
  printf ("  one tiny kernel (plan of %u kernel):\n", morok_plan_n_steps (plan));
  printf ("    morok_plan_execute            %6" G_GINT64_FORMAT "\n", raw);
  printf ("    _execute                      %6" G_GINT64_FORMAT "\n", execute);
  printf ("    _execute_with_vars (t)        %6" G_GINT64_FORMAT "\n", with_vars);
  printf ("  recurrent cell, output [2 | 4 | 4] (plan of %u kernel):\n",
          morok_plan_n_steps (cell_plan));
  printf ("    morok_plan_execute            %6" G_GINT64_FORMAT "\n", cell_raw);
  printf ("    MorokJitRecurrent step        %6" G_GINT64_FORMAT "\n", step);
  return 0;
}
