/* SPDX-License-Identifier: MIT */
/* The Silero VAD networks of one chunk, written with the tensor API
 * (docs/silero-models.md, "v5 / v6 network" and "v4 network"), for a batch
 * of B independent streams (B = 1, or a variable: the first dimension of
 * the audio). Shapes in the comments are for 16 kHz. */
#define G_LOG_DOMAIN "morok-models"
#include "models/silero-vad-private.h"

/* A model weight as a leaf of @g; the data stays the model's. */
static MorokTensor *
weight (MorokGraph *g, const SileroParam *p)
{
  return p->data ? morok_tensor_weight (g, p->name, MOROK_DTYPE_F32, p->data, p->dims, p->rank)
                 : NULL;
}

static const MorokSym *
c_sym (MorokTensor *t, gint64 v)
{
  return morok_sym_const (morok_graph_sym_pool (t->graph), v);
}

/* a[start : start + len] along @axis. */
static MorokTensor *
slice (MorokTensor *a, gint axis, gint64 start, gint64 len, GError **error)
{
  if (a == NULL)
    return NULL;
  return morok_tensor_slice (a, axis, c_sym (a, start), c_sym (a, len), error);
}

static MorokTensor *
reshape (MorokTensor *a, GError **error, guint rank, const gint64 *dims)
{
  return morok_tensor_reshape_c (a, dims, rank, error);
}
#define RESHAPE(a, error, ...)                                                                     \
  reshape (a, error, G_N_ELEMENTS (((const gint64[]){ __VA_ARGS__ })),                             \
           ((const gint64[]){ __VA_ARGS__ }))

/* a as [B, dims...], B its first dimension (the batch). */
static MorokTensor *
reshape_rows (MorokTensor *a, GError **error, guint rank, const gint64 *dims)
{
  if (a == NULL)
    return NULL;
  const MorokSym *shape[MOROK_MAX_RANK] = { a->shape[0] };
  for (guint i = 0; i < rank; i++)
    shape[1 + i] = c_sym (a, dims[i]);
  return morok_tensor_reshape (a, shape, rank + 1, error);
}
#define ROWS(a, error, ...)                                                                        \
  reshape_rows (a, error, G_N_ELEMENTS (((const gint64[]){ __VA_ARGS__ })),                        \
                ((const gint64[]){ __VA_ARGS__ }))

/* x [R, K] times the weight w [K, M], plus the bias @b and a ReLU when
 * @relu (NULL, FALSE: none): [R, M]. */
static MorokTensor *
linear_relu (MorokTensor *x, MorokTensor *w, MorokTensor *b, gboolean relu, GError **error)
{
  MorokTensor *y = morok_tensor_matmul (x, w, error);
  if (b)
    y = morok_tensor_add (y, b, error);
  return relu ? morok_tensor_relu (y, error) : y;
}

/* x [B, T, K] times the weight w [K, M] as one product of B·T rows
 * ([B·T, K] x [K, M], so that a batch fills the GEMM's rows), with
 * linear_relu's bias and ReLU (applied before the reshape so that they
 * stay the product's epilogue), then [B, T, M]. */
static MorokTensor *
rows_linear (MorokTensor *x, MorokTensor *w, MorokTensor *b, gboolean relu, GError **error)
{
  if (x == NULL || w == NULL)
    return NULL;
  const MorokSym *B = x->shape[0], *T = x->shape[1];
  const MorokSym *flat[] = { morok_sym_mul (B, T), x->shape[2] };
  MorokTensor *y = linear_relu (morok_tensor_reshape (x, flat, 2, error), w, b, relu, error);
  if (y == NULL)
    return NULL;
  const MorokSym *back[] = { B, T, y->shape[1] };
  return morok_tensor_reshape (y, back, 3, error);
}

/* ---- shared parts ---- */

