/* SPDX-License-Identifier: MIT */
/* The GigaAM encoder and CTC head as tensor operations, equation by equation
 * as docs/gigaam-model.md writes them. Activations are [b, T', d], channels
 * last, from the subsampling to the head, so every projection is a matmul
 * over contiguous rows and the depthwise convolution a sum of shifted views
 * over time.
 *
 * Per batch item, the frames past its length are zeroed in the
 * subsampling's input and in its first convolution's output (as upstream
 * since its PR #75), masked in attention (their keys get weight 0) and
 * zeroed before the depthwise convolution; every other step is per frame,
 * so an item of a batch computes its valid frames as it does alone.
 * (Upstream zeroes the second convolution's output too; nothing after it
 * reads another frame but through those masks, so that changes only frames
 * that are not the item's.) The
 * masks come from the lengths input in the graph: frame j of a stage is
 * valid iff length >= thr[j], where thr[j] is the fewest samples that give
 * more than j frames there (a table made from the closed-form lengths,
 * gigaam.c). The rotary cos/sin tables are made for the longest T' the plan
 * allows and sliced to T'. */
#define G_LOG_DOMAIN "morok-models"
#include "models/gigaam-private.h"

#include <math.h>

typedef struct
{
  MorokGigaAm *m;
  MorokGraph *g;
  MorokSymPool *pool;
  GError **error;
  MorokTensor *lengths;    /* [b] integer samples */
  const MorokSym *b, *t;   /* batch, encoded frames */
  MorokTensor *key_mask;   /* [b, 1, 1, T'] bool: TRUE for valid frames */
  MorokTensor *frame_mask; /* [b, T', 1] bool */
  MorokTensor *cos, *sin;  /* [1, T', 1, dh / 2] */
} Enc;

#define W(e, ...) gigaam_weight ((e)->m, (e)->g, (e)->error, __VA_ARGS__)

static const MorokSym *
c_sym (Enc *e, gint64 v)
{
  return morok_sym_const (e->pool, v);
}

static MorokTensor *
reshape (Enc *e, MorokTensor *x, const MorokSym *const *shape, guint rank)
{
  return morok_tensor_reshape (x, shape, rank, e->error);
}

/* x [..., in] · w[out, in (, 1)]ᵀ + b: Linear, or a Conv1d with kernel 1. */
static MorokTensor *
linear (Enc *e, MorokTensor *x, const char *prefix, guint layer)
{
  g_autofree char *wn = g_strdup_printf ("%s.weight", prefix);
  g_autofree char *bn = g_strdup_printf ("%s.bias", prefix);
  MorokTensor *w = W (e, wn, layer), *b = W (e, bn, layer);
  if (w && w->rank == 3)
    w = reshape (e, w, w->shape, 2);
  return morok_tensor_linear (x, w, b, e->error);
}

static MorokTensor *
layer_norm (Enc *e, MorokTensor *x, const char *prefix, guint layer)
{
  g_autofree char *wn = g_strdup_printf ("%s.weight", prefix);
  g_autofree char *bn = g_strdup_printf ("%s.bias", prefix);
  return morok_tensor_layer_norm (x, W (e, wn, layer), W (e, bn, layer),
                                  e->m->config.layer_norm_eps, e->error);
}

/* ---- masks of the valid frames ---- */

/* [b, T] bool, TRUE where frame j - @offset of @stage (0: the features, 1:
 * after the first stride-2 layer, 2: encoded) is one of the item's; the
 * @offset frames in front (zero padding) count as valid. */
