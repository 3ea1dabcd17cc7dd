/* SPDX-License-Identifier: MIT */
/* Pattern matching and the bottom-up rewrite driver. */
#define G_LOG_DOMAIN "morok-graph"
#include "graph/morok-pattern.h"

/* Rewrites allowed per graph node before we call it endless. */
#define REWRITES_PER_NODE 64

MorokNode *
morok_captures_get (const MorokCaptures *cap, const char *name)
{
  for (guint i = 0; i < cap->n; i++)
    if (g_str_equal (cap->name[i], name))
      return cap->node[i];
  return NULL;
}

static gboolean
match (const MorokPattern *pat, MorokNode *node, MorokCaptures *cap)
{
  if (pat->ops && !(pat->ops >> node->op & 1))
    return FALSE;
  if (pat->dtypes && !(pat->dtypes >> node->dtype & 1))
    return FALSE;
  if (pat->match_value && (node->op != MOROK_OP_CONST || node->value != pat->value))
    return FALSE;
  if (pat->name)
    {
      /* a name seen twice must capture the same node */
      MorokNode *prev = morok_captures_get (cap, pat->name);
      if (prev)
        return prev == node;
      if (cap->n == MOROK_PATTERN_MAX_CAPTURES)
        return FALSE;
      cap->name[cap->n] = pat->name;
      cap->node[cap->n++] = node;
    }
  if (pat->n_src == 0)
    return TRUE;
  if (pat->n_src != node->n_src)
    return FALSE;
  guint saved = cap->n;
  gboolean ok = TRUE;
  for (guint i = 0; ok && i < pat->n_src; i++)
    ok = match (pat->src[i], node->src[i], cap);
  if (ok || !pat->commutative || pat->n_src != 2)
    return ok;
  cap->n = saved;
  return match (pat->src[0], node->src[1], cap) && match (pat->src[1], node->src[0], cap);
}

gboolean
morok_pattern_match (const MorokPattern *pat, MorokNode *node, MorokCaptures *cap)
{
  g_return_val_if_fail (pat && node && cap, FALSE);
  guint saved = cap->n;
  if (match (pat, node, cap))
    return TRUE;
  cap->n = saved;
  return FALSE;
}

/* ---- the driver ---- */

typedef struct
{
  GPtrArray *by_op[MOROK_OP_COUNT]; /* const MorokRule*, rules whose root may be op */
  GHashTable *done;                 /* node -> its final rewrite */
  guint64 budget;
  GError **error;
} Rewriter;

/* The same node with new sources (interned: equal nodes stay shared). */
static MorokNode *
with_sources (MorokNode *n, MorokNode *const *src)
{
  gboolean same = TRUE;
  for (guint i = 0; i < n->n_src; i++)
    same = same && src[i] == n->src[i];
  if (same || n->op == MOROK_OP_INPUT)
    return n;
  MorokNode p = *n;
  for (guint i = 0; i < n->n_src; i++)
    p.src[i] = src[i];
  return morok_graph_intern (n->graph, &p);
}

static MorokNode *
rewrite_node (Rewriter *rw, MorokNode *n)
{
  MorokNode *done = g_hash_table_lookup (rw->done, n);
  if (done)
    return done;
  MorokNode *src[MOROK_MAX_SRC];
  for (guint i = 0; i < n->n_src; i++)
    if (!(src[i] = rewrite_node (rw, n->src[i])))
      return NULL;
  MorokNode *cur = with_sources (n, src);
  for (;;)
    {
      MorokNode *next = NULL;
      GPtrArray *rules = rw->by_op[cur->op];
      for (guint i = 0; rules && !next && i < rules->len; i++)
        {
          const MorokRule *rule = g_ptr_array_index (rules, i);
          MorokCaptures cap = { 0 };
          if (morok_pattern_match (rule->pattern, cur, &cap))
            next = rule->rewrite (cur, &cap);
          if (next == cur)
            next = NULL;
          if (next)
            g_debug ("rewrite: %s", rule->doc);
        }
      if (!next)
        break;
      if (rw->budget-- == 0)
        {
          g_autofree char *d = morok_node_describe (cur);
          g_set_error (rw->error, MOROK_GRAPH_ERROR, MOROK_GRAPH_ERROR_REWRITE,
                       "rewrite rules did not settle (last at %s)", d);
          return NULL;
        }
      /* the replacement may hold new nodes: rewrite them too */
      if (!(cur = rewrite_node (rw, next)))
        return NULL;
    }
  g_hash_table_insert (rw->done, n, cur);
  g_hash_table_insert (rw->done, cur, cur);
  return cur;
}

gboolean
morok_graph_rewrite (MorokNode **roots, guint n_roots, const MorokRuleSet *const *sets,
                     guint n_sets, GError **error)
{
  g_return_val_if_fail (roots != NULL && n_roots > 0, FALSE);
  Rewriter rw = { .error = error };
  rw.budget = (guint64) REWRITES_PER_NODE * (morok_graph_n_nodes (roots[0]->graph) + 16);
  for (guint s = 0; s < n_sets; s++)
    for (guint r = 0; r < sets[s]->n_rules; r++)
      {
        const MorokRule *rule = &sets[s]->rules[r];
        for (guint op = 0; op < MOROK_OP_COUNT; op++)
          if (!rule->pattern->ops || (rule->pattern->ops >> op & 1))
            {
              if (!rw.by_op[op])
                rw.by_op[op] = g_ptr_array_new ();
              g_ptr_array_add (rw.by_op[op], (gpointer) rule);
            }
      }
  rw.done = g_hash_table_new (NULL, NULL);
  gboolean ok = TRUE;
  for (guint i = 0; ok && i < n_roots; i++)
    {
      MorokNode *r = rewrite_node (&rw, roots[i]);
      ok = r != NULL;
      if (ok)
        roots[i] = r;
    }
  g_hash_table_unref (rw.done);
  for (guint op = 0; op < MOROK_OP_COUNT; op++)
    if (rw.by_op[op])
      g_ptr_array_unref (rw.by_op[op]);
  return ok;
}