/* audio [B, n] -> |STFT| [B, T, F]: reflect padding, the frames (windows
 * of L samples every hop), then the magnitude of their windowed DFT, which
 * is ONNX's Conv with the basis [2F, 1, L] when the basis is that DFT
 * (silero-vad.c, basis_window: the loader takes no other): one FFT kernel
 * (morok_tensor_dft_magnitude, faster than the folded basis products it
 * replaced, for one stream and batched). Time-major, [B, 4, 129]: the
 * encoder's layout. */
static MorokTensor *
stft_magnitude (const SileroNet *n, MorokTensor *audio, GError **error)
{
  const gint64 L = n->window.dims[0];
  MorokTensor *xp = morok_tensor_pad_reflect (audio, (const gint64[]){ 0, n->stft_pad_left },
                                              (const gint64[]){ 0, n->stft_pad_right }, error);
  MorokTensor *frames = morok_tensor_window (xp, 1, L, n->stft_hop, 1, error); /* [B, 4, 256] */
  return morok_tensor_dft_magnitude (frames, weight (audio->graph, &n->window), error);
}

/* One LSTM step of @layer on x [B, In]; h and c [B, H] are replaced. */
static void
lstm_step (const SileroNet *n, guint layer, MorokTensor *x, MorokTensor **h, MorokTensor **c,
           GError **error)
{
  MorokGraph *g = x ? x->graph : NULL;
  MorokTensor *h2 = NULL, *c2 = NULL;
  if (g)
    morok_tensor_lstm_cell (x, *h, *c, weight (g, &n->w_ih[layer]), weight (g, &n->w_hh[layer]),
                            weight (g, &n->b_ih[layer]), weight (g, &n->b_hh[layer]), &h2, &c2,
                            error);
  *h = h2;
  *c = c2;
}

/* sigmoid (w · relu (h) + b): h [B, H] -> [B, 1] */
static MorokTensor *
head (const SileroNet *n, MorokTensor *h, GError **error)
{
  if (h == NULL)
    return NULL;
  MorokGraph *g = h->graph;
  return morok_tensor_sigmoid (morok_tensor_linear (morok_tensor_relu (h, error),
                                                    weight (g, &n->head_w), weight (g, &n->head_b),
                                                    error),
                               error);
}

/* Each stream's [p | h_0 .. h_{L-1} | c_0 .. c_{L-1}]: [B, 1 + 2 L H]
 * from p [B, 1] and h, c [B, H] per layer. */
static MorokTensor *
pack_output (MorokTensor *p, MorokTensor **h, MorokTensor **c, guint layers, GError **error)
{
  MorokTensor *parts[1 + 2 * SILERO_MAX_LAYERS] = { p };
  for (guint l = 0; l < layers; l++)
    {
      parts[1 + l] = h[l];
      parts[1 + layers + l] = c[l];
    }
  return morok_tensor_cat (parts, 1 + 2 * layers, 1, error);
}

/* Layer @l's h (@which 0) or c (1) of each stream: [B, H] of state
 * [B, 2 L H], each row [h_0 .. h_{L-1} | c_0 .. c_{L-1}]. */
static MorokTensor *
state_part (MorokTensor *state, guint layers, gint64 H, guint which, guint l, GError **error)
{
  return slice (state, 1, (which * layers + l) * H, H, error);
}

/* ---- v5 / v6 ---- */

/* relu (conv1d (x, w, b, stride, padding 1)) on time-major activations:
 * x [B, T, C] -> [B, T', M], w [M, C, k]. Time-major, the im2col of the
 * padded input is a strided view (window [T', k, C] -> [T', k*C] merges),
 * so the contraction reads the padded input in place, and the product is
 * [T', k*C] x [k*C, M]: few rows, weights streamed once by rows. Taps that
 * read only padding for every output are dropped: at T = 2 and 1 (the last
 * two layers) the padding is then gone, and with it a third to two thirds
 * of their weights. */
