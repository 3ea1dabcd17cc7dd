/* SPDX-License-Identifier: MIT */
/* Tensor API views: reshape, permute, expand, pad, slice, cat, window. Views
 * move no data by themselves: the scheduler folds them into the index
 * arithmetic of the kernels that read them. */
#define G_LOG_DOMAIN "morok-tensor"
#include "tensor/tensor-private.h"
#include <string.h>

static void
view1 (MorokOp op, MorokTensor *a, const MorokSym *const *shape, guint rank, MorokNode *p)
{
  *p = proto (op, a->dtype, shape, rank);
  p->n_src = 1;
  p->src[0] = a;
}

static const MorokSym *
numel (MorokTensor *a, const MorokSym *const *shape, guint rank)
{
  const MorokSym *n = morok_sym_const (pool_of (a), 1);
  for (guint i = 0; i < rank; i++)
    n = morok_sym_mul (n, shape[i]);
  return n;
}

/* Equal element counts: the same expression, or equal with every variable at
 * its lower bound, at its upper bound, and at a point between. */
static gboolean
numel_equal (MorokTensor *a, const MorokSym *x, const MorokSym *y)
{
  if (x == y)
    return TRUE;
  MorokSymPool *pool = pool_of (a);
  guint n = morok_sym_pool_n_variables (pool);
  g_autofree gint64 *v = g_new0 (gint64, n + 1);
  for (int pass = 0; pass < 3; pass++)
    {
      for (guint i = 0; i < n; i++)
        {
          MorokVariable *var = morok_sym_pool_variable (pool, i);
          v[i] = pass == 0 ? var->min : pass == 1 ? var->max : var->min + (var->max - var->min) / 3;
        }
      if (morok_sym_eval (x, v) != morok_sym_eval (y, v))
        return FALSE;
    }
  return TRUE;
}

static void
shape_error (GError **error, const char *what, MorokTensor *a, const MorokSym *const *shape,
             guint rank, const char *why)
{
  g_autofree char *from = morok_node_shape_string (a);
  GString *to = g_string_new ("[");
  for (guint i = 0; i < rank; i++)
    {
      if (i)
        g_string_append (to, ", ");
      morok_sym_render (shape[i], to, NULL);
    }
  g_string_append_c (to, ']');
  g_set_error (error, MOROK_TENSOR_ERROR, MOROK_TENSOR_ERROR_SHAPE, "%s %s to %s: %s", what, from,
               to->str, why);
  g_string_free (to, TRUE);
}

MorokTensor *
morok_tensor_reshape (MorokTensor *a, const MorokSym *const *shape, guint rank, GError **error)
{
  CHAIN (error, a);
  g_return_val_if_fail (rank <= MOROK_MAX_RANK && (rank == 0 || shape), NULL);
  for (guint i = 0; i < rank; i++)
    g_return_val_if_fail (shape[i] && shape[i]->pool == pool_of (a), NULL);
  if (!numel_equal (a, numel (a, a->shape, a->rank), numel (a, shape, rank)))
    {
      shape_error (error, "reshape", a, shape, rank, "element counts differ");
      return NULL;
    }
  if (rank == a->rank && memcmp (shape, a->shape, rank * sizeof *shape) == 0)
    return a;
  MorokNode p;
  /* reshape (reshape (x)) -> reshape (x); a constant just takes the shape */
  if (a->op == MOROK_OP_RESHAPE)
    a = a->src[0];
  if (a->op == MOROK_OP_CONST)
    return morok_tensor_full (a->graph, a->dtype, a->value, shape, rank);
  view1 (MOROK_OP_RESHAPE, a, shape, rank, &p);
  return morok_graph_intern (a->graph, &p);
}

MorokTensor *
morok_tensor_reshape_c (MorokTensor *a, const gint64 *dims, guint rank, GError **error)
{
  CHAIN (error, a);
  const MorokSym *shape[MOROK_MAX_RANK];
  g_return_val_if_fail (rank <= MOROK_MAX_RANK, NULL);
  morok_tensor_syms (a->graph, dims, rank, shape);
  return morok_tensor_reshape (a, shape, rank, error);
}

