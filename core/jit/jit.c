/* SPDX-License-Identifier: MIT */
/* The generic JIT wrapper: variables and their bounds, prepare (graph, build
 * function, checks on the inputs it reads, plan) and replay. The typed
 * functions MOROK_JIT_DECLARE generates are thin casts onto these. */
#define G_LOG_DOMAIN "morok-jit"
#include "jit/morok-jit.h"
#include "graph/morok-graph.h"
#include <string.h>

G_DEFINE_QUARK (morok - jit - error - quark, morok_jit_error)

typedef struct
{
  char *name;
  gint64 min, max; /* inclusive; the plan's variable starts at max */
} JitVar;

struct _MorokJit
{
  char *type_name; /* for messages: "GigaAmEncoderJit: ..." */
  gpointer model;
  GDestroyNotify model_free;
  MorokJitBuildFn build;
  char **input_names;
  guint n_inputs;
  JitVar *vars;
  guint n_vars;

  /* set by a successful prepare */
  MorokPlan *plan;
  MorokContext *ctx; /* the plan's */
  guint *input_ids;  /* index in the plan's buffers of each input */
  gint64 *bound;     /* execute's values, by plan slot (vars[i] is slot i) */
  gboolean at_max;   /* the plan's variables are all at their upper bounds */
};

/* ---- life cycle ---- */

MorokJit *
morok_jit_new (const char *type_name, gpointer model, GDestroyNotify model_free,
               const char *const *input_names, guint n_inputs, const MorokJitVarDecl *vars,
               guint n_vars, MorokJitBuildFn build)
{
  g_return_val_if_fail (type_name != NULL && build != NULL, NULL);
  g_return_val_if_fail (n_inputs <= MOROK_JIT_MAX_INPUTS && n_vars <= MOROK_JIT_MAX_VARS, NULL);
  g_return_val_if_fail (n_inputs == 0 || input_names != NULL, NULL);
  g_return_val_if_fail (n_vars == 0 || vars != NULL, NULL);
  for (guint i = 0; i < n_inputs; i++)
    {
      g_return_val_if_fail (input_names[i] != NULL, NULL);
      for (guint j = 0; j < i; j++)
        g_return_val_if_fail (!g_str_equal (input_names[i], input_names[j]) /* twice */, NULL);
    }
  for (guint i = 0; i < n_vars; i++)
    {
      g_return_val_if_fail (vars[i].name != NULL, NULL);
      for (guint j = 0; j < i; j++)
        g_return_val_if_fail (!g_str_equal (vars[i].name, vars[j].name) /* twice */, NULL);
    }

  MorokJit *jit = g_new0 (MorokJit, 1);
  jit->type_name = g_strdup (type_name);
  jit->model = model;
  jit->model_free = model_free;
  jit->build = build;
  jit->n_inputs = n_inputs;
  jit->input_names = g_new0 (char *, n_inputs + 1);
  for (guint i = 0; i < n_inputs; i++)
    jit->input_names[i] = g_strdup (input_names[i]);
  jit->n_vars = n_vars;
  jit->vars = g_new0 (JitVar, MAX (n_vars, 1));
  for (guint i = 0; i < n_vars; i++)
    jit->vars[i] = (JitVar){ g_strdup (vars[i].name), vars[i].min, vars[i].max };
  return jit;
}

void
morok_jit_free (MorokJit *jit)
{
  if (!jit)
    return;
  morok_plan_free (jit->plan);
  g_free (jit->input_ids);
  g_free (jit->bound);
  for (guint i = 0; i < jit->n_vars; i++)
    g_free (jit->vars[i].name);
  g_free (jit->vars);
  g_strfreev (jit->input_names);
  if (jit->model_free)
    jit->model_free (jit->model);
  g_free (jit->type_name);
  g_free (jit);
}

gpointer
morok_jit_model (MorokJit *jit)
{
  g_return_val_if_fail (jit != NULL, NULL);
  return jit->model;
}

const char *
morok_jit_type_name (const MorokJit *jit)
{
  g_return_val_if_fail (jit != NULL, NULL);
  return jit->type_name;
}

gint
morok_jit_input_index (const MorokJit *jit, const char *name)
{
  g_return_val_if_fail (jit != NULL && name != NULL, -1);
  for (guint i = 0; i < jit->n_inputs; i++)
    if (g_str_equal (jit->input_names[i], name))
      return (gint) i;
  return -1;
}

