/* SPDX-License-Identifier: MIT */
/* The graph: hash-consed nodes of Morok's IR.
 *
 * Every lazy tensor is a MorokNode owned by a MorokGraph. Nodes are
 * immutable and hash-consed: building the same operation on the same sources
 * twice returns the same node, so common subexpressions are shared for free.
 * Input placeholders are the exception: each one is a distinct node. Shapes
 * are arrays of symbolic integers from the graph's MorokSymPool.
 *
 * The op set is small on purpose: element-wise ops, two reductions, views
 * (reshape, permute, expand, pad, shrink, cat, window) and one contraction
 * (batched matmul). The tensor API composes everything else (conv, softmax,
 * attention, LSTM) from these.
 *
 *   g_autoptr (MorokGraph) g = morok_graph_new ();
 *   MorokTensor *x = morok_tensor_input (g, "x", MOROK_DTYPE_F32, shape, 2);   // a MorokNode
 *   MorokTensor *y = morok_tensor_relu (x, &error);
 *   g_assert_true (morok_tensor_relu (x, &error) == y);                        // hash-consed
 *   g_autofree char *what = morok_node_describe (y);                           // "relu f32[t, 64]"
 */
#pragma once

#include <glib.h>
#include "base/morok-dtype.h"
#include "base/morok-sym.h"

G_BEGIN_DECLS

/* The graph area's errors: rewriting (graph/morok-pattern.h), scheduling
 * and rendering a scheduled graph into kernels, and a plan's precision. */
#define MOROK_GRAPH_ERROR (morok_graph_error_quark ())
GQuark morok_graph_error_quark (void);
typedef enum
{
  MOROK_GRAPH_ERROR_REWRITE,  /* rules kept rewriting past the cap */
  MOROK_GRAPH_ERROR_SCHEDULE, /* the graph cannot be made into kernels */
  /* the plan's precision is not one, or does not run on the plan's ISA or
   * this CPU (morok_plan_precision_supported) */
  MOROK_GRAPH_ERROR_PRECISION,
} MorokGraphError;
#define MOROK_MAX_SRC 4 /* sources of a node: ATTENTION has the most */

typedef enum
{
  /* leaves */
  MOROK_OP_INPUT,  /* written by the caller before each execute; never merged */
  MOROK_OP_WEIGHT, /* host data, read at prepare and baked into the plan */
  MOROK_OP_CONST,  /* one scalar (value) broadcast to the node's shape */
  /* unary element-wise */
  MOROK_OP_NEG,
  MOROK_OP_ABS,
  MOROK_OP_EXP,
  MOROK_OP_LOG,
  MOROK_OP_SQRT,
  MOROK_OP_RSQRT,
  MOROK_OP_RECIP,
  MOROK_OP_SIGMOID,
  MOROK_OP_TANH,
  MOROK_OP_RELU,
  MOROK_OP_SILU,
  MOROK_OP_NOT,
  MOROK_OP_CAST, /* to the node's dtype */
  /* binary element-wise (sources have the node's shape) */
  MOROK_OP_ADD,
  MOROK_OP_SUB,
  MOROK_OP_MUL,
  MOROK_OP_DIV,
  MOROK_OP_MAX,
  MOROK_OP_MIN,
  MOROK_OP_POW,
  MOROK_OP_CMPLT, /* results are bool */
  MOROK_OP_CMPLE,
  MOROK_OP_CMPEQ,
  MOROK_OP_CMPNE,
  /* ternary element-wise: where (cond, a, b) */
  MOROK_OP_WHERE,
  /* reductions over the axes in axes_mask; reduced axes keep size 1 */
  MOROK_OP_SUM,
  MOROK_OP_RMAX,
  /* views: the value at an index is the source's value at a mapped index */
  MOROK_OP_RESHAPE,
  MOROK_OP_PERMUTE, /* out dim i = src dim perm[i] */
  MOROK_OP_EXPAND,  /* size-1 dims broadcast to the node's shape */
  MOROK_OP_PAD,     /* lo[i] before, hi[i] after, pad_mode, value */
  MOROK_OP_SHRINK,  /* out index i = src index i + lo[i] */
  MOROK_OP_CAT,     /* src0 then src1 along axis */
  MOROK_OP_WINDOW,  /* src dim axis (L) -> out dims axis, axis+1 (T, K):
                       src index = t * stride + k * dilation */
  /* contraction: [..., M, K] x [..., K, N] -> [..., M, N] */
  MOROK_OP_MATMUL,
  /* q [..., Tq, D], k [..., Tk, D], v [..., Tk, Dv], optional key mask
   * [..., 1, Tk] (bool, FALSE: ignored) -> [..., Tq, Dv]: softmax over the
   * keys of value * q.k, times v (morok_tensor_attention) */
  MOROK_OP_ATTENTION,
  /* frames [..., L] (L a power of two), window [L] -> [..., L/2 + 1]: the
   * magnitude |sum_n window[n] frames[..., n] e^(-2 pi i k n / L)| of each
   * bin k (morok_tensor_dft_magnitude) */
  MOROK_OP_DFT_MAG,
  MOROK_OP_COUNT
} MorokOp;