static MorokTensor *
valid_frames (Enc *e, guint stage, const MorokSym *t, gint64 offset)
{
  MorokGigaAm *m = e->m;
  gint64 t_max = morok_sym_hi (t);
  /* thr[j]: the fewest samples with more than j - offset frames, by binary
   * search (the frames grow with the samples); 4 (j + 2) hops and two
   * windows are always enough */
  gint64 l_max = (4 * t_max + 8) * (gint64) m->config.hop_length + 2 * (gint64) m->config.n_fft;
  g_autofree char *name = g_strdup_printf ("frame_thresholds.%u.%" G_GINT64_FORMAT, stage, offset);
  gboolean fill;
  float *thr = gigaam_table (m, name, (gsize) t_max, &fill);
  for (gint64 j = offset; fill && j < t_max; j++)
    {
      gint64 lo = 0, hi = l_max;
      while (lo < hi)
        {
          gint64 mid = lo + (hi - lo) / 2;
          if (gigaam_stage_frames (m, mid, stage) > j - offset)
            hi = mid;
          else
            lo = mid + 1;
        }
      thr[j] = (float) lo;
    }
  g_autofree char *wname = g_strdup_printf ("gigaam.%s", name);
  MorokTensor *th = morok_tensor_weight (e->g, wname, MOROK_DTYPE_F32, thr, (gint64[]){ t_max }, 1);
  th = morok_tensor_slice (th, 0, c_sym (e, 0), t, e->error);
  th = reshape (e, th, (const MorokSym *[]){ c_sym (e, 1), t }, 2);
  MorokTensor *len = morok_tensor_cast (e->lengths, MOROK_DTYPE_F32, e->error);
  len = reshape (e, len, (const MorokSym *[]){ e->b, c_sym (e, 1) }, 2);
  return morok_tensor_ge (len, th, e->error);
}

/* x [b, T, ...] with the frames that are not the item's (valid_frames)
 * set to 0 */
static MorokTensor *
zero_padded_frames (Enc *e, MorokTensor *x, guint stage, gint64 offset)
{
  if (!x)
    return NULL;
  const MorokSym *shape[MOROK_MAX_RANK] = { e->b, x->shape[1] };
  for (guint i = 2; i < x->rank; i++)
    shape[i] = c_sym (e, 1);
  MorokTensor *valid = reshape (e, valid_frames (e, stage, x->shape[1], offset), shape, x->rank);
  return morok_tensor_where (valid, x, morok_tensor_scalar_like (x, 0.0), e->error);
}

/* ---- subsampling: [b, T, F] -> [b, T', d] ---- */

/* Runs of k taps along @axis (stride 2) of a channels-last x [..., L, ..., c]
 * merged with the channels: [..., L', ..., k · c], a strided view when the
 * taps are next to the channels. */
static MorokTensor *
tap_runs (Enc *e, MorokTensor *x, gint axis, gint64 k)
{
  MorokTensor *w = morok_tensor_window (x, axis, k, 2, 1, e->error);
  if (!w)
    return NULL;
  const MorokSym *shape[MOROK_MAX_RANK];
  guint r = 0;
  for (guint i = 0; i < w->rank; i++)
    if (i != (guint) axis + 1)
      shape[r++] = w->shape[i];
  shape[r - 1] = morok_sym_mul (w->shape[axis + 1], w->shape[w->rank - 1]);
  return reshape (e, w, shape, r);
}

/* The weight @name stored [taps..., c_in, c_out] (gigaam.c) as [taps · c_in, c_out]. */
static MorokTensor *
tap_weight (Enc *e, const char *name)
{
  MorokTensor *w = W (e, "%s", name);
  if (!w)
    return NULL;
  gint64 rows = 1;
  for (guint i = 0; i + 1 < w->rank; i++)
    rows *= morok_sym_hi (w->shape[i]);
  return morok_tensor_reshape_c (w, (gint64[]){ rows, morok_sym_hi (w->shape[w->rank - 1]) }, 2,
                                 e->error);
}

/* v3: features [b, T + 2p, F], zero-padded along time and past each
 * item's frames -> Conv1d (F -> d), ReLU, Conv1d (d -> d), ReLU, both kernel
 * k, stride 2 -> [b, T', d]; the first conv's frames past the item's are
 * zeroed too. Channels last, each conv is one matmul: the k frames under an
 * output frame are a contiguous run of k · c values. */
