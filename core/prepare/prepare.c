/* SPDX-License-Identifier: MIT */
/* Prepare: a graph to a program, the stages in order (rewrite, relayout,
 * fold, schedule, pack, render, compile, place the buffers). */
#define G_LOG_DOMAIN "morok-prepare"
#include "prepare/morok-prepare.h"
#include "prepare/morok-rules.h"
#include "prepare/link-private.h"
#include "graph/morok-schedule.h"
#include "runtime/morok-program-builder.h"
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
  &morok_rules_fold, &morok_rules_algebra, &morok_rules_views, &morok_rules_bn_fold,
  &morok_rules_column,
};

/* ---- folding weight-only subgraphs ---- */

static gboolean
is_free_view_of_leaf (const MorokNode *n)
{
  while (morok_op_is_view (n->op) && n->op != MOROK_OP_PAD && n->op != MOROK_OP_CAT)
    n = n->src[0];
  return n->op == MOROK_OP_WEIGHT || n->op == MOROK_OP_CONST;
}

/* A folded node is resident for the program's life at its size at the
 * bounds, while computing it per execute costs an element-wise pass. A
 * weight-only node whose result is larger than FOLD_MAX_GROWTH times the
 * weights it reads and larger than FOLD_MIN_BYTES is left to the kernels
 * that read it: GigaAM's scaled feed-forward biases, bias · 0.5 broadcast
 * to [b, t, 768] (2.3 MB each at the 30 s bound, 32 of them, from 3 kB of
 * bias each), are an epilogue multiply. Below the floor everything folds
 * (Silero's laid-out weight copies, up to 256 kB; tables of constants
 * alone, which read no weights). */
#define FOLD_MAX_GROWTH 2
#define FOLD_MIN_BYTES (1 << 20)

static gsize
node_bytes (const MorokNode *n)
{
  return (gsize) morok_node_numel_max (n) * morok_dtype_size (n->dtype);
}

/* Bytes of the distinct weights under @n (constants are scalars). */
static gsize
weight_bytes_under (const MorokNode *n, GHashTable *seen)
{
  if (!g_hash_table_add (seen, (gpointer) n))
    return 0;
  if (n->op == MOROK_OP_WEIGHT)
    return node_bytes (n);
  gsize sum = 0;
  for (guint i = 0; i < n->n_src; i++)
    sum += weight_bytes_under (n->src[i], seen);
  return sum;
}

static gboolean
worth_folding (const MorokNode *n)
{
  gsize bytes = node_bytes (n);
  if (bytes <= FOLD_MIN_BYTES)
    return TRUE;
  g_autoptr (GHashTable) seen = g_hash_table_new (NULL, NULL);
  gsize read = weight_bytes_under (n, seen);
  gboolean worth = bytes <= FOLD_MAX_GROWTH * read;
  if (!worth)
    {
      g_autofree char *what = morok_node_describe (n);
      g_debug ("not folded: %s, %" G_GSIZE_FORMAT " bytes from %" G_GSIZE_FORMAT
               " bytes of weights",
               what, bytes, read);
    }
  return worth;
}

/* Weight-only nodes read by a node that depends on an input (or that are
 * outputs): computing them once at prepare bakes them into the plan, unless
 * they are not worth_folding (then what they read is looked at as if read
 * by input-dependent code). Free views above a computed node stay views:
 * the node under them is what is computed, in its own layout. */
