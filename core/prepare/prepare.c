/* SPDX-License-Identifier: MIT */
/* Prepare's entry points: a graph to a plan, through the stages that
 * prepare_build () runs in order (prepare-private.h lists them and their
 * files). */
#define G_LOG_DOMAIN "morok-prepare"
#include "prepare/prepare-private.h"
#include "prepare/morok-rules.h"
#include "prepare/compile-job-private.h"
#include "kernels/weight-pack.h"
#include <stdlib.h>
#include <string.h>

static guint64 build_count;

guint64
morok_plan_build_count (void)
{
  return g_atomic_pointer_get (&build_count);
}

void
morok_plan_options_init (MorokPlanOptions *opts)
{
  g_return_if_fail (opts != NULL);
  memset (opts, 0, sizeof *opts);
  opts->isa = morok_isa_detect ();
  opts->precision = MOROK_PRECISION_F32;
  morok_compile_options_init (&opts->compile);
}

static const MorokRuleSet *const rule_sets[] = {
  &morok_rules_fold,    &morok_rules_algebra, &morok_rules_views,
  &morok_rules_bn_fold, &morok_rules_column,
};

MorokPlan *
prepare_build (MorokGraph *graph, MorokNode **roots, guint n_roots, MorokNode *const *inputs,
               guint n_inputs, const MorokPlanOptions *opts, gboolean one_shot, GError **error)
{
  g_atomic_pointer_add (&build_count, 1);
  gint64 t0 = g_get_monotonic_time ();
  if (!morok_graph_rewrite (roots, n_roots, rule_sets, G_N_ELEMENTS (rule_sets), error))
    return NULL;
  g_autoptr (GPtrArray) folded = g_ptr_array_new_with_free_func (free);
  if (!one_shot)
    {
      g_autoptr (GHashTable) map = g_hash_table_new (NULL, NULL);
      for (guint i = 0; i < n_roots; i++)
        roots[i] = prepare_relayout (roots[i], opts->precision, map);
    }
  if (!one_shot && !prepare_fold (graph, roots, n_roots, opts, folded, error))
    return NULL;
  g_autoptr (MorokSchedule) sched = morok_schedule_new (roots, n_roots, inputs, n_inputs, error);
  if (!sched)
    return NULL;
  if (!one_shot)
    prepare_pack_weights (sched, opts);
  MorokSymPool *pool = morok_graph_sym_pool (graph);
  g_autoptr (MorokProgramBuilder) b
      = morok_program_builder_new (sched->buffers->len, morok_sym_pool_n_variables (pool));
  /* folded weights live as long as the program */
  for (guint i = 0; i < folded->len; i++)
    morok_program_builder_keep (b, folded->pdata[i]);
  g_ptr_array_set_free_func (folded, NULL);
  /* clang runs while the weights are packed */
  gint64 t1 = g_get_monotonic_time ();
  CompileJob *job = compile_job_start (sched, opts->isa, &opts->compile, error);
  if (!job)
    return NULL;
  if (!prepare_place_buffers (b, sched, !one_shot, error)
      || !prepare_describe_io (b, pool, sched, n_inputs, error))
    {
      compile_job_finish (job, NULL, NULL);
      return NULL;
    }
  gint64 t2 = g_get_monotonic_time ();
  g_autofree MorokKernelFn *fns = compile_job_finish (job, b, error);
  if (!fns)
    return NULL;
  prepare_add_steps (b, sched, opts, fns);
  MorokPlan *plan = morok_plan_new (morok_program_builder_finish (g_steal_pointer (&b)), error);
  if (plan)
    g_info ("plan: %u steps, %u distinct functions, %u buffers, arena %" G_GSIZE_FORMAT
            " bytes; graph to schedule %.0f ms, render, buffers and packing %.0f ms, "
            "then compile %.0f ms more",
            morok_plan_n_steps (plan), morok_program_n_functions (morok_plan_program (plan)),
            sched->buffers->len, morok_plan_arena_bytes (plan), (t1 - t0) / 1e3, (t2 - t1) / 1e3,
            (g_get_monotonic_time () - t2) / 1e3);
  return plan;
}

gboolean
morok_plan_precision_supported (MorokIsa isa, MorokPrecision precision, GError **error)
{
  const char *missing = morok_weight_pack_missing (isa, precision);
  if (!missing)
    return TRUE;
  if ((guint) precision >= MOROK_PRECISION_COUNT)
    g_set_error (error, MOROK_GRAPH_ERROR, MOROK_GRAPH_ERROR_PRECISION,
                 "precision %d: not one of f32, f16, bf16, bf16x3, int8", precision);
  else
    g_set_error (error, MOROK_GRAPH_ERROR, MOROK_GRAPH_ERROR_PRECISION,
                 "precision %s does not run here: it needs %s (plan ISA %s)",
                 morok_precision_name (precision), missing, morok_isa_name (isa));
  return FALSE;
}

MorokPlan *
morok_plan_build (MorokGraph *graph, MorokNode *const *outputs, guint n_outputs,
                  MorokNode *const *inputs, guint n_inputs, const MorokPlanOptions *opts,
                  GError **error)
{
  g_return_val_if_fail (graph != NULL && outputs != NULL && n_outputs > 0, NULL);
  for (guint i = 0; i < n_outputs; i++)
    g_return_val_if_fail (outputs[i] && outputs[i]->graph == graph, NULL);
  for (guint i = 0; i < n_inputs; i++)
    g_return_val_if_fail (inputs[i] && inputs[i]->op == MOROK_OP_INPUT, NULL);
  MorokPlanOptions defaults;
  if (!opts)
    {
      morok_plan_options_init (&defaults);
      opts = &defaults;
    }
  if (!morok_plan_precision_supported (opts->isa, opts->precision, error))
    {
      morok_graph_free (graph);
      return NULL;
    }
  g_autofree MorokNode **roots = g_memdup2 (outputs, n_outputs * sizeof *outputs);
  /* the program keeps nothing of the graph */
  MorokPlan *plan = prepare_build (graph, roots, n_outputs, inputs, n_inputs, opts, FALSE, error);
  morok_graph_free (graph);
  return plan;
}
