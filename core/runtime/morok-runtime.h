/* SPDX-License-Identifier: MIT */
/* The runtime: a prepared program and the contexts it executes in.
 *
 * A MorokProgram is what prepare made, shared and never changed: the loaded
 * kernels, the weights packed or folded for them, a flat array of steps
 * {kernel function, thread count} and the variables' names and bounds. A
 * MorokContext is what one execute runs in: the arena, the input and output
 * buffers, the variables' values, the thread-pool binding and the scratch.
 * Execute checks the variables against their bounds, then calls each step's
 * function directly (through the persistent thread pool when the step is
 * large): no allocation, no graph work, no compilation. Contexts of one
 * program execute concurrently from different threads, each with its own
 * buffers; one context is used by one thread at a time. A MorokPlan is the
 * simple case: a program with one context.
 *
 *   MorokBuffer *x = morok_plan_input (plan, 0);
 *   memcpy (x->data, samples, x->bytes);
 *   if (!morok_plan_execute (plan, NULL, 0, &error)) ...
 *   const MorokBuffer *y = morok_plan_output (plan, 0);   // y->shape: this call's shape
 *
 *   // a second stream of the same program, e.g. on another thread:
 *   g_autoptr (MorokContext) ctx = morok_context_new (morok_plan_program (plan), &error);
 *   memcpy (morok_context_input (ctx, 0)->data, other, x->bytes);
 *   morok_context_execute (ctx, NULL, 0, &error);
 */
#pragma once

#include <glib.h>
#include "base/morok-dtype.h"
#include "kernels/morok-compiler.h"

G_BEGIN_DECLS

#define MOROK_RUNTIME_ERROR (morok_runtime_error_quark ())
GQuark morok_runtime_error_quark (void);
typedef enum
{
  MOROK_RUNTIME_ERROR_VARIABLE, /* a variable value outside its [min, max], or unknown */
  MOROK_RUNTIME_ERROR_MEMORY,   /* a context's buffers could not be allocated */
} MorokRuntimeError;

/* One buffer of a context, as callers see it. */
typedef struct
{
  gpointer data; /* 64-byte aligned for inputs and outputs; owned by the context */
  gsize bytes;   /* capacity, at the variables' upper bounds */
  MorokDType dtype;
  guint rank;
  gint64 shape[MOROK_MAX_RANK]; /* outputs: the shape of the last execute (before
                                   the first: at the variables' upper bounds) */
} MorokBuffer;

/* One step's timing from a profiled execute. */
typedef struct
{
  const char *name; /* e.g. "k3 matmul f32[1, 64, 128]"; valid while the program lives */
  gint64 elapsed_ns;
  double flops; /* estimate at the variables' upper bounds */
  double bytes; /* bytes read and written, estimate */
} MorokKernelProfile;

/* A value for one variable, by name. */
typedef struct
{
  const char *name;
  gint64 value;
} MorokVarValue;

typedef struct _MorokProgram MorokProgram;
typedef struct _MorokContext MorokContext;
typedef struct _MorokPlan MorokPlan;

/* ---- programs: shared, immutable ---- */

MorokProgram *morok_program_ref (MorokProgram *program);
void morok_program_unref (MorokProgram *program);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (MorokProgram, morok_program_unref)

guint morok_program_n_inputs (const MorokProgram *program);
guint morok_program_n_outputs (const MorokProgram *program);
guint morok_program_n_steps (const MorokProgram *program);
/* Distinct kernel functions the steps call (at most the steps: steps of one
 * computation over other buffers share one). */
guint morok_program_n_functions (const MorokProgram *program);
/* Bytes of the arena each context allocates. */
gsize morok_program_arena_bytes (const MorokProgram *program);
/* Bytes of buffers each context allocates: the arena, inputs, outputs and
 * the GEMM scratch (*@out_scratch, nullable, gets the scratch alone). */
gsize morok_program_context_bytes (const MorokProgram *program, gsize *out_scratch);
/* Bytes of constant weights packed at prepare for the GEMM (prepare/pack.c). */
gsize morok_program_packed_bytes (const MorokProgram *program);
/* Variables, by slot: names and bounds copied at prepare. */
guint morok_program_n_vars (const MorokProgram *program);
/* The slot of variable @name, -1 if the program has none of that name. */
gint morok_program_var_slot (const MorokProgram *program, const char *name);
/* Name (valid while the program lives) and bounds of the variable in @slot. */
const char *morok_program_var (const MorokProgram *program, guint slot, gint64 *out_min,
                               gint64 *out_max);