static MorokTensor *
subsample_1d (Enc *e, MorokTensor *feat)
{
  gint64 k = e->m->config.subs_kernel, p = e->m->config.subs_padding;
  MorokTensor *x = morok_tensor_matmul (
      tap_runs (e, feat, 1, k), tap_weight (e, "encoder.pre_encode.conv.0.weight"), e->error);
  x = morok_tensor_add (x, W (e, "encoder.pre_encode.conv.0.bias"), e->error);
  x = zero_padded_frames (e, x, 1, 0);
  /* ReLU after the padding (ReLU (0) = 0): a computed node, stored padded */
  x = morok_tensor_relu (
      morok_tensor_pad (x, (gint64[]){ 0, p, 0 }, (gint64[]){ 0, p, 0 }, 0.0, e->error), e->error);
  x = morok_tensor_matmul (tap_runs (e, x, 1, k),
                           tap_weight (e, "encoder.pre_encode.conv.2.weight"), e->error);
  return morok_tensor_relu (morok_tensor_add (x, W (e, "encoder.pre_encode.conv.2.bias"), e->error),
                            e->error);
}

/* v2: features [b, T + 2p, F + 2p], zero-padded and past each item's
 * frames, as an image -> Conv2d (1 -> d), ReLU, Conv2d (d -> d), ReLU, both
 * k x k with stride 2 -> [b, T', F', d] -> Linear over (F', d) -> [b, T', d];
 * the first conv's rows past the item's are zeroed too. Channels last; the
 * first conv is an im2col of k² values per position and a matmul; the
 * second reads its padded input in place, one matmul per row of taps over
 * a run of k · d values ([b, T', F', k · d] x [k · d, d]). An im2col of the
 * second conv would hold k² d values per position: 330 MB for 30 s of the
 * full v2 model. */
static MorokTensor *
subsample_2d (Enc *e, MorokTensor *feat)
{
  gint64 k = e->m->config.subs_kernel, p = e->m->config.subs_padding;
  MorokTensor *x = morok_tensor_window (morok_tensor_window (feat, 2, k, 2, 1, e->error), 1, k, 2,
                                        1, e->error);                    /* [b, T1, k, F1, k] */
  x = morok_tensor_permute (x, (guint[]){ 0, 1, 3, 2, 4 }, 5, e->error); /* [b, T1, F1, k, k] */
  if (!x)
    return NULL;
  x = reshape (e, x,
               (const MorokSym *[]){ x->shape[0], x->shape[1], x->shape[2], c_sym (e, k * k) }, 4);
  x = morok_tensor_add (
      morok_tensor_matmul (x, tap_weight (e, "encoder.pre_encode.conv.0.weight"), e->error),
      W (e, "encoder.pre_encode.conv.0.bias"), e->error); /* [b, T1, F1, d] */
  x = zero_padded_frames (e, x, 1, 0);
  x = morok_tensor_relu (
      morok_tensor_pad (x, (gint64[]){ 0, p, p, 0 }, (gint64[]){ 0, p, p, 0 }, 0.0, e->error),
      e->error);
  /* conv 2, row tap i: Σ_(j, c) x[b, 2t + i, 2f + j, c] · w[i, j, c, o] */
  MorokTensor *rows = morok_tensor_window (tap_runs (e, x, 2, k), 1, k, 2, 1, e->error);
  MorokTensor *w = tap_weight (e, "encoder.pre_encode.conv.2.weight"); /* [k · k · d, d] */
  MorokTensor *acc = NULL;
  gint64 kd = k * e->m->config.d_model;
  for (gint64 i = 0; i < k && rows && w; i++)
    {
      /* rows [b, T', k, F', k · d] -> [b, T', F', k · d] */
      MorokTensor *tap = morok_tensor_slice (rows, 2, c_sym (e, i), c_sym (e, 1), e->error);
      tap = morok_tensor_squeeze (tap, 2, e->error);
      MorokTensor *wi = morok_tensor_slice (w, 0, c_sym (e, i * kd), c_sym (e, kd), e->error);
      MorokTensor *y = morok_tensor_matmul (tap, wi, e->error);
      acc = acc ? morok_tensor_add (y, acc, e->error) : y;
    }
  x = morok_tensor_relu (morok_tensor_add (acc, W (e, "encoder.pre_encode.conv.2.bias"), e->error),
                         e->error); /* [b, T', F', d] */
  if (!x)
    return NULL;
  const MorokSym *flat = morok_sym_mul (x->shape[2], x->shape[3]);
  x = reshape (e, x, (const MorokSym *[]){ x->shape[0], x->shape[1], flat }, 3);
  return linear (e, x, "encoder.pre_encode.out", 0);
}

