/* SPDX-License-Identifier: MIT */
/* Lazy tensors: the API model code builds graphs with.
 *
 * A MorokTensor is a node of a MorokGraph (graph/morok-graph.h): creating one
 * computes nothing, it records the operation. Shapes may hold symbolic
 * dimensions (base/morok-sym.h). Every operation checks shapes and dtypes
 * and reports a misfit as a GError in MOROK_TENSOR_ERROR whose message gives
 * the shapes. Errors chain: an operation given a NULL source, or called while
 * *error is already set, returns NULL and leaves the first error in place, so
 * a model can build a whole expression and check once at the end.
 *
 *   g_autoptr (MorokGraph) g = morok_graph_new ();
 *   MorokVariable *t = morok_variable_new (morok_graph_sym_pool (g), "t", 1, 100);
 *   const MorokSym *shape[] = { morok_sym_var (t), morok_sym_const (pool, 64) };
 *   MorokTensor *x = morok_tensor_input (g, "x", MOROK_DTYPE_F32, shape, 2);
 *   MorokTensor *w = morok_tensor_weight (g, "w", MOROK_DTYPE_F32, w_data, (gint64[]){ 32, 64 },
 * 2); MorokTensor *y = morok_tensor_relu (morok_tensor_linear (x, w, NULL, &error), &error); if
 * (!y) ... // error names the shapes that did not fit
 *
 * Borrowed pointers: tensors live as long as their graph. Weight data is not
 * copied: it must outlive every plan built from the graph.
 */
#pragma once

#include <glib.h>
#include "graph/morok-graph.h"

G_BEGIN_DECLS

typedef MorokNode MorokTensor;

#define MOROK_TENSOR_ERROR (morok_tensor_error_quark ())
GQuark morok_tensor_error_quark (void);

typedef enum
{
  MOROK_TENSOR_ERROR_SHAPE,    /* shapes do not fit the operation */
  MOROK_TENSOR_ERROR_DTYPE,    /* dtypes do not fit the operation */
  MOROK_TENSOR_ERROR_ARGUMENT, /* an axis, size or parameter out of range */
} MorokTensorError;

/* ---- leaves ---- */
MorokTensor *morok_tensor_input (MorokGraph *g, const char *name, MorokDType dtype,
                                 const MorokSym *const *shape, guint rank);
MorokTensor *morok_tensor_weight (MorokGraph *g, const char *name, MorokDType dtype,
                                  gconstpointer data, const gint64 *dims, guint rank);
/* A weight whose owner frees its data once a plan no longer needs it:
 * prepare calls @release (@release_data, @data) after it has packed the
 * data into the plan's own panels, when no kernel reads the weight itself
 * (at most once, maybe never). The data must then not be used for a later
 * graph. For a model of hundreds of megabytes this keeps one copy of each
 * weight resident, the packed one. */
MorokTensor *morok_tensor_weight_with_release (
    MorokGraph *g, const char *name, MorokDType dtype, gconstpointer data, const gint64 *dims,
    guint rank, void (*release) (gpointer release_data, gconstpointer data), gpointer release_data);
/* A scalar broadcast to @shape (rank 0: a scalar). */
MorokTensor *morok_tensor_full (MorokGraph *g, MorokDType dtype, double value,
                                const MorokSym *const *shape, guint rank);
/* A rank-0 constant of @like's dtype, broadcastable to anything. */
MorokTensor *morok_tensor_scalar_like (const MorokTensor *like, double value);

/* ---- shape queries ---- */
static inline guint
morok_tensor_rank (const MorokTensor *t)
{
  return t->rank;
}
static inline const MorokSym *
morok_tensor_dim (const MorokTensor *t, guint i)
{
  return t->shape[i];
}
/* Makes @n constant syms in @g's pool from @dims into @out. */
void morok_tensor_syms (MorokGraph *g, const gint64 *dims, guint n, const MorokSym **out);

