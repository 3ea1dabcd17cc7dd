/* SPDX-License-Identifier: MIT */
/* Loading Silero VAD v4, v5 and v6 from the official ONNX files: finding the
 * network by the file's structure, copying and checking its weights.
 * docs/silero-models.md lists every tensor and where it is. */
#define G_LOG_DOMAIN "morok-models"
#include "models/silero-vad-private.h"
#include "io/onnx-reader.h"
#include <math.h>
#include <string.h>

/* decoder.decoder.2.bias of the official v5 and v6 files (16 kHz, 8 kHz), as
 * float bits: the two releases share one graph and differ only in values. */
static const guint32 v5_head_bias[2] = { 0xbe43365cu, 0xbecdc670u };
static const guint32 v6_head_bias[2] = { 0xbf1fe5a3u, 0xbf170fecu };

/* ---- weights ---- */

static void
param_clear (SileroParam *p)
{
  g_clear_pointer (&p->data, g_free);
  g_clear_pointer (&p->name, g_free);
}

/* Copies @t, which must be [dims], into @p, to be used as [use_dims]
 * (same element count; NULL: as it is). */
static gboolean
param_take (const MorokOnnxTensor *t, guint rank, const gint64 *dims, guint use_rank,
            const gint64 *use_dims, SileroParam *p, GError **error)
{
  if (t == NULL || !morok_onnx_tensor_check_dims (t, rank, dims, error))
    return FALSE;
  gsize n;
  p->data = morok_onnx_tensor_to_f32 (t, &n, error);
  const char *name = t->name[0] ? t->name : t->value_name;
  if (p->data == NULL
      || !morok_io_check_finite (morok_onnx_model_name (t->graph->model), name, p->data, (gint64) n,
                                 error))
    {
      g_clear_pointer (&p->data, g_free);
      return FALSE;
    }
  p->name = g_strdup (name);
  p->rank = use_dims ? use_rank : rank;
  memcpy (p->dims, use_dims ? use_dims : dims, p->rank * sizeof (gint64));
  return TRUE;
}

/* The tensor @name of @graph (or its subgraphs), which must be [dims]. */
static gboolean
param_find (const MorokOnnxGraph *graph, const char *name, guint rank, const gint64 *dims,
            SileroParam *p, GError **error)
{
  const MorokOnnxTensor *t = morok_onnx_graph_require_tensor (graph, name, error);
  return param_take (t, rank, dims, 0, NULL, p, error);
}

#define DIMS(...)                                                                                  \
  G_N_ELEMENTS (((const gint64[]){ __VA_ARGS__ })), ((const gint64[]){ __VA_ARGS__ })

/* The window of the STFT basis [2F, 1, L], which must be a windowed DFT:
 * row k the cosines w[n] cos (2 pi k n / L) and row F + k the sines
 * -w[n] sin (2 pi k n / L), w its row 0, within 1e-6 of w's largest value
 * (every official file: within 5.7e-8 of a Hann window, float rounding).
 * The STFT is then a DFT magnitude, computed by an FFT
 * (morok_tensor_dft_magnitude); the basis itself is not kept. */
static gboolean
basis_window (const MorokOnnxGraph *g, SileroParam *p, SileroParam *window, GError **error)
{
  const gint64 F = p->dims[0] / 2, L = p->dims[2];
  const float *w = p->data;
  double wmax = 0, worst = 0;
  for (gint64 n = 0; n < L; n++)
    wmax = MAX (wmax, fabs (w[n]));
  for (gint64 k = 0; k < F; k++)
    for (gint64 n = 0; n < L; n++)
      {
        double a = 2 * G_PI * (double) ((k * n) % L) / (double) L;
        worst = MAX (worst, fabs (p->data[k * L + n] - w[n] * cos (a)));
        worst = MAX (worst, fabs (p->data[(F + k) * L + n] + w[n] * sin (a)));
      }
  if (!(wmax > 0) || !(worst <= 1e-6 * wmax))
    {
      g_set_error (error, MOROK_IO_ERROR, MOROK_IO_ERROR_UNSUPPORTED,
                   "%s: '%s' is not a windowed DFT basis (off by %.3g of its window's largest "
                   "value): Silero's STFT is one",
                   morok_onnx_model_name (g->model), p->name, wmax > 0 ? worst / wmax : INFINITY);
      param_clear (p);
      return FALSE;
    }
  window->data = g_memdup2 (w, L * sizeof (float));
  window->name = g_strconcat (p->name, " (window)", NULL);
  window->rank = 1;
  window->dims[0] = L;
  param_clear (p);
  return TRUE;
}

