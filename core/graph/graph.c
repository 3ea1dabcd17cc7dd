/* SPDX-License-Identifier: MIT */
/* Hash-consed node storage and node helpers. */
#define G_LOG_DOMAIN "morok-graph"
#include "graph/morok-graph.h"
#include <string.h>

G_DEFINE_QUARK (morok - graph - error - quark, morok_graph_error)

struct _MorokGraph
{
  MorokSymPool *syms;
  GHashTable *nodes; /* MorokNode* -> itself, by content (INPUTs not in it) */
  GPtrArray *all;    /* every node, in creation order; owns them */
};

static void
node_free (gpointer p)
{
  MorokNode *n = p;
  g_free (n->name);
  g_free (n);
}

MorokGraph *
morok_graph_new (void)
{
  MorokGraph *g = g_new0 (MorokGraph, 1);
  g->syms = morok_sym_pool_new ();
  g->all = g_ptr_array_new_with_free_func (node_free);
  return g;
}

void
morok_graph_free (MorokGraph *graph)
{
  if (!graph)
    return;
  if (graph->nodes)
    g_hash_table_unref (graph->nodes);
  g_ptr_array_unref (graph->all);
  morok_sym_pool_free (graph->syms);
  g_free (graph);
}

MorokSymPool *
morok_graph_sym_pool (MorokGraph *graph)
{
  g_return_val_if_fail (graph != NULL, NULL);
  return graph->syms;
}

guint
morok_graph_n_nodes (const MorokGraph *graph)
{
  return graph->all->len;
}

/* Hash and equality over everything that defines a node's value. */
static guint
node_hash (gconstpointer p)
{
  const MorokNode *n = p;
  guint h = n->op * 73856093u ^ n->dtype * 19349663u ^ n->rank * 83492791u;
  for (guint i = 0; i < n->rank; i++)
    h = h * 31u + GPOINTER_TO_UINT (n->shape[i]) + GPOINTER_TO_UINT (n->lo[i]) * 7u
        + GPOINTER_TO_UINT (n->hi[i]) * 13u + n->perm[i];
  for (guint i = 0; i < n->n_src; i++)
    h = h * 131u + GPOINTER_TO_UINT (n->src[i]);
  guint64 bits;
  memcpy (&bits, &n->value, sizeof bits);
  h ^= (guint) bits ^ (guint) (bits >> 32);
  h ^= n->axes_mask * 2654435761u ^ (guint) n->axis * 97u ^ (guint) n->stride * 1009u
       ^ (guint) n->dilation * 7919u ^ n->pad_mode ^ (guint) n->exact * 3u
       ^ GPOINTER_TO_UINT (n->data);
  return h;
}

static gboolean
node_equal (gconstpointer pa, gconstpointer pb)
{
  const MorokNode *a = pa, *b = pb;
  if (a->op != b->op || a->dtype != b->dtype || a->rank != b->rank || a->n_src != b->n_src)
    return FALSE;
  if (memcmp (a->shape, b->shape, a->rank * sizeof a->shape[0])
      || memcmp (a->src, b->src, a->n_src * sizeof a->src[0])
      || memcmp (a->lo, b->lo, a->rank * sizeof a->lo[0])
      || memcmp (a->hi, b->hi, a->rank * sizeof a->hi[0]) || memcmp (a->perm, b->perm, a->rank))
    return FALSE;
  return memcmp (&a->value, &b->value, sizeof a->value) == 0 && a->axes_mask == b->axes_mask
         && a->axis == b->axis && a->stride == b->stride && a->dilation == b->dilation
         && a->pad_mode == b->pad_mode && a->exact == b->exact && a->data == b->data;
}