/* ---- element-wise (binary ops broadcast numpy-style; same dtype required) ---- */
MorokTensor *morok_tensor_neg (MorokTensor *a, GError **error);
MorokTensor *morok_tensor_abs (MorokTensor *a, GError **error);
MorokTensor *morok_tensor_exp (MorokTensor *a, GError **error);
MorokTensor *morok_tensor_log (MorokTensor *a, GError **error);
MorokTensor *morok_tensor_sqrt (MorokTensor *a, GError **error);
MorokTensor *morok_tensor_rsqrt (MorokTensor *a, GError **error);
MorokTensor *morok_tensor_recip (MorokTensor *a, GError **error);
MorokTensor *morok_tensor_sigmoid (MorokTensor *a, GError **error);
MorokTensor *morok_tensor_tanh (MorokTensor *a, GError **error);
MorokTensor *morok_tensor_relu (MorokTensor *a, GError **error);
MorokTensor *morok_tensor_silu (MorokTensor *a, GError **error);
MorokTensor *morok_tensor_logical_not (MorokTensor *a, GError **error);
MorokTensor *morok_tensor_cast (MorokTensor *a, MorokDType dtype, GError **error);
MorokTensor *morok_tensor_add (MorokTensor *a, MorokTensor *b, GError **error);
MorokTensor *morok_tensor_sub (MorokTensor *a, MorokTensor *b, GError **error);
MorokTensor *morok_tensor_mul (MorokTensor *a, MorokTensor *b, GError **error);
MorokTensor *morok_tensor_div (MorokTensor *a, MorokTensor *b, GError **error);
MorokTensor *morok_tensor_maximum (MorokTensor *a, MorokTensor *b, GError **error);
MorokTensor *morok_tensor_minimum (MorokTensor *a, MorokTensor *b, GError **error);
MorokTensor *morok_tensor_pow (MorokTensor *a, MorokTensor *b, GError **error);
/* Comparisons return bool tensors. */
MorokTensor *morok_tensor_lt (MorokTensor *a, MorokTensor *b, GError **error);
MorokTensor *morok_tensor_le (MorokTensor *a, MorokTensor *b, GError **error);
MorokTensor *morok_tensor_gt (MorokTensor *a, MorokTensor *b, GError **error);
MorokTensor *morok_tensor_ge (MorokTensor *a, MorokTensor *b, GError **error);
MorokTensor *morok_tensor_eq (MorokTensor *a, MorokTensor *b, GError **error);
MorokTensor *morok_tensor_ne (MorokTensor *a, MorokTensor *b, GError **error);
/* cond ? a : b; cond is bool; all three broadcast. */
MorokTensor *morok_tensor_where (MorokTensor *cond, MorokTensor *a, MorokTensor *b, GError **error);
/* a * s, a + s with a scalar of a's dtype */
MorokTensor *morok_tensor_mul_scalar (MorokTensor *a, double s, GError **error);
MorokTensor *morok_tensor_add_scalar (MorokTensor *a, double s, GError **error);

/* ---- reductions (negative axes count from the end) ---- */
MorokTensor *morok_tensor_sum (MorokTensor *a, const gint *axes, guint n_axes, gboolean keepdim,
                               GError **error);
MorokTensor *morok_tensor_max (MorokTensor *a, const gint *axes, guint n_axes, gboolean keepdim,
                               GError **error);
MorokTensor *morok_tensor_mean (MorokTensor *a, const gint *axes, guint n_axes, gboolean keepdim,
                                GError **error);

/* ---- movement ---- */
/* Same element count required (checked at the upper bounds and symbolically). */
MorokTensor *morok_tensor_reshape (MorokTensor *a, const MorokSym *const *shape, guint rank,
                                   GError **error);
MorokTensor *morok_tensor_reshape_c (MorokTensor *a, const gint64 *dims, guint rank,
                                     GError **error);
MorokTensor *morok_tensor_unsqueeze (MorokTensor *a, gint axis, GError **error);
MorokTensor *morok_tensor_squeeze (MorokTensor *a, gint axis, GError **error);
/* out dim i = a dim perm[i] */
MorokTensor *morok_tensor_permute (MorokTensor *a, const guint *perm, guint rank, GError **error);
MorokTensor *morok_tensor_transpose (MorokTensor *a, gint d0, gint d1, GError **error);
/* Broadcasts size-1 dims (and missing leading dims) to @shape. */
MorokTensor *morok_tensor_expand (MorokTensor *a, const MorokSym *const *shape, guint rank,
                                  GError **error);
/* Pads axis i with before[i] and after[i] elements of @value. */
MorokTensor *morok_tensor_pad (MorokTensor *a, const gint64 *before, const gint64 *after,
                               double value, GError **error);
/* Mirror padding (PyTorch 'reflect'): each pad must be < the axis length. */
MorokTensor *morok_tensor_pad_reflect (MorokTensor *a, const gint64 *before, const gint64 *after,
                                       GError **error);
/* a[start : start + length] along @axis; both may be symbolic; checked at the bounds. */
MorokTensor *morok_tensor_slice (MorokTensor *a, gint axis, const MorokSym *start,
                                 const MorokSym *length, GError **error);
MorokTensor *morok_tensor_cat (MorokTensor *const *ts, guint n, gint axis, GError **error);
/* Sliding windows along @axis: [.., L, ..] -> [.., T, size, ..] with
 * T = (L - dilation * (size - 1) - 1) / stride + 1; element (t, k) is a[t * stride + k * dilation].
 */
