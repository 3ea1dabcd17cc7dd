/* SPDX-License-Identifier: MIT */
/* Tensor API composites: the layers speech models are made of, written with
 * the primitives. Each is the textbook formula; the rewrite rules and the
 * scheduler turn them into few, fused kernels. */
#define G_LOG_DOMAIN "morok-tensor"
#include "tensor/tensor-private.h"
#include <math.h>
#include <string.h>

static gboolean
require_rank (MorokTensor *t, guint rank, const char *what, const char *layout, GError **error)
{
  if (t->rank == rank)
    return TRUE;
  g_autofree char *s = morok_node_shape_string (t);
  g_set_error (error, MOROK_TENSOR_ERROR, MOROK_TENSOR_ERROR_SHAPE, "%s: expected %s, got %s", what,
               layout, s);
  return FALSE;
}

static const MorokSym *
c_sym (MorokTensor *t, gint64 v)
{
  return morok_sym_const (pool_of (t), v);
}

static MorokTensor *
matmul (MorokTensor *a, MorokTensor *b, gboolean exact, GError **error)
{
  CHAIN (error, a, b);
  if (a->dtype != b->dtype || !morok_dtype_is_float (a->dtype))
    {
      g_set_error (error, MOROK_TENSOR_ERROR, MOROK_TENSOR_ERROR_DTYPE,
                   "matmul: needs two float tensors of one dtype, got %s and %s",
                   morok_dtype_name (a->dtype), morok_dtype_name (b->dtype));
      return NULL;
    }
  g_autofree char *sa = morok_node_shape_string (a);
  g_autofree char *sb = morok_node_shape_string (b);
  if (a->rank < 2 || b->rank < 2 || a->shape[a->rank - 1] != b->shape[b->rank - 2])
    {
      g_set_error (error, MOROK_TENSOR_ERROR, MOROK_TENSOR_ERROR_SHAPE,
                   "matmul: %s x %s: inner dimensions differ (or rank < 2)", sa, sb);
      return NULL;
    }
  /* broadcast the batch dims of both to one shape */
  guint rank = MAX (a->rank, b->rank);
  const MorokSym *batch[MOROK_MAX_RANK];
  for (guint d = 0; d + 2 < rank; d++)
    {
      gint ia = (gint) d - (gint) (rank - a->rank), ib = (gint) d - (gint) (rank - b->rank);
      const MorokSym *da = ia >= 0 ? a->shape[ia] : c_sym (a, 1);
      const MorokSym *db = ib >= 0 ? b->shape[ib] : c_sym (a, 1);
      gint64 c;
      if (da != db && !(morok_sym_is_const (da, &c) && c == 1)
          && !(morok_sym_is_const (db, &c) && c == 1))
        {
          g_set_error (error, MOROK_TENSOR_ERROR, MOROK_TENSOR_ERROR_SHAPE,
                       "matmul: batch dimensions of %s and %s do not broadcast", sa, sb);
          return NULL;
        }
      batch[d] = (morok_sym_is_const (da, &c) && c == 1) ? db : da;
    }
  const MorokSym *sha[MOROK_MAX_RANK], *shb[MOROK_MAX_RANK], *out[MOROK_MAX_RANK];
  memcpy (sha, batch, sizeof batch);
  memcpy (shb, batch, sizeof batch);
  memcpy (out, batch, sizeof batch);
  sha[rank - 2] = a->shape[a->rank - 2], sha[rank - 1] = a->shape[a->rank - 1];
  shb[rank - 2] = b->shape[b->rank - 2], shb[rank - 1] = b->shape[b->rank - 1];
  out[rank - 2] = sha[rank - 2], out[rank - 1] = shb[rank - 1];
  MorokNode p = proto (MOROK_OP_MATMUL, a->dtype, out, rank);
  p.n_src = 2;
  p.src[0] = morok_tensor_broadcast_to (a, sha, rank);
  p.src[1] = morok_tensor_broadcast_to (b, shb, rank);
  p.exact = exact;
  return morok_graph_intern (a->graph, &p);
}

MorokTensor *
morok_tensor_matmul (MorokTensor *a, MorokTensor *b, GError **error)
{
  return matmul (a, b, FALSE, error);
}

MorokTensor *
morok_tensor_matmul_exact (MorokTensor *a, MorokTensor *b, GError **error)
{
  return matmul (a, b, TRUE, error);
}

