/* SPDX-License-Identifier: MIT */
/* Tensor API primitives: leaves, element-wise ops with broadcasting,
 * reductions and views. Each checks its operands and records one node. */
#define G_LOG_DOMAIN "morok-tensor"
#include "tensor/tensor-private.h"

G_DEFINE_QUARK (morok - tensor - error - quark, morok_tensor_error)

/* ---- leaves ---- */

MorokTensor *
morok_tensor_input (MorokGraph *g, const char *name, MorokDType dtype, const MorokSym *const *shape,
                    guint rank)
{
  g_return_val_if_fail (g != NULL && rank <= MOROK_MAX_RANK, NULL);
  g_return_val_if_fail (rank == 0 || shape != NULL, NULL);
  MorokNode p = proto (MOROK_OP_INPUT, dtype, shape, rank);
  return morok_graph_new_leaf (g, &p, name ? name : "input");
}

void
morok_tensor_syms (MorokGraph *g, const gint64 *dims, guint n, const MorokSym **out)
{
  for (guint i = 0; i < n; i++)
    out[i] = morok_sym_const (morok_graph_sym_pool (g), dims[i]);
}

MorokTensor *
morok_tensor_weight (MorokGraph *g, const char *name, MorokDType dtype, gconstpointer data,
                     const gint64 *dims, guint rank)
{
  g_return_val_if_fail (g != NULL && data != NULL && rank <= MOROK_MAX_RANK, NULL);
  const MorokSym *shape[MOROK_MAX_RANK];
  for (guint i = 0; i < rank; i++)
    g_return_val_if_fail (dims[i] >= 1, NULL);
  morok_tensor_syms (g, dims, rank, shape);
  MorokNode p = proto (MOROK_OP_WEIGHT, dtype, shape, rank);
  p.data = data;
  return morok_graph_new_leaf (g, &p, name ? name : "weight");
}

MorokTensor *
morok_tensor_weight_with_release (MorokGraph *g, const char *name, MorokDType dtype,
                                  gconstpointer data, const gint64 *dims, guint rank,
                                  void (*release) (gpointer release_data, gconstpointer data),
                                  gpointer release_data)
{
  MorokTensor *t = morok_tensor_weight (g, name, dtype, data, dims, rank);
  if (t)
    t->release = release, t->release_data = release_data;
  return t;
}

MorokTensor *
morok_tensor_full (MorokGraph *g, MorokDType dtype, double value, const MorokSym *const *shape,
                   guint rank)
{
  g_return_val_if_fail (g != NULL && rank <= MOROK_MAX_RANK, NULL);
  MorokNode p = proto (MOROK_OP_CONST, dtype, shape, rank);
  p.value = value;
  return morok_graph_intern (g, &p);
}

MorokTensor *
morok_tensor_scalar_like (const MorokTensor *like, double value)
{
  g_return_val_if_fail (like != NULL, NULL);
  return morok_tensor_full (like->graph, like->dtype, value, NULL, 0);
}

/* ---- broadcasting ---- */

/* Brings @a to rank @rank by leading size-1 dims, then expands to @shape. */
MorokTensor *
morok_tensor_broadcast_to (MorokTensor *a, const MorokSym *const *shape, guint rank)
{
  if (a->rank == rank)
    {
      gboolean same = TRUE;
      for (guint i = 0; i < rank; i++)
        same = same && a->shape[i] == shape[i];
      if (same)
        return a;
    }
  MorokTensor *x = a;
  if (a->rank < rank)
    {
      const MorokSym *s[MOROK_MAX_RANK];
      guint lead = rank - a->rank;
      for (guint i = 0; i < rank; i++)
        s[i] = i < lead ? morok_sym_const (pool_of (a), 1) : a->shape[i - lead];
      x = morok_tensor_reshape (a, s, rank, NULL);
    }
  if (x->op == MOROK_OP_CONST)
    return morok_tensor_full (x->graph, x->dtype, x->value, shape, rank);
  MorokNode p = proto (MOROK_OP_EXPAND, x->dtype, shape, rank);
  p.n_src = 1;
  p.src[0] = x;
  return morok_graph_intern (x->graph, &p);
}

/* The numpy broadcast shape of @n tensors, or an error naming them. */
static gboolean
broadcast_shape (MorokTensor *const *ts, guint n, const char *what, const MorokSym **out,
                 guint *out_rank, GError **error)
{
  guint rank = 0;
  for (guint i = 0; i < n; i++)
    rank = MAX (rank, ts[i]->rank);
  for (guint d = 0; d < rank; d++)
    {
      const MorokSym *s = NULL;
      for (guint i = 0; i < n; i++)
        {
          gint k = (gint) d - (gint) (rank - ts[i]->rank);
          if (k < 0)
            continue;
          const MorokSym *di = ts[i]->shape[k];
          gint64 c;
          if (morok_sym_is_const (di, &c) && c == 1)
            continue;
          if (s && s != di)
            {
              GString *msg = g_string_new (NULL);
              for (guint j = 0; j < n; j++)
                {
                  g_autofree char *sh = morok_node_shape_string (ts[j]);
                  g_string_append_printf (msg, "%s%s", j ? " and " : "", sh);
                }
              g_set_error (error, MOROK_TENSOR_ERROR, MOROK_TENSOR_ERROR_SHAPE,
                           "%s: shapes %s do not broadcast", what, msg->str);
              g_string_free (msg, TRUE);
              return FALSE;
            }
          s = di;
        }
      out[d] = s ? s : morok_sym_const (pool_of (ts[0]), 1);
    }
  *out_rank = rank;
  return TRUE;
}

