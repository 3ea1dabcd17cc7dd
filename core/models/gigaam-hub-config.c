/* SPDX-License-Identifier: MIT */
/* An upstream GigaAM config (a model hub folder's config.json) made into the
 * normalised config that a converted file holds as "morok.config", by the
 * rules of scripts/gigaam/convert.py (morok_config): upstream spellings
 * mapped, missing sizes defaulted, and every size that the weights also
 * tell taken from them, a config value that disagrees an error. The result
 * is then read and checked by gigaam-config.c as a converted file's is. */
#define G_LOG_DOMAIN "morok-models"
#include "models/gigaam-hub-private.h"

#include <json-glib/json-glib.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "io/morok-io.h"

/* ---- reading the upstream config ---- */

static gboolean G_GNUC_PRINTF (3, 4)
    hub_fail (GigaAmHub *h, MorokIoError code, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  g_autofree char *msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  g_set_error (h->error, MOROK_IO_ERROR, code, "%s: %s", h->config_file, msg);
  return FALSE;
}

/* The object @key of @obj, or NULL when absent or not an object. */
static JsonObject *
section (JsonObject *obj, const char *key)
{
  JsonNode *n = obj ? json_object_get_member (obj, key) : NULL;
  return n && JSON_NODE_HOLDS_OBJECT (n) ? json_node_get_object (n) : NULL;
}

/* The value @key of @obj, NULL when absent or null. */
static JsonNode *
value (JsonObject *obj, const char *key)
{
  JsonNode *n = obj ? json_object_get_member (obj, key) : NULL;
  return n && !JSON_NODE_HOLDS_NULL (n) ? n : NULL;
}

/* An integer @where.@key (a JSON integer, or a float with an integral
 * value, as Python's int () takes it); @fallback when absent. */
static gboolean
get_int (GigaAmHub *h, JsonObject *obj, const char *where, const char *key, gint64 fallback,
         gint64 *out)
{
  JsonNode *n = value (obj, key);
  if (!n)
    {
      *out = fallback;
      return TRUE;
    }
  GType t = JSON_NODE_HOLDS_VALUE (n) ? json_node_get_value_type (n) : G_TYPE_INVALID;
  double d = t == G_TYPE_DOUBLE ? json_node_get_double (n) : 0;
  if (t == G_TYPE_INT64)
    *out = json_node_get_int (n);
  else if (t == G_TYPE_DOUBLE && d == trunc (d) && fabs (d) < 1e15)
    *out = (gint64) d;
  else
    return hub_fail (h, MOROK_IO_ERROR_MALFORMED, "'%s%s' must be an integer", where, key);
  return TRUE;
}

/* A string @key of @obj, NULL when absent. */
static const char *
get_string (JsonObject *obj, const char *key)
{
  JsonNode *n = value (obj, key);
  return n && JSON_NODE_HOLDS_VALUE (n) && json_node_get_value_type (n) == G_TYPE_STRING
             ? json_node_get_string (n)
             : NULL;
}

/* Python's truth of an optional value: absent, null, false, 0, "", [] and {} are false. */
static gboolean
truthy (JsonNode *n)
{
  if (!n || JSON_NODE_HOLDS_NULL (n))
    return FALSE;
  if (JSON_NODE_HOLDS_ARRAY (n))
    return json_array_get_length (json_node_get_array (n)) > 0;
  if (JSON_NODE_HOLDS_OBJECT (n))
    return json_object_get_size (json_node_get_object (n)) > 0;
  GType t = json_node_get_value_type (n);
  if (t == G_TYPE_STRING)
    return json_node_get_string (n)[0] != 0;
  if (t == G_TYPE_BOOLEAN)
    return json_node_get_boolean (n);
  return t == G_TYPE_INT64 ? json_node_get_int (n) != 0 : json_node_get_double (n) != 0;
}

/* The size @name that the config (@cfg, -1 when it has none) and the
 * weights (@weights, -1 likewise) give: the weights' where both do and
 * agree. */