MorokTensor *
morok_tensor_unsqueeze (MorokTensor *a, gint axis, GError **error)
{
  CHAIN (error, a);
  guint ax;
  if (!check_axis (a, axis, 1, &ax, error))
    return NULL;
  if (a->rank + 1 > MOROK_MAX_RANK)
    {
      g_set_error (error, MOROK_TENSOR_ERROR, MOROK_TENSOR_ERROR_ARGUMENT,
                   "unsqueeze: rank %u is the most Morok supports", MOROK_MAX_RANK);
      return NULL;
    }
  const MorokSym *shape[MOROK_MAX_RANK];
  for (guint i = 0, j = 0; i <= a->rank; i++)
    shape[i] = i == ax ? morok_sym_const (pool_of (a), 1) : a->shape[j++];
  return morok_tensor_reshape (a, shape, a->rank + 1, error);
}

MorokTensor *
morok_tensor_squeeze (MorokTensor *a, gint axis, GError **error)
{
  CHAIN (error, a);
  guint ax;
  gint64 c;
  if (!check_axis (a, axis, 0, &ax, error))
    return NULL;
  if (!morok_sym_is_const (a->shape[ax], &c) || c != 1)
    {
      g_autofree char *s = morok_node_shape_string (a);
      g_set_error (error, MOROK_TENSOR_ERROR, MOROK_TENSOR_ERROR_SHAPE,
                   "squeeze: axis %d of %s is not 1", axis, s);
      return NULL;
    }
  const MorokSym *shape[MOROK_MAX_RANK];
  for (guint i = 0, j = 0; i < a->rank; i++)
    if (i != ax)
      shape[j++] = a->shape[i];
  return morok_tensor_reshape (a, shape, a->rank - 1, error);
}

MorokTensor *
morok_tensor_permute (MorokTensor *a, const guint *perm, guint rank, GError **error)
{
  CHAIN (error, a);
  guint32 seen = 0;
  gboolean identity = TRUE;
  for (guint i = 0; i < rank && rank == a->rank; i++)
    {
      if (perm[i] >= rank || (seen >> perm[i] & 1))
        break;
      seen |= 1u << perm[i];
      identity = identity && perm[i] == i;
    }
  if (rank != a->rank || seen != (rank ? (1u << rank) - 1 : 0))
    {
      g_autofree char *s = morok_node_shape_string (a);
      g_set_error (error, MOROK_TENSOR_ERROR, MOROK_TENSOR_ERROR_ARGUMENT,
                   "permute: not a permutation of the %u axes of %s", a->rank, s);
      return NULL;
    }
  if (identity)
    return a;
  guint8 p8[MOROK_MAX_RANK];
  for (guint i = 0; i < rank; i++)
    p8[i] = (guint8) perm[i];
  /* permute (permute (x, p), q) -> permute (x, p∘q) */
  if (a->op == MOROK_OP_PERMUTE)
    {
      guint composed[MOROK_MAX_RANK];
      for (guint i = 0; i < rank; i++)
        composed[i] = a->perm[p8[i]];
      return morok_tensor_permute (a->src[0], composed, rank, error);
    }
  const MorokSym *shape[MOROK_MAX_RANK];
  for (guint i = 0; i < rank; i++)
    shape[i] = a->shape[perm[i]];
  MorokNode p;
  view1 (MOROK_OP_PERMUTE, a, shape, rank, &p);
  memcpy (p.perm, p8, rank);
  return morok_graph_intern (a->graph, &p);
}

MorokTensor *
morok_tensor_transpose (MorokTensor *a, gint d0, gint d1, GError **error)
{
  CHAIN (error, a);
  guint x, y, perm[MOROK_MAX_RANK];
  if (!check_axis (a, d0, 0, &x, error) || !check_axis (a, d1, 0, &y, error))
    return NULL;
  for (guint i = 0; i < a->rank; i++)
    perm[i] = i == x ? y : i == y ? x : i;
  return morok_tensor_permute (a, perm, a->rank, error);
}