gboolean
morok_jit_is_prepared (const MorokJit *jit)
{
  g_return_val_if_fail (jit != NULL, FALSE);
  return jit->plan != NULL;
}

MorokPlan *
morok_jit_plan (MorokJit *jit)
{
  g_return_val_if_fail (jit != NULL, NULL);
  return jit->plan;
}

/* ---- variable bounds: programmer errors are criticals ---- */

gboolean
morok_jit_set_var_max (MorokJit *jit, guint var, gint64 max)
{
  g_return_val_if_fail (jit != NULL && var < jit->n_vars, FALSE);
  g_return_val_if_fail (jit->plan == NULL /* bounds are fixed once prepared */, FALSE);
  g_return_val_if_fail (max >= 1 && max >= jit->vars[var].min /* max < min */, FALSE);
  jit->vars[var].max = max;
  return TRUE;
}

gboolean
morok_jit_set_var_min (MorokJit *jit, guint var, gint64 min)
{
  g_return_val_if_fail (jit != NULL && var < jit->n_vars, FALSE);
  g_return_val_if_fail (jit->plan == NULL /* bounds are fixed once prepared */, FALSE);
  g_return_val_if_fail (min >= 1 && min <= jit->vars[var].max /* min > max */, FALSE);
  jit->vars[var].min = min;
  return TRUE;
}

gboolean
morok_jit_set_var_fixed (MorokJit *jit, guint var, gint64 value)
{
  g_return_val_if_fail (jit != NULL && var < jit->n_vars, FALSE);
  g_return_val_if_fail (jit->plan == NULL /* bounds are fixed once prepared */, FALSE);
  g_return_val_if_fail (value >= 1 /* a dimension of zero elements */, FALSE);
  jit->vars[var].min = jit->vars[var].max = value;
  return TRUE;
}

gboolean
morok_jit_var_bounds (const MorokJit *jit, const char *name, gint64 *out_min, gint64 *out_max)
{
  g_return_val_if_fail (jit != NULL && name != NULL, FALSE);
  for (guint i = 0; i < jit->n_vars; i++)
    if (g_str_equal (jit->vars[i].name, name))
      {
        if (out_min)
          *out_min = jit->vars[i].min;
        if (out_max)
          *out_max = jit->vars[i].max;
        return TRUE;
      }
  return FALSE;
}

/* ---- prepare ---- */

/* Moves @src into @error as @code of MOROK_JIT_ERROR, keeping its message
 * after "<type>: " (and @what, if any). */
static void
propagate_as (MorokJit *jit, GError **error, GError *src, MorokJitError code, const char *what)
{
  g_set_error (error, MOROK_JIT_ERROR, code, "%s: %s%s", jit->type_name, what ? what : "",
               src->message);
  g_error_free (src);
}

/* The jit code for an error of a lower layer. */
static MorokJitError
code_for (const GError *e)
{
  if (e->domain == MOROK_TENSOR_ERROR || e->domain == MOROK_GRAPH_ERROR)
    return MOROK_JIT_ERROR_TENSOR;
  if (e->domain == MOROK_JIT_ERROR)
    return (MorokJitError) e->code;
  return MOROK_JIT_ERROR_DEVICE; /* compile, load, memory */
}

static gboolean
check_bounds (MorokJit *jit, GError **error)
{
  for (guint i = 0; i < jit->n_vars; i++)
    if (jit->vars[i].min < 1 || jit->vars[i].min > jit->vars[i].max)
      {
        g_set_error (error, MOROK_JIT_ERROR, MOROK_JIT_ERROR_BUILD,
                     "%s: variable '%s' has bounds [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT
                     "]; it needs 1 <= min <= max",
                     jit->type_name, jit->vars[i].name, jit->vars[i].min, jit->vars[i].max);
        return FALSE;
      }
  return TRUE;
}

static void
collect_inputs (MorokNode *n, GHashTable *seen, GPtrArray *inputs)
{
  if (!g_hash_table_add (seen, n))
    return;
  if (n->op == MOROK_OP_INPUT)
    g_ptr_array_add (inputs, n);
  for (guint i = 0; i < n->n_src; i++)
    collect_inputs (n->src[i], seen, inputs);
}

/* Every declared input must be read by @out, and every input @out reads
 * must be one of the wrapper's placeholders. */