MorokTensor *
morok_tensor_linear (MorokTensor *x, MorokTensor *w, MorokTensor *b, GError **error)
{
  CHAIN (error, x, w);
  if (!require_rank (w, 2, "linear weight", "[out, in]", error))
    return NULL;
  MorokTensor *y = morok_tensor_matmul (x, morok_tensor_transpose (w, 0, 1, error), error);
  if (!y)
    {
      g_prefix_error (error, "linear: ");
      return NULL;
    }
  return b ? morok_tensor_add (y, b, error) : y;
}

/* A per-channel vector p [C] as [1, C, 1, ...], to broadcast over x [B, C, ...]. */
static MorokTensor *
per_channel (MorokTensor *x, MorokTensor *p, GError **error)
{
  if (!x || !p)
    return NULL;
  const MorokSym *shape[MOROK_MAX_RANK];
  for (guint i = 0; i < x->rank; i++)
    shape[i] = i == 1 ? p->shape[0] : c_sym (x, 1);
  return morok_tensor_reshape (p, shape, x->rank, error);
}

/* Adds bias [C] to x [B, C, ...]. */
static MorokTensor *
add_channel_bias (MorokTensor *x, MorokTensor *b, GError **error)
{
  return b ? morok_tensor_add (x, per_channel (x, b, error), error) : x;
}

/* Convolution over the last @n_spatial axes of x [B, Cin, S...] with
 * w [Cout, Cin/groups, K...], as windows of the padded input (im2col as a
 * view) contracted with the weights: a matmul for groups == 1, a multiply
 * and sum for grouped and depthwise convolutions. */
static MorokTensor *
conv (MorokTensor *x, MorokTensor *w, MorokTensor *b, guint n_spatial, const gint64 *stride,
      const gint64 *padding, const gint64 *dilation, gint64 groups, GError **error)
{
  const char *name = n_spatial == 1 ? "conv1d" : "conv2d";
  guint rank = 2 + n_spatial;
  if (!require_rank (x, rank, name, n_spatial == 1 ? "x [B, Cin, L]" : "x [B, Cin, H, W]", error)
      || !require_rank (w, rank, name, "w [Cout, Cin/groups, K...]", error))
    return NULL;
  gint64 cin, cout, cig;
  g_autofree char *sx = morok_node_shape_string (x);
  g_autofree char *sw = morok_node_shape_string (w);
  if (groups < 1 || !morok_sym_is_const (x->shape[1], &cin)
      || !morok_sym_is_const (w->shape[0], &cout) || !morok_sym_is_const (w->shape[1], &cig)
      || cin % groups || cout % groups || cig * groups != cin
      || (b && (b->rank != 1 || b->shape[0] != w->shape[0])))
    {
      g_set_error (error, MOROK_TENSOR_ERROR, MOROK_TENSOR_ERROR_SHAPE,
                   "%s: x %s, w %s, groups %" G_GINT64_FORMAT ": channels do not fit", name, sx, sw,
                   groups);
      return NULL;
    }
  gint64 before[MOROK_MAX_RANK] = { 0 }, after[MOROK_MAX_RANK] = { 0 }, k[2];
  for (guint i = 0; i < n_spatial; i++)
    {
      before[2 + i] = after[2 + i] = padding[i];
      morok_sym_is_const (w->shape[2 + i], &k[i]);
    }
  /* windows: [B, Cin, S0, S1..] -> [B, Cin, T0, K0, T1, K1 ..] */
  MorokTensor *win = morok_tensor_pad (x, before, after, 0.0, error);
  for (guint i = 0; i < n_spatial; i++)
    win = morok_tensor_window (win, 2 + 2 * i, k[i], stride[i], dilation[i], error);
  if (!win)
    {
      g_prefix_error (error, "%s: ", name);
      return NULL;
    }
  const MorokSym *B = x->shape[0], *T[2] = { win->shape[2], n_spatial > 1 ? win->shape[4] : NULL };
  const MorokSym *T_all = n_spatial > 1 ? morok_sym_mul (T[0], T[1]) : T[0];
  gint64 taps = n_spatial > 1 ? k[0] * k[1] : k[0];
  MorokTensor *y;
  if (groups == 1)
    {
      /* [B, Cin, K.., T..] -> [B, Cin*K, T] and w [Cout, Cin*K]: one matmul */
      guint perm2[] = { 0, 1, 3, 5, 2, 4 }, perm1[] = { 0, 1, 3, 2 };
      MorokTensor *cols
          = morok_tensor_permute (win, n_spatial > 1 ? perm2 : perm1, win->rank, error);
      const MorokSym *cs[] = { B, c_sym (x, cin * taps), T_all };
      cols = morok_tensor_reshape (cols, cs, 3, error);
      MorokTensor *w2 = morok_tensor_reshape_c (w, (gint64[]){ cout, cin * taps }, 2, error);
      y = morok_tensor_matmul (w2, cols, error);
    }
  else
    {
      /* out[b, g, o, t] = sum_{i, k} w[g, o, i, k] * win[b, g, i, t, k] */
      guint perm2[] = { 0, 1, 2, 4, 3, 5 };
      MorokTensor *cols = n_spatial > 1 ? morok_tensor_permute (win, perm2, win->rank, error) : win;
      const MorokSym *cs[]
          = { B, c_sym (x, groups), c_sym (x, 1), c_sym (x, cig), T_all, c_sym (x, taps) };
      cols = morok_tensor_reshape (cols, cs, 6, error);
      MorokTensor *w2 = morok_tensor_reshape_c (
          w, (gint64[]){ 1, groups, cout / groups, cig, 1, taps }, 6, error);
      y = morok_tensor_sum (morok_tensor_mul (cols, w2, error), (gint[]){ 3, 5 }, 2, FALSE, error);
      const MorokSym *ys[] = { B, c_sym (x, cout), T_all };
      y = morok_tensor_reshape (y, ys, 3, error);
    }
  if (y && n_spatial > 1)
    {
      const MorokSym *ys[] = { B, c_sym (x, cout), T[0], T[1] };
      y = morok_tensor_reshape (y, ys, 4, error);
    }
  y = add_channel_bias (y, b, error);
  if (!y)
    g_prefix_error (error, "%s: ", name);
  return y;
}