static void
find_foldable (MorokNode *n, gboolean consumer_live, GHashTable *seen, GPtrArray *out)
{
  if (n->weight_only)
    {
      MorokNode *root = n;
      while (morok_op_is_view (root->op) && root->op != MOROK_OP_PAD && root->op != MOROK_OP_CAT)
        root = root->src[0];
      if (g_hash_table_contains (seen, root))
        {
          g_hash_table_add (seen, n);
          return;
        }
      g_hash_table_add (seen, n);
      g_hash_table_add (seen, root);
      if (!consumer_live || is_free_view_of_leaf (n))
        return;
      if (worth_folding (root))
        {
          g_ptr_array_add (out, root);
          return;
        }
      for (guint i = 0; i < root->n_src; i++)
        find_foldable (root->src[i], TRUE, seen, out);
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

/* TRUE if @n reads a leaf in place (a strided view): the GEMM's packing
 * then reads the weight itself at prepare. A weight-only B that is not (a
 * permute the reshape after it cannot merge) would be copied on every
 * execute: it gets its copy at prepare instead, whatever the rows. */
static gboolean
strided_leaf (MorokNode *n)
{
  MorokStrided s;
  MorokNode *stop;
  return morok_strided_walk (n, is_leaf, NULL, &s, &stop);
}

/* @n's shape as integers; FALSE if a dimension is not a constant. */
static gboolean
const_shape (const MorokNode *n, gint64 *dims)
{
  for (guint i = 0; i < n->rank; i++)
    if (!morok_sym_is_const (n->shape[i], &dims[i]))
      return FALSE;
  return TRUE;
}

/* An element-wise kernel vectorises its last axis: a weight read there
 * with a stride other than 0 or 1 is a gather per vector (GigaAM's
 * depthwise taps, w[ch, j] for one j, five floats apart: five gathers per
 * 16 channels). @n with the weight under its broadcasts (expands, and
 * reshapes that keep the last axis) copied contiguous at prepare; else
 * @n. */
static MorokNode *
ungathered (MorokNode *n)
{
  guint r = n->rank;
  if (r == 0 || !n->weight_only)
    return n;
  if ((n->op == MOROK_OP_EXPAND || n->op == MOROK_OP_RESHAPE) && n->src[0]->rank > 0
      && n->src[0]->shape[n->src[0]->rank - 1] == n->shape[r - 1])
    {
      MorokNode *src = ungathered (n->src[0]);
      if (src == n->src[0])
        return n;
      MorokNode p = *n;
      p.src[0] = src;
      return morok_graph_intern (n->graph, &p);
    }
  MorokStrided s;
  MorokNode *stop;
  gint64 stride, dims[MOROK_MAX_RANK];
  if (n->op == MOROK_OP_WEIGHT || !morok_op_is_view (n->op) || n->shape[r - 1]->hi <= 1
      || !const_shape (n, dims) || !morok_strided_walk (n, is_leaf, NULL, &s, &stop)
      || s.base->op != MOROK_OP_WEIGHT)
    return n;
  if (morok_sym_is_const (s.stride[r - 1], &stride) && (stride == 0 || stride == 1))
    return n;
  return copy_of (n);
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
      gboolean small = n->shape[r - 2]->hi <= MOROK_GEMM_SMALL;
      if (b->weight_only && (small ? !laid_out (b, r - 1, r - 2) : !strided_leaf (b)))
        p.src[1] = aligned_copy_of (b), changed = TRUE;
      else if (n->shape[r - 1]->hi <= MOROK_GEMM_SMALL && n->shape[r - 2]->hi > MOROK_GEMM_SMALL
               && a->weight_only && !laid_out (a, r - 2, r - 1))
        p.src[0] = swap_last (aligned_copy_of (swap_last (a))), changed = TRUE;
    }
  else if (morok_op_is_elementwise (n->op))
    for (guint i = 0; i < n->n_src; i++)
      {
        MorokNode *src = ungathered (p.src[i]);
        changed = changed || src != p.src[i];
        p.src[i] = src;
      }
  m = changed ? morok_graph_intern (n->graph, &p) : n;
  g_hash_table_insert (map, n, m);
  return m;
}

/* ---- folds that need no kernel ----
 *
 * Most folded weights are copies: a weight laid out for a product (a cast
 * to its own dtype of views of it: a slice, a transpose, a merge of
 * axes, a zero pad: aligned_copy_of). Prepare copies those itself;
 * compiling a plan for them cost Silero's cold prepare a third of its
 * time (a clang process for eight copies, 0.29 of 0.86 s). */

static gint64
const_of (const MorokSym *s)
{
  gint64 v = 0;
  morok_sym_is_const (s, &v);
  return v;
}

/* TRUE if the views from @n down to a weight with host data are ones
 * view_source follows, every shape and argument constant. */
static gboolean
copyable_views (const MorokNode *n)
{
  gint64 dims[MOROK_MAX_RANK];
  if (!const_shape (n, dims))
    return FALSE;
  switch (n->op)
    {
    case MOROK_OP_WEIGHT:
      return n->data != NULL;
    case MOROK_OP_PAD:
      if (n->pad_mode != MOROK_PAD_CONSTANT || n->value != 0)
        return FALSE; /* zero bytes are 0 in every dtype */
      G_GNUC_FALLTHROUGH;
    case MOROK_OP_SHRINK:
      for (guint i = 0; i < n->rank; i++)
        if (!morok_sym_is_const (n->lo[i], &dims[i]))
          return FALSE;
      G_GNUC_FALLTHROUGH;
    case MOROK_OP_RESHAPE:
    case MOROK_OP_PERMUTE:
    case MOROK_OP_EXPAND:
      return copyable_views (n->src[0]);
    default:
      return FALSE;
    }
}

/* The element of @n at @idx (rank n->rank, changed on the way) as an
 * element index of the weight under it, or -1 where a pad reads zero. */
static gint64
view_source (const MorokNode *n, gint64 *idx)
{
  for (;;)
    {
      const MorokNode *src = n->src[0];
      gint64 at = 0, d;
      switch (n->op)
        {
        case MOROK_OP_WEIGHT:
          for (guint i = 0; i < n->rank; i++)
            at = at * const_of (n->shape[i]) + idx[i];
          return at;
        case MOROK_OP_PAD:
          for (guint i = 0; i < n->rank; i++)
            if ((idx[i] -= const_of (n->lo[i])) < 0 || idx[i] >= const_of (src->shape[i]))
              return -1;
          break;
        case MOROK_OP_SHRINK:
          for (guint i = 0; i < n->rank; i++)
            idx[i] += const_of (n->lo[i]);
          break;
        case MOROK_OP_EXPAND:
          for (guint i = 0; i < n->rank; i++)
            if (const_of (src->shape[i]) == 1)
              idx[i] = 0;
          break;
        case MOROK_OP_PERMUTE:
          {
            gint64 out[MOROK_MAX_RANK];
            for (guint i = 0; i < n->rank; i++)
              out[n->perm[i]] = idx[i];
            memcpy (idx, out, n->rank * sizeof *idx);
            break;
          }
        case MOROK_OP_RESHAPE:
          for (guint i = 0; i < n->rank; i++)
            at = at * const_of (n->shape[i]) + idx[i];
          for (guint i = src->rank; i-- > 0;)
            d = const_of (src->shape[i]), idx[i] = at % d, at /= d;
          break;
        default:
          g_assert_not_reached ();
        }
      n = src;
    }
}

/* @root's value into a new 64-byte aligned block, if it is a copy (a cast
 * to its own dtype) of views of a weight that copyable_views accepts;
 * else NULL. */
static gpointer
fold_copy (const MorokNode *root)
{
  gint64 dims[MOROK_MAX_RANK];
  if (root->op != MOROK_OP_CAST || root->src[0]->dtype != root->dtype
      || !const_shape (root, dims) || !copyable_views (root->src[0]))
    return NULL;
  const MorokNode *w = root->src[0];
  while (w->op != MOROK_OP_WEIGHT)
    w = w->src[0];
  const gsize esize = morok_dtype_size (root->dtype);
  const gint64 numel = morok_node_numel_max (root);
  guint8 *data = aligned_alloc (64, MAX ((numel * esize + 63) / 64 * 64, 64));
  if (!data)
    return NULL; /* the plan that computes it says so */
  const guint8 *src = w->data;
  for (gint64 e = 0; e < numel; e++)
    {
      gint64 idx[MOROK_MAX_RANK], rest = e;
      for (guint i = root->rank; i-- > 0;)
        idx[i] = rest % dims[i], rest /= dims[i];
      gint64 at = view_source (root->src[0], idx);
      if (at < 0)
        memset (data + e * esize, 0, esize);
      else
        memcpy (data + e * esize, src + at * esize, esize);
    }
  return data;
}

static MorokPlan *build (MorokGraph *graph, MorokNode **outputs, guint n_outputs,
                         MorokNode *const *inputs, guint n_inputs, const MorokPlanOptions *opts,
                         gboolean fold, GError **error);

/* @n's folded value @data (64-byte aligned, now @keep's) as a weight leaf
 * that replaces @n. */
static void
add_folded (MorokGraph *graph, MorokNode *n, gpointer data, const char *how, GPtrArray *keep,
            GHashTable *map)
{
  g_ptr_array_add (keep, data);
  g_autofree char *what = morok_node_describe (n);
  g_debug ("folded (%s): %s, %" G_GSIZE_FORMAT " bytes", how, what, node_bytes (n));
  MorokNode w = { .op = MOROK_OP_WEIGHT, .dtype = n->dtype, .rank = n->rank, .data = data };
  memcpy (w.shape, n->shape, sizeof w.shape);
  g_hash_table_insert (map, n, morok_graph_new_leaf (graph, &w, "folded"));
}

/* Replaces the foldable nodes by weights that @keep owns: copies made
 * here (fold_copy), the others computed by a plan of their own. */
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
  g_autoptr (GHashTable) map = g_hash_table_new (NULL, NULL);
  g_autoptr (GPtrArray) computed = g_ptr_array_new ();
  for (guint i = 0; i < fold->len; i++)
    {
      MorokNode *n = g_ptr_array_index (fold, i);
      gpointer data = fold_copy (n);
      if (data)
        add_folded (graph, n, data, "copied", keep, map);
      else
        g_ptr_array_add (computed, n);
    }
  if (computed->len == 0)
    goto substitute;
  MorokPlan *sub = build (graph, (MorokNode **) computed->pdata, computed->len, NULL, 0, opts,
                          FALSE, error);
  if (!sub)
    {
      g_prefix_error (error, "folding weights: ");
      return FALSE;
    }
  gboolean ok = morok_plan_execute (sub, NULL, 0, error);
  for (guint i = 0; ok && i < computed->len; i++)
    {
      const MorokBuffer *b = morok_plan_output (sub, i);
      /* 64-byte aligned, as the plan's own buffers */
      gpointer data = aligned_alloc (64, MAX ((b->bytes + 63) / 64 * 64, 64));
      if (data == NULL)
        {
          g_set_error (error, MOROK_RUNTIME_ERROR, MOROK_RUNTIME_ERROR_MEMORY,
                       "out of memory for a folded weight of %" G_GSIZE_FORMAT " bytes", b->bytes);
          ok = FALSE;
          break;
        }
      memcpy (data, b->data, b->bytes);
      add_folded (graph, g_ptr_array_index (computed, i), data, "computed", keep, map);
    }
  morok_plan_free (sub);
  if (!ok)
    return FALSE;
substitute:
  for (guint i = 0; i < n_roots; i++)
    roots[i] = substitute (roots[i], map);
  return TRUE;
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
          ker->matmul->shape[ker->matmul->rank - 2]->hi, pk.k, pk.n, pk.format,
          ker->root != ker->matmul);
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

