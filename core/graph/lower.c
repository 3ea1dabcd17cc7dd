/* SPDX-License-Identifier: MIT */
/* Lowering a graph to a plan: the stages of prepare() in order. */
#define G_LOG_DOMAIN "morok-graph"
#include "graph/morok-lower.h"
#include "graph/morok-pattern.h"
#include "graph/morok-schedule.h"
#include "graph/schedule-private.h"
#include "runtime/plan-private.h"
#include "kernels/weight-pack.h"
#include <stdlib.h>
#include <string.h>

/* Steps estimated below this many flops run on the calling thread: handing
 * a step to the pool costs a few µs when a worker is spinning and tens of µs
 * when it sleeps, about what 4 MFLOP take on one core here. */
#define PARALLEL_MIN_FLOPS 4e6
/* ... or that move at least this many bytes: a memory-bound element-wise
 * step over [250, 768] floats (GigaAM, 10 s) takes ~50 us on one core. */
#define PARALLEL_MIN_BYTES (1 << 20)

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
  &morok_rules_fold, &morok_rules_algebra, &morok_rules_views, &morok_rules_bn_fold,
};

/* ---- folding weight-only subgraphs ---- */

static gboolean
is_free_view_of_leaf (const MorokNode *n)
{
  while (morok_op_is_view (n->op) && n->op != MOROK_OP_PAD && n->op != MOROK_OP_CAT)
    n = n->src[0];
  return n->op == MOROK_OP_WEIGHT || n->op == MOROK_OP_CONST;
}

/* Weight-only nodes read by a node that depends on an input (or that are
 * outputs): computing them once at prepare bakes them into the plan. Free
 * views above a computed node stay views: the node under them is what is
 * computed, in its own layout. */
static void
find_foldable (MorokNode *n, gboolean consumer_live, GHashTable *seen, GPtrArray *out)
{
  if (n->weight_only)
    {
      MorokNode *root = n;
      while (morok_op_is_view (root->op) && root->op != MOROK_OP_PAD && root->op != MOROK_OP_CAT)
        root = root->src[0];
      if (consumer_live && !is_free_view_of_leaf (n) && !g_hash_table_contains (seen, root))
        g_ptr_array_add (out, root);
      g_hash_table_add (seen, n);
      g_hash_table_add (seen, root);
      return;
    }
  if (g_hash_table_contains (seen, n))
    return;
  g_hash_table_add (seen, n);
  for (guint i = 0; i < n->n_src; i++)
    find_foldable (n->src[i], TRUE, seen, out);
}

static MorokNode *
substitute (MorokNode *n, GHashTable *map)
{
  MorokNode *m = g_hash_table_lookup (map, n);
  if (m)
    return m;
  MorokNode p = *n, *src[MOROK_MAX_SRC];
  gboolean changed = FALSE;
  for (guint i = 0; i < n->n_src; i++)
    {
      src[i] = substitute (n->src[i], map);
      changed = changed || src[i] != n->src[i];
      p.src[i] = src[i];
    }
  m = changed ? morok_graph_intern (n->graph, &p) : n;
  g_hash_table_insert (map, n, m);
  return m;
}

/* ---- constant operands laid out for small contractions ----
 *
 * A contraction with at most this many rows (or columns) runs unpacked
 * (kernels/include/morok-gemm.h, MOROK_GEMM_SMALL), fastest when the
 * operand on the wide side is contiguous along that side: B [K, N] with
 * unit stride in n, or A with unit stride in m, and 64-byte aligned rows. A
 * weight-only operand that is not gets a copy in that layout, computed at
 * prepare like any folded weight (which is stored aligned): B -> copy (B),
 * A -> permute (copy (permute (A))). The copy is an identity cast, which no
 * rule removes. */

static gboolean
is_leaf (MorokNode *n, gpointer ctx)
{
  (void) ctx;
  return n->op == MOROK_OP_WEIGHT || n->op == MOROK_OP_INPUT;
}

#define ROW_ALIGN 16 /* floats: 64 bytes */