/* ---- element-wise ---- */

static MorokTensor *
unary (MorokOp op, MorokTensor *a, GError **error)
{
  CHAIN (error, a);
  gboolean float_op
      = op != MOROK_OP_NEG && op != MOROK_OP_ABS && op != MOROK_OP_RELU && op != MOROK_OP_NOT;
  if (float_op && !morok_dtype_is_float (a->dtype))
    {
      g_set_error (error, MOROK_TENSOR_ERROR, MOROK_TENSOR_ERROR_DTYPE,
                   "%s needs a float tensor, got %s", morok_op_name (op),
                   morok_dtype_name (a->dtype));
      return NULL;
    }
  if (op == MOROK_OP_NOT && a->dtype != MOROK_DTYPE_BOOL)
    {
      g_set_error (error, MOROK_TENSOR_ERROR, MOROK_TENSOR_ERROR_DTYPE,
                   "not needs a bool tensor, got %s", morok_dtype_name (a->dtype));
      return NULL;
    }
  MorokNode p = proto (op, a->dtype, a->shape, a->rank);
  p.n_src = 1;
  p.src[0] = a;
  return morok_graph_intern (a->graph, &p);
}

#define UNARY(fn, OP)                                                                              \
  MorokTensor *morok_tensor_##fn (MorokTensor *a, GError **error)                                  \
  {                                                                                                \
    return unary (MOROK_OP_##OP, a, error);                                                        \
  }
UNARY (neg, NEG)
UNARY (abs, ABS)
UNARY (exp, EXP)
UNARY (log, LOG)
UNARY (sqrt, SQRT)
UNARY (rsqrt, RSQRT)
UNARY (recip, RECIP)
UNARY (sigmoid, SIGMOID)
UNARY (tanh, TANH)
UNARY (relu, RELU)
UNARY (silu, SILU)
UNARY (logical_not, NOT)

MorokTensor *
morok_tensor_cast (MorokTensor *a, MorokDType dtype, GError **error)
{
  CHAIN (error, a);
  if ((guint) dtype >= MOROK_DTYPE_COUNT)
    {
      g_set_error (error, MOROK_TENSOR_ERROR, MOROK_TENSOR_ERROR_DTYPE, "cast to invalid dtype %d",
                   dtype);
      return NULL;
    }
  if (a->dtype == dtype)
    return a;
  MorokNode p = proto (MOROK_OP_CAST, dtype, a->shape, a->rank);
  p.n_src = 1;
  p.src[0] = a;
  return morok_graph_intern (a->graph, &p);
}

static MorokTensor *
nary (MorokOp op, MorokTensor **ts, guint n, GError **error)
{
  /* where (cond, a, b): the value dtype is a's; cond must be bool */
  guint first = op == MOROK_OP_WHERE ? 1 : 0;
  if (op == MOROK_OP_WHERE && ts[0]->dtype != MOROK_DTYPE_BOOL)
    {
      g_set_error (error, MOROK_TENSOR_ERROR, MOROK_TENSOR_ERROR_DTYPE,
                   "where: condition must be bool, got %s", morok_dtype_name (ts[0]->dtype));
      return NULL;
    }
  for (guint i = first + 1; i < n; i++)
    if (ts[i]->dtype != ts[first]->dtype)
      {
        g_set_error (error, MOROK_TENSOR_ERROR, MOROK_TENSOR_ERROR_DTYPE,
                     "%s: dtypes %s and %s differ (cast one first)", morok_op_name (op),
                     morok_dtype_name (ts[first]->dtype), morok_dtype_name (ts[i]->dtype));
        return NULL;
      }
  const MorokSym *shape[MOROK_MAX_RANK];
  guint rank;
  if (!broadcast_shape (ts, n, morok_op_name (op), shape, &rank, error))
    return NULL;
  gboolean cmp = op >= MOROK_OP_CMPLT && op <= MOROK_OP_CMPNE;
  MorokNode p = proto (op, cmp ? MOROK_DTYPE_BOOL : ts[first]->dtype, shape, rank);
  p.n_src = n;
  for (guint i = 0; i < n; i++)
    p.src[i] = morok_tensor_broadcast_to (ts[i], shape, rank);
  return morok_graph_intern (ts[0]->graph, &p);
}

static MorokTensor *
binary (MorokOp op, MorokTensor *a, MorokTensor *b, GError **error)
{
  CHAIN (error, a, b);
  g_return_val_if_fail (a->graph == b->graph, NULL);
  MorokTensor *ts[] = { a, b };
  return nary (op, ts, 2, error);
}

#define BINARY(fn, OP)                                                                             \
  MorokTensor *morok_tensor_##fn (MorokTensor *a, MorokTensor *b, GError **error)                  \
  {                                                                                                \
    return binary (MOROK_OP_##OP, a, b, error);                                                    \
  }
BINARY (add, ADD)
BINARY (sub, SUB)
BINARY (mul, MUL)
BINARY (div, DIV)
BINARY (maximum, MAX)
BINARY (minimum, MIN)
BINARY (pow, POW)
BINARY (lt, CMPLT)
BINARY (le, CMPLE)
BINARY (eq, CMPEQ)
BINARY (ne, CMPNE)

MorokTensor *
morok_tensor_gt (MorokTensor *a, MorokTensor *b, GError **error)
{
  return binary (MOROK_OP_CMPLT, b, a, error);
}

MorokTensor *
morok_tensor_ge (MorokTensor *a, MorokTensor *b, GError **error)
{
  return binary (MOROK_OP_CMPLE, b, a, error);
}

MorokTensor *
morok_tensor_where (MorokTensor *cond, MorokTensor *a, MorokTensor *b, GError **error)
{
  CHAIN (error, cond, a, b);
  MorokTensor *ts[] = { cond, a, b };
  return nary (MOROK_OP_WHERE, ts, 3, error);
}

MorokTensor *
morok_tensor_mul_scalar (MorokTensor *a, double s, GError **error)
{
  CHAIN (error, a);
  return morok_tensor_mul (a, morok_tensor_scalar_like (a, s), error);
}

MorokTensor *
morok_tensor_add_scalar (MorokTensor *a, double s, GError **error)
{
  CHAIN (error, a);
  return morok_tensor_add (a, morok_tensor_scalar_like (a, s), error);
}

/* ---- reductions ---- */

static MorokTensor *
reduce (MorokOp op, MorokTensor *a, const gint *axes, guint n_axes, gboolean keepdim,
        GError **error)
{
  CHAIN (error, a);
  guint32 mask = 0;
  for (guint i = 0; i < n_axes; i++)
    {
      guint ax;
      if (!check_axis (a, axes[i], 0, &ax, error))
        return NULL;
      mask |= 1u << ax;
    }
  if (n_axes == 0)
    mask = (1u << a->rank) - 1; /* no axes: reduce everything */
  const MorokSym *shape[MOROK_MAX_RANK], *kept[MOROK_MAX_RANK];
  guint k = 0;
  for (guint i = 0; i < a->rank; i++)
    {
      shape[i] = (mask >> i & 1) ? morok_sym_const (pool_of (a), 1) : a->shape[i];
      if (!(mask >> i & 1))
        kept[k++] = a->shape[i];
    }
  MorokNode p = proto (op, a->dtype, shape, a->rank);
  p.n_src = 1;
  p.src[0] = a;
  p.axes_mask = mask;
  MorokTensor *r = morok_graph_intern (a->graph, &p);
  return keepdim ? r : morok_tensor_reshape (r, kept, k, error);
}

MorokTensor *
morok_tensor_sum (MorokTensor *a, const gint *axes, guint n_axes, gboolean keepdim, GError **error)
{
  return reduce (MOROK_OP_SUM, a, axes, n_axes, keepdim, error);
}

MorokTensor *
morok_tensor_max (MorokTensor *a, const gint *axes, guint n_axes, gboolean keepdim, GError **error)
{
  return reduce (MOROK_OP_RMAX, a, axes, n_axes, keepdim, error);
}

MorokTensor *
morok_tensor_mean (MorokTensor *a, const gint *axes, guint n_axes, gboolean keepdim, GError **error)
{
  CHAIN (error, a);
  if (!morok_dtype_is_float (a->dtype))
    {
      g_set_error (error, MOROK_TENSOR_ERROR, MOROK_TENSOR_ERROR_DTYPE,
                   "mean needs a float tensor, got %s", morok_dtype_name (a->dtype));
      return NULL;
    }
  MorokTensor *s = morok_tensor_sum (a, axes, n_axes, keepdim, error);
  if (!s)
    return NULL;
  /* count = product of the reduced dims; symbolic counts divide by a tensor */
  const MorokSym *count = morok_sym_const (pool_of (a), 1);
  for (guint i = 0; i < a->rank; i++)
    {
      gboolean reduced = n_axes == 0;
      for (guint j = 0; j < n_axes; j++)
        reduced = reduced || (guint) (axes[j] < 0 ? axes[j] + (gint) a->rank : axes[j]) == i;
      if (reduced)
        count = morok_sym_mul (count, a->shape[i]);
    }
  gint64 c;
  if (morok_sym_is_const (count, &c))
    return morok_tensor_mul_scalar (s, 1.0 / (double) c, error);
  g_set_error (
      error, MOROK_TENSOR_ERROR, MOROK_TENSOR_ERROR_SHAPE,
      "mean over a symbolic length is not supported; use sum and divide by a lengths input");
  return NULL;
}