/* ---- the program ---- */

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

/* The steps: each kernel's function @fns[k] with its binding table. */
static void
add_steps (MorokProgramBuilder *b, const MorokSchedule *sched, const MorokPlanOptions *opts,
           MorokKernelFn *fns)
{
  guint threads = plan_threads (opts);
  g_autoptr (GArray) bindings = g_array_new (FALSE, FALSE, sizeof (guint));
  for (guint k = 0; k < sched->kernels->len; k++)
    {
      const MorokScheduleKernel *ker = &g_array_index (sched->kernels, MorokScheduleKernel, k);
      guint nthreads = morok_schedule_kernel_splits (ker) ? threads : 1;
      g_autofree char *what = morok_node_describe (ker->root);
      g_autofree char *name = g_strdup_printf ("k%u %s%s", k,
                                               ker->kind == MOROK_KERNEL_MATMUL ? "matmul " : "",
                                               what);
      g_array_set_size (bindings, 0);
      morok_render_kernel_bindings (ker, bindings);
      morok_program_builder_add_step (b, fns[k], (const guint *) bindings->data, bindings->len,
                                      nthreads, ker->shared_tasks, name, ker->flops, ker->bytes);
    }
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
      guint source = ker->packed_b ? g_array_index (sched->buffers, MorokScheduleBuffer,
                                                    ker->packed_b - 1).pack.source
                                   : G_MAXUINT;
      for (guint r = 0; r < ker->reads->len; r++)
        {
          guint buf = g_array_index (ker->reads, guint, r);
          const MorokScheduleBuffer *rb = &g_array_index (sched->buffers, MorokScheduleBuffer, buf);
          if (rb->kind != MOROK_BUFFER_WEIGHT)
            continue;
          g_autoptr (GHashTable) seen = g_hash_table_new (NULL, NULL);
          if (buf != source || reads_besides_b (sched, ker->root, ker->root, ker->matmul, buf, seen))
            g_hash_table_add (read, (gpointer) rb->node->data);
        }
    }
  for (guint o = 0; o < sched->n_outputs; o++)
    g_hash_table_add (read, (gpointer) g_array_index (sched->buffers, MorokScheduleBuffer,
                                                      sched->outputs[o]).node->data);
  for (guint i = 0; i < sched->buffers->len; i++)
    {
      const MorokScheduleBuffer *sb = &g_array_index (sched->buffers, MorokScheduleBuffer, i);
      if (sb->kind != MOROK_BUFFER_PACKED)
        continue;
      gconstpointer data
          = g_array_index (sched->buffers, MorokScheduleBuffer, sb->pack.source).node->data;
      g_hash_table_insert (packs, (gpointer) data,
                           GUINT_TO_POINTER (GPOINTER_TO_UINT (g_hash_table_lookup (packs, data)) + 1));
    }
  return read;
}