static gboolean
pick (GigaAmHub *h, const char *name, gint64 cfg, gint64 weights, gint64 *out)
{
  if (cfg >= 0 && weights >= 0 && cfg != weights)
    return hub_fail (h, MOROK_IO_ERROR_MALFORMED,
                     "config says %s = %" G_GINT64_FORMAT ", the weights %" G_GINT64_FORMAT, name,
                     cfg, weights);
  if (cfg < 0 && weights < 0)
    return hub_fail (h, MOROK_IO_ERROR_NOT_FOUND, "'%s' is missing", name);
  *out = weights >= 0 ? weights : cfg;
  return TRUE;
}

/* The one value of @name among @n values (-1: not given). */
static gboolean
agree (GigaAmHub *h, const char *name, const gint64 *values, guint n, gint64 *out)
{
  gint64 known = -1;
  for (guint i = 0; i < n; i++)
    if (values[i] >= 0 && known >= 0 && values[i] != known)
      return hub_fail (h, MOROK_IO_ERROR_MALFORMED,
                       "%s: config and weights disagree (%" G_GINT64_FORMAT " and %" G_GINT64_FORMAT
                       ")",
                       name, known, values[i]);
    else if (values[i] >= 0)
      known = values[i];
  if (known < 0)
    return hub_fail (h, MOROK_IO_ERROR_NOT_FOUND, "%s: unknown", name);
  *out = known;
  return TRUE;
}

/* The tensor @name's dim @i (negative: from the end), or -1 without the tensor. */
static gint64
dim (GigaAmHub *h, const char *name, int i)
{
  const MorokSafetensor *t = g_hash_table_lookup (h->by_name, name);
  if (!t || t->rank == 0)
    return -1;
  return t->dims[i < 0 ? (int) t->rank + i : i];
}

static guint
rank (GigaAmHub *h, const char *name)
{
  const MorokSafetensor *t = g_hash_table_lookup (h->by_name, name);
  return t ? t->rank : 0;
}

static guint
count_layers (GigaAmHub *h, const char *format)
{
  guint n = 0;
  for (;; n++)
    {
      g_autofree char *name = g_strdup_printf (format, n);
      if (!g_hash_table_contains (h->by_name, name))
        return n;
    }
}

/* ---- the normalised sections ---- */

static gboolean
add_preprocessor (GigaAmHub *h, JsonObject *cfg, JsonBuilder *b, gint64 *out_mels)
{
  JsonObject *pre = section (cfg, "preprocessor");
  gint64 sr, win, mels, n_fft, hop;
  JsonNode *center = value (pre, "center");
  if (!get_int (h, cfg, "", "sample_rate", 16000, &sr)
      || !get_int (h, pre, "preprocessor.", "sample_rate", sr, &sr))
    return FALSE;
  if (sr < 1 || sr > 384000)
    return hub_fail (h, MOROK_IO_ERROR_MALFORMED,
                     "'preprocessor.sample_rate' must be in [1, 384000]");
  if (!get_int (h, pre, "preprocessor.", "win_length", sr / 40, &win)
      || !get_int (h, pre, "preprocessor.", "n_mels", 64, &mels)
      || !get_int (h, pre, "preprocessor.", "features", mels, &mels)
      || !get_int (h, pre, "preprocessor.", "n_fft", win, &n_fft)
      || !get_int (h, pre, "preprocessor.", "hop_length", sr / 100, &hop))
    return FALSE;
  if (center
      && (!JSON_NODE_HOLDS_VALUE (center) || json_node_get_value_type (center) != G_TYPE_BOOLEAN))
    return hub_fail (h, MOROK_IO_ERROR_MALFORMED, "'preprocessor.center' must be true or false");
  *out_mels = mels;
  json_builder_set_member_name (b, "preprocessor");
  json_builder_begin_object (b);
  struct
  {
    const char *key;
    gint64 v;
  } ints[] = { { "sample_rate", sr },
               { "n_mels", mels },
               { "n_fft", n_fft },
               { "win_length", win },
               { "hop_length", hop } };
  for (guint i = 0; i < G_N_ELEMENTS (ints); i++)
    {
      json_builder_set_member_name (b, ints[i].key);
      json_builder_add_int_value (b, ints[i].v);
    }
  json_builder_set_member_name (b, "center");
  json_builder_add_boolean_value (b, center ? json_node_get_boolean (center) : TRUE);
  const char *strings[][2]
      = { { "pad_mode", "reflect" }, { "window", "hann_periodic" }, { "mel_scale", "htk" } };
  for (guint i = 0; i < G_N_ELEMENTS (strings); i++)
    {
      json_builder_set_member_name (b, strings[i][0]);
      json_builder_add_string_value (b, strings[i][1]);
    }
  json_builder_set_member_name (b, "power");
  json_builder_add_double_value (b, 2.0);
  json_builder_set_member_name (b, "f_min");
  json_builder_add_double_value (b, 0.0);
  json_builder_set_member_name (b, "f_max");
  json_builder_add_double_value (b, sr / 2.0);
  json_builder_set_member_name (b, "mel_norm");
  json_builder_add_null_value (b);
  json_builder_set_member_name (b, "log_clamp");
  json_builder_begin_array (b);
  json_builder_add_double_value (b, 1e-9);
  json_builder_add_double_value (b, 1e9);
  json_builder_end_array (b);
  json_builder_end_object (b);
  return TRUE;
}