/* TRUE if @n is a strided view of a leaf whose axis @axis has unit stride,
 * whose rows (along @row; a vector or more long) start a multiple of 64
 * bytes apart, and whose
 * first element is 64-byte aligned (a weight's data comes from malloc, 16
 * bytes past a page for the large ones): otherwise vector loads span two
 * cache lines. */
static gboolean
laid_out (MorokNode *n, guint axis, guint row)
{
  MorokStrided s;
  MorokNode *stop;
  gint64 one, rs, offset;
  if (!morok_strided_walk (n, is_leaf, NULL, &s, &stop))
    return FALSE;
  if (n->shape[axis]->hi == 1) /* one column (row): read as the dot product it is */
    return TRUE;
  if (!morok_sym_is_const (s.stride[axis], &one) || one != 1)
    return FALSE;
  if (n->shape[row]->hi > 1 && n->shape[axis]->hi >= ROW_ALIGN
      && (!morok_sym_is_const (s.stride[row], &rs) || rs % ROW_ALIGN))
    return FALSE;
  if (s.base->op != MOROK_OP_WEIGHT)
    return TRUE;
  return morok_sym_is_const (s.offset, &offset)
         && ((guintptr) s.base->data + (guintptr) (offset * morok_dtype_size (n->dtype))) % 64 == 0;
}

static MorokNode *
copy_of (MorokNode *n)
{
  MorokNode c = { .op = MOROK_OP_CAST, .dtype = n->dtype, .rank = n->rank, .n_src = 1 };
  memcpy (c.shape, n->shape, sizeof c.shape);
  c.src[0] = n;
  return morok_graph_intern (n->graph, &c);
}

/* A contiguous copy of @n with rows (of a vector or more) 64 bytes apart:
 * the last axis padded to a multiple of ROW_ALIGN for the copy, a view
 * drops the padding. */
static MorokNode *
aligned_copy_of (MorokNode *n)
{
  guint r = n->rank;
  gint64 w;
  if (r < 2 || !morok_sym_is_const (n->shape[r - 1], &w) || w < ROW_ALIGN || w % ROW_ALIGN == 0)
    return copy_of (n);
  MorokSymPool *pool = morok_graph_sym_pool (n->graph);
  MorokNode p = { .op = MOROK_OP_PAD, .dtype = n->dtype, .rank = r, .n_src = 1,
                  .pad_mode = MOROK_PAD_CONSTANT };
  memcpy (p.shape, n->shape, sizeof p.shape);
  for (guint i = 0; i < r; i++)
    p.lo[i] = p.hi[i] = morok_sym_const (pool, 0);
  p.hi[r - 1] = morok_sym_const (pool, (w + ROW_ALIGN - 1) / ROW_ALIGN * ROW_ALIGN - w);
  p.shape[r - 1] = morok_sym_const (pool, w + p.hi[r - 1]->hi);
  p.src[0] = n;
  MorokNode k = { .op = MOROK_OP_SHRINK, .dtype = n->dtype, .rank = r, .n_src = 1 };
  memcpy (k.shape, n->shape, sizeof k.shape);
  for (guint i = 0; i < r; i++)
    k.lo[i] = morok_sym_const (pool, 0);
  k.src[0] = copy_of (morok_graph_intern (n->graph, &p));
  return morok_graph_intern (n->graph, &k);
}

static MorokNode *
swap_last (MorokNode *n)
{
  MorokNode p = { .op = MOROK_OP_PERMUTE, .dtype = n->dtype, .rank = n->rank, .n_src = 1 };
  for (guint i = 0; i < n->rank; i++)
    {
      guint from = i + 2 == n->rank ? i + 1 : i + 1 == n->rank ? i - 1 : i;
      p.perm[i] = from;
      p.shape[i] = n->shape[from];
    }
  p.src[0] = n;
  return morok_graph_intern (n->graph, &p);
}