MorokTensor *
morok_tensor_conv1d (MorokTensor *x, MorokTensor *w, MorokTensor *b, gint64 stride, gint64 padding,
                     gint64 dilation, gint64 groups, GError **error)
{
  CHAIN (error, x, w);
  return conv (x, w, b, 1, &stride, &padding, &dilation, groups, error);
}

MorokTensor *
morok_tensor_conv2d (MorokTensor *x, MorokTensor *w, MorokTensor *b, const gint64 stride[2],
                     const gint64 padding[2], const gint64 dilation[2], gint64 groups,
                     GError **error)
{
  CHAIN (error, x, w);
  return conv (x, w, b, 2, stride, padding, dilation, groups, error);
}

MorokTensor *
morok_tensor_softmax (MorokTensor *a, gint axis, GError **error)
{
  CHAIN (error, a);
  /* exp (a - max) / sum (exp (a - max)) */
  MorokTensor *m = morok_tensor_max (a, &axis, 1, TRUE, error);
  MorokTensor *e = morok_tensor_exp (morok_tensor_sub (a, m, error), error);
  return morok_tensor_div (e, morok_tensor_sum (e, &axis, 1, TRUE, error), error);
}

MorokTensor *
morok_tensor_log_softmax (MorokTensor *a, gint axis, GError **error)
{
  CHAIN (error, a);
  /* (a - max) - log (sum (exp (a - max))) */
  MorokTensor *m = morok_tensor_max (a, &axis, 1, TRUE, error);
  MorokTensor *s = morok_tensor_sub (a, m, error);
  MorokTensor *lse = morok_tensor_log (
      morok_tensor_sum (morok_tensor_exp (s, error), &axis, 1, TRUE, error), error);
  return morok_tensor_sub (s, lse, error);
}

MorokTensor *
morok_tensor_layer_norm (MorokTensor *x, MorokTensor *w, MorokTensor *b, double eps, GError **error)
{
  CHAIN (error, x);
  gint last = -1;
  /* (x - mean) / sqrt (var + eps) * w + b, var = mean ((x - mean)^2) */
  MorokTensor *mu = morok_tensor_mean (x, &last, 1, TRUE, error);
  MorokTensor *d = morok_tensor_sub (x, mu, error);
  MorokTensor *var = morok_tensor_mean (morok_tensor_mul (d, d, error), &last, 1, TRUE, error);
  MorokTensor *y = morok_tensor_mul (
      d, morok_tensor_rsqrt (morok_tensor_add_scalar (var, eps, error), error), error);
  if (w)
    y = morok_tensor_mul (y, w, error);
  if (b)
    y = morok_tensor_add (y, b, error);
  if (!y)
    g_prefix_error (error, "layer_norm: ");
  return y;
}

