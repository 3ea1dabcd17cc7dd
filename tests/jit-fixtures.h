/* SPDX-License-Identifier: MIT */
/* Small JIT wrappers shared by the jit tests. Their kernels use element-wise
 * ops and views only, so they need no vector math or GEMM headers. */
#pragma once

#include "jit/morok-jit-recurrent.h"

/* ---- GainJit: x [max_t, width] -> relu (x[:t] * gain + 1), [t, width] ---- */
typedef struct
{
  float gain;   /* read in build: baked into the plan */
  gint64 max_t; /* upper bound of t */
  gint64 width;
  int *freed; /* incremented by gain_free, may be NULL */
} Gain;

Gain *gain_new (float gain, gint64 max_t, gint64 width, int *freed);
void gain_free (Gain *model);

#define GAIN_JIT_INPUTS(X) X (x)
#define GAIN_JIT_VARS(X) X (t, 1, model->max_t)
MOROK_JIT_DECLARE (GainJit, gain_jit, Gain, GAIN_JIT_INPUTS, GAIN_JIT_VARS)

/* A GainJit prepared for x [max_t, width]; asserts success. */
GainJit *gain_jit_new_prepared (float gain, gint64 max_t, gint64 width);

/* ---- WindowJit: x [max_b, max_t] -> x[:b, :t] + 1, [b, t] ---- */
typedef struct
{
  gint64 max_b, max_t;
} Window;

void window_free (Window *model);

#define WINDOW_JIT_INPUTS(X) X (x)
#define WINDOW_JIT_VARS(X) X (b, 1, model->max_b) X (t, 1, model->max_t)
MOROK_JIT_DECLARE (WindowJit, window_jit, Window, WINDOW_JIT_INPUTS, WINDOW_JIT_VARS)

/* A WindowJit prepared for x [max_b, max_t], x[i] = i; asserts success. */
WindowJit *window_jit_new_prepared (gint64 max_b, gint64 max_t);

/* ---- ToyJit, a recurrent toy cell: x [1, 2], h, c [1, 3] ->
 *      [2x | h / 2 + 1 | c + h / 2 + 1], f32 [1, 8] ---- */
typedef struct
{
  int unused;
} Toy;

void toy_free (Toy *model);

#define TOY_JIT_INPUTS(X) X (x) X (h) X (c)
#define TOY_JIT_VARS(X)
MOROK_JIT_DECLARE (ToyJit, toy_jit, Toy, TOY_JIT_INPUTS, TOY_JIT_VARS)

/* A ToyJit prepared; asserts success. */
ToyJit *toy_jit_new_prepared (void);
/* The step's input: x = (step, -step). */
void toy_write_x (ToyJit *jit, int step);