/* After packed buffer @i: its weight's owner may free the data once the
 * last panel made from it is done and no kernel reads it. */
static void
release_packed_source (const MorokSchedule *sched, guint i, GHashTable *read, GHashTable *packs)
{
  const MorokScheduleBuffer *sb = &g_array_index (sched->buffers, MorokScheduleBuffer, i);
  const MorokNode *w = g_array_index (sched->buffers, MorokScheduleBuffer, sb->pack.source).node;
  guint left = GPOINTER_TO_UINT (g_hash_table_lookup (packs, w->data)) - 1;
  g_hash_table_insert (packs, (gpointer) w->data, GUINT_TO_POINTER (left));
  if (left == 0 && w->release && !g_hash_table_contains (read, w->data))
    w->release (w->release_data, w->data);
}

/* The panels prepare makes, packed by two threads where there are two
 * cores (GigaAM full size: 1.2 GB of panels, most of a warm prepare), in
 * schedule order, each weight released as soon as its last panel is made. */
typedef struct
{
  guint buffer;
  gpointer dst;
} PackJob;

typedef struct
{
  const MorokSchedule *sched;
  GArray *jobs; /* PackJob */
  gint next;    /* the next job to take */
  GHashTable *read, *packs; /* release_packed_source's; read NULL: no release */
  GMutex lock;  /* guards packs */
} Packing;