/* ---- structure ---- */

static const MorokOnnxGraph *
branch (const MorokOnnxNode *node, const char *attr)
{
  const MorokOnnxAttribute *a = morok_onnx_node_find_attribute (node, attr);
  return a && a->type == MOROK_ONNX_ATTR_GRAPH ? a->g : NULL;
}

/* The main graph's If on Equal (sr, 16000): its then_branch is the 16 kHz
 * network and its else_branch the 8 kHz one, in every version. */
static const MorokOnnxNode *
find_rate_switch (const MorokOnnxModel *onnx, GError **error)
{
  const MorokOnnxGraph *main = morok_onnx_model_graph (onnx);
  const char *file = morok_onnx_model_name (onnx);
  for (guint i = 0; i < main->n_nodes; i++)
    {
      const MorokOnnxNode *eq = main->nodes[i];
      if (strcmp (eq->op_type, "Equal") != 0 || eq->n_inputs != 2 || eq->n_outputs != 1)
        continue;
      for (guint j = 0; j < main->n_nodes; j++)
        {
          const MorokOnnxNode *n = main->nodes[j];
          if (strcmp (n->op_type, "If") != 0 || n->n_inputs < 1
              || strcmp (n->inputs[0], eq->outputs[0]) != 0)
            continue;
          /* the constant side of the comparison must be 16000 */
          for (guint k = 0; k < 2; k++)
            {
              const MorokOnnxTensor *t = morok_onnx_graph_find_tensor (main, eq->inputs[k]);
              if (t == NULL || t->n_elements != 1)
                continue;
              g_autofree gint64 *v = morok_onnx_tensor_to_i64 (t, NULL, NULL);
              if (v && v[0] == 16000 && branch (n, "then_branch") && branch (n, "else_branch"))
                return n;
            }
        }
    }
  g_set_error (error, MOROK_IO_ERROR, MOROK_IO_ERROR_NOT_FOUND,
               "%s: not a Silero VAD model: no If on sr == 16000 in the main graph", file);
  return NULL;
}

/* The first Conv node of @graph whose weight input is @weight, or NULL. */
static const MorokOnnxNode *
find_conv_of (const MorokOnnxGraph *graph, const MorokOnnxTensor *weight)
{
  for (guint i = 0; i < graph->n_nodes; i++)
    {
      const MorokOnnxNode *n = graph->nodes[i];
      if (strcmp (n->op_type, "Conv") == 0 && n->n_inputs >= 2
          && (strcmp (n->inputs[1], weight->value_name) == 0
              || strcmp (n->inputs[1], weight->name) == 0))
        return n;
    }
  return NULL;
}

/* ---- v5 / v6 ---- */

static gboolean
load_v5_net (const MorokOnnxGraph *g, guint rate, SileroNet *n, GError **error)
{
  const gint64 L = rate == 16000 ? 256 : 128, F = L / 2 + 1;
  static const gint64 enc_out[4] = { 128, 64, 64, 128 };
  n->rate = rate;
  n->chunk = rate == 16000 ? 512 : 256;
  n->context = n->chunk / 8;
  n->stft_hop = L / 2;
  n->stft_pad_left = 0;
  n->stft_pad_right = n->context;
  SileroParam basis = { 0 };
  if (!param_find (g, "stft.forward_basis_buffer", DIMS (2 * F, 1, L), &basis, error)
      || !basis_window (g, &basis, &n->window, error))
    return FALSE;
  for (guint i = 0; i < 4; i++)
    {
      g_autofree char *w = g_strdup_printf ("encoder.%u.reparam_conv.weight", i);
      g_autofree char *b = g_strdup_printf ("encoder.%u.reparam_conv.bias", i);
      gint64 in = i == 0 ? F : enc_out[i - 1];
      if (!param_find (g, w, DIMS (enc_out[i], in, 3), &n->enc_w[i], error)
          || !param_find (g, b, DIMS (enc_out[i]), &n->enc_b[i], error))
        return FALSE;
    }
  const MorokOnnxTensor *hw
      = morok_onnx_graph_require_tensor (g, "decoder.decoder.2.weight", error);
  return param_find (g, "decoder.rnn.weight_ih", DIMS (512, 128), &n->w_ih[0], error)
         && param_find (g, "decoder.rnn.weight_hh", DIMS (512, 128), &n->w_hh[0], error)
         && param_find (g, "decoder.rnn.bias_ih", DIMS (512), &n->b_ih[0], error)
         && param_find (g, "decoder.rnn.bias_hh", DIMS (512), &n->b_hh[0], error)
         && param_take (hw, DIMS (1, 128, 1), DIMS (1, 128), &n->head_w, error)
         && param_find (g, "decoder.decoder.2.bias", DIMS (1), &n->head_b, error);
}

