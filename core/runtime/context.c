/* SPDX-License-Identifier: MIT */
/* Contexts: the memory one execute runs in, and execute itself: bounds
 * checks, then a loop of direct kernel calls. */
#define G_LOG_DOMAIN "morok-runtime"
#include "runtime/program-private.h"
#include <stdlib.h>
#include <string.h>
#include <time.h>

G_DEFINE_QUARK (morok - runtime - error - quark, morok_runtime_error)

struct _MorokContext
{
  MorokProgram *program;
  void **bufs;   /* by buffer index */
  void **tables; /* the steps' binding tables (program->bindings) of bufs */
  gint64 *vars;  /* by slot */
  MorokBuffer *inputs, *outputs;
  gint64 *task_counter; /* in the SCRATCH buffer's last 64 bytes, NULL without one */
  guint threads;        /* most threads a step uses */
  GPtrArray *owned;     /* aligned allocations freed with the context */
  GArray *mapped;       /* large ones: morok_mapped_blocks */
};

static void
aligned_free (gpointer p)
{
  free (p);
}

/* 64-byte aligned (large ones page-aligned), zeroed, freed with the
 * context; NULL when out of memory. */
static gpointer
context_alloc (MorokContext *ctx, gsize bytes)
{
  gsize size = morok_round_64 (bytes);
  if (size >= MOROK_MAP_MIN)
    return morok_mapped_block (ctx->mapped, size, FALSE);
  gpointer p = aligned_alloc (64, size);
  if (!p)
    return NULL;
  memset (p, 0, size);
  g_ptr_array_add (ctx->owned, p);
  return p;
}

static gboolean
place_buffers (MorokContext *ctx, GError **error)
{
  const MorokProgram *p = ctx->program;
  gpointer arena = p->arena_bytes ? context_alloc (ctx, p->arena_bytes) : NULL;
  if (p->arena_bytes && !arena)
    goto oom;
  for (guint i = 0; i < p->n_bufs; i++)
    {
      const MorokProgramBuffer *b = &p->buffers[i];
      switch (b->place)
        {
        case MOROK_PLACE_CONSTANT: ctx->bufs[i] = b->data; break;
        case MOROK_PLACE_ARENA: ctx->bufs[i] = (guint8 *) arena + b->offset; break;
        default:
          if (!(ctx->bufs[i] = context_alloc (ctx, b->bytes)))
            goto oom;
          if (b->place == MOROK_PLACE_SCRATCH)
            ctx->task_counter = (gint64 *) ((guint8 *) ctx->bufs[i] + b->bytes - 64);
        }
    }
  return TRUE;
oom:
  g_set_error (error, MOROK_RUNTIME_ERROR, MOROK_RUNTIME_ERROR_MEMORY,
               "out of memory for a context's buffers (arena %" G_GSIZE_FORMAT " bytes)",
               p->arena_bytes);
  return FALSE;
}

static MorokBuffer
buffer_of (const MorokContext *ctx, const MorokProgramIO *io)
{
  MorokBuffer b = { .data = ctx->bufs[io->buffer],
                    .bytes = ctx->program->buffers[io->buffer].bytes,
                    .dtype = io->dtype,
                    .rank = io->rank };
  memcpy (b.shape, io->shape, sizeof b.shape);
  return b;
}

MorokContext *
morok_context_new (MorokProgram *program, GError **error)
{
  g_return_val_if_fail (program != NULL, NULL);
  MorokContext *ctx = g_new0 (MorokContext, 1);
  ctx->program = morok_program_ref (program);
  ctx->owned = g_ptr_array_new_with_free_func (aligned_free);
  ctx->mapped = morok_mapped_blocks_new ();
  ctx->bufs = g_new0 (void *, MAX (program->n_bufs, 1));
  ctx->vars = g_new0 (gint64, MAX (program->n_vars, 1));
  for (guint s = 0; s < program->n_vars; s++)
    ctx->vars[s] = program->vars[s].max;
  ctx->threads = G_MAXUINT;
  if (!place_buffers (ctx, error))
    {
      morok_context_free (ctx);
      return NULL;
    }
  /* bound once: execute passes each step its table as it is */
  const GArray *bindings = program->bindings;
  ctx->tables = g_new (void *, MAX (bindings->len, 1));
  for (guint i = 0; i < bindings->len; i++)
    ctx->tables[i] = ctx->bufs[g_array_index (bindings, guint, i)];
  guint n_in = program->inputs->len, n_out = program->outputs->len;
  ctx->inputs = g_new0 (MorokBuffer, MAX (n_in, 1));
  for (guint i = 0; i < n_in; i++)
    ctx->inputs[i] = buffer_of (ctx, &g_array_index (program->inputs, MorokProgramIO, i));
  ctx->outputs = g_new0 (MorokBuffer, MAX (n_out, 1));
  for (guint o = 0; o < n_out; o++)
    {
      const MorokProgramIO *io = &g_array_index (program->outputs, MorokProgramIO, o);
      ctx->outputs[o] = buffer_of (ctx, io);
    }
  return ctx;
}

void
morok_context_free (MorokContext *ctx)
{
  if (!ctx)
    return;
  g_ptr_array_unref (ctx->owned);
  g_array_unref (ctx->mapped);
  g_free (ctx->bufs);
  g_free (ctx->tables);
  g_free (ctx->vars);
  g_free (ctx->inputs);
  g_free (ctx->outputs);
  morok_program_unref (ctx->program);
  g_free (ctx);
}