static void
add_int (JsonBuilder *b, const char *key, gint64 v)
{
  json_builder_set_member_name (b, key);
  json_builder_add_int_value (b, v);
}

static void
add_string (JsonBuilder *b, const char *key, const char *v)
{
  json_builder_set_member_name (b, key);
  json_builder_add_string_value (b, v);
}

static void
add_double (JsonBuilder *b, const char *key, double v)
{
  json_builder_set_member_name (b, key);
  json_builder_add_double_value (b, v);
}

static gboolean
add_encoder (GigaAmHub *h, JsonObject *cfg, JsonBuilder *b, gint64 n_mels, gint64 *out_d)
{
  JsonObject *enc = section (cfg, "encoder");
  const char *pre_name = "encoder.pre_encode.conv.0.weight";
  const char *dw_name = "encoder.layers.0.conv.depthwise_conv.weight";
  gint64 d_weights = dim (h, "encoder.layers.0.norm_out.weight", 0);
  if (d_weights < 0 || dim (h, dw_name, -1) < 0 || dim (h, pre_name, -1) < 0)
    return gigaam_hub_missing (h, d_weights < 0              ? "encoder.layers.0.norm_out.weight"
                                  : dim (h, dw_name, -1) < 0 ? dw_name
                                                             : pre_name);
  gboolean conv1d = rank (h, pre_name) == 3;
  const char *said = get_string (enc, "subsampling");
  if (said && strcmp (said, "conv1d") != 0 && strcmp (said, "conv2d") != 0
      && strcmp (said, "striding") != 0)
    return hub_fail (h, MOROK_IO_ERROR_UNSUPPORTED, "unsupported subsampling '%s'", said);
  if (said && (strcmp (said, "conv1d") == 0) != conv1d)
    return hub_fail (h, MOROK_IO_ERROR_MALFORMED, "config says %s subsampling, %s is %u-D", said,
                     pre_name, rank (h, pre_name));
  const char *attention = get_string (enc, "self_attention_model");
  if (attention && strcmp (attention, "rotary") != 0)
    return hub_fail (h, MOROK_IO_ERROR_UNSUPPORTED,
                     "unsupported self_attention_model '%s' (only rotary)", attention);
  gint64 n_heads, ff, factor, c_feat, c_layers, c_d, c_kernel, c_subs;
  gint64 feat_in = 0, n_layers = 0, d = 0, kernel = 0, subs_kernel = 0;
  if (!get_int (h, enc, "encoder.", "n_heads", 16, &n_heads)
      || !get_int (h, enc, "encoder.", "ff_expansion_factor", 4, &ff)
      || !get_int (h, enc, "encoder.", "subsampling_factor", 4, &factor)
      || !get_int (h, enc, "encoder.", "feat_in", -1, &c_feat)
      || !get_int (h, enc, "encoder.", "n_layers", -1, &c_layers)
      || !get_int (h, enc, "encoder.", "d_model", -1, &c_d)
      || !get_int (h, enc, "encoder.", "conv_kernel_size", -1, &c_kernel)
      || !get_int (h, enc, "encoder.", "subs_kernel_size", -1, &c_subs))
    return FALSE;
  if (n_heads < 1 || d_weights % n_heads || (d_weights / n_heads) % 2)
    return hub_fail (h, MOROK_IO_ERROR_MALFORMED,
                     "d_model %" G_GINT64_FORMAT " does not split into %" G_GINT64_FORMAT
                     " heads of even size",
                     d_weights, n_heads);
  gboolean has_bn
      = g_hash_table_contains (h->by_name, "encoder.layers.0.conv.batch_norm.running_mean");
  const char *norm = get_string (enc, "conv_norm_type");
  if (!norm)
    norm = has_bn ? "batch_norm" : "layer_norm";
  if ((strcmp (norm, "batch_norm") != 0 && strcmp (norm, "layer_norm") != 0)
      || (strcmp (norm, "batch_norm") == 0) != has_bn)
    return hub_fail (h, MOROK_IO_ERROR_MALFORMED, "conv_norm_type '%s' does not match the weights",
                     norm);
  if (!pick (h, "encoder.feat_in", c_feat, conv1d ? dim (h, pre_name, 1) : -1, &feat_in)
      || !pick (h, "encoder.n_layers", c_layers,
                count_layers (h, "encoder.layers.%u.norm_out.weight"), &n_layers)
      || !pick (h, "encoder.d_model", c_d, d_weights, &d)
      || !pick (h, "encoder.conv_kernel_size", c_kernel, dim (h, dw_name, -1), &kernel)
      || !pick (h, "encoder.subs_kernel_size", c_subs, dim (h, pre_name, -1), &subs_kernel))
    return FALSE;
  if (factor != 4)
    return hub_fail (h, MOROK_IO_ERROR_UNSUPPORTED,
                     "subsampling_factor %" G_GINT64_FORMAT " unsupported (only 4)", factor);
  if (feat_in != n_mels)
    return hub_fail (h, MOROK_IO_ERROR_MALFORMED,
                     "encoder feat_in %" G_GINT64_FORMAT " != %" G_GINT64_FORMAT " mel bands",
                     feat_in, n_mels);
  gint64 rope = 5000;
  JsonNode *pos = value (enc, "pos_emb_max_len");
  double rope_base = rope;
  if (pos && JSON_NODE_HOLDS_VALUE (pos) && json_node_get_value_type (pos) == G_TYPE_DOUBLE)
    rope_base = json_node_get_double (pos);
  else if (!get_int (h, enc, "encoder.", "pos_emb_max_len", rope, &rope))
    return FALSE;
  else
    rope_base = (double) rope;
  *out_d = d;
  json_builder_set_member_name (b, "encoder");
  json_builder_begin_object (b);
  add_int (b, "feat_in", feat_in);
  add_int (b, "n_layers", n_layers);
  add_int (b, "d_model", d);
  add_int (b, "n_heads", n_heads);
  add_int (b, "ff_expansion_factor", ff);
  add_int (b, "conv_kernel_size", kernel);
  add_string (b, "conv_norm_type", norm);
  add_string (b, "subsampling", conv1d ? "conv1d" : "conv2d");
  add_int (b, "subsampling_factor", factor);
  add_int (b, "subs_kernel_size", subs_kernel);
  add_int (b, "subs_stride", 2);
  add_int (b, "subs_padding", (subs_kernel - 1) / 2);
  add_string (b, "self_attention_model", "rotary");
  add_double (b, "rope_base", rope_base);
  add_double (b, "layer_norm_eps", 1e-5);
  add_double (b, "batch_norm_eps", 1e-5);
  json_builder_end_object (b);
  return TRUE;
}