static MorokSileroVadVersion
v5_release (const MorokSileroVad *m)
{
  gboolean v5 = TRUE, v6 = TRUE;
  for (guint i = 0; i < 2; i++)
    {
      guint32 bits;
      memcpy (&bits, m->net[i].head_b.data, sizeof bits);
      v5 = v5 && bits == v5_head_bias[i];
      v6 = v6 && bits == v6_head_bias[i];
    }
  return v5 ? MOROK_SILERO_VAD_V5 : v6 ? MOROK_SILERO_VAD_V6 : MOROK_SILERO_VAD_V5_OTHER;
}

/* ---- v4 ---- */

/* ONNX LSTM gate rows (i, o, f, c) to PyTorch's (i, f, g, o): PyTorch gate k
 * is ONNX gate onnx_gate[k]. */
static const guint onnx_gate[4] = { 0, 2, 3, 1 };

static float *
reorder_gates (const float *src, gsize hidden, gsize cols)
{
  float *dst = g_new (float, 4 * hidden * cols);
  for (guint k = 0; k < 4; k++)
    memcpy (dst + k * hidden * cols, src + onnx_gate[k] * hidden * cols,
            hidden * cols * sizeof (float));
  return dst;
}

/* Splits an ONNX LSTM's W [1, 4H, In], R [1, 4H, H], B [1, 8H] into
 * PyTorch's w_ih, w_hh, b_ih, b_hh, rows in PyTorch's gate order. */
static gboolean
load_v4_lstm (const MorokOnnxGraph *g, const MorokOnnxNode *lstm, SileroNet *n, guint layer,
              GError **error)
{
  const gint64 H = 64;
  SileroParam w = { 0 }, r = { 0 }, b = { 0 };
  const MorokOnnxTensor *tw = morok_onnx_graph_require_tensor (g, lstm->inputs[1], error);
  const MorokOnnxTensor *tr
      = tw ? morok_onnx_graph_require_tensor (g, lstm->inputs[2], error) : NULL;
  const MorokOnnxTensor *tb
      = tr ? morok_onnx_graph_require_tensor (g, lstm->inputs[3], error) : NULL;
  gboolean ok = tb && param_take (tw, DIMS (1, 4 * H, H), DIMS (4 * H, H), &w, error)
                && param_take (tr, DIMS (1, 4 * H, H), DIMS (4 * H, H), &r, error)
                && param_take (tb, DIMS (1, 8 * H), DIMS (8 * H), &b, error);
  if (ok)
    {
      SileroParam *dst[4] = { &n->w_ih[layer], &n->w_hh[layer], &n->b_ih[layer], &n->b_hh[layer] };
      const SileroParam *src[4] = { &w, &r, &b, &b };
      for (guint i = 0; i < 4; i++)
        {
          gboolean bias = i >= 2;
          dst[i]->data = reorder_gates (src[i]->data + (i == 3 ? 4 * H : 0), H, bias ? 1 : H);
          dst[i]->name = g_strdup (src[i]->name);
          dst[i]->rank = bias ? 1 : 2;
          dst[i]->dims[0] = 4 * H;
          dst[i]->dims[1] = H;
        }
    }
  param_clear (&w), param_clear (&r), param_clear (&b);
  return ok;
}

/* The two LSTM nodes of the decoder: in the then-branch (the one run with a
 * given state) of the If inside @g that holds them. */
