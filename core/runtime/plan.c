/* SPDX-License-Identifier: MIT */
/* Plan replay: bounds checks, then a loop of direct kernel calls. */
#define G_LOG_DOMAIN "morok-runtime"
#include "runtime/plan-private.h"
#include <stdlib.h>
#include <string.h>
#include <time.h>

G_DEFINE_QUARK (morok-runtime-error-quark, morok_runtime_error)

static void
aligned_free (gpointer p)
{
  free (p);
}

gpointer
morok_plan_alloc (MorokPlan *plan, gsize bytes)
{
  gsize size = MAX ((bytes + 63) / 64 * 64, 64);
  gpointer p = aligned_alloc (64, size);
  if (!p)
    return NULL;
  memset (p, 0, size);
  g_ptr_array_add (plan->owned, p);
  return p;
}

MorokPlan *
morok_plan_new_empty (MorokGraph *graph)
{
  MorokPlan *plan = g_new0 (MorokPlan, 1);
  plan->graph = graph;
  plan->steps = g_array_new (FALSE, TRUE, sizeof (MorokStep));
  plan->owned = g_ptr_array_new_with_free_func (aligned_free);
  return plan;
}

void
morok_plan_free (MorokPlan *plan)
{
  if (!plan)
    return;
  for (guint i = 0; i < plan->steps->len; i++)
    g_free (g_array_index (plan->steps, MorokStep, i).name);
  g_array_unref (plan->steps);
  g_ptr_array_unref (plan->owned);
  if (plan->folded)
    g_ptr_array_unref (plan->folded);
  morok_object_free (plan->object);
  g_free (plan->bufs);
  g_free (plan->inputs);
  g_free (plan->outputs);
  g_free (plan->out_info);
  g_free (plan->vars);
  morok_graph_free (plan->graph);
  g_free (plan);
}

MorokBuffer *
morok_plan_input (MorokPlan *plan, guint index)
{
  g_return_val_if_fail (plan != NULL && index < plan->n_inputs, NULL);
  return &plan->inputs[index];
}

guint
morok_plan_n_inputs (const MorokPlan *plan)
{
  return plan->n_inputs;
}

const MorokBuffer *
morok_plan_output (MorokPlan *plan, guint index)
{
  g_return_val_if_fail (plan != NULL && index < plan->n_outputs, NULL);
  return &plan->outputs[index];
}

guint
morok_plan_n_outputs (const MorokPlan *plan)
{
  return plan->n_outputs;
}

guint
morok_plan_n_steps (const MorokPlan *plan)
{
  return plan->steps->len;
}

gsize
morok_plan_arena_bytes (const MorokPlan *plan)
{
  return plan->arena_bytes;
}

gsize
morok_plan_packed_bytes (const MorokPlan *plan)
{
  return plan->packed_bytes;
}

void *const *
morok_plan_buffers (const MorokPlan *plan, guint *out_n)
{
  if (out_n)
    *out_n = plan->n_bufs;
  return plan->bufs;
}

/* Checks every value first, so a bad call changes nothing. */
static gboolean
bind_vars (MorokPlan *plan, const MorokVarValue *vars, gsize n_vars, GError **error)
{
  MorokSymPool *pool = morok_graph_sym_pool (plan->graph);
  gint64 slot_of[16];
  g_return_val_if_fail (n_vars <= G_N_ELEMENTS (slot_of) && (n_vars == 0 || vars), FALSE);
  for (gsize i = 0; i < n_vars; i++)
    {
      slot_of[i] = -1;
      for (guint s = 0; s < plan->n_vars; s++)
        if (vars[i].name && g_str_equal (morok_sym_pool_variable (pool, s)->name, vars[i].name))
          slot_of[i] = s;
      if (slot_of[i] < 0)
        {
          g_set_error (error, MOROK_RUNTIME_ERROR, MOROK_RUNTIME_ERROR_VARIABLE,
                       "the plan has no variable '%s'", vars[i].name ? vars[i].name : "(null)");
          return FALSE;
        }
      MorokVariable *v = morok_sym_pool_variable (pool, (guint) slot_of[i]);
      if (vars[i].value < v->min || vars[i].value > v->max)
        {
          g_set_error (error, MOROK_RUNTIME_ERROR, MOROK_RUNTIME_ERROR_VARIABLE,
                       "variable '%s' = %" G_GINT64_FORMAT " is outside its bounds [%" G_GINT64_FORMAT
                       ", %" G_GINT64_FORMAT "]",
                       v->name, vars[i].value, v->min, v->max);
          return FALSE;
        }
    }
  for (gsize i = 0; i < n_vars; i++)
    plan->vars[slot_of[i]] = vars[i].value;
  return TRUE;
}

static void
update_output_shapes (MorokPlan *plan)
{
  for (guint o = 0; o < plan->n_outputs; o++)
    for (guint d = 0; d < plan->out_info[o].rank; d++)
      plan->outputs[o].shape[d] = morok_sym_eval (plan->out_info[o].shape[d], plan->vars);
}

static inline void
run_step (MorokPlan *plan, const MorokStep *s)
{
  /* before the workers start: their wake-up orders it before their reads */
  if (s->shared_tasks)
    *plan->task_counter = 0;
  if (s->nthreads > 1)
    morok_thread_pool_run (s->fn, plan->bufs, plan->vars, s->nthreads);
  else
    s->fn (plan->bufs, plan->vars, 0, 1);
}

gboolean
morok_plan_execute (MorokPlan *plan, const MorokVarValue *vars, gsize n_vars, GError **error)
{
  g_return_val_if_fail (plan != NULL, FALSE);
  if (n_vars && !bind_vars (plan, vars, n_vars, error))
    return FALSE;
  const MorokStep *steps = (const MorokStep *) plan->steps->data;
  for (guint i = 0; i < plan->steps->len; i++)
    run_step (plan, &steps[i]);
  update_output_shapes (plan);
  return TRUE;
}

static gint64
now_ns (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (gint64) ts.tv_sec * G_GINT64_CONSTANT (1000000000) + ts.tv_nsec;
}

GArray *
morok_plan_execute_profiled (MorokPlan *plan, const MorokVarValue *vars, gsize n_vars,
                             GError **error)
{
  g_return_val_if_fail (plan != NULL, NULL);
  if (n_vars && !bind_vars (plan, vars, n_vars, error))
    return NULL;
  GArray *prof = g_array_sized_new (FALSE, FALSE, sizeof (MorokKernelProfile), plan->steps->len);
  for (guint i = 0; i < plan->steps->len; i++)
    {
      const MorokStep *s = &g_array_index (plan->steps, MorokStep, i);
      gint64 t0 = now_ns ();
      run_step (plan, s);
      MorokKernelProfile p = { s->name, now_ns () - t0, s->flops, s->bytes };
      g_array_append_val (prof, p);
    }
  update_output_shapes (plan);
  return prof;
}
