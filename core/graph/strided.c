/* SPDX-License-Identifier: MIT */
/* Strided views: which chains of view ops over a buffer are plain
 * offset + stride arithmetic, as contraction operands must be. */
#define G_LOG_DOMAIN "morok-graph"
#include "graph/morok-schedule.h"

static void
contiguous (MorokNode *base, MorokStrided *out)
{
  MorokSymPool *pool = morok_graph_sym_pool (base->graph);
  const MorokSym *st = morok_sym_const (pool, 1);
  out->base = base;
  out->offset = morok_sym_const (pool, 0);
  for (gint i = (gint) base->rank - 1; i >= 0; i--)
    {
      out->stride[i] = st;
      st = morok_sym_mul (st, base->shape[i]);
    }
}

static gboolean
is_one (const MorokSym *s)
{
  gint64 c;
  return morok_sym_is_const (s, &c) && c == 1;
}

/* Strides for a reshape of a strided view: groups of source dims and target
 * dims with equal products map onto each other; a group may split one
 * source dim, or merge source dims that are contiguous with each other. */
static gboolean
reshape_strides (const MorokNode *n, const MorokStrided *s, MorokStrided *out)
{
  const MorokNode *src = n->src[0];
  MorokSymPool *pool = morok_graph_sym_pool (n->graph);
  guint i = 0, j = 0;
  out->base = s->base;
  out->offset = s->offset;
  while (j < n->rank || i < src->rank)
    {
      /* size-1 dims carry no stride */
      if (j < n->rank && is_one (n->shape[j]))
        {
          out->stride[j++] = morok_sym_const (pool, 0);
          continue;
        }
      if (i < src->rank && is_one (src->shape[i]))
        {
          i++;
          continue;
        }
      if (i >= src->rank || j >= n->rank)
        return FALSE;
      /* grow both groups until their products agree */
      guint i0 = i, j0 = j;
      const MorokSym *ps = src->shape[i++], *pd = n->shape[j++];
      while (ps != pd)
        {
          if (ps->hi < pd->hi && i < src->rank)
            ps = morok_sym_mul (ps, src->shape[i++]);
          else if (j < n->rank)
            pd = morok_sym_mul (pd, n->shape[j++]);
          else
            return FALSE;
          if (ps->hi > G_MAXINT64 / 2 || pd->hi > G_MAXINT64 / 2)
            return FALSE;
        }
      /* the run's source dims (size-1 dims aside) must be contiguous with
       * each other: stride[a] == stride[b] * shape[b] for neighbours a, b */
      gint prev = -1;
      for (guint k = i0; k < i; k++)
        {
          if (is_one (src->shape[k]))
            continue;
          if (prev >= 0 && s->stride[prev] != morok_sym_mul (s->stride[k], src->shape[k]))
            return FALSE;
          prev = (gint) k;
        }
      const MorokSym *inner = s->stride[prev];
      /* split the run's extent over the target dims, innermost last */
      const MorokSym *st = inner;
      for (guint k = j; k > j0; k--)
        {
          out->stride[k - 1] = st;
          st = morok_sym_mul (st, n->shape[k - 1]);
        }
    }
  return TRUE;
}

gboolean
morok_strided_walk (MorokNode *node, gboolean (*realized) (MorokNode *n, gpointer ctx),
                    gpointer ctx, MorokStrided *out, MorokNode **stop)
{
  *stop = NULL;
  if (node->op == MOROK_OP_INPUT || node->op == MOROK_OP_WEIGHT || realized (node, ctx))
    {
      contiguous (node, out);
      return TRUE;
    }
  if (!morok_op_is_view (node->op) || node->op == MOROK_OP_PAD || node->op == MOROK_OP_CAT)
    {
      *stop = node;
      return FALSE;
    }
  MorokStrided s;
  if (!morok_strided_walk (node->src[0], realized, ctx, &s, stop))
    return FALSE;
  const MorokNode *src = node->src[0];
  MorokSymPool *pool = morok_graph_sym_pool (node->graph);
  out->base = s.base;
  out->offset = s.offset;
  switch (node->op)
    {
    case MOROK_OP_PERMUTE:
      for (guint i = 0; i < node->rank; i++)
        out->stride[i] = s.stride[node->perm[i]];
      return TRUE;
    case MOROK_OP_EXPAND:
      for (guint i = 0; i < node->rank; i++)
        out->stride[i] = src->shape[i] == node->shape[i] ? s.stride[i] : morok_sym_const (pool, 0);
      return TRUE;
    case MOROK_OP_SHRINK:
      for (guint i = 0; i < node->rank; i++)
        {
          out->stride[i] = s.stride[i];
          out->offset = morok_sym_add (out->offset, morok_sym_mul (node->lo[i], s.stride[i]));
        }
      return TRUE;
    case MOROK_OP_WINDOW:
      for (guint i = 0, j = 0; i < src->rank; i++)
        {
          if (i == (guint) node->axis)
            {
              out->stride[j++] = morok_sym_mul_c (s.stride[i], node->stride);
              out->stride[j++] = morok_sym_mul_c (s.stride[i], node->dilation);
            }
          else
            out->stride[j++] = s.stride[i];
        }
      return TRUE;
    case MOROK_OP_RESHAPE:
      if (reshape_strides (node, &s, out))
        return TRUE;
      *stop = node;
      return FALSE;
    default: *stop = node; return FALSE;
    }
}