/* ---- masks and rotary tables, for T' frames ---- */

static gboolean
make_masks (Enc *e)
{
  MorokTensor *valid = valid_frames (e, 2, e->t, 0); /* [b, T'] */
  e->key_mask
      = reshape (e, valid, (const MorokSym *[]){ e->b, c_sym (e, 1), c_sym (e, 1), e->t }, 4);
  e->frame_mask = reshape (e, valid, (const MorokSym *[]){ e->b, e->t, c_sym (e, 1) }, 3);
  return e->frame_mask != NULL;
}

static gboolean
make_rotary (Enc *e)
{
  const MorokGigaAmConfig *c = &e->m->config;
  gint64 t_max = morok_sym_hi (e->t), dh = c->d_model / c->n_heads, half = dh / 2;
  gboolean fill;
  float *cs = gigaam_table (e->m, "rope_cos", (gsize) (t_max * half), &fill);
  float *sn = gigaam_table (e->m, "rope_sin", (gsize) (t_max * half), &fill);
  /* angle (j, i) = j · base^(-2i / dh), in double as the reference */
  for (gint64 i = 0; fill && i < half; i++)
    {
      double inv = 1.0 / pow (c->rope_base, (double) (2 * i) / (double) dh);
      for (gint64 j = 0; j < t_max; j++)
        {
          cs[j * half + i] = (float) cos ((double) j * inv);
          sn[j * half + i] = (float) sin ((double) j * inv);
        }
    }
  const MorokSym *shape[] = { c_sym (e, 1), e->t, c_sym (e, 1), c_sym (e, half) };
  MorokTensor *tc = morok_tensor_weight (e->g, "gigaam.rope_cos", MOROK_DTYPE_F32, cs,
                                         (gint64[]){ t_max, half }, 2);
  MorokTensor *ts = morok_tensor_weight (e->g, "gigaam.rope_sin", MOROK_DTYPE_F32, sn,
                                         (gint64[]){ t_max, half }, 2);
  e->cos = reshape (e, morok_tensor_slice (tc, 0, c_sym (e, 0), e->t, e->error), shape, 4);
  e->sin = reshape (e, morok_tensor_slice (ts, 0, c_sym (e, 0), e->t, e->error), shape, 4);
  return e->sin != NULL;
}

/* ---- a Conformer layer ---- */

/* 0.5 · Linear2 (SiLU (Linear1 (LN (x)))) */
static MorokTensor *
feed_forward (Enc *e, MorokTensor *x, guint i, guint which)
{
  g_autofree char *norm = g_strdup_printf ("encoder.layers.%%u.norm_feed_forward%u", which);
  g_autofree char *l1 = g_strdup_printf ("encoder.layers.%%u.feed_forward%u.linear1", which);
  g_autofree char *l2 = g_strdup_printf ("encoder.layers.%%u.feed_forward%u.linear2", which);
  MorokTensor *h = morok_tensor_silu (linear (e, layer_norm (e, x, norm, i), l1, i), e->error);
  return morok_tensor_mul_scalar (linear (e, h, l2, i), 0.5, e->error);
}