static MorokNode *
relayout (MorokNode *n, GHashTable *map)
{
  MorokNode *m = g_hash_table_lookup (map, n);
  if (m)
    return m;
  MorokNode p = *n;
  gboolean changed = FALSE;
  for (guint i = 0; i < n->n_src; i++)
    {
      p.src[i] = relayout (n->src[i], map);
      changed = changed || p.src[i] != n->src[i];
    }
  if (n->op == MOROK_OP_MATMUL && n->dtype == MOROK_DTYPE_F32)
    {
      guint r = n->rank;
      MorokNode *a = p.src[0], *b = p.src[1];
      if (n->shape[r - 2]->hi <= MOROK_GEMM_SMALL && b->weight_only && !laid_out (b, r - 1, r - 2))
        p.src[1] = aligned_copy_of (b), changed = TRUE;
      else if (n->shape[r - 1]->hi <= MOROK_GEMM_SMALL && n->shape[r - 2]->hi > MOROK_GEMM_SMALL
               && a->weight_only && !laid_out (a, r - 2, r - 1))
        p.src[0] = swap_last (aligned_copy_of (swap_last (a))), changed = TRUE;
    }
  m = changed ? morok_graph_intern (n->graph, &p) : n;
  g_hash_table_insert (map, n, m);
  return m;
}

static MorokPlan *build (MorokGraph *graph, MorokNode **outputs, guint n_outputs,
                         MorokNode *const *inputs, guint n_inputs, const MorokPlanOptions *opts,
                         gboolean fold, GPtrArray *keep, GError **error);

/* Computes the foldable nodes with a plan of their own and replaces them by
 * weights that @keep owns. */
static gboolean
fold_weights (MorokGraph *graph, MorokNode **roots, guint n_roots, const MorokPlanOptions *opts,
              GPtrArray *keep, GError **error)
{
  g_autoptr (GPtrArray) fold = g_ptr_array_new ();
  g_autoptr (GHashTable) seen = g_hash_table_new (NULL, NULL);
  for (guint i = 0; i < n_roots; i++)
    find_foldable (roots[i], TRUE, seen, fold);
  if (fold->len == 0)
    return TRUE;
  MorokPlan *sub = build (graph, (MorokNode **) fold->pdata, fold->len, NULL, 0, opts, FALSE, keep,
                          error);
  if (!sub)
    {
      g_prefix_error (error, "folding weights: ");
      return FALSE;
    }
  gboolean ok = morok_plan_execute (sub, NULL, 0, error);
  g_autoptr (GHashTable) map = g_hash_table_new (NULL, NULL);
  for (guint i = 0; ok && i < fold->len; i++)
    {
      MorokNode *n = g_ptr_array_index (fold, i);
      const MorokBuffer *b = morok_plan_output (sub, i);
      /* 64-byte aligned, as the plan's own buffers */
      gpointer data = aligned_alloc (64, MAX ((b->bytes + 63) / 64 * 64, 64));
      if (data == NULL)
        {
          g_set_error (error, MOROK_RUNTIME_ERROR, MOROK_RUNTIME_ERROR_VARIABLE,
                       "out of memory for a folded weight of %" G_GSIZE_FORMAT " bytes", b->bytes);
          ok = FALSE;
          break;
        }
      memcpy (data, b->data, b->bytes);
      g_ptr_array_add (keep, data);
      MorokNode w = { .op = MOROK_OP_WEIGHT, .dtype = n->dtype, .rank = n->rank, .data = data };
      memcpy (w.shape, n->shape, sizeof w.shape);
      g_hash_table_insert (map, n, morok_graph_new_leaf (graph, &w, "folded"));
    }
  sub->graph = NULL; /* the graph is ours */
  morok_plan_free (sub);
  for (guint i = 0; ok && i < n_roots; i++)
    roots[i] = substitute (roots[i], map);
  return ok;
}

/* ---- constant operands packed for the GEMM ----
 *
 * A matmul whose B is a weight (the same for every batch) and whose M and N
 * are too large for the small paths reads B from panels packed here, once:
 * packing it on every call cost a third of the GigaAM encoder's time
 * (docs/benchmarks.md). Products with N <= 16 run transposed (the renderer's
 * narrow path) and keep their B as it is. Kernels reading the same view of a
 * weight share its panels. */