MorokTensor *
morok_tensor_batch_norm (MorokTensor *x, MorokTensor *mean, MorokTensor *var, MorokTensor *w,
                         MorokTensor *b, double eps, GError **error)
{
  CHAIN (error, x, mean, var);
  if (x->rank < 2)
    {
      g_autofree char *s = morok_node_shape_string (x);
      g_set_error (error, MOROK_TENSOR_ERROR, MOROK_TENSOR_ERROR_SHAPE,
                   "batch_norm: expected x [B, C, ...], got %s", s);
      return NULL;
    }
  /* y = x * s + t with s = w / sqrt (var + eps), t = b - mean * s: the
   * weight-only s and t fold at prepare, and into a preceding convolution */
  MorokTensor *s = morok_tensor_rsqrt (morok_tensor_add_scalar (var, eps, error), error);
  if (w)
    s = morok_tensor_mul (s, w, error);
  MorokTensor *t = morok_tensor_neg (morok_tensor_mul (mean, s, error), error);
  if (b)
    t = morok_tensor_add (t, b, error);
  MorokTensor *y
      = add_channel_bias (morok_tensor_mul (x, per_channel (x, s, error), error), t, error);
  if (!y)
    g_prefix_error (error, "batch_norm: ");
  return y;
}

MorokTensor *
morok_tensor_glu (MorokTensor *a, gint axis, GError **error)
{
  CHAIN (error, a);
  guint ax;
  gint64 n;
  if (!check_axis (a, axis, 0, &ax, error))
    return NULL;
  if (!morok_sym_is_const (a->shape[ax], &n) || n % 2)
    {
      g_autofree char *s = morok_node_shape_string (a);
      g_set_error (error, MOROK_TENSOR_ERROR, MOROK_TENSOR_ERROR_SHAPE,
                   "glu: axis %u of %s must have an even, fixed length", ax, s);
      return NULL;
    }
  MorokTensor *first = morok_tensor_slice (a, (gint) ax, c_sym (a, 0), c_sym (a, n / 2), error);
  MorokTensor *second
      = morok_tensor_slice (a, (gint) ax, c_sym (a, n / 2), c_sym (a, n / 2), error);
  return morok_tensor_mul (first, morok_tensor_sigmoid (second, error), error);
}

/* h' and c' from the summed gates [B, 4H] (i, f, g, o) and c [B, H]. */
static gboolean
lstm_from_gates (MorokTensor *gates, MorokTensor *c, gint64 hid, MorokTensor **out_h,
                 MorokTensor **out_c, GError **error)
{
  MorokTensor *gate[4];
  for (int i = 0; i < 4; i++)
    gate[i] = morok_tensor_slice (gates, 1, c_sym (c, i * hid), c_sym (c, hid), error);
  MorokTensor *ig = morok_tensor_sigmoid (gate[0], error);
  MorokTensor *fg = morok_tensor_sigmoid (gate[1], error);
  MorokTensor *gg = morok_tensor_tanh (gate[2], error);
  MorokTensor *og = morok_tensor_sigmoid (gate[3], error);
  MorokTensor *c2
      = morok_tensor_add (morok_tensor_mul (fg, c, error), morok_tensor_mul (ig, gg, error), error);
  MorokTensor *h2 = morok_tensor_mul (og, morok_tensor_tanh (c2, error), error);
  if (!h2)
    {
      g_prefix_error (error, "lstm_cell: ");
      return FALSE;
    }
  *out_h = h2;
  *out_c = c2;
  return TRUE;
}

/* H of h [B, H] when @w is [4H, In], else 0 with @error naming both. */
static gint64
lstm_hidden (MorokTensor *h, MorokTensor *w, const char *what, GError **error)
{
  gint64 hid;
  if (h->rank == 2 && morok_sym_is_const (h->shape[1], &hid) && w->rank == 2
      && morok_sym_hi (w->shape[0]) == 4 * hid)
    return hid;
  g_autofree char *sh = morok_node_shape_string (h);
  g_autofree char *sw = morok_node_shape_string (w);
  g_set_error (error, MOROK_TENSOR_ERROR, MOROK_TENSOR_ERROR_SHAPE,
               "lstm_cell: h %s and %s %s: %s must be [4H, In]", sh, what, sw, what);
  return 0;
}