static gpointer
pack_run (gpointer data)
{
  Packing *pk = data;
  for (guint j; (j = (guint) g_atomic_int_add (&pk->next, 1)) < pk->jobs->len;)
    {
      const PackJob *job = &g_array_index (pk->jobs, PackJob, j);
      const MorokScheduleBuffer *sb
          = &g_array_index (pk->sched->buffers, MorokScheduleBuffer, job->buffer);
      const MorokScheduleBuffer *src
          = &g_array_index (pk->sched->buffers, MorokScheduleBuffer, sb->pack.source);
      morok_weight_pack ((const float *) src->node->data + sb->pack.offset, sb->pack.k, sb->pack.n,
                         sb->pack.sbk, sb->pack.sbn, sb->pack.nr, sb->pack.format, job->dst);
      if (pk->read)
        {
          g_mutex_lock (&pk->lock);
          release_packed_source (pk->sched, job->buffer, pk->read, pk->packs);
          g_mutex_unlock (&pk->lock);
        }
    }
  return NULL;
}

static void
pack_all (Packing *pk)
{
  g_mutex_init (&pk->lock);
  GThread *helper = pk->jobs->len > 1 && g_get_num_processors () > 1
                        ? g_thread_try_new ("morok-pack", pack_run, pk, NULL)
                        : NULL;
  pack_run (pk);
  if (helper)
    g_thread_join (helper);
  g_mutex_clear (&pk->lock);
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
static gboolean
place_buffers (MorokProgramBuilder *b, const MorokSchedule *sched, gboolean release,
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
            gconstpointer data = g_hash_table_contains (read, sb->node->data) ? sb->node->data : NULL;
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
        case MOROK_BUFFER_SCRATCH:
          morok_program_builder_buffer_scratch (b, i, sb->bytes);
          break;
        default:
          morok_program_builder_buffer_context (b, i, sb->bytes);
        }
    }
  pack_all (&pk);
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