/* ---- the head ---- */

#define CTC_PROBE "head.decoder_layers.0.weight"
#define RNNT_PROBE "head.joint.joint_net.1.weight"

/* 'ctc' or 'rnnt', from the config's head class, model_class and decoding
 * class (those present must agree), else from the head's tensors. */
static gboolean
model_kind (GigaAmHub *h, JsonObject *cfg, gboolean *out_rnnt)
{
  static const char *const heads[][2]
      = { { "gigaam.decoder.CTCHead", "ctc" }, { "gigaam.decoder.RNNTHead", "rnnt" } };
  static const char *const decodings[][2] = { { "gigaam.decoding.CTCGreedyDecoding", "ctc" },
                                              { "gigaam.decoding.RNNTGreedyDecoding", "rnnt" } };
  const char *said[3] = { NULL, NULL, NULL }; /* head._target_, model_class, decoding._target_ */
  const char *head = get_string (section (cfg, "head"), "_target_");
  const char *model_class = get_string (cfg, "model_class");
  const char *decoding = get_string (section (cfg, "decoding"), "_target_");
  for (guint i = 0; head && i < 2; i++)
    if (strcmp (head, heads[i][0]) == 0)
      said[0] = heads[i][1];
  if (head && !said[0])
    return hub_fail (h, MOROK_IO_ERROR_UNSUPPORTED,
                     "unsupported head class '%s' (Morok runs gigaam.decoder.CTCHead and "
                     "gigaam.decoder.RNNTHead)",
                     head);
  if (model_class && strcmp (model_class, "ctc") != 0 && strcmp (model_class, "rnnt") != 0)
    return hub_fail (h, MOROK_IO_ERROR_UNSUPPORTED,
                     "model_class '%s': not a GigaAM ASR model (Morok runs ctc and rnnt)",
                     model_class);
  said[1] = model_class;
  for (guint i = 0; decoding && i < 2; i++)
    if (strcmp (decoding, decodings[i][0]) == 0)
      said[2] = decodings[i][1];
  if (decoding && !said[2])
    return hub_fail (h, MOROK_IO_ERROR_UNSUPPORTED, "unsupported decoding class '%s'", decoding);
  const char *kind = NULL;
  for (guint i = 0; i < 3; i++)
    if (said[i] && kind && strcmp (said[i], kind) != 0)
      return hub_fail (h, MOROK_IO_ERROR_MALFORMED,
                       "the config disagrees on the model class (head._target_, model_class, "
                       "decoding._target_)");
    else if (said[i])
      kind = said[i];
  gboolean ctc = g_hash_table_contains (h->by_name, CTC_PROBE);
  gboolean rnnt = g_hash_table_contains (h->by_name, RNNT_PROBE);
  if (!kind && ctc != rnnt)
    kind = ctc ? "ctc" : "rnnt";
  if (!kind)
    return hub_fail (h, MOROK_IO_ERROR_UNSUPPORTED,
                     "no ASR head: neither %s nor %s (an SSL or emotion model?)", CTC_PROBE,
                     RNNT_PROBE);
  *out_rnnt = strcmp (kind, "rnnt") == 0;
  return (*out_rnnt ? rnnt : ctc) || gigaam_hub_missing (h, *out_rnnt ? RNNT_PROBE : CTC_PROBE);
}

