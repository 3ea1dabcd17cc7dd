/* SPDX-License-Identifier: MIT */
/* The runtime: a prepared plan and what execute() does with it.
 *
 * A MorokPlan is a flat array of steps {kernel function, thread count} over
 * one array of buffer pointers and one array of variable values. Execute
 * checks the variables against their bounds, then calls each step's function
 * directly (through the persistent thread pool when the step is large):
 * no allocation, no graph work, no compilation.
 *
 *   MorokBuffer *x = morok_plan_input (plan, 0);
 *   memcpy (x->data, samples, x->bytes);
 *   if (!morok_plan_execute (plan, NULL, 0, &error)) ...
 *   const MorokBuffer *y = morok_plan_output (plan, 0);   // y->shape: this call's shape
 */
#pragma once

#include <glib.h>
#include "graph/morok-graph.h"
#include "kernels/morok-compiler.h"

G_BEGIN_DECLS

#define MOROK_RUNTIME_ERROR (morok_runtime_error_quark ())
GQuark morok_runtime_error_quark (void);
typedef enum
{
  MOROK_RUNTIME_ERROR_VARIABLE, /* a variable value outside its [min, max], or unknown */
} MorokRuntimeError;

/* One buffer of a plan, as callers see it. */
typedef struct
{
  gpointer data;  /* 64-byte aligned for inputs and outputs; owned by the plan */
  gsize bytes;    /* capacity, at the variables' upper bounds */
  MorokDType dtype;
  guint rank;
  gint64 shape[MOROK_MAX_RANK]; /* outputs: the shape of the last execute (before
                                   the first: at the variables' upper bounds) */
} MorokBuffer;

/* One step's timing from a profiled execute. */
typedef struct
{
  const char *name;   /* e.g. "k3 matmul f32[1, 64, 128]"; valid while the plan lives */
  gint64 elapsed_ns;
  double flops;       /* estimate at the variables' upper bounds */
  double bytes;       /* bytes read and written, estimate */
} MorokKernelProfile;

/* A value for one variable, by name. */
typedef struct
{
  const char *name;
  gint64 value;
} MorokVarValue;

typedef struct _MorokPlan MorokPlan;

/* Inputs, in the order given at build. (transfer none, valid while the plan lives) */
MorokBuffer *morok_plan_input (MorokPlan *plan, guint index);
guint morok_plan_n_inputs (const MorokPlan *plan);
const MorokBuffer *morok_plan_output (MorokPlan *plan, guint index);
guint morok_plan_n_outputs (const MorokPlan *plan);
guint morok_plan_n_steps (const MorokPlan *plan);
gsize morok_plan_arena_bytes (const MorokPlan *plan);
/* Bytes of constant weights packed at prepare for the GEMM (prepare/prepare.c). */
gsize morok_plan_packed_bytes (const MorokPlan *plan);
/* All buffer pointers the kernels see (inputs first); valid while the plan lives. */
void *const *morok_plan_buffers (const MorokPlan *plan, guint *out_n);

/* Runs the plan. @vars lists values for some variables; the others keep the
 * value they had (initially their upper bound). Fails with
 * MOROK_RUNTIME_ERROR_VARIABLE, touching nothing, if a value is out of bounds. */
gboolean morok_plan_execute (MorokPlan *plan, const MorokVarValue *vars, gsize n_vars,
                             GError **error);
/* As execute, timing each step. (transfer full) GArray of MorokKernelProfile */
GArray *morok_plan_execute_profiled (MorokPlan *plan, const MorokVarValue *vars, gsize n_vars,
                                     GError **error);

void morok_plan_free (MorokPlan *plan);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (MorokPlan, morok_plan_free)

/* ---- thread pool ---- */
/* Threads the process-wide pool runs (MOROK_THREADS, capped at online cores). */
guint morok_thread_pool_size (void);
/* Runs fn (bufs, vars, tid, n) for tid in 0..n-1 on the pool; the caller is
 * thread 0. If another plan is using the pool, runs everything on the caller. */
void morok_thread_pool_run (MorokKernelFn fn, void *const *bufs, const int64_t *vars, guint n);

G_END_DECLS