static gboolean
check_inputs_read (MorokJit *jit, MorokTensor *out, MorokTensor *const *placeholders,
                   GError **error)
{
  g_autoptr (GHashTable) seen = g_hash_table_new (NULL, NULL);
  g_autoptr (GPtrArray) read = g_ptr_array_new ();
  collect_inputs (out, seen, read);
  for (guint r = 0; r < read->len; r++)
    {
      MorokNode *n = g_ptr_array_index (read, r);
      gboolean ours = FALSE, same_name = FALSE;
      for (guint i = 0; i < jit->n_inputs; i++)
        {
          ours = ours || n == placeholders[i];
          same_name = same_name || g_strcmp0 (n->name, jit->input_names[i]) == 0;
        }
      if (ours)
        continue;
      g_autofree char *shape = morok_node_shape_string (n);
      if (same_name)
        g_set_error (error, MOROK_JIT_ERROR, MOROK_JIT_ERROR_DUPLICATE_INPUT_BUFFER,
                     "%s: the output reads a second input '%s' %s made by the build function; "
                     "only the wrapper's '%s' has a buffer: use the tensor passed in",
                     jit->type_name, n->name, shape, n->name);
      else
        g_set_error (error, MOROK_JIT_ERROR, MOROK_JIT_ERROR_INPUT_BUFFER_NOT_FOUND,
                     "%s: the output reads input '%s' %s, which is not a declared input",
                     jit->type_name, n->name, shape);
      return FALSE;
    }
  for (guint i = 0; i < jit->n_inputs; i++)
    if (!g_hash_table_contains (seen, placeholders[i]))
      {
        g_set_error (error, MOROK_JIT_ERROR, MOROK_JIT_ERROR_INPUT_BUFFER_NOT_FOUND,
                     "%s: declared input '%s' is not read by the output, so the plan has no "
                     "buffer for it",
                     jit->type_name, jit->input_names[i]);
        return FALSE;
      }
  return TRUE;
}

/* Calls the build function on a new graph; on success the graph is in
 * *out_graph and every placeholder in @placeholders. */
static MorokTensor *
build_graph (MorokJit *jit, const MorokInputSpec *const *specs, MorokTensor **placeholders,
             MorokGraph **out_graph, GError **error)
{
  g_autoptr (MorokGraph) g = morok_graph_new ();
  MorokSymPool *pool = morok_graph_sym_pool (g);
  MorokVariable *vars[MOROK_JIT_MAX_VARS];
  for (guint i = 0; i < jit->n_vars; i++) /* first, so var i has slot i */
    vars[i] = morok_variable_new (pool, jit->vars[i].name, jit->vars[i].min, jit->vars[i].max);
  for (guint i = 0; i < jit->n_inputs; i++)
    {
      const MorokSym *shape[MOROK_MAX_RANK];
      morok_tensor_syms (g, specs[i]->shape, specs[i]->rank, shape);
      placeholders[i]
          = morok_tensor_input (g, jit->input_names[i], specs[i]->dtype, shape, specs[i]->rank);
    }

  GError *local = NULL;
  MorokTensor *out = jit->build (jit->model, placeholders, vars, &local);
  if (!out || local)
    {
      if (!local)
        g_set_error (error, MOROK_JIT_ERROR, MOROK_JIT_ERROR_BUILD,
                     "%s: the build function returned NULL without an error", jit->type_name);
      else if (code_for (local) == MOROK_JIT_ERROR_TENSOR)
        propagate_as (jit, error, local, MOROK_JIT_ERROR_TENSOR, NULL);
      else
        propagate_as (jit, error, local, MOROK_JIT_ERROR_BUILD, "build: ");
      return NULL;
    }
  if (out->graph != g)
    {
      g_set_error (error, MOROK_JIT_ERROR, MOROK_JIT_ERROR_BUILD,
                   "%s: the build function returned a tensor of another graph", jit->type_name);
      return NULL;
    }
  if (!check_inputs_read (jit, out, placeholders, error))
    return NULL;
  *out_graph = g_steal_pointer (&g);
  return out;
}

