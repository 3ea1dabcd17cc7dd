/* SPDX-License-Identifier: MIT */
/* Prepare's last stage: the program around the compiled kernels. Where
 * each buffer of the schedule lives (the weights' panels packed meanwhile,
 * the weights copied or released), the inputs' and outputs' shapes, and
 * the steps. */
#define G_LOG_DOMAIN "morok-prepare"
#include "prepare/prepare-private.h"
#include "prepare/compile-job-private.h"
#include <string.h>

/* TRUE if the region of kernel @root reaches buffer @buf other than
 * through @m's B operand (the edge its packed panels replace). */
static gboolean
reads_besides_b (const MorokSchedule *sched, MorokNode *n, MorokNode *root, const MorokNode *m,
                 guint buf, GHashTable *seen)
{
  if (g_hash_table_contains (seen, n))
    return FALSE;
  g_hash_table_add (seen, n);
  guint b = morok_schedule_buffer_of (sched, n);
  if (b && n != root)
    return b - 1 == buf;
  for (guint i = 0; i < n->n_src; i++)
    if (!(n == m && i == 1) && reads_besides_b (sched, n->src[i], root, m, buf, seen))
      return TRUE;
  return FALSE;
}

/* The weights' data that the program reads in place (a kernel reads the
 * weight, not only through packed panels, or it is an output), as a set;
 * and, in @packs, how many packed buffers are made from each weight's data. */
static GHashTable *
weights_read (const MorokSchedule *sched, GHashTable *packs)
{
  GHashTable *read = g_hash_table_new (NULL, NULL);
  for (guint k = 0; k < sched->kernels->len; k++)
    {
      const MorokScheduleKernel *ker = &g_array_index (sched->kernels, MorokScheduleKernel, k);
      guint source
          = ker->packed_b
                ? g_array_index (sched->buffers, MorokScheduleBuffer, ker->packed_b - 1).pack.source
                : G_MAXUINT;
      for (guint r = 0; r < ker->reads->len; r++)
        {
          guint buf = g_array_index (ker->reads, guint, r);
          const MorokScheduleBuffer *rb = &g_array_index (sched->buffers, MorokScheduleBuffer, buf);
          if (rb->kind != MOROK_BUFFER_WEIGHT)
            continue;
          g_autoptr (GHashTable) seen = g_hash_table_new (NULL, NULL);
          if (buf != source
              || reads_besides_b (sched, ker->root, ker->root, ker->matmul, buf, seen))
            g_hash_table_add (read, (gpointer) rb->node->data);
        }
    }
  for (guint o = 0; o < sched->n_outputs; o++)
    g_hash_table_add (
        read, (gpointer) g_array_index (sched->buffers, MorokScheduleBuffer, sched->outputs[o])
                  .node->data);
  for (guint i = 0; i < sched->buffers->len; i++)
    {
      const MorokScheduleBuffer *sb = &g_array_index (sched->buffers, MorokScheduleBuffer, i);
      if (sb->kind != MOROK_BUFFER_PACKED)
        continue;
      gconstpointer data
          = g_array_index (sched->buffers, MorokScheduleBuffer, sb->pack.source).node->data;
      g_hash_table_insert (
          packs, (gpointer) data,
          GUINT_TO_POINTER (GPOINTER_TO_UINT (g_hash_table_lookup (packs, data)) + 1));
    }
  return read;
}
/* Program memory for PACKED buffer @i, filled later (pack_run). */
static gpointer
constant_alloc (MorokProgramBuilder *b, const MorokSchedule *sched, guint i, GError **error)
{
  const MorokScheduleBuffer *sb = &g_array_index (sched->buffers, MorokScheduleBuffer, i);
  gpointer p = morok_program_builder_buffer_constant (b, i, sb->bytes);
  if (!p)
    g_set_error (error, MOROK_RUNTIME_ERROR, MOROK_RUNTIME_ERROR_MEMORY,
                 "out of memory for a buffer of %" G_GSIZE_FORMAT " bytes", sb->bytes);
  return p;
}

static gpointer
pack_buffer_alloc (MorokProgramBuilder *b, const MorokSchedule *sched, guint i, GError **error)
{
  gpointer packed = constant_alloc (b, sched, i, error);
  if (packed)
    morok_program_builder_add_packed_bytes (
        b, g_array_index (sched->buffers, MorokScheduleBuffer, i).bytes);
  return packed;
}