static MorokTensor *
conv_relu (MorokTensor *x, const SileroParam *w, const SileroParam *b, gint64 stride,
           GError **error)
{
  const gint64 pad = 1, M = w->dims[0], C = w->dims[1], k = w->dims[2];
  gint64 T;
  if (x == NULL || !morok_sym_is_const (x->shape[1], &T))
    return NULL;
  MorokGraph *g = x->graph;
  const gint64 T2 = (T + 2 * pad - k) / stride + 1;
  gint64 lo = k, hi = -1; /* the live taps */
  for (gint64 j = 0; j < k; j++)
    for (gint64 t = 0; t < T2; t++)
      if (t * stride + j - pad >= 0 && t * stride + j - pad < T)
        lo = MIN (lo, j), hi = MAX (hi, j);
  const gint64 taps = hi - lo + 1;
  /* x index of output t, live tap j: t * stride + j + lo - pad */
  gint64 first = lo - pad, last = (T2 - 1) * stride + hi - pad;
  if (first > 0 || last < T - 1)
    x = slice (x, 1, MAX (first, 0), MIN (last, T - 1) - MAX (first, 0) + 1, error);
  if (first < 0 || last > T - 1)
    x = morok_tensor_pad (x, (const gint64[]){ 0, MAX (-first, 0), 0 },
                          (const gint64[]){ 0, MAX (last - (T - 1), 0), 0 }, 0.0, error);
  MorokTensor *cols = ROWS (morok_tensor_window (x, 1, taps, stride, 1, error), error, T2,
                            taps * C); /* [B, T', taps * C] */
  /* w [M, C, k] -> [taps, C, M] -> [taps * C, M], rows in the order of cols */
  MorokTensor *wt = morok_tensor_permute (slice (weight (g, w), 2, lo, taps, error),
                                          (const guint[]){ 2, 1, 0 }, 3, error);
  return rows_linear (cols, RESHAPE (wt, error, taps * C, M), weight (g, b), TRUE, error);
}

/* A batch's activations in time as the products that made them: part i
 * [B, t_i, C] holds frames start[i] .. start[i + 1] - 1. */
typedef struct
{
  MorokTensor *part[8];
  gint64 start[9];
  guint n;
} SileroFrames;

/* The part of @f that holds frame @t. */
static guint
part_of (const SileroFrames *f, gint64 t)
{
  guint p = 0;
  while (p + 1 < f->n && f->start[p + 1] <= t)
    p++;
  return p;
}

/* Frame @t of @f: [B, C] */
static MorokTensor *
frame_at (const SileroFrames *f, gint64 t, GError **error)
{
  guint p = part_of (f, t);
  MorokTensor *x = slice (f->part[p], 1, t - f->start[p], 1, error);
  return x ? ROWS (x, error, x->shape[2]->hi) : NULL;
}

/* Frames @first .. @last of @f: [B, last - first + 1, C], from the part
 * that holds them or the cat in time of those that do. */
static MorokTensor *
frames_span (const SileroFrames *f, gint64 first, gint64 last, GError **error)
{
  guint p = part_of (f, first), q = part_of (f, last);
  MorokTensor *x = p == q ? f->part[p] : morok_tensor_cat (f->part + p, q - p + 1, 1, error);
  return slice (x, 1, first - f->start[p], last - first + 1, error);
}

/* conv_relu for a batch (B not 1), from and to frames in parts: the
 * [B T', taps C] im2col is a copy there anyway (the batch merged into the
 * rows has no single stride), so it is split by the taps each output reads
 * from the signal rather than its padding: one product per run of outputs
 * with the same live taps (k3 p1 over 4 frames: frame 0 taps 1-2, frames
 * 1-2 all three, frame 3 taps 0-1), each a part of the output. No FMA is
 * spent on padding, a sixth of the first convolution's. A run inside one
 * part reads its windows in place where they are rows of it (one output
 * frame); one output frame over several parts is the cat of its taps'
 * frames along channels, a row copy per part, not a cat in time that its
 * windows then read through a choice per element (a choice per element
 * costs several times the row copies). */
