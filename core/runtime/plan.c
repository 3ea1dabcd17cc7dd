/* SPDX-License-Identifier: MIT */
/* Plans: the simple case of a program with one context. */
#define G_LOG_DOMAIN "morok-runtime"
#include "runtime/morok-runtime.h"

struct _MorokPlan
{
  MorokProgram *program;
  MorokContext *context;
};

MorokPlan *
morok_plan_new (MorokProgram *program, GError **error)
{
  g_return_val_if_fail (program != NULL, NULL);
  MorokContext *context = morok_context_new (program, error);
  if (!context)
    {
      morok_program_unref (program);
      return NULL;
    }
  MorokPlan *plan = g_new (MorokPlan, 1);
  *plan = (MorokPlan){ program, context };
  return plan;
}

void
morok_plan_free (MorokPlan *plan)
{
  if (!plan)
    return;
  morok_context_free (plan->context);
  morok_program_unref (plan->program);
  g_free (plan);
}

MorokProgram *
morok_plan_program (MorokPlan *plan)
{
  g_return_val_if_fail (plan != NULL, NULL);
  return plan->program;
}

MorokContext *
morok_plan_context (MorokPlan *plan)
{
  g_return_val_if_fail (plan != NULL, NULL);
  return plan->context;
}

MorokBuffer *
morok_plan_input (MorokPlan *plan, guint index)
{
  g_return_val_if_fail (plan != NULL, NULL);
  return morok_context_input (plan->context, index);
}

const MorokBuffer *
morok_plan_output (MorokPlan *plan, guint index)
{
  g_return_val_if_fail (plan != NULL, NULL);
  return morok_context_output (plan->context, index);
}

guint
morok_plan_n_outputs (const MorokPlan *plan)
{
  return morok_program_n_outputs (plan->program);
}

guint
morok_plan_n_steps (const MorokPlan *plan)
{
  return morok_program_n_steps (plan->program);
}

gsize
morok_plan_arena_bytes (const MorokPlan *plan)
{
  return morok_program_arena_bytes (plan->program);
}

gsize
morok_plan_packed_bytes (const MorokPlan *plan)
{
  return morok_program_packed_bytes (plan->program);
}

void *const *
morok_plan_buffers (const MorokPlan *plan, guint *out_n)
{
  return morok_context_buffers (plan->context, out_n);
}

gboolean
morok_plan_execute (MorokPlan *plan, const MorokVarValue *vars, gsize n_vars, GError **error)
{
  g_return_val_if_fail (plan != NULL, FALSE);
  return morok_context_execute (plan->context, vars, n_vars, error);
}

GArray *
morok_plan_execute_profiled (MorokPlan *plan, const MorokVarValue *vars, gsize n_vars,
                             GError **error)
{
  g_return_val_if_fail (plan != NULL, NULL);
  return morok_context_execute_profiled (plan->context, vars, n_vars, error);
}