static gboolean
packable_b (const MorokSchedule *sched, const MorokScheduleKernel *ker, MorokPacking *pk)
{
  MorokNode *m = ker->matmul;
  if (ker->kind != MOROK_KERNEL_MATMUL)
    return FALSE;
  guint r = m->rank;
  MorokStrided b;
  if (m->dtype != MOROK_DTYPE_F32
      || m->src[1]->dtype != MOROK_DTYPE_F32 || !morok_schedule_strided (sched, m->src[1], &b))
    return FALSE;
  guint src = morok_schedule_buffer_of (sched, b.base) - 1;
  if (g_array_index (sched->buffers, MorokScheduleBuffer, src).kind != MOROK_BUFFER_WEIGHT)
    return FALSE;
  for (guint i = 0; i + 2 < r; i++)
    {
      gint64 st;
      if (!morok_sym_is_const (b.stride[i], &st) || st != 0)
        return FALSE;
    }
  *pk = (MorokPacking){ .source = src };
  return m->shape[r - 2]->hi > MOROK_GEMM_SMALL && morok_sym_is_const (m->src[1]->shape[r - 2], &pk->k)
         && morok_sym_is_const (m->shape[r - 1], &pk->n) && pk->n > 16 && morok_sym_is_const (b.offset, &pk->offset)
         && morok_sym_is_const (b.stride[r - 2], &pk->sbk) && morok_sym_is_const (b.stride[r - 1], &pk->sbn);
}

/* Threads a step of the plan may use. */
static guint
plan_threads (const MorokPlanOptions *opts)
{
  return opts->threads ? MIN (opts->threads, morok_thread_pool_size ()) : morok_thread_pool_size ();
}

static void
pack_weights (MorokSchedule *sched, const MorokPlanOptions *opts)
{
  gsize scratch_stride = 0;
  gboolean any = FALSE;
  g_autoptr (GHashTable) made = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  for (guint k = 0; k < sched->kernels->len; k++)
    {
      MorokScheduleKernel *ker = &g_array_index (sched->kernels, MorokScheduleKernel, k);
      MorokPacking pk;
      if (!packable_b (sched, ker, &pk))
        continue;
      pk.nr = morok_weight_pack_nr (opts->isa);
      pk.format = ker->matmul->exact ? MOROK_PRECISION_F32 : opts->precision;
      char *key = g_strdup_printf ("%u %" G_GINT64_FORMAT " %" G_GINT64_FORMAT " %" G_GINT64_FORMAT
                                   " %" G_GINT64_FORMAT " %" G_GINT64_FORMAT " %d", pk.source,
                                   pk.offset, pk.k, pk.n, pk.sbk, pk.sbn, pk.format);
      guint idx = GPOINTER_TO_UINT (g_hash_table_lookup (made, key));
      if (!idx)
        {
          const MorokScheduleBuffer *src
              = &g_array_index (sched->buffers, MorokScheduleBuffer, pk.source);
          MorokScheduleBuffer b = { .kind = MOROK_BUFFER_PACKED, .node = src->node, .pack = pk,
                                    .first = -1, .last = -1 };
          b.bytes = morok_weight_pack_bytes (pk.k, pk.n, pk.nr, pk.format);
          g_array_append_val (sched->buffers, b);
          idx = sched->buffers->len;
          g_hash_table_insert (made, key, GUINT_TO_POINTER (idx));
        }
      else
        g_free (key);
      ker->packed_b = idx;
      guint bi = idx - 1;
      g_array_append_val (ker->reads, bi);
      ker->scratch_stride = morok_weight_pack_scratch_bytes (
          ker->matmul->shape[ker->matmul->rank - 2]->hi, pk.k, pk.format, ker->root != ker->matmul);
      scratch_stride = MAX (scratch_stride, ker->scratch_stride);
      /* the AMX kernel converts all of its A per call: one column block per thread */
      ker->shared_tasks = !morok_weight_pack_amx_parts (pk.format);
      any = TRUE;
    }
  if (!any)
    return;
  /* the slices, then one cache line for the task counter */
  MorokScheduleBuffer s = { .kind = MOROK_BUFFER_SCRATCH, .first = -1, .last = -1,
                            .bytes = (scratch_stride * plan_threads (opts) + 63) / 64 * 64 + 64 };
  g_array_append_val (sched->buffers, s);
  for (guint k = 0; k < sched->kernels->len; k++)
    {
      MorokScheduleKernel *ker = &g_array_index (sched->kernels, MorokScheduleKernel, k);
      if (ker->packed_b)
        ker->scratch = sched->buffers->len;
    }
}