/* Where each input landed in the plan's buffers. */
static gboolean
find_input_buffers (MorokJit *jit, GError **error)
{
  guint n_bufs;
  void *const *bufs = morok_plan_buffers (jit->plan, &n_bufs);
  jit->input_ids = g_new0 (guint, MAX (jit->n_inputs, 1));
  for (guint i = 0; i < jit->n_inputs; i++)
    {
      gpointer data = morok_plan_input (jit->plan, i)->data;
      guint b = 0;
      while (b < n_bufs && bufs[b] != data)
        b++;
      if (b == n_bufs)
        {
          g_set_error (error, MOROK_JIT_ERROR, MOROK_JIT_ERROR_INPUT_BUFFER_NOT_FOUND,
                       "%s: the plan has no buffer for input '%s'", jit->type_name,
                       jit->input_names[i]);
          return FALSE;
        }
      for (guint j = 0; j < i; j++)
        if (jit->input_ids[j] == b)
          {
            g_set_error (error, MOROK_JIT_ERROR, MOROK_JIT_ERROR_DUPLICATE_INPUT_BUFFER,
                         "%s: inputs '%s' and '%s' share plan buffer %u", jit->type_name,
                         jit->input_names[j], jit->input_names[i], b);
            return FALSE;
          }
      jit->input_ids[i] = b;
    }
  return TRUE;
}

/* Execute's context is the plan's, its variables at their upper bounds. */
static void
use_plan_context (MorokJit *jit)
{
  MorokProgram *program = morok_plan_program (jit->plan);
  jit->ctx = morok_plan_context (jit->plan);
  guint n_slots = morok_program_n_vars (program);
  jit->bound = g_new0 (gint64, MAX (n_slots, 1));
  for (guint s = 0; s < n_slots; s++)
    morok_program_var (program, s, NULL, &jit->bound[s]);
  jit->at_max = TRUE;
}

/* Variable i of the wrapper was made first, so it is the plan's slot i;
 * execute binds by slot from then on. */
static gboolean
resolve_slots (MorokJit *jit, GError **error)
{
  MorokProgram *program = morok_plan_program (jit->plan);
  use_plan_context (jit);
  for (guint i = 0; i < jit->n_vars; i++)
    if (morok_program_var_slot (program, jit->vars[i].name) != (gint) i)
      {
        g_set_error (error, MOROK_JIT_ERROR, MOROK_JIT_ERROR_BUILD,
                     "%s: variable '%s' is not slot %u of the plan", jit->type_name,
                     jit->vars[i].name, i);
        return FALSE;
      }
  return TRUE;
}

static void
unprepare (MorokJit *jit)
{
  g_clear_pointer (&jit->plan, morok_plan_free);
  jit->ctx = NULL;
  g_clear_pointer (&jit->input_ids, g_free);
  g_clear_pointer (&jit->bound, g_free);
}

gboolean
morok_jit_prepare (MorokJit *jit, const MorokInputSpec *const *specs,
                   const MorokPrepareConfig *config, GError **error)
{
  g_return_val_if_fail (jit != NULL, FALSE);
  if (jit->plan)
    {
      g_set_error (error, MOROK_JIT_ERROR, MOROK_JIT_ERROR_ALREADY_PREPARED,
                   "%s: prepared already (a wrapper is prepared once)", jit->type_name);
      return FALSE;
    }
  g_return_val_if_fail (jit->n_inputs == 0 || specs != NULL, FALSE);
  for (guint i = 0; i < jit->n_inputs; i++)
    {
      g_return_val_if_fail (specs[i] != NULL, FALSE);
      g_return_val_if_fail (specs[i]->rank <= MOROK_MAX_RANK, FALSE);
      g_return_val_if_fail ((guint) specs[i]->dtype < MOROK_DTYPE_COUNT, FALSE);
      for (guint d = 0; d < specs[i]->rank; d++)
        g_return_val_if_fail (specs[i]->shape[d] >= 1, FALSE);
    }
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  gint64 t0 = g_get_monotonic_time ();
  guint64 compiles = morok_compile_count_invocations ();
  g_autoptr (MorokPrepareConfig) env = config ? NULL : morok_prepare_config_from_env ();
  MorokPlanOptions opts;
  GError *local = NULL;
  if (!morok_prepare_config_to_plan_options (config ? config : env, &opts, &local))
    {
      propagate_as (jit, error, local, MOROK_JIT_ERROR_DEVICE, NULL);
      return FALSE;
    }
  if (!check_bounds (jit, error))
    return FALSE;

  MorokTensor *placeholders[MOROK_JIT_MAX_INPUTS + 1];
  MorokGraph *graph = NULL;
  MorokTensor *out = build_graph (jit, specs, placeholders, &graph, error);
  if (!out)
    return FALSE;
  /* the plan owns the graph from here, even on failure */
  jit->plan = morok_plan_build (graph, &out, 1, placeholders, jit->n_inputs, &opts, &local);
  if (!jit->plan)
    {
      propagate_as (jit, error, local, code_for (local), NULL);
      return FALSE;
    }
  if (!find_input_buffers (jit, error))
    {
      unprepare (jit);
      return FALSE;
    }
  if (!resolve_slots (jit, error))
    {
      unprepare (jit);
      return FALSE;
    }
  g_info ("%s: prepared %u kernels, arena %" G_GSIZE_FORMAT " bytes, %" G_GUINT64_FORMAT
          " compiles, %.1f ms",
          jit->type_name, morok_plan_n_steps (jit->plan), morok_plan_arena_bytes (jit->plan),
          morok_compile_count_invocations () - compiles, (g_get_monotonic_time () - t0) / 1e3);
  return TRUE;
}