/* [b, T', d] -> [b, H, T', dh] */
static MorokTensor *
split_heads (Enc *e, MorokTensor *x)
{
  const MorokGigaAmConfig *c = &e->m->config;
  const MorokSym *shape[]
      = { e->b, e->t, c_sym (e, c->n_heads), c_sym (e, c->d_model / c->n_heads) };
  return morok_tensor_permute (reshape (e, x, shape, 4), (guint[]){ 0, 2, 1, 3 }, 4, e->error);
}

/* NeoX rotation of each head of y [b, T', d]:
 * r[i] = y[i] cos - y[i + half] sin, r[i + half] = y[i + half] cos + y[i] sin */
static MorokTensor *
rotate (Enc *e, MorokTensor *y)
{
  const MorokGigaAmConfig *c = &e->m->config;
  gint64 dh = c->d_model / c->n_heads, half = dh / 2;
  const MorokSym *shape[] = { e->b, e->t, c_sym (e, c->n_heads), c_sym (e, dh) };
  MorokTensor *yh = reshape (e, y, shape, 4);
  MorokTensor *y1 = morok_tensor_slice (yh, 3, c_sym (e, 0), c_sym (e, half), e->error);
  MorokTensor *y2 = morok_tensor_slice (yh, 3, c_sym (e, half), c_sym (e, half), e->error);
  MorokTensor *r[] = {
    morok_tensor_sub (morok_tensor_mul (y1, e->cos, e->error),
                      morok_tensor_mul (y2, e->sin, e->error), e->error),
    morok_tensor_add (morok_tensor_mul (y2, e->cos, e->error),
                      morok_tensor_mul (y1, e->sin, e->error), e->error),
  };
  if (!r[0] || !r[1])
    return NULL;
  return reshape (e, morok_tensor_cat (r, 2, 3, e->error),
                  (const MorokSym *[]){ e->b, e->t, c_sym (e, c->d_model) }, 3);
}

/* MHSA (LN (x)) with rotary q and k, padded keys masked */
static MorokTensor *
self_attention (Enc *e, MorokTensor *x, guint i)
{
  const MorokGigaAmConfig *c = &e->m->config;
  MorokTensor *y = layer_norm (e, x, "encoder.layers.%u.norm_self_att", i);
  MorokTensor *r = rotate (e, y);
  MorokTensor *q = linear (e, r, "encoder.layers.%u.self_attn.linear_q", i);
  MorokTensor *k = linear (e, r, "encoder.layers.%u.self_attn.linear_k", i);
  MorokTensor *v = linear (e, y, "encoder.layers.%u.self_attn.linear_v", i);
  double scale = 1.0 / sqrt ((double) (c->d_model / c->n_heads));
  MorokTensor *o = morok_tensor_attention (split_heads (e, q), split_heads (e, k),
                                           split_heads (e, v), e->key_mask, scale, e->error);
  o = morok_tensor_permute (o, (guint[]){ 0, 2, 1, 3 }, 4, e->error);
  o = reshape (e, o, (const MorokSym *[]){ e->b, e->t, c_sym (e, c->d_model) }, 3);
  return linear (e, o, "encoder.layers.%u.self_attn.linear_out", i);
}

/* Conv module on LN (x): pointwise, GLU, padded frames zeroed, depthwise
 * over time, LayerNorm or BatchNorm, SiLU, pointwise. */