/* ---- the plan ---- */

static gboolean
link_plan (MorokPlan *plan, const MorokSchedule *sched, const MorokPlanOptions *opts,
           guint n_inputs, GError **error)
{
  g_autofree char *src = morok_render_schedule (sched, opts->isa, error);
  if (!src)
    return FALSE;
  plan->object = morok_compile (src, &opts->compile, error);
  if (!plan->object)
    return FALSE;
  guint threads = plan_threads (opts);
  for (guint k = 0; k < sched->kernels->len; k++)
    {
      const MorokScheduleKernel *ker = &g_array_index (sched->kernels, MorokScheduleKernel, k);
      char fn_name[32];
      g_snprintf (fn_name, sizeof fn_name, "morok_k%u", k);
      MorokStep step = { .flops = ker->flops, .bytes = ker->bytes, .shared_tasks = ker->shared_tasks };
      step.fn = (MorokKernelFn) morok_object_lookup (plan->object, fn_name, error);
      if (!step.fn)
        return FALSE;
      step.nthreads
          = ker->flops >= PARALLEL_MIN_FLOPS || ker->bytes >= PARALLEL_MIN_BYTES ? threads : 1;
      g_autofree char *what = morok_node_describe (ker->root);
      step.name = g_strdup_printf ("k%u %s%s", k, ker->kind == MOROK_KERNEL_MATMUL ? "matmul " : "",
                                   what);
      g_array_append_val (plan->steps, step);
    }
  return TRUE;
}

static gboolean
allocate (MorokPlan *plan, const MorokSchedule *sched, guint n_inputs, GError **error)
{
  plan->n_bufs = sched->buffers->len;
  plan->bufs = g_new0 (void *, MAX (plan->n_bufs, 1));
  plan->arena_bytes = sched->arena_bytes;
  plan->arena = sched->arena_bytes ? morok_plan_alloc (plan, sched->arena_bytes) : NULL;
  for (guint i = 0; i < sched->buffers->len; i++)
    {
      const MorokScheduleBuffer *b = &g_array_index (sched->buffers, MorokScheduleBuffer, i);
      switch (b->kind)
        {
        case MOROK_BUFFER_WEIGHT:
          plan->bufs[i] = (void *) b->node->data;
          break;
        case MOROK_BUFFER_TEMP:
          plan->bufs[i] = (guint8 *) plan->arena + b->offset;
          break;
        case MOROK_BUFFER_PACKED:
          plan->bufs[i] = morok_plan_alloc (plan, b->bytes);
          plan->packed_bytes += b->bytes;
          if (plan->bufs[i])
            morok_weight_pack ((const float *) plan->bufs[b->pack.source] + b->pack.offset,
                               b->pack.k, b->pack.n, b->pack.sbk, b->pack.sbn, b->pack.nr,
                               b->pack.format, plan->bufs[i]);
          break;
        case MOROK_BUFFER_SCRATCH:
          plan->bufs[i] = morok_plan_alloc (plan, b->bytes);
          if (plan->bufs[i])
            plan->task_counter = (gint64 *) ((guint8 *) plan->bufs[i] + b->bytes - 64);
          break;
        default:
          plan->bufs[i] = morok_plan_alloc (plan, b->bytes);
        }
      if (!plan->bufs[i] && b->bytes)
        {
          g_set_error (error, MOROK_RUNTIME_ERROR, MOROK_RUNTIME_ERROR_VARIABLE,
                       "out of memory for a buffer of %" G_GSIZE_FORMAT " bytes", b->bytes);
          return FALSE;
        }
    }
  plan->n_inputs = n_inputs;
  plan->inputs = g_new0 (MorokBuffer, MAX (n_inputs, 1));
  for (guint i = 0; i < n_inputs; i++)
    {
      const MorokScheduleBuffer *b = &g_array_index (sched->buffers, MorokScheduleBuffer, i);
      MorokBuffer *in = &plan->inputs[i];
      *in = (MorokBuffer){ .data = plan->bufs[i], .bytes = b->bytes, .dtype = b->node->dtype,
                           .rank = b->node->rank };
      for (guint d = 0; d < in->rank; d++)
        in->shape[d] = morok_sym_hi (b->node->shape[d]);
    }
  plan->n_outputs = sched->n_outputs;
  plan->outputs = g_new0 (MorokBuffer, sched->n_outputs);
  plan->out_info = g_new0 (MorokPlanOutput, sched->n_outputs);
  for (guint o = 0; o < sched->n_outputs; o++)
    {
      const MorokScheduleBuffer *b
          = &g_array_index (sched->buffers, MorokScheduleBuffer, sched->outputs[o]);
      plan->outputs[o] = (MorokBuffer){ .data = plan->bufs[sched->outputs[o]], .bytes = b->bytes,
                                        .dtype = b->node->dtype, .rank = b->node->rank };
      plan->out_info[o].buffer = sched->outputs[o];
      const MorokNode *asked = sched->output_nodes[o];
      plan->outputs[o].rank = plan->out_info[o].rank = asked->rank;
      plan->outputs[o].dtype = asked->dtype;
      memcpy (plan->out_info[o].shape, asked->shape, sizeof asked->shape);
      /* variables start at their upper bounds: so does the shape until the first execute */
      for (guint d = 0; d < asked->rank; d++)
        plan->outputs[o].shape[d] = morok_sym_hi (asked->shape[d]);
    }
  return TRUE;
}