static MorokNode *
add_node (MorokGraph *graph, const MorokNode *proto, const char *name)
{
  MorokNode *n = g_new (MorokNode, 1);
  *n = *proto;
  /* Unused argument slots must be zero so hashing sees only what matters. */
  for (guint i = n->rank; i < MOROK_MAX_RANK; i++)
    n->shape[i] = n->lo[i] = n->hi[i] = NULL, n->perm[i] = 0;
  for (guint i = n->n_src; i < G_N_ELEMENTS (n->src); i++)
    n->src[i] = NULL;
  n->name = g_strdup (name);
  n->graph = graph;
  n->id = graph->all->len;
  n->weight_only = n->op != MOROK_OP_INPUT;
  for (guint i = 0; i < n->n_src; i++)
    n->weight_only = n->weight_only && n->src[i]->weight_only;
  g_ptr_array_add (graph->all, n);
  return n;
}

MorokNode *
morok_graph_intern (MorokGraph *graph, const MorokNode *proto)
{
  g_return_val_if_fail (graph != NULL && proto != NULL, NULL);
  g_return_val_if_fail (proto->op != MOROK_OP_INPUT, NULL);
  if (!graph->nodes)
    graph->nodes = g_hash_table_new (node_hash, node_equal);
  MorokNode key = *proto;
  for (guint i = key.rank; i < MOROK_MAX_RANK; i++)
    key.shape[i] = key.lo[i] = key.hi[i] = NULL, key.perm[i] = 0;
  for (guint i = key.n_src; i < G_N_ELEMENTS (key.src); i++)
    key.src[i] = NULL;
  MorokNode *found = g_hash_table_lookup (graph->nodes, &key);
  if (found)
    return found;
  MorokNode *n = add_node (graph, &key, proto->name);
  g_hash_table_add (graph->nodes, n);
  return n;
}

MorokNode *
morok_graph_new_leaf (MorokGraph *graph, const MorokNode *proto, const char *name)
{
  g_return_val_if_fail (graph != NULL && proto != NULL, NULL);
  if (proto->op != MOROK_OP_INPUT)
    {
      MorokNode p = *proto;
      p.name = (char *) name;
      return morok_graph_intern (graph, &p);
    }
  return add_node (graph, proto, name);
}

/* ---- op classes ---- */

static const char *const op_names[MOROK_OP_COUNT] = {
  "input",  "weight", "const",   "neg",   "abs",    "exp",    "log",       "sqrt",
  "rsqrt",  "recip",  "sigmoid", "tanh",  "relu",   "silu",   "not",       "cast",
  "add",    "sub",    "mul",     "div",   "max",    "min",    "pow",       "cmplt",
  "cmple",  "cmpeq",  "cmpne",   "where", "sum",    "rmax",   "reshape",   "permute",
  "expand", "pad",    "shrink",  "cat",   "window", "matmul", "attention", "dft_mag",
};

const char *
morok_op_name (MorokOp op)
{
  return (guint) op < MOROK_OP_COUNT ? op_names[op] : "?";
}

gboolean
morok_op_is_elementwise (MorokOp op)
{
  return op >= MOROK_OP_NEG && op <= MOROK_OP_WHERE;
}

gboolean
morok_op_is_view (MorokOp op)
{
  return op >= MOROK_OP_RESHAPE && op <= MOROK_OP_WINDOW;
}

gboolean
morok_op_is_reduce (MorokOp op)
{
  return op == MOROK_OP_SUM || op == MOROK_OP_RMAX;
}

gint64
morok_node_numel_max (const MorokNode *node)
{
  gint64 n = 1;
  for (guint i = 0; i < node->rank; i++)
    n *= node->shape[i]->hi;
  return n;
}

char *
morok_node_shape_string (const MorokNode *node)
{
  GString *s = g_string_new ("[");
  for (guint i = 0; i < node->rank; i++)
    {
      if (i)
        g_string_append (s, ", ");
      morok_sym_render (node->shape[i], s, NULL);
    }
  g_string_append_c (s, ']');
  return g_string_free (s, FALSE);
}

char *
morok_node_describe (const MorokNode *node)
{
  g_autofree char *shape = morok_node_shape_string (node);
  return g_strdup_printf ("%s%s%s%s %s%s", morok_op_name (node->op), node->name ? " '" : "",
                          node->name ? node->name : "", node->name ? "'" : "",
                          morok_dtype_name (node->dtype), shape);
}
