/* SPDX-License-Identifier: MIT */
/* The smallest useful Morok program: build a graph once (a two-layer MLP
 * over a variable number of frames), prepare it, then replay the plan with
 * new input and a new frame count per call, as a streaming element does. */
#include "prepare/morok-prepare.h"
#include "tensor/morok-tensor.h"
#include <math.h>
#include <stdio.h>
#include <time.h>

#define IN 40
#define HIDDEN 64
#define OUT 4
#define MAX_FRAMES 32

static double
now_us (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

int
main (void)
{
  g_autoptr (GError) error = NULL;
  /* weights: a fixed pattern, so the demo prints the same numbers everywhere */
  static float w1[HIDDEN * IN], b1[HIDDEN], w2[OUT * HIDDEN], b2[OUT];
  for (int i = 0; i < HIDDEN * IN; i++)
    w1[i] = sinf (i * 0.37f) * 0.2f;
  for (int i = 0; i < HIDDEN; i++)
    b1[i] = cosf (i * 0.11f) * 0.1f;
  for (int i = 0; i < OUT * HIDDEN; i++)
    w2[i] = cosf (i * 0.53f) * 0.3f;
  for (int i = 0; i < OUT; i++)
    b2[i] = 0.05f * i;

  /* frames [t, IN] -> softmax (w2 · tanh (w1 · x + b1) + b2) per frame */
  MorokGraph *g = morok_graph_new ();
  MorokSymPool *pool = morok_graph_sym_pool (g);
  MorokVariable *t = morok_variable_new (pool, "t", 1, MAX_FRAMES);
  const MorokSym *shape[] = { morok_sym_var (t), morok_sym_const (pool, IN) };
  MorokTensor *x = morok_tensor_input (g, "frames", MOROK_DTYPE_F32, shape, 2);
  MorokTensor *h = morok_tensor_tanh (
      morok_tensor_linear (
          x, morok_tensor_weight (g, "w1", MOROK_DTYPE_F32, w1, (gint64[]){ HIDDEN, IN }, 2),
          morok_tensor_weight (g, "b1", MOROK_DTYPE_F32, b1, (gint64[]){ HIDDEN }, 1), &error),
      &error);
  MorokTensor *y = morok_tensor_softmax (
      morok_tensor_linear (
          h, morok_tensor_weight (g, "w2", MOROK_DTYPE_F32, w2, (gint64[]){ OUT, HIDDEN }, 2),
          morok_tensor_weight (g, "b2", MOROK_DTYPE_F32, b2, (gint64[]){ OUT }, 1), &error),
      -1, &error);
  if (!y)
    {
      g_printerr ("building the graph failed: %s\n", error->message);
      return 1;
    }

  double t0 = now_us ();
  g_autoptr (MorokPlan) plan = morok_plan_build (g, &y, 1, &x, 1, NULL, &error);
  if (!plan)
    {
      g_printerr ("prepare failed: %s\n", error->message);
      return 1;
    }
  printf ("prepared in %.1f ms: %u kernels, arena %zu bytes\n", (now_us () - t0) / 1e3,
          morok_plan_n_steps (plan), morok_plan_arena_bytes (plan));

  float *in = morok_plan_input (plan, 0)->data;
  const int calls = 10000;
  double total = 0;
  for (int call = 0; call < calls; call++)
    {
      gint64 frames = 1 + call % MAX_FRAMES;
      for (int i = 0; i < frames * IN; i++)
        in[i] = sinf ((call + i) * 0.01f);
      MorokVarValue vars[] = { { "t", frames } };
      double c0 = now_us ();
      if (!morok_plan_execute (plan, vars, 1, &error))
        {
          g_printerr ("execute failed: %s\n", error->message);
          return 1;
        }
      total += now_us () - c0;
    }
  const MorokBuffer *out = morok_plan_output (plan, 0);
  const float *p = out->data;
  printf ("replayed %d calls, %.2f us per call on average\n", calls, total / calls);
  printf ("last call: %" G_GINT64_FORMAT " frames; class probabilities of frame 0:", out->shape[0]);
  for (int i = 0; i < OUT; i++)
    printf (" %.4f", p[i]);
  printf ("\n");
  return 0;
}