MorokTensor *
morok_tensor_expand (MorokTensor *a, const MorokSym *const *shape, guint rank, GError **error)
{
  CHAIN (error, a);
  gboolean ok = rank >= a->rank && rank <= MOROK_MAX_RANK;
  for (guint i = 0; ok && i < a->rank; i++)
    {
      const MorokSym *d = a->shape[i], *to = shape[rank - a->rank + i];
      gint64 c;
      ok = d == to || (morok_sym_is_const (d, &c) && c == 1);
    }
  if (!ok)
    {
      shape_error (error, "expand", a, shape, rank, "only size-1 axes can be broadcast");
      return NULL;
    }
  return morok_tensor_broadcast_to (a, shape, rank);
}

static MorokTensor *
pad (MorokTensor *a, const gint64 *before, const gint64 *after, double value, MorokPadMode mode,
     GError **error)
{
  CHAIN (error, a);
  g_return_val_if_fail (before != NULL && after != NULL, NULL);
  MorokNode p;
  const MorokSym *shape[MOROK_MAX_RANK];
  gboolean any = FALSE;
  for (guint i = 0; i < a->rank; i++)
    {
      g_autofree char *s = morok_node_shape_string (a);
      if (before[i] < 0 || after[i] < 0)
        {
          g_set_error (error, MOROK_TENSOR_ERROR, MOROK_TENSOR_ERROR_ARGUMENT,
                       "pad: negative padding on axis %u of %s", i, s);
          return NULL;
        }
      if (mode == MOROK_PAD_REFLECT
          && (before[i] >= a->shape[i]->lo || after[i] >= a->shape[i]->lo))
        {
          g_set_error (error, MOROK_TENSOR_ERROR, MOROK_TENSOR_ERROR_ARGUMENT,
                       "reflect pad of %" G_GINT64_FORMAT "/%" G_GINT64_FORMAT
                       " on axis %u of %s: each pad must be smaller than the axis",
                       before[i], after[i], i, s);
          return NULL;
        }
      shape[i] = morok_sym_add_c (a->shape[i], before[i] + after[i]);
      any = any || before[i] || after[i];
    }
  if (!any)
    return a;
  view1 (MOROK_OP_PAD, a, shape, a->rank, &p);
  for (guint i = 0; i < a->rank; i++)
    {
      p.lo[i] = morok_sym_const (pool_of (a), before[i]);
      p.hi[i] = morok_sym_const (pool_of (a), after[i]);
    }
  p.value = value;
  p.pad_mode = mode;
  return morok_graph_intern (a->graph, &p);
}

MorokTensor *
morok_tensor_pad (MorokTensor *a, const gint64 *before, const gint64 *after, double value,
                  GError **error)
{
  return pad (a, before, after, value, MOROK_PAD_CONSTANT, error);
}

MorokTensor *
morok_tensor_pad_reflect (MorokTensor *a, const gint64 *before, const gint64 *after, GError **error)
{
  return pad (a, before, after, 0, MOROK_PAD_REFLECT, error);
}

MorokTensor *
morok_tensor_slice (MorokTensor *a, gint axis, const MorokSym *start, const MorokSym *length,
                    GError **error)
{
  CHAIN (error, a, start, length);
  guint ax;
  if (!check_axis (a, axis, 0, &ax, error))
    return NULL;
  const MorokSym *end = morok_sym_add (start, length);
  /* in range for every value of the variables: axis - end >= 0 over its bounds */
  if (start->lo < 0 || length->lo < 0 || morok_sym_sub (a->shape[ax], end)->lo < 0)
    {
      g_autofree char *s = morok_node_shape_string (a);
      g_autofree char *st = morok_sym_to_string (start);
      g_autofree char *len = morok_sym_to_string (length);
      g_set_error (error, MOROK_TENSOR_ERROR, MOROK_TENSOR_ERROR_SHAPE,
                   "slice [%s, %s + %s) of axis %u of %s may leave the axis", st, st, len, ax, s);
      return NULL;
    }
  if (start->lo == 0 && start->hi == 0 && length == a->shape[ax])
    return a;
  const MorokSym *shape[MOROK_MAX_RANK];
  memcpy (shape, a->shape, sizeof shape);
  shape[ax] = length;
  MorokNode p;
  view1 (MOROK_OP_SHRINK, a, shape, a->rank, &p);
  for (guint i = 0; i < a->rank; i++)
    p.lo[i] = i == ax ? start : morok_sym_const (pool_of (a), 0);
  return morok_graph_intern (a->graph, &p);
}