MorokTensor *morok_tensor_window (MorokTensor *a, gint axis, gint64 size, gint64 stride,
                                  gint64 dilation, GError **error);

/* ---- composites (tensor/tensor-nn.c) ---- */
/* [..., M, K] x [..., K, N] -> [..., M, N], batch dims broadcast. */
MorokTensor *morok_tensor_matmul (MorokTensor *a, MorokTensor *b, GError **error);
/* The same, kept in f32 when the plan's precision is f16 (MorokPlanOptions):
 * for products whose result cancels, such as a DFT. */
MorokTensor *morok_tensor_matmul_exact (MorokTensor *a, MorokTensor *b, GError **error);
/* x [..., in] · w[out, in]^T + b[out] (b may be NULL) -> [..., out] */
MorokTensor *morok_tensor_linear (MorokTensor *x, MorokTensor *w, MorokTensor *b, GError **error);
/* x [B, Cin, L], w [Cout, Cin/groups, K], b [Cout] or NULL -> [B, Cout, T] */
MorokTensor *morok_tensor_conv1d (MorokTensor *x, MorokTensor *w, MorokTensor *b, gint64 stride,
                                  gint64 padding, gint64 dilation, gint64 groups, GError **error);
/* x [B, Cin, H, W], w [Cout, Cin/groups, KH, KW] -> [B, Cout, H', W'] (per-axis params [h, w]) */
MorokTensor *morok_tensor_conv2d (MorokTensor *x, MorokTensor *w, MorokTensor *b,
                                  const gint64 stride[2], const gint64 padding[2],
                                  const gint64 dilation[2], gint64 groups, GError **error);
MorokTensor *morok_tensor_softmax (MorokTensor *a, gint axis, GError **error);
MorokTensor *morok_tensor_log_softmax (MorokTensor *a, gint axis, GError **error);
/* Normalises over the last axis; w and b [D] may be NULL. */
MorokTensor *morok_tensor_layer_norm (MorokTensor *x, MorokTensor *w, MorokTensor *b, double eps,
                                      GError **error);
/* Inference batch norm over axis 1 of x [B, C, ...]; all parameters [C]. */
MorokTensor *morok_tensor_batch_norm (MorokTensor *x, MorokTensor *mean, MorokTensor *var,
                                      MorokTensor *w, MorokTensor *b, double eps, GError **error);
/* a[first half] * sigmoid (a[second half]) along @axis. */
MorokTensor *morok_tensor_glu (MorokTensor *a, gint axis, GError **error);
/* One LSTM step, PyTorch layout and gate order (i, f, g, o): x [B, In], h and c
 * [B, H], w_ih [4H, In], w_hh [4H, H], biases [4H] or NULL. */
gboolean morok_tensor_lstm_cell (MorokTensor *x, MorokTensor *h, MorokTensor *c, MorokTensor *w_ih,
                                 MorokTensor *w_hh, MorokTensor *b_ih, MorokTensor *b_hh,
                                 MorokTensor **out_h, MorokTensor **out_c, GError **error);
/* The same step from its input's term computed already (a table per token,
 * say): x_gates [B, 4H] = x · w_ihᵀ + b_ih; gates = x_gates + h · w_hhᵀ +
 * b_hh; b_hh may be NULL. */
gboolean morok_tensor_lstm_cell_from_input (MorokTensor *x_gates, MorokTensor *h, MorokTensor *c,
                                            MorokTensor *w_hh, MorokTensor *b_hh,
                                            MorokTensor **out_h, MorokTensor **out_c,
                                            GError **error);
/* softmax (q kᵀ · scale, masked) v: q [..., Tq, D], k [..., Tk, D], v [..., Tk, Dv];
 * mask (bool, broadcast to [..., Tq, Tk], TRUE = attend) may be NULL;
 * scale <= 0 means 1/sqrt(D). */
MorokTensor *morok_tensor_attention (MorokTensor *q, MorokTensor *k, MorokTensor *v,
                                     MorokTensor *mask, double scale, GError **error);
/* |DFT| of windowed real frames, f32: frames [..., L], window [L] ->
 * [..., L/2 + 1], bin k = |sum_n window[n] frames[..., n] e^(-2 pi i k n / L)|,
 * computed by an FFT (kernels/include/morok-dft.h). L must be a power of
 * two from 32 to 512. */
MorokTensor *morok_tensor_dft_magnitude (MorokTensor *frames, MorokTensor *window, GError **error);

G_END_DECLS