static gboolean
load_v4_decoder (const MorokOnnxGraph *g, SileroNet *n, GError **error)
{
  for (guint i = 0; i < g->n_nodes; i++)
    {
      const MorokOnnxGraph *then
          = strcmp (g->nodes[i]->op_type, "If") == 0 ? branch (g->nodes[i], "then_branch") : NULL;
      const MorokOnnxNode *lstm[2];
      guint n_lstm = 0;
      for (guint k = 0; then && k < then->n_nodes && n_lstm < 2; k++)
        if (strcmp (then->nodes[k]->op_type, "LSTM") == 0 && then->nodes[k]->n_inputs >= 4)
          lstm[n_lstm++] = then->nodes[k];
      if (n_lstm == 2)
        return load_v4_lstm (then, lstm[0], n, 0, error)
               && load_v4_lstm (then, lstm[1], n, 1, error);
    }
  g_set_error (error, MOROK_IO_ERROR, MOROK_IO_ERROR_NOT_FOUND,
               "%s: no If with two LSTM nodes in graph '%s'", morok_onnx_model_name (g->model),
               g->path);
  return FALSE;
}

/* A folded pointwise down-conv: weight @wname [C, C, 1], its bias named one
 * number up, and the stride of the Conv node in @branch_g that reads it. */
static gboolean
load_v4_down (const MorokOnnxGraph *main, const MorokOnnxGraph *branch_g, guint wnum, gint64 c,
              SileroBlock *blk, GError **error)
{
  g_autofree char *wname = g_strdup_printf ("%u", wnum), *bname = g_strdup_printf ("%u", wnum + 1);
  const MorokOnnxTensor *w = morok_onnx_graph_require_tensor (main, wname, error);
  if (!w || !param_take (w, DIMS (c, c, 1), 0, NULL, &blk->down_w, error)
      || !param_find (main, bname, DIMS (c), &blk->down_b, error))
    return FALSE;
  const MorokOnnxNode *conv = find_conv_of (branch_g, w);
  const MorokOnnxAttribute *s = conv ? morok_onnx_node_find_attribute (conv, "strides") : NULL;
  blk->down_stride = s && s->n_ints == 1 ? s->ints[0] : 1;
  if (conv == NULL || blk->down_stride < 1 || blk->down_stride > 2)
    {
      g_set_error (error, MOROK_IO_ERROR, MOROK_IO_ERROR_MALFORMED,
                   "%s: tensor '%s' is not read by a Conv of stride 1 or 2 in graph '%s'",
                   morok_onnx_model_name (main->model), wname, branch_g->path);
      return FALSE;
    }
  return TRUE;
}