void
morok_context_set_threads (MorokContext *ctx, guint threads)
{
  g_return_if_fail (ctx != NULL && threads >= 1);
  ctx->threads = threads;
}

MorokBuffer *
morok_context_input (MorokContext *ctx, guint index)
{
  g_return_val_if_fail (ctx != NULL && index < ctx->program->inputs->len, NULL);
  return &ctx->inputs[index];
}

const MorokBuffer *
morok_context_output (MorokContext *ctx, guint index)
{
  g_return_val_if_fail (ctx != NULL && index < ctx->program->outputs->len, NULL);
  return &ctx->outputs[index];
}

void *const *
morok_context_buffers (const MorokContext *ctx, guint *out_n)
{
  if (out_n)
    *out_n = ctx->program->n_bufs;
  return ctx->bufs;
}

/* ---- variables ---- */

static gboolean
check_bounds (const MorokProgram *p, guint slot, gint64 value, GError **error)
{
  const MorokProgramVar *v = &p->vars[slot];
  if (value >= v->min && value <= v->max)
    return TRUE;
  g_set_error (error, MOROK_RUNTIME_ERROR, MOROK_RUNTIME_ERROR_VARIABLE,
               "variable '%s' = %" G_GINT64_FORMAT " is outside its bounds [%" G_GINT64_FORMAT
               ", %" G_GINT64_FORMAT "]",
               v->name, value, v->min, v->max);
  return FALSE;
}

gboolean
morok_context_set_var_values (MorokContext *ctx, const gint64 *values, guint n, GError **error)
{
  g_return_val_if_fail (ctx != NULL && n <= ctx->program->n_vars && (n == 0 || values), FALSE);
  for (guint s = 0; s < n; s++)
    if (!check_bounds (ctx->program, s, values[s], error))
      return FALSE;
  memcpy (ctx->vars, values, n * sizeof *values);
  return TRUE;
}

/* Checks every value first, so a bad call changes nothing. */
static gboolean
bind_vars (MorokContext *ctx, const MorokVarValue *vars, gsize n_vars, GError **error)
{
  gint slot_of[16];
  g_return_val_if_fail (n_vars <= G_N_ELEMENTS (slot_of) && (n_vars == 0 || vars), FALSE);
  for (gsize i = 0; i < n_vars; i++)
    {
      slot_of[i] = morok_program_var_slot (ctx->program, vars[i].name);
      if (slot_of[i] < 0)
        {
          g_set_error (error, MOROK_RUNTIME_ERROR, MOROK_RUNTIME_ERROR_VARIABLE,
                       "the plan has no variable '%s'", vars[i].name ? vars[i].name : "(null)");
          return FALSE;
        }
      if (!check_bounds (ctx->program, (guint) slot_of[i], vars[i].value, error))
        return FALSE;
    }
  for (gsize i = 0; i < n_vars; i++)
    ctx->vars[slot_of[i]] = vars[i].value;
  return TRUE;
}

/* ---- execute ---- */

static void
update_output_shapes (MorokContext *ctx)
{
  const MorokProgram *p = ctx->program;
  for (guint o = 0; o < p->outputs->len; o++)
    morok_program_eval_shape (p, &g_array_index (p->outputs, MorokProgramIO, o), ctx->vars,
                              ctx->outputs[o].shape);
}

static inline void
run_step (MorokContext *ctx, const MorokStep *s)
{
  /* before the workers start: their wake-up orders it before their reads */
  if (s->shared_tasks)
    *ctx->task_counter = 0;
  guint n = MIN (s->nthreads, ctx->threads);
  void *const *table = ctx->tables + s->binding;
  if (n > 1)
    morok_thread_pool_run (s->fn, table, ctx->vars, n);
  else
    s->fn (table, ctx->vars, 0, 1);
}

gboolean
morok_context_execute (MorokContext *ctx, const MorokVarValue *vars, gsize n_vars, GError **error)
{
  g_return_val_if_fail (ctx != NULL, FALSE);
  if (n_vars && !bind_vars (ctx, vars, n_vars, error))
    return FALSE;
  const MorokStep *steps = (const MorokStep *) ctx->program->steps->data;
  const guint n = ctx->program->steps->len;
  for (guint i = 0; i < n; i++)
    run_step (ctx, &steps[i]);
  if (ctx->program->dynamic_shapes)
    update_output_shapes (ctx);
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
morok_context_execute_profiled (MorokContext *ctx, const MorokVarValue *vars, gsize n_vars,
                                GError **error)
{
  g_return_val_if_fail (ctx != NULL, NULL);
  if (n_vars && !bind_vars (ctx, vars, n_vars, error))
    return NULL;
  const GArray *steps = ctx->program->steps;
  GArray *prof = g_array_sized_new (FALSE, FALSE, sizeof (MorokKernelProfile), steps->len);
  for (guint i = 0; i < steps->len; i++)
    {
      const MorokStep *s = &g_array_index (steps, MorokStep, i);
      gint64 t0 = now_ns ();
      run_step (ctx, s);
      MorokKernelProfile p = { s->name, now_ns () - t0, s->flops, s->bytes };
      g_array_append_val (prof, p);
    }
  if (ctx->program->dynamic_shapes)
    update_output_shapes (ctx);
  return prof;
}