/* ---- per-step calls ---- */

static gboolean
check_prepared (MorokJit *jit, const char *what, GError **error)
{
  if (G_LIKELY (jit->plan))
    return TRUE;
  g_set_error (error, MOROK_JIT_ERROR, MOROK_JIT_ERROR_NOT_PREPARED,
               "%s: %s called before a successful prepare", jit->type_name, what);
  return FALSE;
}

/* ---- contexts: more wrappers of one prepared program ---- */

/* A copy of @prepared's declaration (names, bounds, build function) that
 * borrows its model. */
static MorokJit *
jit_copy_borrowing (const MorokJit *prepared)
{
  MorokJitVarDecl vars[MOROK_JIT_MAX_VARS];
  for (guint i = 0; i < prepared->n_vars; i++)
    vars[i]
        = (MorokJitVarDecl){ prepared->vars[i].name, prepared->vars[i].min, prepared->vars[i].max };
  return morok_jit_new (prepared->type_name, prepared->model, NULL,
                        (const char *const *) prepared->input_names, prepared->n_inputs, vars,
                        prepared->n_vars, prepared->build);
}

MorokJit *
morok_jit_new_context (MorokJit *prepared, GError **error)
{
  g_return_val_if_fail (prepared != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);
  if (!check_prepared (prepared, "new_context", error))
    return NULL;
  g_autoptr (MorokJit) jit = jit_copy_borrowing (prepared);
  GError *local = NULL;
  MorokProgram *program = morok_plan_program (prepared->plan);
  if (!(jit->plan = morok_plan_new (morok_program_ref (program), &local)))
    {
      propagate_as (jit, error, local, MOROK_JIT_ERROR_DEVICE, NULL);
      return NULL;
    }
  jit->input_ids = g_memdup2 (prepared->input_ids, sizeof (guint) * MAX (jit->n_inputs, 1));
  use_plan_context (jit);
  return g_steal_pointer (&jit);
}

MorokBuffer *
morok_jit_input_mut (MorokJit *jit, guint input, GError **error)
{
  g_return_val_if_fail (jit != NULL && input < jit->n_inputs, NULL);
  if (!check_prepared (jit, jit->input_names[input], error))
    return NULL;
  return morok_plan_input (jit->plan, input);
}

const MorokBuffer *
morok_jit_output (MorokJit *jit, GError **error)
{
  g_return_val_if_fail (jit != NULL, NULL);
  if (!check_prepared (jit, "output", error))
    return NULL;
  return morok_plan_output (jit->plan, 0);
}

/* Sets the plan's variables to @vars over the upper bounds; checks the
 * names here, the bounds in the plan (touching nothing on failure). */
static gboolean
bind (MorokJit *jit, const MorokVarValue *vars, gsize n_vars, GError **error)
{
  for (guint i = 0; i < jit->n_vars; i++)
    jit->bound[i] = jit->vars[i].max;
  for (gsize k = 0; k < n_vars; k++)
    {
      guint i = 0;
      while (i < jit->n_vars && g_strcmp0 (vars[k].name, jit->vars[i].name) != 0)
        i++;
      if (i == jit->n_vars)
        {
          g_set_error (error, MOROK_JIT_ERROR, MOROK_JIT_ERROR_RUNTIME,
                       "%s: there is no variable '%s'", jit->type_name,
                       vars[k].name ? vars[k].name : "(null)");
          return FALSE;
        }
      jit->bound[i] = vars[k].value;
    }
  GError *local = NULL;
  if (!morok_context_set_var_values (jit->ctx, jit->bound, jit->n_vars, &local))
    {
      propagate_as (jit, error, local, MOROK_JIT_ERROR_RUNTIME, NULL);
      return FALSE;
    }
  return TRUE;
}