static gboolean
load_v4_net (const MorokOnnxGraph *main, const MorokOnnxGraph *branch_g, guint rate, SileroNet *n,
             GError **error)
{
  /* PyTorch module, channels in and out, folded down-conv weight number */
  static const struct
  {
    const char *module;
    gint64 cin, cout;
    guint down16, down8;
  } blocks[4] = {
    { "first_layer.0", 258, 16, 1110, 1122 },
    { "encoder.3.0", 16, 32, 1113, 1125 },
    { "encoder.7.0", 32, 32, 1116, 1128 },
    { "encoder.11.0", 32, 64, 1119, 1131 },
  };
  const char *p = rate == 16000 ? "model." : "model_8k.";
  n->rate = rate;
  n->chunk = rate == 16000 ? 512 : 256;
  n->context = 0;
  n->stft_hop = 64;
  n->stft_pad_left = n->stft_pad_right = 96;
  g_autofree char *basis = g_strconcat (p, "feature_extractor.forward_basis_buffer", NULL);
  g_autofree char *filter = g_strconcat (p, "adaptive_normalization.filter_", NULL);
  SileroParam stft = { 0 };
  if (!param_find (main, basis, DIMS (258, 1, 256), &stft, error)
      || !basis_window (main, &stft, &n->window, error)
      || !param_find (main, filter, DIMS (1, 1, 7), &n->norm_filter, error))
    return FALSE;
  for (guint i = 0; i < 4; i++)
    {
      SileroBlock *b = &n->block[i];
      gint64 ci = blocks[i].cin, co = blocks[i].cout;
      g_autofree char *q = g_strconcat (p, blocks[i].module, ".", NULL);
      g_autofree char *dw_w = g_strconcat (q, "dw_conv.0.weight", NULL);
      g_autofree char *dw_b = g_strconcat (q, "dw_conv.0.bias", NULL);
      g_autofree char *pw_w = g_strconcat (q, "pw_conv.0.weight", NULL);
      g_autofree char *pw_b = g_strconcat (q, "pw_conv.0.bias", NULL);
      g_autofree char *pj_w = g_strconcat (q, "proj.weight", NULL);
      g_autofree char *pj_b = g_strconcat (q, "proj.bias", NULL);
      if (!param_find (main, dw_w, DIMS (ci, 1, 5), &b->dw_w, error)
          || !param_find (main, dw_b, DIMS (ci), &b->dw_b, error)
          || !param_find (main, pw_w, DIMS (co, ci, 1), &b->pw_w, error)
          || !param_find (main, pw_b, DIMS (co), &b->pw_b, error)
          || !load_v4_down (main, branch_g, rate == 16000 ? blocks[i].down16 : blocks[i].down8, co,
                            b, error))
        return FALSE;
      /* a block whose channels do not change adds its input unprojected */
      if (ci != co)
        {
          if (!param_find (main, pj_w, DIMS (co, ci, 1), &b->proj_w, error)
              || !param_find (main, pj_b, DIMS (co), &b->proj_b, error))
            return FALSE;
        }
    }
  g_autofree char *hw = g_strconcat (p, "decoder.decoder.1.weight", NULL);
  g_autofree char *hb = g_strconcat (p, "decoder.decoder.1.bias", NULL);
  const MorokOnnxTensor *thw = morok_onnx_graph_require_tensor (main, hw, error);
  return load_v4_decoder (branch_g, n, error)
         && param_take (thw, DIMS (1, 64, 1), DIMS (1, 64), &n->head_w, error)
         && param_find (main, hb, DIMS (1), &n->head_b, error);
}

/* ---- the model ---- */

MorokSileroVad *
morok_silero_vad_load (const char *path, GError **error)
{
  g_return_val_if_fail (path != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);
  g_autoptr (MorokOnnxModel) onnx = morok_onnx_model_load (path, error);
  if (onnx == NULL)
    return NULL;
  const MorokOnnxNode *sw = find_rate_switch (onnx, error);
  if (sw == NULL)
    return NULL;
  const MorokOnnxGraph *main = morok_onnx_model_graph (onnx);
  const MorokOnnxGraph *g[2] = { branch (sw, "then_branch"), branch (sw, "else_branch") };
  g_autoptr (MorokSileroVad) m = g_atomic_rc_box_new0 (MorokSileroVad);
  m->n_rates = 2;
  m->rates[0] = 16000, m->rates[1] = 8000;
  /* v5/v6 keep every weight in the branches, v4 in the main graph */
  gboolean v5 = morok_onnx_graph_find_tensor (g[0], "stft.forward_basis_buffer") != NULL;
  gboolean v4
      = !v5
        && morok_onnx_graph_find_tensor (main, "model.feature_extractor.forward_basis_buffer")
               != NULL;
  if (!v4 && !v5)
    {
      g_set_error (error, MOROK_IO_ERROR, MOROK_IO_ERROR_NOT_FOUND,
                   "%s: not a Silero VAD v4, v5 or v6 model: no STFT basis "
                   "('stft.forward_basis_buffer' in '%s' or "
                   "'model.feature_extractor.forward_basis_buffer')",
                   morok_onnx_model_name (onnx), g[0]->path);
      return NULL;
    }
  m->layers = v5 ? 1 : 2;
  m->hidden = v5 ? 128 : 64;
  for (guint i = 0; i < m->n_rates; i++)
    if (v5 ? !load_v5_net (g[i], m->rates[i], &m->net[i], error)
           : !load_v4_net (main, g[i], m->rates[i], &m->net[i], error))
      return NULL;
  m->version = v5 ? v5_release (m) : MOROK_SILERO_VAD_V4;
  g_debug ("%s: Silero VAD %s", morok_onnx_model_name (onnx),
           morok_silero_vad_version_name (m->version));
  return g_steal_pointer (&m);
}

