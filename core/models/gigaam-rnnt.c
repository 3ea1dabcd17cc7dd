/* SPDX-License-Identifier: MIT */
/* The GigaAM RNN-T head as tensors (docs/gigaam-model.md, "RNN-T head"):
 * the joint's encoder projection over all frames, one predictor step (an
 * LSTM of L layers), and the joint of one frame and one predictor output.
 * The first layer's input term depends on the token alone: a table made
 * once on the host (morok_gigaam_rnnt_input_gates), a row copy per token
 * (models/rnnt-decode.c), not a product. */
#define G_LOG_DOMAIN "morok-models"
#include "models/gigaam-private.h"

#include <string.h>

static MorokTensor *
linear (MorokGigaAm *m, MorokTensor *x, const char *prefix, GError **error)
{
  if (!x)
    return NULL;
  MorokTensor *w = gigaam_weight (m, x->graph, error, "%s.weight", prefix);
  MorokTensor *b = w ? gigaam_weight (m, x->graph, error, "%s.bias", prefix) : NULL;
  return b ? morok_tensor_linear (x, w, b, error) : NULL;
}

static gboolean
is_rnnt (MorokGigaAm *model, GError **error)
{
  if (model->config.head == MOROK_GIGAAM_HEAD_RNNT)
    return TRUE;
  g_set_error (error, MOROK_TENSOR_ERROR, MOROK_TENSOR_ERROR_SHAPE,
               "%s: a CTC model has no RNN-T head", model->file);
  return FALSE;
}

MorokTensor *
morok_gigaam_rnnt_encoder_proj (MorokGigaAm *model, MorokTensor *encoded, GError **error)
{
  g_return_val_if_fail (model != NULL, NULL);
  if ((error && *error) || !encoded || !is_rnnt (model, error))
    return NULL;
  return linear (model, encoded, "head.joint.enc", error);
}

/* Layer @l of h or c [L, B, H] as [B, H]. */
static MorokTensor *
layer_of (MorokTensor *state, guint l, GError **error)
{
  MorokSymPool *pool = morok_graph_sym_pool (state->graph);
  MorokTensor *one
      = morok_tensor_slice (state, 0, morok_sym_const (pool, l), morok_sym_const (pool, 1), error);
  return one ? morok_tensor_squeeze (one, 0, error) : NULL;
}

static MorokTensor *
flat (MorokTensor *t, GError **error)
{
  gint64 n = 1, d;
  if (!t)
    return NULL;
  for (guint i = 0; i < t->rank; i++)
    {
      if (!morok_sym_is_const (t->shape[i], &d))
        {
          g_set_error (error, MOROK_TENSOR_ERROR, MOROK_TENSOR_ERROR_SHAPE,
                       "the RNN-T predictor runs at a fixed batch size");
          return NULL;
        }
      n *= d;
    }
  return morok_tensor_reshape_c (t, &n, 1, error);
}

MorokTensor *
morok_gigaam_rnnt_predictor (MorokGigaAm *model, MorokTensor *x_gates, MorokTensor *h,
                             MorokTensor *c, GError **error)
{
  g_return_val_if_fail (model != NULL, NULL);
  if ((error && *error) || !x_gates || !h || !c || !is_rnnt (model, error))
    return NULL;
  guint L = model->config.pred_layers;
  g_autofree MorokTensor **parts = g_new0 (MorokTensor *, 1 + 2 * L);
  MorokTensor *x = NULL;
  MorokGraph *g = x_gates->graph;
  for (guint l = 0; l < L; l++)
    {
      MorokTensor *hl = layer_of (h, l, error), *cl = hl ? layer_of (c, l, error) : NULL;
      MorokTensor *w_hh = gigaam_weight (model, g, error, "head.decoder.lstm.weight_hh_l%u", l);
      MorokTensor *b_hh = gigaam_weight (model, g, error, "head.decoder.lstm.bias_hh_l%u", l);
      MorokTensor *h2 = NULL, *c2 = NULL;
      if (!cl || !b_hh)
        return NULL;
      if (l == 0)
        {
          if (!morok_tensor_lstm_cell_from_input (x_gates, hl, cl, w_hh, b_hh, &h2, &c2, error))
            return NULL;
        }
      else
        {
          MorokTensor *w_ih = gigaam_weight (model, g, error, "head.decoder.lstm.weight_ih_l%u", l);
          MorokTensor *b_ih = gigaam_weight (model, g, error, "head.decoder.lstm.bias_ih_l%u", l);
          if (!morok_tensor_lstm_cell (x, hl, cl, w_ih, w_hh, b_ih, b_hh, &h2, &c2, error))
            return NULL;
        }
      parts[1 + l] = flat (h2, error);
      parts[1 + L + l] = flat (c2, error);
      x = h2;
    }
  parts[0] = flat (linear (model, x, "head.joint.pred", error), error);
  for (guint i = 0; i < 1 + 2 * L; i++)
    if (!parts[i])
      return NULL;
  return morok_tensor_cat (parts, 1 + 2 * L, 0, error);
}

MorokTensor *
morok_gigaam_rnnt_joint (MorokGigaAm *model, MorokTensor *enc, MorokTensor *pred, GError **error)
{
  g_return_val_if_fail (model != NULL, NULL);
  if ((error && *error) || !enc || !pred || !is_rnnt (model, error))
    return NULL;
  MorokTensor *sum = morok_tensor_relu (morok_tensor_add (enc, pred, error), error);
  MorokTensor *logits = linear (model, sum, "head.joint.joint_net.1", error);
  return logits ? morok_tensor_log_softmax (logits, -1, error) : NULL;
}

float *
morok_gigaam_rnnt_input_gates (MorokGigaAm *model, GError **error)
{
  g_return_val_if_fail (model != NULL, NULL);
  if (!is_rnnt (model, error))
    return NULL;
  GigaAmWeight *embed = gigaam_weight_data (model, "head.decoder.embed.weight", error);
  GigaAmWeight *w_ih
      = embed ? gigaam_weight_data (model, "head.decoder.lstm.weight_ih_l0", error) : NULL;
  GigaAmWeight *b_ih
      = w_ih ? gigaam_weight_data (model, "head.decoder.lstm.bias_ih_l0", error) : NULL;
  if (!b_ih)
    return NULL;
  gsize H = model->config.pred_hidden, G = 4 * H, C = model->config.n_classes;
  /* w_ih transposed, [H, 4H]: a token's row is then a sum of H rows scaled
   * by its embedding, each gate summed in the order of the inputs as a dot
   * product would, reading both in order */
  g_autofree float *wt = g_new (float, H *G);
  for (gsize j = 0; j < G; j++)
    for (gsize k = 0; k < H; k++)
      wt[k * G + j] = w_ih->data[j * H + k];
  g_autofree double *sum = g_new (double, G);
  float *table = g_new (float, C *G);
  for (gsize t = 0; t < C; t++)
    {
      const float *e = embed->data + t * H;
      memset (sum, 0, G * sizeof (double));
      /* the blank is "no token yet", upstream's zero embedding */
      for (gsize k = 0; k < H && t != model->config.blank_id; k++)
        for (gsize j = 0; j < G; j++)
          sum[j] += (double) e[k] * wt[k * G + j];
      for (gsize j = 0; j < G; j++)
        table[t * G + j] = (float) (sum[j] + b_ih->data[j]);
    }
  return table;
}