MorokTensor *
morok_tensor_cat (MorokTensor *const *ts, guint n, gint axis, GError **error)
{
  g_return_val_if_fail (n >= 1 && ts != NULL, NULL);
  CHAIN (error, ts[0]);
  guint ax;
  if (!check_axis (ts[0], axis, 0, &ax, error))
    return NULL;
  MorokTensor *acc = ts[0];
  for (guint k = 1; k < n; k++)
    {
      MorokTensor *b = ts[k];
      CHAIN (error, b);
      gboolean ok = b->rank == acc->rank && b->dtype == acc->dtype;
      for (guint i = 0; ok && i < b->rank; i++)
        ok = i == ax || b->shape[i] == acc->shape[i];
      if (!ok)
        {
          g_autofree char *sa = morok_node_shape_string (acc);
          g_autofree char *sb = morok_node_shape_string (b);
          g_set_error (error, MOROK_TENSOR_ERROR, MOROK_TENSOR_ERROR_SHAPE,
                       "cat along axis %u: %s %s and %s %s differ off that axis", ax,
                       morok_dtype_name (acc->dtype), sa, morok_dtype_name (b->dtype), sb);
          return NULL;
        }
      const MorokSym *shape[MOROK_MAX_RANK];
      memcpy (shape, acc->shape, sizeof shape);
      shape[ax] = morok_sym_add (acc->shape[ax], b->shape[ax]);
      MorokNode p = proto (MOROK_OP_CAT, acc->dtype, shape, acc->rank);
      p.n_src = 2;
      p.src[0] = acc;
      p.src[1] = b;
      p.axis = (gint) ax;
      acc = morok_graph_intern (acc->graph, &p);
    }
  return acc;
}

MorokTensor *
morok_tensor_window (MorokTensor *a, gint axis, gint64 size, gint64 stride, gint64 dilation,
                     GError **error)
{
  CHAIN (error, a);
  guint ax;
  if (!check_axis (a, axis, 0, &ax, error))
    return NULL;
  g_autofree char *s = morok_node_shape_string (a);
  if (size < 1 || stride < 1 || dilation < 1 || a->rank + 1 > MOROK_MAX_RANK)
    {
      g_set_error (error, MOROK_TENSOR_ERROR, MOROK_TENSOR_ERROR_ARGUMENT,
                   "window of size %" G_GINT64_FORMAT ", stride %" G_GINT64_FORMAT
                   ", dilation %" G_GINT64_FORMAT " on %s: all must be >= 1",
                   size, stride, dilation, s);
      return NULL;
    }
  const MorokSym *span = morok_sym_add_c (a->shape[ax], -(dilation * (size - 1) + 1));
  if (span->lo < 0)
    {
      g_set_error (error, MOROK_TENSOR_ERROR, MOROK_TENSOR_ERROR_SHAPE,
                   "window of %" G_GINT64_FORMAT " taps (dilation %" G_GINT64_FORMAT
                   ") does not fit axis %u of %s",
                   size, dilation, ax, s);
      return NULL;
    }
  const MorokSym *shape[MOROK_MAX_RANK];
  for (guint i = 0, j = 0; i < a->rank; i++)
    {
      if (i == ax)
        {
          shape[j++] = morok_sym_add_c (morok_sym_div_c (span, stride), 1);
          shape[j++] = morok_sym_const (pool_of (a), size);
        }
      else
        shape[j++] = a->shape[i];
    }
  MorokNode p;
  view1 (MOROK_OP_WINDOW, a, shape, a->rank + 1, &p);
  p.axis = (gint) ax;
  p.stride = stride;
  p.dilation = dilation;
  return morok_graph_intern (a->graph, &p);
}