static MorokTensor *
conv_module (Enc *e, MorokTensor *x, guint i)
{
  const MorokGigaAmConfig *c = &e->m->config;
  gint64 d = c->d_model, k = c->conv_kernel, pad = (k - 1) / 2;
  MorokTensor *y = layer_norm (e, x, "encoder.layers.%u.norm_conv", i);
  MorokTensor *z
      = morok_tensor_glu (linear (e, y, "encoder.layers.%u.conv.pointwise_conv1", i), -1, e->error);
  z = morok_tensor_where (e->frame_mask, z, morok_tensor_scalar_like (x, 0.0), e->error);
  /* depthwise: out[t, ch] = Σ_j z[t + j - pad, ch] · w[ch, 0, j] + bias[ch],
   * a sum of k shifted views of z (zeros outside). Each shift pads z
   * differently, so z has k readers and the scheduler stores it once; a
   * window over one padded z would recompute the GLU for every tap. */
  MorokTensor *w = W (e, "encoder.layers.%u.conv.depthwise_conv.weight", i);
  w = morok_tensor_reshape_c (w, (gint64[]){ d, k }, 2, e->error);
  MorokTensor *acc = W (e, "encoder.layers.%u.conv.depthwise_conv.bias", i);
  for (gint64 j = 0; j < k; j++)
    {
      gint64 shift = j - pad, before = MAX (-shift, 0), after = MAX (shift, 0);
      MorokTensor *tap = morok_tensor_pad (z, (gint64[]){ 0, before, 0 }, (gint64[]){ 0, after, 0 },
                                           0.0, e->error);
      tap = morok_tensor_slice (tap, 1, c_sym (e, after), e->t, e->error);
      MorokTensor *wj
          = morok_tensor_reshape_c (morok_tensor_slice (w, 1, c_sym (e, j), c_sym (e, 1), e->error),
                                    (gint64[]){ d }, 1, e->error);
      acc = morok_tensor_add (acc, morok_tensor_mul (tap, wj, e->error), e->error);
    }
  z = acc;
  if (c->conv_batch_norm)
    {
      /* (z - mean) / sqrt (var + eps) · w + b = z · s + (b - mean · s): s and
       * the shift are fixed, so prepare folds them */
      MorokTensor *s = morok_tensor_mul (
          morok_tensor_rsqrt (
              morok_tensor_add_scalar (W (e, "encoder.layers.%u.conv.batch_norm.running_var", i),
                                       c->batch_norm_eps, e->error),
              e->error),
          W (e, "encoder.layers.%u.conv.batch_norm.weight", i), e->error);
      MorokTensor *shift = morok_tensor_sub (
          W (e, "encoder.layers.%u.conv.batch_norm.bias", i),
          morok_tensor_mul (W (e, "encoder.layers.%u.conv.batch_norm.running_mean", i), s,
                            e->error),
          e->error);
      z = morok_tensor_add (morok_tensor_mul (z, s, e->error), shift, e->error);
    }
  else
    z = layer_norm (e, z, "encoder.layers.%u.conv.batch_norm", i);
  z = morok_tensor_silu (z, e->error);
  return linear (e, z, "encoder.layers.%u.conv.pointwise_conv2", i);
}

static MorokTensor *
conformer_layer (Enc *e, MorokTensor *x, guint i)
{
  x = morok_tensor_add (x, feed_forward (e, x, i, 1), e->error);
  x = morok_tensor_add (x, self_attention (e, x, i), e->error);
  x = morok_tensor_add (x, conv_module (e, x, i), e->error);
  x = morok_tensor_add (x, feed_forward (e, x, i, 2), e->error);
  return layer_norm (e, x, "encoder.layers.%u.norm_out", i);
}

/* ---- public ---- */

/* features [b, T + 2p, F (+ 2p for v2)], zero-padded as the subsampling
 * needs -> [b, T', d] after @n_layers layers */
