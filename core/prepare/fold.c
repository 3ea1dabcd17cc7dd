/* SPDX-License-Identifier: MIT */
/* Prepare's fold stage: the weight-only subgraphs that kernels would
 * otherwise recompute on every execute, computed once here and read as
 * weights by the plan. */
#define G_LOG_DOMAIN "morok-prepare"
#include "prepare/prepare-private.h"
#include <stdlib.h>
#include <string.h>

/* ---- what to fold ---- */

/* @n below its free views (those that read in place: not a pad, not a
 * cat). */
static MorokNode *
under_free_views (MorokNode *n)
{
  while (morok_op_is_view (n->op) && n->op != MOROK_OP_PAD && n->op != MOROK_OP_CAT)
    n = n->src[0];
  return n;
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
      MorokNode *root = under_free_views (n);
      if (g_hash_table_contains (seen, root))
        {
          g_hash_table_add (seen, n);
          return;
        }
      g_hash_table_add (seen, n);
      g_hash_table_add (seen, root);
      if (!consumer_live || root->op == MOROK_OP_WEIGHT || root->op == MOROK_OP_CONST)
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

/* ---- folds that need no kernel ----
 *
 * Most folded weights are copies: a weight laid out for a product (a cast
 * to its own dtype of views of it: a slice, a transpose, a merge of
 * axes, a zero pad: aligned_copy_of). Prepare copies those itself:
 * compiling a plan for them cost Silero's cold prepare a third of its
 * time (a clang process for eight copies). */

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
  if (!prepare_const_shape (n, dims))
    return FALSE;
  switch (n->op)
    {
    case MOROK_OP_WEIGHT: return n->data != NULL;
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
    case MOROK_OP_EXPAND: return copyable_views (n->src[0]);
    default: return FALSE;
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
        default: g_assert_not_reached ();
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
      || !prepare_const_shape (root, dims) || !copyable_views (root->src[0]))
    return NULL;
  const MorokNode *w = root->src[0];
  while (w->op != MOROK_OP_WEIGHT)
    w = w->src[0];
  const gsize esize = morok_dtype_size (root->dtype);
  const gint64 numel = morok_node_numel_max (root);
  guint8 *data = aligned_alloc (64, morok_round_64 (numel * esize));
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
gboolean
prepare_fold (MorokGraph *graph, MorokNode **roots, guint n_roots, const MorokPlanOptions *opts,
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
  MorokPlan *sub = prepare_build (graph, (MorokNode **) computed->pdata, computed->len, NULL, 0,
                                  opts, TRUE, error);
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
      gpointer data = aligned_alloc (64, morok_round_64 (b->bytes));
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