/* Whether the program reads weight @sb from a copy of its own: read by a
 * kernel, from an owner that may free it, which frees the data once the
 * panels are made. A model read in place from its file would otherwise
 * fault the file's pages back at every execute, and where the page cache
 * holds large folios (Linux 6.18, ext4) a fault maps its whole folio: the
 * biases' faults mapped 294 MB of GigaAM's packed weights around them. */
static gboolean
copied_weight (const MorokScheduleBuffer *sb, GHashTable *read, gboolean release)
{
  return sb->kind == MOROK_BUFFER_WEIGHT && release && sb->node->release
         && g_hash_table_contains (read, sb->node->data);
}

/* One block for the program's packed panels and copied weights. */
static gboolean
reserve_constants (MorokProgramBuilder *b, const MorokSchedule *sched, GHashTable *read,
                   gboolean release, GError **error)
{
  gsize bytes = 0;
  guint n = 0;
  for (guint i = 0; i < sched->buffers->len; i++)
    {
      const MorokScheduleBuffer *sb = &g_array_index (sched->buffers, MorokScheduleBuffer, i);
      if (sb->kind == MOROK_BUFFER_PACKED || copied_weight (sb, read, release))
        bytes += sb->bytes, n++;
    }
  if (morok_program_builder_reserve_constants (b, bytes, n))
    return TRUE;
  g_set_error (error, MOROK_RUNTIME_ERROR, MOROK_RUNTIME_ERROR_MEMORY,
               "out of memory for %" G_GSIZE_FORMAT " bytes of packed weights", bytes);
  return FALSE;
}

/* Where each buffer of the schedule lives. A weight that only packing
 * reads is placed with no data (no kernel sees it), since its owner may
 * free it once packed (@release: the plan being made, not a sub-plan that
 * folds weights for it, which the plan may still read). */
gboolean
prepare_place_buffers (MorokProgramBuilder *b, const MorokSchedule *sched, gboolean release,
                       GError **error)
{
  morok_program_builder_set_arena (b, sched->arena_bytes);
  g_autoptr (GHashTable) packs = g_hash_table_new (NULL, NULL);
  g_autoptr (GHashTable) read = weights_read (sched, packs);
  g_autoptr (GArray) jobs = g_array_new (FALSE, FALSE, sizeof (PackJob));
  Packing pk = { .sched = sched, .jobs = jobs, .read = release ? read : NULL, .packs = packs };
  g_autoptr (GPtrArray) copied = g_ptr_array_new (); /* weights read from a copy */
  if (!reserve_constants (b, sched, read, release, error))
    return FALSE;
  for (guint i = 0; i < sched->buffers->len; i++)
    {
      const MorokScheduleBuffer *sb = &g_array_index (sched->buffers, MorokScheduleBuffer, i);
      switch (sb->kind)
        {
        case MOROK_BUFFER_WEIGHT:
          {
            gconstpointer data
                = g_hash_table_contains (read, sb->node->data) ? sb->node->data : NULL;
            if (!copied_weight (sb, read, release))
              {
                morok_program_builder_buffer_extern (b, i, data);
                break;
              }
            gpointer copy = constant_alloc (b, sched, i, error);
            if (!copy)
              return FALSE;
            memcpy (copy, data, sb->bytes);
            g_ptr_array_add (copied, sb->node);
          }
          break;
        case MOROK_BUFFER_TEMP:
          morok_program_builder_buffer_arena (b, i, sb->offset, sb->bytes);
          break;
        case MOROK_BUFFER_PACKED:
          {
            PackJob job = { i, pack_buffer_alloc (b, sched, i, error) };
            if (!job.dst)
              return FALSE;
            g_array_append_val (pk.jobs, job);
          }
          break;
        case MOROK_BUFFER_SCRATCH: morok_program_builder_buffer_scratch (b, i, sb->bytes); break;
        default: morok_program_builder_buffer_context (b, i, sb->bytes);
        }
    }
  prepare_pack_panels (&pk);
  /* the copies' sources, once each, now that no panel is made from them */
  g_autoptr (GHashTable) done = g_hash_table_new (NULL, NULL);
  for (guint k = 0; k < copied->len; k++)
    {
      const MorokNode *w = g_ptr_array_index (copied, k);
      if (g_hash_table_add (done, (gpointer) w->data))
        w->release (w->release_data, w->data);
    }
  return TRUE;
}

