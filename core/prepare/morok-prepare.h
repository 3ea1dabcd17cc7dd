/* SPDX-License-Identifier: MIT */
/* Prepare: a graph to a program, and a plan to run it in.
 *
 * rewrite (rules) -> fold weight-only subgraphs (computed once, here) ->
 * schedule -> render one C translation unit -> compile and load -> buffers.
 * Everything a program needs is done here, once, and handed to the runtime
 * through its builder (runtime/morok-program-builder.h); the graph is freed
 * on return. morok_plan_execute replays the program in the plan's context;
 * morok_context_new (morok_plan_program (plan), ...) makes more contexts.
 *
 *   MorokPlanOptions opts;
 *   morok_plan_options_init (&opts);
 *   g_autoptr (MorokPlan) plan = morok_plan_build (g_steal_pointer (&graph), &y, 1, &x, 1, &opts,
 * &error);
 */
#pragma once

#include "graph/morok-graph.h"
#include "prepare/morok-renderer.h"
#include "runtime/morok-runtime.h"

G_BEGIN_DECLS

typedef struct
{
  guint threads;               /* most threads a step may use; 0: the pool's size */
  MorokIsa isa;                /* contraction micro-kernels to use */
  MorokPrecision precision;    /* of products with constant weights (morok-dtype.h) */
  MorokCompileOptions compile; /* compiler, cache, dump folder */
} MorokPlanOptions;

/* Defaults: all threads, the CPU's best ISA, f32, morok_compile_options_init. */
void morok_plan_options_init (MorokPlanOptions *opts);

/* Builds the plan computing @outputs from @inputs, which become the plan's
 * inputs in this order. Takes ownership of @graph, even on failure. */
MorokPlan *morok_plan_build (MorokGraph *graph, MorokNode *const *outputs, guint n_outputs,
                             MorokNode *const *inputs, guint n_inputs, const MorokPlanOptions *opts,
                             GError **error);

/* FALSE, with MOROK_GRAPH_ERROR_PRECISION saying why, unless @precision
 * is F32, or F16 with @isa AVX512 on a CPU with AVX512-FP16, or BF16 or
 * BF16X3 with @isa AVX512 on a CPU with AVX512-BF16 or AMX-BF16 that lets
 * this process use it, or INT8 with @isa AVX2, or AVX512 with VNNI. */
gboolean morok_plan_precision_supported (MorokIsa isa, MorokPrecision precision, GError **error);

/* Plans built by this process (folding sub-plans included): a test reads it
 * before and after execute to prove nothing was rebuilt. */
guint64 morok_plan_build_count (void);

G_END_DECLS