static MorokTensor *
encode_padded (MorokGigaAm *model, MorokTensor *feat, MorokTensor *lengths, guint n_layers,
               GError **error)
{
  Enc e = { .m = model, .g = feat->graph, .error = error, .lengths = lengths };
  e.pool = morok_graph_sym_pool (e.g);
  e.b = feat->shape[0];
  feat = zero_padded_frames (&e, feat, 0, model->config.subs_padding);
  MorokTensor *x = !feat                                      ? NULL
                   : model->config.version == MOROK_GIGAAM_V3 ? subsample_1d (&e, feat)
                                                              : subsample_2d (&e, feat);
  if (!x)
    goto fail;
  e.t = x->shape[1];
  if (!make_masks (&e) || !make_rotary (&e))
    goto fail;
  for (guint i = 0; x && i < n_layers; i++)
    x = conformer_layer (&e, x, i);
  if (x)
    return x;
fail:
  g_prefix_error (error, "%s: encoder: ", model->file);
  return NULL;
}

static gboolean
check_layers (MorokGigaAm *model, guint n_layers, GError **error)
{
  if (n_layers <= model->config.n_layers)
    return TRUE;
  g_set_error (error, MOROK_TENSOR_ERROR, MOROK_TENSOR_ERROR_ARGUMENT,
               "%s: encoder: %u layers asked for, the model has %u", model->file, n_layers,
               model->config.n_layers);
  return FALSE;
}

MorokTensor *
morok_gigaam_encoder (MorokGigaAm *model, MorokTensor *features, MorokTensor *lengths,
                      guint n_layers, GError **error)
{
  g_return_val_if_fail (model != NULL, NULL);
  if ((error && *error) || !features || !lengths || !check_layers (model, n_layers, error))
    return NULL;
  const MorokGigaAmConfig *c = &model->config;
  gint64 f;
  if (features->rank != 3 || features->dtype != MOROK_DTYPE_F32
      || !morok_sym_is_const (features->shape[2], &f) || f != c->n_mels || lengths->rank != 1
      || lengths->shape[0] != features->shape[0] || morok_dtype_is_float (lengths->dtype))
    {
      g_autofree char *sf = morok_node_shape_string (features);
      g_autofree char *sl = morok_node_shape_string (lengths);
      g_set_error (error, MOROK_TENSOR_ERROR, MOROK_TENSOR_ERROR_SHAPE,
                   "%s: encoder: expected features f32 [b, T, %u] and integer lengths [b], got "
                   "%s %s and %s %s",
                   model->file, c->n_mels, morok_dtype_name (features->dtype), sf,
                   morok_dtype_name (lengths->dtype), sl);
      return NULL;
    }
  gint64 p = c->subs_padding, pf = c->version == MOROK_GIGAAM_V2 ? p : 0;
  MorokTensor *feat
      = morok_tensor_pad (features, (gint64[]){ 0, p, pf }, (gint64[]){ 0, p, pf }, 0.0, error);
  return feat ? encode_padded (model, feat, lengths, n_layers, error) : NULL;
}

MorokTensor *
morok_gigaam_forward (MorokGigaAm *model, MorokTensor *wav, MorokTensor *lengths, guint n_layers,
                      GError **error)
{
  g_return_val_if_fail (model != NULL, NULL);
  if ((error && *error) || !check_layers (model, n_layers, error))
    return NULL;
  const MorokGigaAmConfig *c = &model->config;
  gint64 p = c->subs_padding, pf = c->version == MOROK_GIGAAM_V2 ? p : 0;
  MorokTensor *feat = gigaam_log_mel (model, wav, lengths, p, pf, error);
  return feat ? encode_padded (model, feat, lengths, n_layers, error) : NULL;
}

MorokTensor *
morok_gigaam_ctc_log_probs (MorokGigaAm *model, MorokTensor *encoded, GError **error)
{
  g_return_val_if_fail (model != NULL, NULL);
  if ((error && *error) || !encoded)
    return NULL;
  Enc e = { .m = model, .g = encoded->graph, .error = error };
  e.pool = morok_graph_sym_pool (e.g);
  MorokTensor *logits = linear (&e, encoded, "head.decoder_layers.0", 0);
  MorokTensor *lp = morok_tensor_log_softmax (logits, -1, error);
  if (!lp)
    g_prefix_error (error, "%s: CTC head: ", model->file);
  return lp;
}