static MorokPlan *
build (MorokGraph *graph, MorokNode **roots, guint n_roots, MorokNode *const *inputs,
       guint n_inputs, const MorokPlanOptions *opts, gboolean fold, GPtrArray *keep,
       GError **error)
{
  g_atomic_pointer_add (&build_count, 1);
  if (!morok_graph_rewrite (roots, n_roots, rule_sets, G_N_ELEMENTS (rule_sets), error))
    return NULL;
  if (fold)
    {
      g_autoptr (GHashTable) map = g_hash_table_new (NULL, NULL);
      for (guint i = 0; i < n_roots; i++)
        roots[i] = relayout (roots[i], map);
    }
  if (fold && !fold_weights (graph, roots, n_roots, opts, keep, error))
    return NULL;
  g_autoptr (MorokSchedule) sched = morok_schedule_new (roots, n_roots, inputs, n_inputs, error);
  if (!sched)
    return NULL;
  if (fold)
    pack_weights (sched, opts);
  MorokPlan *plan = morok_plan_new_empty (graph);
  MorokSymPool *pool = morok_graph_sym_pool (graph);
  plan->n_vars = morok_sym_pool_n_variables (pool);
  plan->vars = g_new0 (gint64, MAX (plan->n_vars, 1));
  for (guint s = 0; s < plan->n_vars; s++)
    plan->vars[s] = morok_sym_pool_variable (pool, s)->max;
  if (!allocate (plan, sched, n_inputs, error) || !link_plan (plan, sched, opts, n_inputs, error))
    {
      plan->graph = NULL;
      morok_plan_free (plan);
      return NULL;
    }
  g_info ("plan: %u steps, %u buffers, arena %" G_GSIZE_FORMAT " bytes", plan->steps->len,
          plan->n_bufs, plan->arena_bytes);
  return plan;
}

gboolean
morok_plan_precision_supported (MorokIsa isa, MorokPrecision precision, GError **error)
{
  const char *missing = morok_weight_pack_missing (isa, precision);
  if (!missing)
    return TRUE;
  if ((guint) precision >= MOROK_PRECISION_COUNT)
    g_set_error (error, MOROK_GRAPH_ERROR, MOROK_GRAPH_ERROR_SCHEDULE,
                 "precision %d: not one of f32, f16, bf16, bf16x3, int8", precision);
  else
    g_set_error (error, MOROK_GRAPH_ERROR, MOROK_GRAPH_ERROR_SCHEDULE,
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
  GPtrArray *keep = g_ptr_array_new_with_free_func (free);
  MorokPlan *plan = build (graph, roots, n_outputs, inputs, n_inputs, opts, TRUE, keep, error);
  if (!plan)
    {
      g_ptr_array_unref (keep);
      morok_graph_free (graph);
      return NULL;
    }
  plan->folded = keep; /* folded weights live as long as the plan */
  return plan;
}