static gboolean
add_ctc_head (GigaAmHub *h, JsonObject *cfg, JsonBuilder *b, gint64 *out_classes)
{
  gint64 c_classes, classes = 0;
  if (rank (h, CTC_PROBE) != 3 || dim (h, CTC_PROBE, 2) != 1)
    return hub_fail (h, MOROK_IO_ERROR_MALFORMED, "tensor '%s' must be [classes, d_model, 1]",
                     CTC_PROBE);
  if (!get_int (h, section (cfg, "head"), "head.", "num_classes", -1, &c_classes)
      || !pick (h, "head.num_classes", c_classes, dim (h, CTC_PROBE, 0), &classes))
    return FALSE;
  *out_classes = classes;
  json_builder_set_member_name (b, "head");
  json_builder_begin_object (b);
  add_string (b, "type", "ctc");
  add_int (b, "feat_in", dim (h, CTC_PROBE, 1));
  add_int (b, "num_classes", classes);
  add_int (b, "blank_id", classes - 1);
  json_builder_end_object (b);
  return TRUE;
}

/* Upstream's RNNTHead: decoder (embed, lstm) and joint (enc, pred, joint_net). */
static gboolean
add_rnnt_head (GigaAmHub *h, JsonObject *cfg, JsonBuilder *b, gint64 d_model, gint64 *out_classes)
{
  JsonObject *head = section (cfg, "head");
  JsonObject *dec = section (head, "decoder"), *joint = section (head, "joint");
  const char *emb = "head.decoder.embed.weight", *pred = "head.joint.pred.weight";
  const char *names[] = { emb, RNNT_PROBE, pred };
  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    if (rank (h, names[i]) != 2)
      return g_hash_table_contains (h->by_name, names[i])
                 ? hub_fail (h, MOROK_IO_ERROR_MALFORMED, "tensor '%s' must be 2-D", names[i])
                 : gigaam_hub_missing (h, names[i]);
  gint64 v[4], classes = 0, hidden = 0, joint_hidden = 0, enc_hidden = 0, layers = 0, max_symbols;
  if (!get_int (h, dec, "head.decoder.", "num_classes", -1, &v[0])
      || !get_int (h, joint, "head.joint.", "num_classes", -1, &v[1]))
    return FALSE;
  v[2] = dim (h, emb, 0), v[3] = dim (h, RNNT_PROBE, 0);
  if (!agree (h, "num_classes", v, 4, &classes)
      || !get_int (h, dec, "head.decoder.", "pred_hidden", -1, &v[0])
      || !get_int (h, joint, "head.joint.", "pred_hidden", -1, &v[1]))
    return FALSE;
  v[2] = dim (h, emb, 1), v[3] = dim (h, pred, 1);
  if (!agree (h, "pred_hidden", v, 4, &hidden)
      || !get_int (h, joint, "head.joint.", "joint_hidden", -1, &v[0]))
    return FALSE;
  v[1] = dim (h, pred, 0), v[2] = dim (h, RNNT_PROBE, 1);
  if (!agree (h, "joint_hidden", v, 3, &joint_hidden)
      || !get_int (h, joint, "head.joint.", "enc_hidden", -1, &v[0]))
    return FALSE;
  v[1] = d_model;
  if (!agree (h, "enc_hidden", v, 2, &enc_hidden)
      || !get_int (h, dec, "head.decoder.", "pred_rnn_layers", -1, &v[0]))
    return FALSE;
  guint found = count_layers (h, "head.decoder.lstm.weight_ih_l%u");
  v[1] = found ? (gint64) found : -1;
  if (!agree (h, "pred_rnn_layers", v, 2, &layers))
    return FALSE;
  if (found > layers)
    return hub_fail (h, MOROK_IO_ERROR_MALFORMED,
                     "the weights have more LSTM layers than pred_rnn_layers = %" G_GINT64_FORMAT,
                     layers);
  if (!get_int (h, section (cfg, "decoding"), "decoding.", "max_symbols_per_step", 10,
                &max_symbols))
    return FALSE;
  if (max_symbols < 1)
    return hub_fail (h, MOROK_IO_ERROR_MALFORMED,
                     "decoding.max_symbols_per_step %" G_GINT64_FORMAT " must be at least 1",
                     max_symbols);
  *out_classes = classes;
  json_builder_set_member_name (b, "head");
  json_builder_begin_object (b);
  add_string (b, "type", "rnnt");
  add_int (b, "num_classes", classes);
  add_int (b, "blank_id", classes - 1);
  add_int (b, "enc_hidden", enc_hidden);
  add_int (b, "pred_hidden", hidden);
  add_int (b, "pred_rnn_layers", layers);
  add_int (b, "joint_hidden", joint_hidden);
  add_int (b, "max_symbols_per_step", max_symbols);
  json_builder_end_object (b);
  return TRUE;
}