static gboolean
conv_rows_relu (const SileroFrames *in, const SileroParam *w, const SileroParam *b, gint64 stride,
                SileroFrames *out, GError **error)
{
  const gint64 pad = 1, M = w->dims[0], C = w->dims[1], k = w->dims[2];
  const gint64 T = in->start[in->n];
  MorokGraph *g = in->part[0]->graph;
  const gint64 T2 = (T + 2 * pad - k) / stride + 1;
  out->n = 0;
  for (gint64 t0 = 0, t1; t0 < T2; t0 = t1)
    {
      if (out->n == G_N_ELEMENTS (out->part))
        {
          g_set_error (error, MOROK_TENSOR_ERROR, MOROK_TENSOR_ERROR_SHAPE,
                       "silero-vad: a convolution over %" G_GINT64_FORMAT " frames has more than %u"
                       " runs of live taps",
                       T, (guint) G_N_ELEMENTS (out->part));
          return FALSE;
        }
      /* output t reads x[t stride + j - pad] for the live taps lo .. hi */
      gint64 lo = MAX (pad - t0 * stride, 0), hi = MIN (T - 1 + pad - t0 * stride, k - 1);
      for (t1 = t0 + 1; t1 < T2; t1++)
        if (MAX (pad - t1 * stride, 0) != lo || MIN (T - 1 + pad - t1 * stride, k - 1) != hi)
          break;
      const gint64 taps = hi - lo + 1, first = t0 * stride + lo - pad;
      const gint64 last = (t1 - 1) * stride + hi - pad;
      MorokTensor *wt = morok_tensor_permute (slice (weight (g, w), 2, lo, taps, error),
                                              (const guint[]){ 2, 1, 0 }, 3, error);
      wt = RESHAPE (wt, error, taps * C, M);
      MorokTensor *y, *tap[8];
      if (t1 - t0 == 1 && part_of (in, first) != part_of (in, last) && taps <= 8)
        {
          for (gint64 j = 0; j < taps; j++)
            tap[j] = frame_at (in, first + j, error);
          y = ROWS (
              linear_relu (morok_tensor_cat (tap, taps, 1, error), wt, weight (g, b), TRUE, error),
              error, 1, M);
        }
      else
        y = rows_linear (ROWS (morok_tensor_window (frames_span (in, first, last, error), 1, taps,
                                                    stride, 1, error),
                               error, t1 - t0, taps * C),
                         wt, weight (g, b), TRUE, error);
      out->start[out->n] = t0;
      out->part[out->n++] = y;
      if (out->part[out->n - 1] == NULL)
        return FALSE;
    }
  out->start[out->n] = T2;
  return TRUE;
}

static MorokTensor *
forward_v5 (const MorokSileroVad *m, const SileroNet *n, MorokTensor *audio, MorokTensor *state,
            GError **error)
{
  static const gint64 strides[4] = { 1, 2, 2, 1 };
  const gint64 H = m->hidden;
  MorokTensor *x = stft_magnitude (n, audio, error); /* [B, 4, 129] */
  /* -> [B, 4, 128] [B, 2, 64] [B, 1, 64] [B, 1, 128] */
  gint64 one;
  if (x && morok_sym_is_const (x->shape[0], &one) && one == 1)
    for (guint i = 0; i < 4; i++)
      x = conv_relu (x, &n->enc_w[i], &n->enc_b[i], strides[i], error);
  else if (x)
    {
      SileroFrames f = { .part = { x }, .start = { 0, x->shape[1]->hi }, .n = 1 }, o;
      gboolean ok = TRUE;
      for (guint i = 0; i < 4 && ok; i++, f = o)
        ok = conv_rows_relu (&f, &n->enc_w[i], &n->enc_b[i], strides[i], &o, error);
      x = !ok ? NULL : f.n == 1 ? f.part[0] : morok_tensor_cat (f.part, f.n, 1, error);
    }
  gint64 frames;
  if (x && (!morok_sym_is_const (x->shape[1], &frames) || frames != 1))
    {
      g_autofree char *s = morok_node_shape_string (x);
      g_set_error (error, MOROK_TENSOR_ERROR, MOROK_TENSOR_ERROR_SHAPE,
                   "silero-vad: encoder output %s should have one frame", s);
      return NULL;
    }
  MorokTensor *h = state_part (state, 1, H, 0, 0, error);
  MorokTensor *c = state_part (state, 1, H, 1, 0, error);
  lstm_step (n, 0, ROWS (x, error, H), &h, &c, error);
  return pack_output (head (n, h, error), &h, &c, 1, error);
}