gboolean
morok_tensor_lstm_cell (MorokTensor *x, MorokTensor *h, MorokTensor *c, MorokTensor *w_ih,
                        MorokTensor *w_hh, MorokTensor *b_ih, MorokTensor *b_hh,
                        MorokTensor **out_h, MorokTensor **out_c, GError **error)
{
  g_return_val_if_fail (out_h != NULL && out_c != NULL, FALSE);
  *out_h = *out_c = NULL;
  if ((error && *error) || !x || !h || !c || !w_ih || !w_hh)
    return FALSE;
  gint64 hid = lstm_hidden (h, w_ih, "w_ih", error);
  if (!hid || !lstm_hidden (h, w_hh, "w_hh", error))
    return FALSE;
  /* one product of [x | h] by [w_ih | w_hh] (a weight folded at prepare),
   * not two added: one stream over the weights and no second pass over the
   * gates */
  MorokTensor *xh[2] = { x, h }, *w[2] = { w_ih, w_hh };
  MorokTensor *b = b_ih && b_hh ? morok_tensor_add (b_ih, b_hh, error) : b_ih ? b_ih : b_hh;
  MorokTensor *gates = morok_tensor_linear (morok_tensor_cat (xh, 2, 1, error),
                                            morok_tensor_cat (w, 2, 1, error), b, error);
  return lstm_from_gates (gates, c, hid, out_h, out_c, error);
}

gboolean
morok_tensor_lstm_cell_from_input (MorokTensor *x_gates, MorokTensor *h, MorokTensor *c,
                                   MorokTensor *w_hh, MorokTensor *b_hh, MorokTensor **out_h,
                                   MorokTensor **out_c, GError **error)
{
  g_return_val_if_fail (out_h != NULL && out_c != NULL, FALSE);
  *out_h = *out_c = NULL;
  if ((error && *error) || !x_gates || !h || !c || !w_hh)
    return FALSE;
  gint64 hid = lstm_hidden (h, w_hh, "w_hh", error);
  if (!hid)
    return FALSE;
  /* x_gates + (h · w_hhᵀ + b_hh): PyTorch's order, the input's term and
   * the state's each with its own bias, then their sum */
  MorokTensor *gates
      = morok_tensor_add (x_gates, morok_tensor_linear (h, w_hh, b_hh, error), error);
  return lstm_from_gates (gates, c, hid, out_h, out_c, error);
}

/* Most value columns of the fused attention (kernels/include/morok-attention.h). */
#define ATTENTION_MAX_DV 256

/* The ATTENTION node when q, k, v are f32 of one rank with the same batch
 * dims and the mask (if any) masks keys only, [..., 1, Tk]; NULL (no error)
 * otherwise, for the composite. */
static MorokTensor *
fused_attention (MorokTensor *q, MorokTensor *k, MorokTensor *v, MorokTensor *mask, double scale)
{
  guint r = q->rank;
  gint64 dv;
  if (q->dtype != MOROK_DTYPE_F32 || k->dtype != q->dtype || v->dtype != q->dtype || k->rank != r
      || v->rank != r || r < 2 || q->shape[r - 1] != k->shape[r - 1]
      || k->shape[r - 2] != v->shape[r - 2] || !morok_sym_is_const (v->shape[r - 1], &dv)
      || dv > ATTENTION_MAX_DV)
    return NULL;
  for (guint i = 0; i + 2 < r; i++)
    if (k->shape[i] != q->shape[i] || v->shape[i] != q->shape[i])
      return NULL;
  const MorokSym *shape[MOROK_MAX_RANK];
  memcpy (shape, q->shape, sizeof shape);
  shape[r - 2] = c_sym (q, 1), shape[r - 1] = k->shape[r - 2];
  gint64 one;
  if (mask
      && (mask->dtype != MOROK_DTYPE_BOOL || mask->rank > r || mask->rank < 2
          || !morok_sym_is_const (mask->shape[mask->rank - 2], &one) || one != 1))
    return NULL;
  for (guint i = 0; mask && i < mask->rank; i++)
    {
      const MorokSym *want = shape[r - mask->rank + i];
      if (mask->shape[i] != want && !(morok_sym_is_const (mask->shape[i], &one) && one == 1))
        return NULL;
    }
  MorokTensor *m = mask ? morok_tensor_broadcast_to (mask, shape, r) : NULL;
  shape[r - 2] = q->shape[r - 2], shape[r - 1] = v->shape[r - 1];
  MorokNode p = proto (MOROK_OP_ATTENTION, MOROK_DTYPE_F32, shape, r);
  p.n_src = m ? 4 : 3;
  p.src[0] = q, p.src[1] = k, p.src[2] = v, p.src[3] = m;
  p.value = scale;
  return morok_graph_intern (q->graph, &p);
}