/* ---- the vocabulary ---- */

/* A character vocabulary: decoding.vocabulary, vocabulary, labels,
 * head.vocabulary or head.labels, the first that is not empty. */
static JsonArray *
char_vocabulary (JsonObject *cfg)
{
  JsonObject *dec = section (cfg, "decoding"), *head = section (cfg, "head");
  JsonNode *found[] = { value (dec, "vocabulary"), value (cfg, "vocabulary"), value (cfg, "labels"),
                        value (head, "vocabulary"), value (head, "labels") };
  for (guint i = 0; i < G_N_ELEMENTS (found); i++)
    if (truthy (found[i]))
      return JSON_NODE_HOLDS_ARRAY (found[i]) ? json_node_get_array (found[i]) : NULL;
  return NULL;
}

const char *
gigaam_hub_named_tokenizer (JsonObject *cfg)
{
  return get_string (section (cfg, "decoding"), "model_path");
}

gboolean
gigaam_hub_wants_tokenizer (JsonObject *cfg)
{
  return gigaam_hub_named_tokenizer (cfg) || !char_vocabulary (cfg);
}

static gboolean
add_vocabulary (GigaAmHub *h, JsonObject *cfg, JsonBuilder *b, gint64 classes)
{
  JsonArray *chars = char_vocabulary (cfg);
  JsonNode *chars_node = value (section (cfg, "decoding"), "vocabulary");
  if (!chars && truthy (chars_node))
    return hub_fail (h, MOROK_IO_ERROR_MALFORMED, "the character vocabulary must be a list");
  guint n = h->tokenizer ? h->tokenizer->n_pieces : chars ? json_array_get_length (chars) : 0;
  if (!h->tokenizer && !chars)
    return hub_fail (h, MOROK_IO_ERROR_NOT_FOUND,
                     "no vocabulary (decoding.vocabulary, or decoding.model_path naming a "
                     "SentencePiece model)");
  if (n + 1 != classes)
    return hub_fail (h, MOROK_IO_ERROR_MALFORMED,
                     "vocabulary has %u tokens, the head %" G_GINT64_FORMAT
                     " classes (expected tokens + blank)",
                     n, classes);
  json_builder_set_member_name (b, "vocabulary");
  json_builder_begin_object (b);
  add_string (b, "type", h->tokenizer ? "sentencepiece" : "char");
  json_builder_set_member_name (b, "tokens");
  json_builder_begin_array (b);
  for (guint i = 0; i < n; i++)
    {
      JsonNode *t = h->tokenizer ? NULL : json_array_get_element (chars, i);
      if (t && (!JSON_NODE_HOLDS_VALUE (t) || json_node_get_value_type (t) != G_TYPE_STRING))
        return hub_fail (h, MOROK_IO_ERROR_MALFORMED, "vocabulary token %u is not a string", i);
      json_builder_add_string_value (b, h->tokenizer ? h->tokenizer->pieces[i]
                                                     : json_node_get_string (t));
    }
  json_builder_end_array (b);
  if (h->tokenizer)
    {
      const MorokSpModel *sp = h->tokenizer;
      json_builder_set_member_name (b, "piece_types");
      json_builder_begin_array (b);
      for (guint i = 0; i < n; i++)
        json_builder_add_string_value (b, morok_sp_piece_type_name (sp->types[i]));
      json_builder_end_array (b);
      add_int (b, "unk_id", sp->unk_id);
      add_int (b, "bos_id", sp->bos_id);
      add_int (b, "eos_id", sp->eos_id);
      add_int (b, "pad_id", sp->pad_id);
      add_string (b, "unk_surface", sp->unk_surface);
      json_builder_set_member_name (b, "add_dummy_prefix");
      json_builder_add_boolean_value (b, sp->add_dummy_prefix);
      json_builder_set_member_name (b, "remove_extra_whitespaces");
      json_builder_add_boolean_value (b, sp->remove_extra_whitespaces);
    }
  json_builder_end_object (b);
  return TRUE;
}

/* ---- the whole config ---- */

char *
gigaam_hub_normalise (GigaAmHub *h, JsonObject *cfg)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  gint64 mels = 0, d = 0, classes = 0;
  gboolean rnnt = FALSE;
  json_builder_begin_object (b);
  add_string (b, "format", "morok-gigaam");
  add_int (b, "format_version", 1);
  if (!model_kind (h, cfg, &rnnt))
    return NULL;
  add_string (b, "model_class", rnnt ? "rnnt" : "ctc");
  if (!add_preprocessor (h, cfg, b, &mels) || !add_encoder (h, cfg, b, mels, &d)
      || !(rnnt ? add_rnnt_head (h, cfg, b, d, &classes) : add_ctc_head (h, cfg, b, &classes))
      || !add_vocabulary (h, cfg, b, classes))
    return NULL;
  const char *name = get_string (cfg, "model_name");
  if (name && *name)
    add_string (b, "model_name", name);
  json_builder_end_object (b);
  g_autoptr (JsonNode) root = json_builder_get_root (b);
  return json_to_string (root, FALSE);
}
