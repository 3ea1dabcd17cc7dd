/* SPDX-License-Identifier: MIT */
/* The GigaAM RNN-T head as tensors (docs/gigaam-model.md, "RNN-T head"):
 * the joint's encoder projection over all frames, one predictor step (an
 * LSTM of L layers over the embedded token), and the joint of one frame and
 * one predictor output. The embedding is read on the host
 * (models/rnnt-decode.c): a row copy per token, not a product. */
#define G_LOG_DOMAIN "morok-models"
#include "models/gigaam-private.h"

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
morok_gigaam_rnnt_predictor (MorokGigaAm *model, MorokTensor *emb, MorokTensor *h, MorokTensor *c,
                             GError **error)
{
  g_return_val_if_fail (model != NULL, NULL);
  if ((error && *error) || !emb || !h || !c || !is_rnnt (model, error))
    return NULL;
  guint L = model->config.pred_layers;
  g_autofree MorokTensor **parts = g_new0 (MorokTensor *, 1 + 2 * L);
  MorokTensor *x = emb;
  MorokGraph *g = emb->graph;
  for (guint l = 0; l < L && x; l++)
    {
      MorokTensor *hl = layer_of (h, l, error), *cl = hl ? layer_of (c, l, error) : NULL;
      MorokTensor *w_ih = gigaam_weight (model, g, error, "head.decoder.lstm.weight_ih_l%u", l);
      MorokTensor *w_hh = gigaam_weight (model, g, error, "head.decoder.lstm.weight_hh_l%u", l);
      MorokTensor *b_ih = gigaam_weight (model, g, error, "head.decoder.lstm.bias_ih_l%u", l);
      MorokTensor *b_hh = gigaam_weight (model, g, error, "head.decoder.lstm.bias_hh_l%u", l);
      MorokTensor *h2 = NULL, *c2 = NULL;
      if (!cl || !b_hh
          || !morok_tensor_lstm_cell (x, hl, cl, w_ih, w_hh, b_ih, b_hh, &h2, &c2, error))
        return NULL;
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

const float *
morok_gigaam_rnnt_embedding (MorokGigaAm *model)
{
  g_return_val_if_fail (model != NULL, NULL);
  GigaAmWeight *w = g_hash_table_lookup (model->weights, "head.decoder.embed.weight");
  return w ? w->data : NULL;
}