typedef enum
{
  MOROK_PAD_CONSTANT,
  MOROK_PAD_REFLECT, /* mirror without repeating the edge: [a b c] -> b [a b c] b */
} MorokPadMode;

typedef struct _MorokGraph MorokGraph;
typedef struct _MorokNode MorokNode;

struct _MorokNode
{
  MorokOp op;
  MorokDType dtype;
  guint rank;
  const MorokSym *shape[MOROK_MAX_RANK];
  guint n_src;
  MorokNode *src[MOROK_MAX_SRC];

  /* arguments; which ones an op uses is listed with the op above */
  double value;                       /* CONST value, PAD constant, ATTENTION scale */
  const MorokSym *lo[MOROK_MAX_RANK]; /* PAD before, SHRINK start */
  const MorokSym *hi[MOROK_MAX_RANK]; /* PAD after */
  guint8 perm[MOROK_MAX_RANK];        /* PERMUTE */
  guint32 axes_mask;                  /* SUM, RMAX */
  gint axis;                          /* CAT, WINDOW */
  gint64 stride, dilation;            /* WINDOW */
  MorokPadMode pad_mode;              /* PAD */
  gboolean exact;                     /* MATMUL: f32 whatever the plan's precision */
  gconstpointer data;                 /* WEIGHT: host data, owned by the model */
  /* WEIGHT: called (once, with release_data and data) when prepare has
   * packed the data, or copied it for the kernels that read it: the owner
   * may free it (NULL: the data stays). morok_tensor_weight_with_release () sets it. */
  void (*release) (gpointer release_data, gconstpointer data);
  gpointer release_data;
  char *name; /* INPUT, WEIGHT: for messages */

  MorokGraph *graph;
  guint id;             /* creation order, a topological order */
  gboolean weight_only; /* no INPUT below: the value is fixed at prepare */
};

/* ---- the graph ---- */
MorokGraph *morok_graph_new (void);
void morok_graph_free (MorokGraph *graph);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (MorokGraph, morok_graph_free)

/* The pool in which this graph's shapes and variables live. (transfer none) */
MorokSymPool *morok_graph_sym_pool (MorokGraph *graph);
guint morok_graph_n_nodes (const MorokGraph *graph);

/* Finds or makes the node described by @proto (op, dtype, rank, shape,
 * sources and arguments; graph, id and name are ignored). (transfer none) */
MorokNode *morok_graph_intern (MorokGraph *graph, const MorokNode *proto);
/* Makes a new leaf: INPUT nodes are never merged. @name is copied. */
MorokNode *morok_graph_new_leaf (MorokGraph *graph, const MorokNode *proto, const char *name);

/* ---- node helpers ---- */
gboolean morok_op_is_elementwise (MorokOp op);
gboolean morok_op_is_view (MorokOp op);
gboolean morok_op_is_reduce (MorokOp op);
const char *morok_op_name (MorokOp op);

/* Number of elements at the variables' upper bounds. */
gint64 morok_node_numel_max (const MorokNode *node);
/* "[2, t, 64]"; (transfer full) */
char *morok_node_shape_string (const MorokNode *node);
/* "add f32[2, t, 64]"; (transfer full) */
char *morok_node_describe (const MorokNode *node);

G_END_DECLS