/* ---- v4 ---- */

/* Adaptive normalisation: spect = log (1 + 2^20 mag), minus the mean over
 * time of its bin-mean smoothed by the 7-tap filter (reflect-padded by 3);
 * returns cat (mag, normalised spect) on channels. */
static MorokTensor *
v4_features (const SileroNet *n, MorokTensor *mag, GError **error)
{
  MorokGraph *g = mag->graph;
  MorokTensor *spect = morok_tensor_log (
      morok_tensor_add_scalar (morok_tensor_mul_scalar (mag, 1048576.0, error), 1.0, error), error);
  MorokTensor *mean
      = morok_tensor_mean (spect, (const gint[]){ 1 }, 1, TRUE, error); /* [B, 1, 8] */
  MorokTensor *mp = morok_tensor_pad_reflect (mean, (const gint64[]){ 0, 0, 3 },
                                              (const gint64[]){ 0, 0, 3 }, error); /* [B, 1, 14] */
  MorokTensor *sm = morok_tensor_conv1d (mp, weight (g, &n->norm_filter), NULL, 1, 0, 1, 1,
                                         error);                                 /* [B, 1, 8] */
  MorokTensor *mu = morok_tensor_mean (sm, (const gint[]){ 2 }, 1, TRUE, error); /* [B, 1, 1] */
  MorokTensor *parts[] = { mag, morok_tensor_sub (spect, mu, error) };
  return morok_tensor_cat (parts, 2, 1, error); /* [B, 258, 8] */
}

/* relu (pw (relu (dw (x))) + proj (x)), then relu (down (.)) */
static MorokTensor *
v4_block (const SileroBlock *b, MorokTensor *x, GError **error)
{
  if (x == NULL)
    return NULL;
  MorokGraph *g = x->graph;
  MorokTensor *dw
      = morok_tensor_relu (morok_tensor_conv1d (x, weight (g, &b->dw_w), weight (g, &b->dw_b), 1, 2,
                                                1, b->dw_w.dims[0], error),
                           error);
  MorokTensor *pw
      = morok_tensor_conv1d (dw, weight (g, &b->pw_w), weight (g, &b->pw_b), 1, 0, 1, 1, error);
  MorokTensor *res = b->proj_w.data ? morok_tensor_conv1d (
                         x, weight (g, &b->proj_w), weight (g, &b->proj_b), 1, 0, 1, 1, error)
                                    : x;
  MorokTensor *y = morok_tensor_relu (morok_tensor_add (pw, res, error), error);
  return morok_tensor_relu (morok_tensor_conv1d (y, weight (g, &b->down_w), weight (g, &b->down_b),
                                                 b->down_stride, 0, 1, 1, error),
                            error);
}

static MorokTensor *
forward_v4 (const MorokSileroVad *m, const SileroNet *n, MorokTensor *audio, MorokTensor *state,
            GError **error)
{
  const gint64 H = m->hidden;
  MorokTensor *mag
      = morok_tensor_transpose (stft_magnitude (n, audio, error), 1, 2, error); /* [B, 129, 8] */
  MorokTensor *x = mag ? v4_features (n, mag, error) : NULL;
  /* -> [B, 16, 4] [B, 32, 2] [B, 32, 1] [B, 64, 1] */
  for (guint i = 0; i < G_N_ELEMENTS (n->block); i++)
    x = v4_block (&n->block[i], x, error);
  if (x == NULL)
    return NULL;
  MorokTensor *h[SILERO_MAX_LAYERS], *c[SILERO_MAX_LAYERS];
  for (guint l = 0; l < m->layers; l++)
    {
      h[l] = state_part (state, m->layers, H, 0, l, error);
      c[l] = state_part (state, m->layers, H, 1, l, error);
    }
  /* both layers over the frames in order, the head on each frame's top h */
  gint64 frames = x->shape[2]->hi;
  MorokTensor *p = NULL;
  for (gint64 t = 0; t < frames; t++)
    {
      MorokTensor *u = ROWS (slice (x, 2, t, 1, error), error, H);
      for (guint l = 0; l < m->layers; l++)
        {
          lstm_step (n, l, u, &h[l], &c[l], error);
          u = h[l];
        }
      MorokTensor *pt = head (n, u, error);
      p = p ? morok_tensor_add (p, pt, error) : pt;
    }
  if (frames > 1)
    p = morok_tensor_mul_scalar (p, 1.0 / (double) frames, error);
  return pack_output (p, h, c, m->layers, error);
}

