/* SPDX-License-Identifier: MIT */
/* Prepare's relayout stage: constant operands laid out for the kernels
 * that read them.
 *
 * A contraction with at most this many rows (or columns) runs unpacked
 * outside int8 (kernels/include/morok-gemm.h, MOROK_GEMM_SMALL), fastest
 * when the operand on the wide side is contiguous along that side: B [K, N]
 * with unit stride in n, or A with unit stride in m, and 64-byte aligned
 * rows. A weight-only operand that is not gets a copy in that layout,
 * computed at prepare like any folded weight (which is stored aligned):
 * B -> copy (B), A -> permute (copy (permute (A))). The copy is an identity
 * cast, which no rule removes. */
#define G_LOG_DOMAIN "morok-prepare"
#include "prepare/prepare-private.h"
#include "kernels/weight-pack.h"
#include <string.h>

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
  MorokNode p = {
    .op = MOROK_OP_PAD, .dtype = n->dtype, .rank = r, .n_src = 1, .pad_mode = MOROK_PAD_CONSTANT
  };
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
      || !prepare_const_shape (n, dims) || !morok_strided_walk (n, is_leaf, NULL, &s, &stop)
      || s.base->op != MOROK_OP_WEIGHT)
    return n;
  if (morok_sym_is_const (s.stride[r - 1], &stride) && (stride == 0 || stride == 1))
    return n;
  return copy_of (n);
}

MorokNode *
prepare_relayout (MorokNode *n, MorokPrecision precision, GHashTable *map)
{
  MorokNode *m = g_hash_table_lookup (map, n);
  if (m)
    return m;
  MorokNode p = *n;
  gboolean changed = FALSE;
  for (guint i = 0; i < n->n_src; i++)
    {
      p.src[i] = prepare_relayout (n->src[i], precision, map);
      changed = changed || p.src[i] != n->src[i];
    }
  if (n->op == MOROK_OP_MATMUL && n->dtype == MOROK_DTYPE_F32)
    {
      guint r = n->rank;
      MorokNode *a = p.src[0], *b = p.src[1];
      /* in int8 the pack stage packs a weight however few the rows
       * (prepare/pack.c) */
      gboolean small = n->shape[r - 2]->hi <= MOROK_GEMM_SMALL
                       && (precision != MOROK_PRECISION_INT8 || n->exact);
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