static void
net_clear (SileroNet *n)
{
  param_clear (&n->window);
  param_clear (&n->norm_filter);
  for (guint i = 0; i < 4; i++)
    {
      SileroBlock *b = &n->block[i];
      param_clear (&n->enc_w[i]), param_clear (&n->enc_b[i]);
      param_clear (&b->dw_w), param_clear (&b->dw_b), param_clear (&b->pw_w);
      param_clear (&b->pw_b), param_clear (&b->proj_w), param_clear (&b->proj_b);
      param_clear (&b->down_w), param_clear (&b->down_b);
    }
  for (guint l = 0; l < SILERO_MAX_LAYERS; l++)
    {
      param_clear (&n->w_ih[l]), param_clear (&n->w_hh[l]);
      param_clear (&n->b_ih[l]), param_clear (&n->b_hh[l]);
    }
  param_clear (&n->head_w), param_clear (&n->head_b);
}

static void
model_clear (MorokSileroVad *model)
{
  for (guint i = 0; i < G_N_ELEMENTS (model->net); i++)
    net_clear (&model->net[i]);
}

MorokSileroVad *
morok_silero_vad_ref (MorokSileroVad *model)
{
  g_return_val_if_fail (model != NULL, NULL);
  return g_atomic_rc_box_acquire (model);
}

void
morok_silero_vad_unref (MorokSileroVad *model)
{
  if (model)
    g_atomic_rc_box_release_full (model, (GDestroyNotify) model_clear);
}

/* ---- queries ---- */

const SileroNet *
silero_vad_net (const MorokSileroVad *model, guint rate)
{
  for (guint i = 0; i < model->n_rates; i++)
    if (model->rates[i] == rate)
      return &model->net[i];
  return NULL;
}

MorokSileroVadVersion
morok_silero_vad_version (const MorokSileroVad *model)
{
  g_return_val_if_fail (model != NULL, MOROK_SILERO_VAD_V5_OTHER);
  return model->version;
}

const char *
morok_silero_vad_version_name (MorokSileroVadVersion version)
{
  switch (version)
    {
    case MOROK_SILERO_VAD_V4: return "v4";
    case MOROK_SILERO_VAD_V5: return "v5";
    case MOROK_SILERO_VAD_V6: return "v6";
    case MOROK_SILERO_VAD_V5_OTHER: return "v5/v6";
    default: return "?";
    }
}

const guint *
morok_silero_vad_sample_rates (const MorokSileroVad *model, guint *out_n)
{
  g_return_val_if_fail (model != NULL && out_n != NULL, NULL);
  *out_n = model->n_rates;
  return model->rates;
}

gboolean
morok_silero_vad_supports_rate (const MorokSileroVad *model, guint sample_rate)
{
  g_return_val_if_fail (model != NULL, FALSE);
  return silero_vad_net (model, sample_rate) != NULL;
}

guint
morok_silero_vad_chunk_len (const MorokSileroVad *model, guint sample_rate)
{
  g_return_val_if_fail (model != NULL, 0);
  const SileroNet *n = silero_vad_net (model, sample_rate);
  return n ? n->chunk : 0;
}

guint
morok_silero_vad_context_len (const MorokSileroVad *model, guint sample_rate)
{
  g_return_val_if_fail (model != NULL, 0);
  const SileroNet *n = silero_vad_net (model, sample_rate);
  return n ? n->context : 0;
}

guint
morok_silero_vad_input_len (const MorokSileroVad *model, guint sample_rate)
{
  g_return_val_if_fail (model != NULL, 0);
  const SileroNet *n = silero_vad_net (model, sample_rate);
  return n ? n->context + n->chunk : 0;
}

guint
morok_silero_vad_lstm_layers (const MorokSileroVad *model)
{
  g_return_val_if_fail (model != NULL, 0);
  return model->layers;
}

guint
morok_silero_vad_lstm_hidden (const MorokSileroVad *model)
{
  g_return_val_if_fail (model != NULL, 0);
  return model->hidden;
}

gsize
morok_silero_vad_state_len (const MorokSileroVad *model)
{
  g_return_val_if_fail (model != NULL, 0);
  return 2 * (gsize) model->layers * model->hidden;
}

gsize
morok_silero_vad_output_len (const MorokSileroVad *model)
{
  g_return_val_if_fail (model != NULL, 0);
  return 1 + morok_silero_vad_state_len (model);
}