static gboolean
bound_at_max (const MorokJit *jit)
{
  for (guint i = 0; i < jit->n_vars; i++)
    if (jit->bound[i] != jit->vars[i].max)
      return FALSE;
  return TRUE;
}

gboolean
morok_jit_execute_with_vars (MorokJit *jit, const MorokVarValue *vars, gsize n_vars, GError **error)
{
  g_return_val_if_fail (jit != NULL, FALSE);
  g_return_val_if_fail (n_vars == 0 || vars != NULL, FALSE);
  if (!check_prepared (jit, "execute", error))
    return FALSE;
  if (n_vars == 0 && jit->at_max) /* the common case: nothing to bind */
    return morok_context_execute (jit->ctx, NULL, 0, error);
  if (!bind (jit, vars, n_vars, error))
    return FALSE;
  jit->at_max = bound_at_max (jit);
  return morok_context_execute (jit->ctx, NULL, 0, error);
}

gboolean
morok_jit_execute (MorokJit *jit, GError **error)
{
  return morok_jit_execute_with_vars (jit, NULL, 0, error);
}

GArray *
morok_jit_execute_with_vars_profiled (MorokJit *jit, const MorokVarValue *vars, gsize n_vars,
                                      GError **error)
{
  g_return_val_if_fail (jit != NULL, NULL);
  g_return_val_if_fail (n_vars == 0 || vars != NULL, NULL);
  if (!check_prepared (jit, "execute_profiled", error) || !bind (jit, vars, n_vars, error))
    return NULL;
  jit->at_max = bound_at_max (jit);
  return morok_context_execute_profiled (jit->ctx, NULL, 0, error);
}

GArray *
morok_jit_execute_profiled (MorokJit *jit, GError **error)
{
  return morok_jit_execute_with_vars_profiled (jit, NULL, 0, error);
}

/* ---- low-level accessors ---- */

void *const *
morok_jit_buffers (MorokJit *jit, guint *out_n, GError **error)
{
  g_return_val_if_fail (jit != NULL, NULL);
  if (out_n)
    *out_n = 0;
  if (!check_prepared (jit, "buffers", error))
    return NULL;
  return morok_plan_buffers (jit->plan, out_n);
}

const MorokBuffer *
morok_jit_output_buffers (MorokJit *jit, guint *out_n, GError **error)
{
  g_return_val_if_fail (jit != NULL, NULL);
  if (out_n)
    *out_n = 0;
  if (!check_prepared (jit, "output_buffers", error))
    return NULL;
  if (out_n)
    *out_n = morok_plan_n_outputs (jit->plan);
  return morok_plan_output (jit->plan, 0); /* the outputs are one array */
}

const guint *
morok_jit_input_buffer_ids (MorokJit *jit, guint *out_n, GError **error)
{
  g_return_val_if_fail (jit != NULL, NULL);
  if (out_n)
    *out_n = 0;
  if (!check_prepared (jit, "input_buffer_ids", error))
    return NULL;
  if (out_n)
    *out_n = jit->n_inputs;
  return jit->input_ids;
}

guint
morok_jit_prepared_kernels (MorokJit *jit, GError **error)
{
  g_return_val_if_fail (jit != NULL, 0);
  if (!check_prepared (jit, "prepared_kernels", error))
    return 0;
  return morok_plan_n_steps (jit->plan);
}

/* ---- helpers for build functions ---- */

MorokTensor *
morok_jit_try_shrink (MorokTensor *x, gint axis, MorokVariable *var, GError **error)
{
  g_return_val_if_fail (var != NULL, NULL);
  if (!x || (error && *error))
    return NULL;
  MorokSymPool *pool = morok_graph_sym_pool (x->graph);
  g_return_val_if_fail (var->pool == pool, NULL);
  return morok_tensor_slice (x, axis, morok_sym_const (pool, 0), morok_sym_var (var), error);
}