/* ---- entry ---- */

/* @t is f32 [rows, @len] (@rows NULL: rank 1 [@len]). */
static gboolean
check_input (MorokTensor *t, const char *what, const MorokSym *rows, gint64 len, GError **error)
{
  guint rank = rows ? 2 : 1;
  const MorokSym *last = t->rank == rank ? t->shape[rank - 1] : NULL;
  gint64 a, b;
  gboolean same_rows
      = !rows || t->shape[0] == rows
        || (morok_sym_is_const (t->shape[0], &a) && morok_sym_is_const (rows, &b) && a == b);
  gboolean ok
      = t->dtype == MOROK_DTYPE_F32 && last && last->lo == len && last->hi == len && same_rows;
  if (ok)
    return TRUE;
  g_autofree char *s = morok_node_shape_string (t);
  g_autofree char *r = rows ? morok_sym_to_string (rows) : NULL;
  g_set_error (error, MOROK_TENSOR_ERROR,
               t->dtype != MOROK_DTYPE_F32 ? MOROK_TENSOR_ERROR_DTYPE : MOROK_TENSOR_ERROR_SHAPE,
               "silero-vad: %s is %s %s, expected f32 [%s%s%" G_GINT64_FORMAT "]", what,
               morok_dtype_name (t->dtype), s, r ? r : "", r ? ", " : "", len);
  return FALSE;
}

MorokTensor *
morok_silero_vad_forward (MorokSileroVad *model, guint sample_rate, MorokTensor *audio,
                          MorokTensor *state, GError **error)
{
  g_return_val_if_fail (model != NULL, NULL);
  if ((error && *error) || audio == NULL || state == NULL)
    return NULL;
  const SileroNet *n = silero_vad_net (model, sample_rate);
  if (n == NULL)
    {
      g_set_error (error, MOROK_TENSOR_ERROR, MOROK_TENSOR_ERROR_ARGUMENT,
                   "silero-vad %s: no network for %u Hz (8000 or 16000)",
                   morok_silero_vad_version_name (model->version), sample_rate);
      return NULL;
    }
  if (audio->graph != state->graph)
    {
      g_set_error (error, MOROK_TENSOR_ERROR, MOROK_TENSOR_ERROR_ARGUMENT,
                   "silero-vad: audio and state belong to different graphs");
      return NULL;
    }
  /* one stream: audio [1, C + N], state [S]; a batch: [B, C + N], [B, S] */
  const gint64 S = (gint64) morok_silero_vad_state_len (model);
  const MorokSym *B = audio->rank == 2 ? audio->shape[0] : NULL;
  gboolean one = state->rank == 1;
  if (!check_input (audio, "audio", B ? B : c_sym (audio, 1), n->context + n->chunk, error)
      || (one && !check_input (audio, "audio", c_sym (audio, 1), n->context + n->chunk, error))
      || !check_input (state, "state", one ? NULL : B, S, error))
    return NULL;
  if (one)
    state = RESHAPE (state, error, 1, S);
  MorokTensor *out = model->version == MOROK_SILERO_VAD_V4
                         ? forward_v4 (model, n, audio, state, error)
                         : forward_v5 (model, n, audio, state, error);
  if (one)
    out = RESHAPE (out, error, 1 + S);
  if (out == NULL && error && *error)
    g_prefix_error (error, "silero-vad %s, %u Hz: ", morok_silero_vad_version_name (model->version),
                    sample_rate);
  return out;
}