/* ---- contexts: what an execute runs in ---- */

/* A context of @program (referenced): its own arena, inputs, outputs and
 * scratch, variables at their upper bounds, steps on up to the threads the
 * program was prepared for. (transfer full) Fails with
 * MOROK_RUNTIME_ERROR_MEMORY. */
MorokContext *morok_context_new (MorokProgram *program, GError **error);
void morok_context_free (MorokContext *ctx);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (MorokContext, morok_context_free)

/* The most threads of the process-wide pool a step of @ctx uses (at most
 * what the program was prepared for); 1 runs every step on the calling
 * thread. A step whose pool is busy with another context runs on its
 * caller too, so contexts never wait for each other. */
void morok_context_set_threads (MorokContext *ctx, guint threads);

/* Inputs, in the order given at prepare. (transfer none, valid while the context lives) */
MorokBuffer *morok_context_input (MorokContext *ctx, guint index);
const MorokBuffer *morok_context_output (MorokContext *ctx, guint index);
/* All buffer pointers the kernels see (inputs first); valid while the context lives. */
void *const *morok_context_buffers (const MorokContext *ctx, guint *out_n);

/* Sets the variables in slots 0 .. @n - 1 to @values (by slot, as
 * morok_program_var_slot gives them), the others keep theirs. Fails with
 * MOROK_RUNTIME_ERROR_VARIABLE, touching nothing, if a value is out of bounds. */
gboolean morok_context_set_var_values (MorokContext *ctx, const gint64 *values, guint n,
                                       GError **error);
/* Runs the program in @ctx. @vars lists values for some variables; the
 * others keep the value they had (initially their upper bound). Fails with
 * MOROK_RUNTIME_ERROR_VARIABLE, touching nothing, if a value is out of
 * bounds or a name unknown. */
gboolean morok_context_execute (MorokContext *ctx, const MorokVarValue *vars, gsize n_vars,
                                GError **error);
/* As execute, timing each step. (transfer full) GArray of MorokKernelProfile */
GArray *morok_context_execute_profiled (MorokContext *ctx, const MorokVarValue *vars, gsize n_vars,
                                        GError **error);

/* ---- plans: a program with one context ---- */

/* A plan of @program (transfer full, even on failure) and a context of it.
 * (transfer full) Fails as morok_context_new. */
MorokPlan *morok_plan_new (MorokProgram *program, GError **error);
void morok_plan_free (MorokPlan *plan);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (MorokPlan, morok_plan_free)

/* (transfer none, valid while the plan lives) */
MorokProgram *morok_plan_program (MorokPlan *plan);
MorokContext *morok_plan_context (MorokPlan *plan);

/* The plan's context and program, as the calls above. */
MorokBuffer *morok_plan_input (MorokPlan *plan, guint index);
const MorokBuffer *morok_plan_output (MorokPlan *plan, guint index);
guint morok_plan_n_outputs (const MorokPlan *plan);
guint morok_plan_n_steps (const MorokPlan *plan);
gsize morok_plan_arena_bytes (const MorokPlan *plan);
gsize morok_plan_packed_bytes (const MorokPlan *plan);
void *const *morok_plan_buffers (const MorokPlan *plan, guint *out_n);
gboolean morok_plan_execute (MorokPlan *plan, const MorokVarValue *vars, gsize n_vars,
                             GError **error);
GArray *morok_plan_execute_profiled (MorokPlan *plan, const MorokVarValue *vars, gsize n_vars,
                                     GError **error);

/* ---- thread pool ---- */
/* Threads the process-wide pool runs (MOROK_THREADS, capped at online cores). */
guint morok_thread_pool_size (void);
/* Runs fn (bufs, vars, tid, n) for tid in 0..n-1 on the pool; the caller is
 * thread 0. If another context is using the pool, runs everything on the caller. */
void morok_thread_pool_run (MorokKernelFn fn, void *const *bufs, const int64_t *vars, guint n);

G_END_DECLS