MorokTensor *
morok_tensor_attention (MorokTensor *q, MorokTensor *k, MorokTensor *v, MorokTensor *mask,
                        double scale, GError **error)
{
  CHAIN (error, q, k, v);
  gint64 d;
  if (q->rank < 2 || !morok_sym_is_const (q->shape[q->rank - 1], &d))
    {
      g_autofree char *s = morok_node_shape_string (q);
      g_set_error (error, MOROK_TENSOR_ERROR, MOROK_TENSOR_ERROR_SHAPE,
                   "attention: q %s must be [..., T, D] with a fixed D", s);
      return NULL;
    }
  if (scale <= 0)
    scale = 1.0 / sqrt ((double) d);
  MorokTensor *fused = fused_attention (q, k, v, mask, scale);
  if (fused)
    return fused;
  MorokTensor *scores = morok_tensor_mul_scalar (
      morok_tensor_matmul (q, morok_tensor_transpose (k, -1, -2, error), error), scale, error);
  if (mask)
    scores = morok_tensor_where (mask, scores, morok_tensor_scalar_like (q, -INFINITY), error);
  /* softmax (scores) · v, normalised after the product: the division is then
   * the product's epilogue over [T, D] instead of a pass over [T, T] */
  gint last = -1;
  MorokTensor *e = morok_tensor_exp (
      morok_tensor_sub (scores, morok_tensor_max (scores, &last, 1, TRUE, error), error), error);
  MorokTensor *out = morok_tensor_div (morok_tensor_matmul (e, v, error),
                                       morok_tensor_sum (e, &last, 1, TRUE, error), error);
  if (!out)
    g_prefix_error (error, "attention: ");
  return out;
}

/* The lengths kernels/include/morok-dft.h takes (MOROK_DFT_MIN_L, _MAX_L). */
#define DFT_MIN_L 32
#define DFT_MAX_L 512

MorokTensor *
morok_tensor_dft_magnitude (MorokTensor *frames, MorokTensor *window, GError **error)
{
  CHAIN (error, frames, window);
  guint r = frames->rank;
  gint64 L = 0, wl = 0;
  if (r < 1 || !morok_sym_is_const (frames->shape[r - 1], &L) || L < DFT_MIN_L || L > DFT_MAX_L
      || (L & (L - 1)) || window->rank != 1 || !morok_sym_is_const (window->shape[0], &wl)
      || wl != L)
    {
      g_autofree char *sf = morok_node_shape_string (frames);
      g_autofree char *sw = morok_node_shape_string (window);
      g_set_error (error, MOROK_TENSOR_ERROR, MOROK_TENSOR_ERROR_SHAPE,
                   "dft_magnitude: frames %s and window %s must be [..., L] and [L] with L a "
                   "power of two from %d to %d",
                   sf, sw, DFT_MIN_L, DFT_MAX_L);
      return NULL;
    }
  if (frames->dtype != MOROK_DTYPE_F32 || window->dtype != MOROK_DTYPE_F32)
    {
      g_set_error (error, MOROK_TENSOR_ERROR, MOROK_TENSOR_ERROR_DTYPE,
                   "dft_magnitude: needs f32 frames and window, got %s and %s",
                   morok_dtype_name (frames->dtype), morok_dtype_name (window->dtype));
      return NULL;
    }
  const MorokSym *shape[MOROK_MAX_RANK];
  memcpy (shape, frames->shape, sizeof shape);
  shape[r - 1] = c_sym (frames, L / 2 + 1);
  MorokNode p = proto (MOROK_OP_DFT_MAG, MOROK_DTYPE_F32, shape, r);
  p.n_src = 2;
  p.src[0] = frames, p.src[1] = window;
  return morok_graph_intern (frames->graph, &p);
}