/* Variables by slot, input and output shapes: copied out of the graph. */
static gboolean
describe_io (MorokProgramBuilder *b, MorokSymPool *pool, const MorokSchedule *sched,
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
      if (!morok_program_builder_add_output (b, sched->outputs[o], asked->dtype, asked->rank,
                                             shape, (const MorokShapeInstr *) code->data,
                                             code->len))
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

/* Runs prepare on @roots; with @fold, weight-only subexpressions are
 * computed here (by a plan of their own) and products' weights packed. */
static MorokPlan *
build (MorokGraph *graph, MorokNode **roots, guint n_roots, MorokNode *const *inputs,
       guint n_inputs, const MorokPlanOptions *opts, gboolean fold, GError **error)
{
  g_atomic_pointer_add (&build_count, 1);
  gint64 t0 = g_get_monotonic_time ();
  if (!morok_graph_rewrite (roots, n_roots, rule_sets, G_N_ELEMENTS (rule_sets), error))
    return NULL;
  g_autoptr (GPtrArray) folded = g_ptr_array_new_with_free_func (free);
  if (fold)
    {
      g_autoptr (GHashTable) map = g_hash_table_new (NULL, NULL);
      for (guint i = 0; i < n_roots; i++)
        roots[i] = relayout (roots[i], map);
    }
  if (fold && !fold_weights (graph, roots, n_roots, opts, folded, error))
    return NULL;
  g_autoptr (MorokSchedule) sched = morok_schedule_new (roots, n_roots, inputs, n_inputs, error);
  if (!sched)
    return NULL;
  if (fold)
    pack_weights (sched, opts);
  MorokSymPool *pool = morok_graph_sym_pool (graph);
  g_autoptr (MorokProgramBuilder) b
      = morok_program_builder_new (sched->buffers->len, morok_sym_pool_n_variables (pool));
  /* folded weights live as long as the program */
  for (guint i = 0; i < folded->len; i++)
    morok_program_builder_keep (b, folded->pdata[i]);
  g_ptr_array_set_free_func (folded, NULL);
  /* clang runs while the weights are packed */
  gint64 t1 = g_get_monotonic_time ();
  Link *link = link_start (sched, opts->isa, &opts->compile, error);
  if (!link)
    return NULL;
  if (!place_buffers (b, sched, fold, error) || !describe_io (b, pool, sched, n_inputs, error))
    {
      link_finish (link, NULL, NULL);
      return NULL;
    }
  gint64 t2 = g_get_monotonic_time ();
  g_autofree MorokKernelFn *fns = link_finish (link, b, error);
  if (!fns)
    return NULL;
  add_steps (b, sched, opts, fns);
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
  /* the program keeps nothing of the graph */
  MorokPlan *plan = build (graph, roots, n_outputs, inputs, n_inputs, opts, TRUE, error);
  morok_graph_free (graph);
  return plan;
}