/* Appends the postfix program of @s (over variable slots) to @code. */
static void
shape_code (const MorokSym *s, GArray *code)
{
  static const MorokShapeOp ops[] = {
    [MOROK_SYM_ADD] = MOROK_SHAPE_ADD, [MOROK_SYM_MUL] = MOROK_SHAPE_MUL,
    [MOROK_SYM_DIV] = MOROK_SHAPE_DIV, [MOROK_SYM_MOD] = MOROK_SHAPE_MOD,
    [MOROK_SYM_MIN] = MOROK_SHAPE_MIN, [MOROK_SYM_MAX] = MOROK_SHAPE_MAX,
  };
  MorokShapeInstr in;
  if (s->op == MOROK_SYM_CONST)
    in = (MorokShapeInstr){ MOROK_SHAPE_CONST, s->value };
  else if (s->op == MOROK_SYM_VAR)
    in = (MorokShapeInstr){ MOROK_SHAPE_VAR, s->var->slot };
  else
    {
      shape_code (s->a, code);
      shape_code (s->b, code);
      in = (MorokShapeInstr){ ops[s->op], 0 };
    }
  g_array_append_val (code, in);
}

/* Variables by slot, input and output shapes: copied out of the graph. */
gboolean
prepare_describe_io (MorokProgramBuilder *b, MorokSymPool *pool, const MorokSchedule *sched,
                     guint n_inputs, GError **error)
{
  for (guint s = 0; s < morok_sym_pool_n_variables (pool); s++)
    {
      const MorokVariable *v = morok_sym_pool_variable (pool, s);
      morok_program_builder_set_var (b, s, v->name, v->min, v->max);
    }
  for (guint i = 0; i < n_inputs; i++)
    {
      const MorokNode *n = g_array_index (sched->buffers, MorokScheduleBuffer, i).node;
      gint64 shape[MOROK_MAX_RANK];
      for (guint d = 0; d < n->rank; d++)
        shape[d] = morok_sym_hi (n->shape[d]);
      morok_program_builder_add_input (b, i, n->dtype, n->rank, shape);
    }
  g_autoptr (GArray) code = g_array_new (FALSE, FALSE, sizeof (MorokShapeInstr));
  for (guint o = 0; o < sched->n_outputs; o++)
    {
      const MorokNode *asked = sched->output_nodes[o];
      gint64 shape[MOROK_MAX_RANK];
      g_array_set_size (code, 0);
      for (guint d = 0; d < asked->rank; d++)
        {
          shape[d] = morok_sym_hi (asked->shape[d]);
          shape_code (asked->shape[d], code);
        }
      if (!morok_program_builder_add_output (b, sched->outputs[o], asked->dtype, asked->rank, shape,
                                             (const MorokShapeInstr *) code->data, code->len))
        {
          g_autofree char *what = morok_node_shape_string (asked);
          g_set_error (error, MOROK_GRAPH_ERROR, MOROK_GRAPH_ERROR_SCHEDULE,
                       "output %u: shape %s needs a deeper evaluator than %d", o, what,
                       MOROK_SHAPE_STACK);
          return FALSE;
        }
    }
  return TRUE;
}

/* The steps: each kernel's function @fns[k] with its binding table. */
void
prepare_add_steps (MorokProgramBuilder *b, const MorokSchedule *sched, const MorokPlanOptions *opts,
                   MorokKernelFn *fns)
{
  guint threads = prepare_plan_threads (opts);
  g_autoptr (GArray) bindings = g_array_new (FALSE, FALSE, sizeof (guint));
  for (guint k = 0; k < sched->kernels->len; k++)
    {
      const MorokScheduleKernel *ker = &g_array_index (sched->kernels, MorokScheduleKernel, k);
      guint nthreads = morok_schedule_kernel_splits (ker) ? threads : 1;
      g_autofree char *what = morok_node_describe (ker->root);
      g_autofree char *name = g_strdup_printf (
          "k%u %s%s", k, ker->kind == MOROK_KERNEL_MATMUL ? "matmul " : "", what);
      g_array_set_size (bindings, 0);
      morok_render_kernel_bindings (ker, bindings);
      morok_program_builder_add_step (b, fns[k], (const guint *) bindings->data, bindings->len,
                                      nthreads, ker->shared_tasks, name, ker->flops, ker->bytes);
    }
}
