/* SPDX-License-Identifier: MIT */
/* Helpers shared by the tensor API's source files. */
#pragma once

#include "tensor/morok-tensor.h"

/* An op returns NULL without a new error when a source is missing or an
 * earlier op already failed: the first error is the one that matters. */
#define CHAIN(error, ...)                                                                          \
  G_STMT_START                                                                                     \
  {                                                                                                \
    if ((error) && *(error))                                                                       \
      return NULL;                                                                                 \
    const void *srcs_[] = { __VA_ARGS__ };                                                         \
    for (gsize i_ = 0; i_ < G_N_ELEMENTS (srcs_); i_++)                                            \
      if (!srcs_[i_])                                                                              \
        return NULL;                                                                               \
  }                                                                                                \
  G_STMT_END

static inline MorokSymPool *
pool_of (const MorokTensor *t)
{
  return morok_graph_sym_pool (t->graph);
}

static inline MorokNode
proto (MorokOp op, MorokDType dtype, const MorokSym *const *shape, guint rank)
{
  MorokNode p = { .op = op, .dtype = dtype, .rank = rank };
  for (guint i = 0; i < rank; i++)
    p.shape[i] = shape[i];
  return p;
}

static inline gboolean
check_axis (const MorokTensor *a, gint axis, gint extra, guint *out, GError **error)
{
  gint r = (gint) a->rank + extra;
  gint ax = axis < 0 ? axis + r : axis;
  if (ax < 0 || ax >= r)
    {
      g_autofree char *s = morok_node_shape_string (a);
      g_set_error (error, MOROK_TENSOR_ERROR, MOROK_TENSOR_ERROR_ARGUMENT,
                   "axis %d out of range for shape %s", axis, s);
      return FALSE;
    }
  *out = (guint) ax;
  return TRUE;
}

MorokTensor *morok_tensor_broadcast_to (MorokTensor *a, const MorokSym *const *shape, guint rank);
