/* SPDX-License-Identifier: MIT */
/* Loading a GigaAM model file: the config from "morok.config", every tensor
 * checked against it (a table of names and shapes), the weights as f32, and
 * the front-end's DFT basis. The forward pass is in gigaam-frontend.c and
 * gigaam-encoder.c. */
#define G_LOG_DOMAIN "morok-models"
#include "models/gigaam-private.h"

#include <json-glib/json-glib.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "io/safetensors.h"

#define DEFAULT_MAX_SECONDS 30

/* ---- the config ---- */

/* Reads members of "morok.config"; the first failure is kept in error and
 * every later read returns FALSE, so a whole section reads as one && chain. */
typedef struct
{
  const char *file;
  JsonObject *root;
  GError **error;  /* may be NULL: callers need not ask for the message */
  gboolean failed;
} ConfigReader;

static void config_fail (ConfigReader *r, MorokIoError code, const char *fmt, ...)
    G_GNUC_PRINTF (3, 4);

static void
config_fail (ConfigReader *r, MorokIoError code, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  g_autofree char *msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  g_set_error (r->error, MOROK_IO_ERROR, code, "%s: morok.config: %s", r->file, msg);
  r->failed = TRUE;
}

static JsonNode *
config_member (ConfigReader *r, const char *section, const char *key)
{
  if (r->failed)
    return NULL;
  JsonNode *s = json_object_get_member (r->root, section);
  if (!s || !JSON_NODE_HOLDS_OBJECT (s))
    {
      config_fail (r, MOROK_IO_ERROR_NOT_FOUND, "section '%s' is missing", section);
      return NULL;
    }
  JsonNode *n = json_object_get_member (json_node_get_object (s), key);
  if (!n)
    config_fail (r, MOROK_IO_ERROR_NOT_FOUND, "'%s.%s' is missing", section, key);
  return n;
}

static gboolean
config_number (ConfigReader *r, const char *section, const char *key, double *out)
{
  JsonNode *n = config_member (r, section, key);
  if (!n)
    return FALSE;
  GType t = JSON_NODE_HOLDS_VALUE (n) ? json_node_get_value_type (n) : G_TYPE_INVALID;
  if (t != G_TYPE_INT64 && t != G_TYPE_DOUBLE)
    {
      config_fail (r, MOROK_IO_ERROR_MALFORMED, "'%s.%s' must be a number", section, key);
      return FALSE;
    }
  *out = t == G_TYPE_INT64 ? (double)json_node_get_int (n) : json_node_get_double (n);
  return TRUE;
}

/* An integer in [lo, hi]. */
static gboolean
config_uint (ConfigReader *r, const char *section, const char *key, guint lo, guint hi, guint *out)
{
  JsonNode *n = config_member (r, section, key);
  if (!n)
    return FALSE;
  gint64 v = 0;
  gboolean ok = JSON_NODE_HOLDS_VALUE (n) && json_node_get_value_type (n) == G_TYPE_INT64;
  if (ok)
    v = json_node_get_int (n);
  if (!ok || v < lo || v > hi)
    {
      config_fail (r, MOROK_IO_ERROR_MALFORMED, "'%s.%s' must be an integer in [%u, %u]", section,
                   key, lo, hi);
      return FALSE;
    }
  *out = (guint)v;
  return TRUE;
}

static gboolean
config_bool (ConfigReader *r, const char *section, const char *key, gboolean *out)
{
  JsonNode *n = config_member (r, section, key);
  if (!n)
    return FALSE;
  if (!JSON_NODE_HOLDS_VALUE (n) || json_node_get_value_type (n) != G_TYPE_BOOLEAN)
    {
      config_fail (r, MOROK_IO_ERROR_MALFORMED, "'%s.%s' must be true or false", section, key);
      return FALSE;
    }
  *out = json_node_get_boolean (n);
  return TRUE;
}

/* TRUE if the string member equals one of the NULL-terminated @choices;
 * *out gets its index. Another string is UNSUPPORTED, naming @why. */
static gboolean
config_choice (ConfigReader *r, const char *section, const char *key, const char *const *choices,
               const char *why, guint *out)
{
  JsonNode *n = config_member (r, section, key);
  if (!n)
    return FALSE;
  if (!JSON_NODE_HOLDS_VALUE (n) || json_node_get_value_type (n) != G_TYPE_STRING)
    {
      config_fail (r, MOROK_IO_ERROR_MALFORMED, "'%s.%s' must be a string", section, key);
      return FALSE;
    }
  const char *s = json_node_get_string (n);
  for (guint i = 0; choices[i]; i++)
    if (strcmp (s, choices[i]) == 0)
      {
        if (out)
          *out = i;
        return TRUE;
      }
  config_fail (r, MOROK_IO_ERROR_UNSUPPORTED, "'%s.%s' is '%s': %s", section, key, s, why);
  return FALSE;
}

#define CHOICES(...) ((const char *const[]){ __VA_ARGS__, NULL })

/* The front-end's tables take about 24 n_fft² bytes (make_frontend_tables):
 * 100 MB at 2048, 12 times upstream's 400 samples at 16 kHz. A file asking
 * more is refused rather than allocated. */
#define GIGAAM_MAX_N_FFT 2048

static gboolean
read_frontend (ConfigReader *r, MorokGigaAmConfig *c)
{
  double power = 0;
  JsonNode *clamp = NULL;
  gboolean ok = config_uint (r, "preprocessor", "sample_rate", 1, 384000, &c->sample_rate)
                && config_uint (r, "preprocessor", "n_fft", 2, GIGAAM_MAX_N_FFT, &c->n_fft)
                && config_uint (r, "preprocessor", "win_length", 1, c->n_fft, &c->win_length)
                && config_uint (r, "preprocessor", "hop_length", 1, 65536, &c->hop_length)
                && config_uint (r, "preprocessor", "n_mels", 1, 4096, &c->n_mels)
                && config_bool (r, "preprocessor", "center", &c->center)
                && (!c->center
                    || config_choice (r, "preprocessor", "pad_mode", CHOICES ("reflect"),
                                      "Morok pads centred frames by reflection only", NULL))
                && config_choice (r, "preprocessor", "window", CHOICES ("hann_periodic"),
                                  "the window must be periodic Hann", NULL)
                && config_number (r, "preprocessor", "power", &power)
                && (clamp = config_member (r, "preprocessor", "log_clamp"));
  if (!ok)
    return FALSE;
  if (power != 2.0)
    {
      config_fail (r, MOROK_IO_ERROR_UNSUPPORTED,
                   "'preprocessor.power' is %g: Morok computes power spectra (2.0) only", power);
      return FALSE;
    }
  JsonArray *a = JSON_NODE_HOLDS_ARRAY (clamp) ? json_node_get_array (clamp) : NULL;
  for (guint i = 0; a && json_array_get_length (a) == 2 && i < 2; i++)
    {
      JsonNode *v = json_array_get_element (a, i);
      GType t = JSON_NODE_HOLDS_VALUE (v) ? json_node_get_value_type (v) : G_TYPE_INVALID;
      if (t != G_TYPE_DOUBLE && t != G_TYPE_INT64)
        a = NULL;
      else
        c->log_clamp[i]
            = t == G_TYPE_INT64 ? (double)json_node_get_int (v) : json_node_get_double (v);
    }
  if (!a || json_array_get_length (a) != 2 || !(c->log_clamp[0] > 0)
      || !(c->log_clamp[1] > c->log_clamp[0]))
    {
      config_fail (r, MOROK_IO_ERROR_MALFORMED,
                   "'preprocessor.log_clamp' must be [lo, hi] with 0 < lo < hi");
      return FALSE;
    }
  return TRUE;
}

static gboolean
read_encoder (ConfigReader *r, MorokGigaAmConfig *c)
{
  guint feat_in, factor, stride, expansion, norm, subsampling;
  gboolean ok
      = config_uint (r, "encoder", "feat_in", 1, 4096, &feat_in)
        && config_uint (r, "encoder", "n_layers", 1, 1024, &c->n_layers)
        && config_uint (r, "encoder", "d_model", 1, 65536, &c->d_model)
        && config_uint (r, "encoder", "n_heads", 1, 1024, &c->n_heads)
        && config_uint (r, "encoder", "ff_expansion_factor", 1, 64, &expansion)
        && config_choice (r, "encoder", "conv_norm_type", CHOICES ("layer_norm", "batch_norm"),
                          "the conv module's norm must be layer_norm or batch_norm", &norm)
        && config_choice (r, "encoder", "subsampling", CHOICES ("conv1d", "conv2d"),
                          "the subsampling must be conv1d (v3) or conv2d (v2)", &subsampling)
        && config_uint (r, "encoder", "subsampling_factor", 1, 64, &factor)
        && config_uint (r, "encoder", "subs_kernel_size", 1, 64, &c->subs_kernel)
        && config_uint (r, "encoder", "subs_stride", 1, 64, &stride)
        && config_uint (r, "encoder", "subs_padding", 0, 64, &c->subs_padding)
        && config_choice (r, "encoder", "self_attention_model", CHOICES ("rotary"),
                          "Morok runs rotary attention only", NULL)
        && config_number (r, "encoder", "rope_base", &c->rope_base)
        && config_number (r, "encoder", "layer_norm_eps", &c->layer_norm_eps)
        && config_number (r, "encoder", "batch_norm_eps", &c->batch_norm_eps)
        && config_uint (r, "head", "num_classes", 2, 1 << 20, &c->n_classes)
        && config_uint (r, "head", "blank_id", 0, 1 << 20, &c->blank_id);
  if (!ok)
    return FALSE;
  c->version = subsampling == 0 ? MOROK_GIGAAM_V3 : MOROK_GIGAAM_V2;
  c->conv_batch_norm = norm == 1;
  c->ff_dim = expansion * c->d_model;
  const char *bad = NULL;
  if (factor != 4 || stride != 2)
    bad = "the subsampling must be two stride-2 layers (factor 4, subs_stride 2)";
  else if (feat_in != c->n_mels)
    bad = "'encoder.feat_in' differs from 'preprocessor.n_mels'";
  else if (c->d_model % c->n_heads || (c->d_model / c->n_heads) % 2)
    bad = "'encoder.d_model' must be n_heads times an even head size";
  else if (c->subs_padding >= c->subs_kernel)
    bad = "'encoder.subs_padding' must be smaller than the kernel";
  else if (!(c->rope_base > 0) || !(c->layer_norm_eps > 0) || !(c->batch_norm_eps > 0))
    bad = "'encoder.rope_base' and the eps values must be positive";
  else if (c->blank_id != c->n_classes - 1)
    bad = "'head.blank_id' must be the last class";
  if (bad)
    {
      config_fail (
          r, factor != 4 || stride != 2 ? MOROK_IO_ERROR_UNSUPPORTED : MOROK_IO_ERROR_MALFORMED,
          "%s", bad);
      return FALSE;
    }
  return TRUE;
}

/* head.type must match model_class; the head reads the encoder's d_model
 * channels (CTC feat_in, RNN-T enc_hidden); an RNN-T head has its
 * predictor's and joint's sizes and upstream's 10 symbols a frame. */
static gboolean
read_head (ConfigReader *r, MorokGigaAmConfig *c)
{
  guint type, head_in, max_symbols = 10;
  gboolean rnnt = c->head == MOROK_GIGAAM_HEAD_RNNT;
  if (!config_choice (r, "head", "type", CHOICES ("ctc", "rnnt"),
                      "the head must be ctc or rnnt", &type))
    return FALSE;
  if ((type == 1) != rnnt)
    {
      config_fail (r, MOROK_IO_ERROR_MALFORMED, "'head.type' differs from 'model_class'");
      return FALSE;
    }
  if (!config_uint (r, "head", rnnt ? "enc_hidden" : "feat_in", 1, 65536, &head_in))
    return FALSE;
  if (head_in != c->d_model)
    {
      config_fail (r, MOROK_IO_ERROR_MALFORMED, "'head.%s' differs from 'encoder.d_model'",
                   rnnt ? "enc_hidden" : "feat_in");
      return FALSE;
    }
  if (!rnnt)
    return TRUE;
  if (!config_uint (r, "head", "pred_hidden", 1, 65536, &c->pred_hidden)
      || !config_uint (r, "head", "pred_rnn_layers", 1, 64, &c->pred_layers)
      || !config_uint (r, "head", "joint_hidden", 1, 65536, &c->joint_hidden)
      || (json_object_has_member (json_object_get_object_member (r->root, "head"),
                                  "max_symbols_per_step")
          && !config_uint (r, "head", "max_symbols_per_step", 1, 1000, &max_symbols)))
    return FALSE;
  if (max_symbols != MOROK_RNNT_MAX_SYMBOLS)
    {
      config_fail (r, MOROK_IO_ERROR_UNSUPPORTED,
                   "'head.max_symbols_per_step' is %u; Morok decodes with upstream's %d",
                   max_symbols, MOROK_RNNT_MAX_SYMBOLS);
      return FALSE;
    }
  return TRUE;
}

/* SentencePiece: vocabulary.piece_types ([n_classes - 1], byte pieces
 * spelled <0xNN>), unk_surface and the normalizer's two flags. */
static gboolean
read_piece_types (ConfigReader *r, MorokGigaAmConfig *c)
{
  static const char *const names[] = { [MOROK_PIECE_NORMAL] = "normal",
                                       [MOROK_PIECE_UNKNOWN] = "unknown",
                                       [MOROK_PIECE_CONTROL] = "control",
                                       [MOROK_PIECE_USER_DEFINED] = "user_defined",
                                       [MOROK_PIECE_UNUSED] = "unused",
                                       [MOROK_PIECE_BYTE] = "byte",
                                       NULL };
  JsonNode *types = config_member (r, "vocabulary", "piece_types");
  JsonNode *unk = config_member (r, "vocabulary", "unk_surface");
  gboolean dummy_prefix, extra_ws;
  if (!types || !unk || !config_bool (r, "vocabulary", "add_dummy_prefix", &dummy_prefix)
      || !config_bool (r, "vocabulary", "remove_extra_whitespaces", &extra_ws))
    return FALSE;
  JsonArray *a = JSON_NODE_HOLDS_ARRAY (types) ? json_node_get_array (types) : NULL;
  if (!a || json_array_get_length (a) != c->n_classes - 1)
    {
      config_fail (r, MOROK_IO_ERROR_MALFORMED,
                   "'vocabulary.piece_types' must be an array of %u strings (head.num_classes - 1)",
                   c->n_classes - 1);
      return FALSE;
    }
  if (!JSON_NODE_HOLDS_VALUE (unk) || json_node_get_value_type (unk) != G_TYPE_STRING)
    {
      config_fail (r, MOROK_IO_ERROR_MALFORMED, "'vocabulary.unk_surface' must be a string");
      return FALSE;
    }
  c->unk_surface = g_strdup (json_node_get_string (unk));
  c->strip_first_space = dummy_prefix || extra_ws;
  c->piece_types = g_new0 (MorokPieceType, c->n_classes - 1);
  for (guint i = 0; i + 1 < c->n_classes; i++)
    {
      JsonNode *n = json_array_get_element (a, i);
      const char *name = JSON_NODE_HOLDS_VALUE (n) && json_node_get_value_type (n) == G_TYPE_STRING
                             ? json_node_get_string (n)
                             : "";
      guint k = 0;
      while (names[k] && strcmp (name, names[k]) != 0)
        k++;
      if (!names[k])
        {
          config_fail (r, MOROK_IO_ERROR_MALFORMED,
                       "'vocabulary.piece_types[%u]' must be normal, unknown, control, "
                       "user_defined, unused or byte",
                       i);
          return FALSE;
        }
      c->piece_types[i] = k;
      if (k == MOROK_PIECE_BYTE && morok_piece_byte (c->tokens[i]) < 0)
        {
          config_fail (r, MOROK_IO_ERROR_MALFORMED,
                       "byte piece %u is '%s', expected <0xNN> (two hex digits)", i, c->tokens[i]);
          return FALSE;
        }
    }
  return TRUE;
}

static gboolean
read_vocabulary (ConfigReader *r, MorokGigaAmConfig *c)
{
  guint type;
  JsonNode *tokens = NULL;
  if (!config_choice (r, "vocabulary", "type", CHOICES ("char", "sentencepiece"),
                      "the vocabulary must be char or sentencepiece", &type)
      || !(tokens = config_member (r, "vocabulary", "tokens")))
    return FALSE;
  c->vocab_type = type == 0 ? MOROK_GIGAAM_VOCAB_CHAR : MOROK_GIGAAM_VOCAB_SENTENCEPIECE;
  JsonArray *a = JSON_NODE_HOLDS_ARRAY (tokens) ? json_node_get_array (tokens) : NULL;
  if (!a || json_array_get_length (a) != c->n_classes - 1)
    {
      config_fail (r, MOROK_IO_ERROR_MALFORMED,
                   "'vocabulary.tokens' must be an array of %u strings (head.num_classes - 1)",
                   c->n_classes - 1);
      return FALSE;
    }
  c->tokens = g_new0 (char *, c->n_classes);
  for (guint i = 0; i + 1 < c->n_classes; i++)
    {
      JsonNode *n = json_array_get_element (a, i);
      if (!JSON_NODE_HOLDS_VALUE (n) || json_node_get_value_type (n) != G_TYPE_STRING)
        {
          config_fail (r, MOROK_IO_ERROR_MALFORMED, "'vocabulary.tokens[%u]' must be a string", i);
          return FALSE;
        }
      c->tokens[i] = g_strdup (json_node_get_string (n));
    }
  return c->vocab_type == MOROK_GIGAAM_VOCAB_CHAR || read_piece_types (r, c);
}

static gboolean
read_config (MorokGigaAm *m, const char *json, GError **error)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (GError) parse_error = NULL;
  if (!json_parser_load_from_data (parser, json, -1, &parse_error)
      || !JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)))
    {
      g_set_error (error, MOROK_IO_ERROR, MOROK_IO_ERROR_MALFORMED,
                   "%s: morok.config is not a JSON object: %s", m->file,
                   parse_error ? parse_error->message : "another JSON value");
      return FALSE;
    }
  ConfigReader r = { m->file, json_node_get_object (json_parser_get_root (parser)), error, FALSE };
  const char *format = json_object_get_string_member_with_default (r.root, "format", "");
  gint64 version = json_object_get_int_member_with_default (r.root, "format_version", 0);
  const char *model_class = json_object_get_string_member_with_default (r.root, "model_class", "");
  if (strcmp (format, "morok-gigaam") != 0 || version != 1)
    {
      config_fail (&r, MOROK_IO_ERROR_UNSUPPORTED,
                   "format '%s' version %" G_GINT64_FORMAT ", expected 'morok-gigaam' version 1",
                   format, version);
      return FALSE;
    }
  if (strcmp (model_class, "ctc") != 0 && strcmp (model_class, "rnnt") != 0)
    {
      config_fail (&r, MOROK_IO_ERROR_UNSUPPORTED,
                   "model_class '%s': Morok runs CTC and RNN-T models only", model_class);
      return FALSE;
    }
  m->config.head = strcmp (model_class, "rnnt") == 0 ? MOROK_GIGAAM_HEAD_RNNT : MOROK_GIGAAM_HEAD_CTC;
  return read_frontend (&r, &m->config) && read_encoder (&r, &m->config)
         && read_head (&r, &m->config) && read_vocabulary (&r, &m->config);
}

/* ---- the tensors ---- */

/* Symbolic sizes of the table below, resolved from the config. */
typedef enum
{
  S_END, /* ends a shape */
  S_1,
  S_D,    /* d_model */
  S_2D,   /* 2 * d_model */
  S_FF,   /* ff_dim */
  S_K,    /* depthwise kernel */
  S_C,    /* classes */
  S_MELS, /* F */
  S_BINS, /* n_fft / 2 + 1 */
  S_WIN,  /* win_length */
  S_SUBS, /* subsampling kernel */
  S_FLAT, /* d * F' (v2: the mel axis after the subsampling) */
  S_H,    /* RNN-T pred_hidden */
  S_4H,   /* 4 * pred_hidden: the LSTM's gates */
  S_J,    /* RNN-T joint_hidden */
} Size;

typedef enum
{
  W_ALL,
  W_V3, /* conv1d subsampling */
  W_V2, /* conv2d subsampling */
  W_BN, /* BatchNorm in the conv module */
  W_CTC,  /* CTC head */
  W_RNNT, /* RNN-T head; "%u" names are per LSTM layer */
} When;

typedef struct
{
  const char *name; /* "%u": one per layer */
  When when;
  Size shape[5];
} WeightSpec;

/* Every tensor the forward pass reads (docs/gigaam-model.md, "Tensor names"). */
static const WeightSpec weight_specs[] = {
  { "preprocessor.featurizer.0.spectrogram.window", W_ALL, { S_WIN } },
  { "preprocessor.featurizer.0.mel_scale.fb", W_ALL, { S_BINS, S_MELS } },
  { "encoder.pre_encode.conv.0.weight", W_V3, { S_D, S_MELS, S_SUBS } },
  { "encoder.pre_encode.conv.0.weight", W_V2, { S_D, S_1, S_SUBS, S_SUBS } },
  { "encoder.pre_encode.conv.0.bias", W_ALL, { S_D } },
  { "encoder.pre_encode.conv.2.weight", W_V3, { S_D, S_D, S_SUBS } },
  { "encoder.pre_encode.conv.2.weight", W_V2, { S_D, S_D, S_SUBS, S_SUBS } },
  { "encoder.pre_encode.conv.2.bias", W_ALL, { S_D } },
  { "encoder.pre_encode.out.weight", W_V2, { S_D, S_FLAT } },
  { "encoder.pre_encode.out.bias", W_V2, { S_D } },
  { "encoder.layers.%u.norm_feed_forward1.weight", W_ALL, { S_D } },
  { "encoder.layers.%u.norm_feed_forward1.bias", W_ALL, { S_D } },
  { "encoder.layers.%u.feed_forward1.linear1.weight", W_ALL, { S_FF, S_D } },
  { "encoder.layers.%u.feed_forward1.linear1.bias", W_ALL, { S_FF } },
  { "encoder.layers.%u.feed_forward1.linear2.weight", W_ALL, { S_D, S_FF } },
  { "encoder.layers.%u.feed_forward1.linear2.bias", W_ALL, { S_D } },
  { "encoder.layers.%u.norm_self_att.weight", W_ALL, { S_D } },
  { "encoder.layers.%u.norm_self_att.bias", W_ALL, { S_D } },
  { "encoder.layers.%u.self_attn.linear_q.weight", W_ALL, { S_D, S_D } },
  { "encoder.layers.%u.self_attn.linear_q.bias", W_ALL, { S_D } },
  { "encoder.layers.%u.self_attn.linear_k.weight", W_ALL, { S_D, S_D } },
  { "encoder.layers.%u.self_attn.linear_k.bias", W_ALL, { S_D } },
  { "encoder.layers.%u.self_attn.linear_v.weight", W_ALL, { S_D, S_D } },
  { "encoder.layers.%u.self_attn.linear_v.bias", W_ALL, { S_D } },
  { "encoder.layers.%u.self_attn.linear_out.weight", W_ALL, { S_D, S_D } },
  { "encoder.layers.%u.self_attn.linear_out.bias", W_ALL, { S_D } },
  { "encoder.layers.%u.norm_conv.weight", W_ALL, { S_D } },
  { "encoder.layers.%u.norm_conv.bias", W_ALL, { S_D } },
  { "encoder.layers.%u.conv.pointwise_conv1.weight", W_ALL, { S_2D, S_D, S_1 } },
  { "encoder.layers.%u.conv.pointwise_conv1.bias", W_ALL, { S_2D } },
  { "encoder.layers.%u.conv.depthwise_conv.weight", W_ALL, { S_D, S_1, S_K } },
  { "encoder.layers.%u.conv.depthwise_conv.bias", W_ALL, { S_D } },
  { "encoder.layers.%u.conv.batch_norm.weight", W_ALL, { S_D } },
  { "encoder.layers.%u.conv.batch_norm.bias", W_ALL, { S_D } },
  { "encoder.layers.%u.conv.batch_norm.running_mean", W_BN, { S_D } },
  { "encoder.layers.%u.conv.batch_norm.running_var", W_BN, { S_D } },
  { "encoder.layers.%u.conv.pointwise_conv2.weight", W_ALL, { S_D, S_D, S_1 } },
  { "encoder.layers.%u.conv.pointwise_conv2.bias", W_ALL, { S_D } },
  { "encoder.layers.%u.norm_feed_forward2.weight", W_ALL, { S_D } },
  { "encoder.layers.%u.norm_feed_forward2.bias", W_ALL, { S_D } },
  { "encoder.layers.%u.feed_forward2.linear1.weight", W_ALL, { S_FF, S_D } },
  { "encoder.layers.%u.feed_forward2.linear1.bias", W_ALL, { S_FF } },
  { "encoder.layers.%u.feed_forward2.linear2.weight", W_ALL, { S_D, S_FF } },
  { "encoder.layers.%u.feed_forward2.linear2.bias", W_ALL, { S_D } },
  { "encoder.layers.%u.norm_out.weight", W_ALL, { S_D } },
  { "encoder.layers.%u.norm_out.bias", W_ALL, { S_D } },
  { "head.decoder_layers.0.weight", W_CTC, { S_C, S_D, S_1 } },
  { "head.decoder_layers.0.bias", W_CTC, { S_C } },
  { "head.decoder.embed.weight", W_RNNT, { S_C, S_H } },
  { "head.decoder.lstm.weight_ih_l%u", W_RNNT, { S_4H, S_H } },
  { "head.decoder.lstm.weight_hh_l%u", W_RNNT, { S_4H, S_H } },
  { "head.decoder.lstm.bias_ih_l%u", W_RNNT, { S_4H } },
  { "head.decoder.lstm.bias_hh_l%u", W_RNNT, { S_4H } },
  { "head.joint.pred.weight", W_RNNT, { S_J, S_H } },
  { "head.joint.pred.bias", W_RNNT, { S_J } },
  { "head.joint.enc.weight", W_RNNT, { S_J, S_D } },
  { "head.joint.enc.bias", W_RNNT, { S_J } },
  { "head.joint.joint_net.1.weight", W_RNNT, { S_C, S_J } },
  { "head.joint.joint_net.1.bias", W_RNNT, { S_C } },
};

/* One stride-2 subsampling layer: L -> floor ((L + 2p - k) / 2) + 1. */
static gint64
subsample_length (const MorokGigaAmConfig *c, gint64 len)
{
  gint64 span = len + 2 * (gint64)c->subs_padding - c->subs_kernel;
  if (len <= 0 || span < 0)
    return 0;
  return span / 2 + 1;
}

static gint64
resolve (const MorokGigaAmConfig *c, Size s)
{
  switch (s)
    {
    case S_1:
      return 1;
    case S_D:
      return c->d_model;
    case S_2D:
      return 2 * (gint64)c->d_model;
    case S_FF:
      return c->ff_dim;
    case S_K:
      return c->conv_kernel;
    case S_C:
      return c->n_classes;
    case S_MELS:
      return c->n_mels;
    case S_BINS:
      return c->n_fft / 2 + 1;
    case S_WIN:
      return c->win_length;
    case S_SUBS:
      return c->subs_kernel;
    case S_FLAT:
      return c->d_model * subsample_length (c, subsample_length (c, c->n_mels));
    case S_H:
      return c->pred_hidden;
    case S_4H:
      return 4 * (gint64)c->pred_hidden;
    case S_J:
      return c->joint_hidden;
    default:
      return -1;
    }
}

static void
weight_free (GigaAmWeight *w)
{
  g_free (w->data);
  g_free (w);
}

static gboolean
read_weight (MorokGigaAm *m, MorokSafetensors *st, const char *name, const Size *shape,
             GError **error)
{
  gint64 dims[4];
  guint rank = 0;
  while (rank < 4 && shape[rank] != S_END)
    {
      dims[rank] = resolve (&m->config, shape[rank]);
      rank++;
    }
  const MorokSafetensor *t = morok_safetensors_get_shaped (st, name, rank, dims, error);
  if (!t)
    return FALSE;
  GigaAmWeight *w = g_new0 (GigaAmWeight, 1);
  w->rank = rank;
  memcpy (w->dims, dims, sizeof dims);
  w->data = morok_safetensor_dup_f32 (t, error);
  if (!w->data || !morok_io_check_finite (m->file, name, w->data, t->n_elements, error))
    {
      weight_free (w);
      return FALSE;
    }
  morok_safetensor_drop (t); /* the copy is the model's: one of them resident */
  g_hash_table_insert (m->weights, g_strdup (name), w);
  return TRUE;
}

/* The subsampling runs channels last (gigaam-encoder.c): each conv weight
 * [o, c, taps...] is stored taps first, [taps..., c, o], so that a run of
 * taps over a channels-last input is one contiguous [taps · c, o] matrix;
 * v2's pre_encode.out reads the conv output flattened as (c, f) upstream
 * and as (f, c) here: W'[o, f·d + c] = W[o, c·F' + f]. */
static void
reorder_conv_weight (GigaAmWeight *w)
{
  gint64 o_n = w->dims[0], c_n = w->dims[1], taps = 1;
  for (guint i = 2; i < w->rank; i++)
    taps *= w->dims[i];
  float *r = g_new (float, o_n *c_n *taps);
  for (gint64 o = 0; o < o_n; o++)
    for (gint64 c = 0; c < c_n; c++)
      for (gint64 k = 0; k < taps; k++)
        r[(k * c_n + c) * o_n + o] = w->data[(o * c_n + c) * taps + k];
  g_free (w->data);
  w->data = r;
  gint64 dims[4];
  for (guint i = 2; i < w->rank; i++)
    dims[i - 2] = w->dims[i];
  dims[w->rank - 2] = c_n;
  dims[w->rank - 1] = o_n;
  memcpy (w->dims, dims, sizeof (gint64) * w->rank);
}

static void
reorder_subsampling_weights (MorokGigaAm *m)
{
  reorder_conv_weight (g_hash_table_lookup (m->weights, "encoder.pre_encode.conv.0.weight"));
  reorder_conv_weight (g_hash_table_lookup (m->weights, "encoder.pre_encode.conv.2.weight"));
  if (m->config.version != MOROK_GIGAAM_V2)
    return;
  GigaAmWeight *w = g_hash_table_lookup (m->weights, "encoder.pre_encode.out.weight");
  gint64 d = m->config.d_model, cols = w->dims[1], f_n = cols / d;
  float *r = g_new (float, d *cols);
  for (gint64 o = 0; o < d; o++)
    for (gint64 ch = 0; ch < d; ch++)
      for (gint64 f = 0; f < f_n; f++)
        r[o * cols + f * d + ch] = w->data[o * cols + ch * f_n + f];
  g_free (w->data);
  w->data = r;
}

static gboolean
read_weights (MorokGigaAm *m, MorokSafetensors *st, GError **error)
{
  MorokGigaAmConfig *c = &m->config;
  /* the depthwise kernel comes from the weights; a config value must agree */
  const MorokSafetensor *dw = morok_safetensors_get_shaped (
      st, "encoder.layers.0.conv.depthwise_conv.weight", 3, (gint64[]){ c->d_model, 1, -1 }, error);
  if (!dw)
    return FALSE;
  c->conv_kernel = (guint)dw->dims[2];
  if (c->conv_kernel % 2 == 0)
    {
      g_set_error (error, MOROK_IO_ERROR, MOROK_IO_ERROR_MALFORMED,
                   "%s: tensor 'encoder.layers.0.conv.depthwise_conv.weight' has an even kernel "
                   "(%u); the conv module needs an odd one",
                   m->file, c->conv_kernel);
      return FALSE;
    }
  for (guint k = 0; k < G_N_ELEMENTS (weight_specs); k++)
    {
      const WeightSpec *s = &weight_specs[k];
      if ((s->when == W_V3 && c->version != MOROK_GIGAAM_V3)
          || (s->when == W_V2 && c->version != MOROK_GIGAAM_V2)
          || (s->when == W_BN && !c->conv_batch_norm)
          || (s->when == W_CTC && c->head != MOROK_GIGAAM_HEAD_CTC)
          || (s->when == W_RNNT && c->head != MOROK_GIGAAM_HEAD_RNNT))
        continue;
      guint n = !strstr (s->name, "%u") ? 1 : s->when == W_RNNT ? c->pred_layers : c->n_layers;
      for (guint i = 0; i < n; i++)
        {
          g_autofree char *name = g_strdup_printf (s->name, i);
          if (!read_weight (m, st, name, s->shape, error))
            return FALSE;
        }
    }
  reorder_subsampling_weights (m);
  return TRUE;
}

/* ---- the front-end's constants ---- */

/* dft [n_fft, 2Q]: column q < Q is w[n] cos (2π q n / N), column Q + q is
 * -w[n] sin (2π q n / N), with the stored window centred in the frame as
 * torch.stft places it. The angles are reduced exactly ((q n) mod N) and
 * evaluated in double. dft_hi + dft_lo is the same basis split for the
 * front-end's exact product (gigaam-frontend.c): dft_hi holds its leading
 * 7 bits (a multiple of 2^-7), dft_lo the rest. mel_fb2 [2Q, F] is the
 * filterbank twice, so that (re | im)² · mel_fb2 = Σ_q (re² + im²) fb[q]. */
static void
make_frontend_tables (MorokGigaAm *m)
{
  const MorokGigaAmConfig *c = &m->config;
  guint n_fft = c->n_fft, q_n = n_fft / 2 + 1, off = (n_fft - c->win_length) / 2;
  const GigaAmWeight *win
      = g_hash_table_lookup (m->weights, "preprocessor.featurizer.0.spectrogram.window");
  const GigaAmWeight *fb
      = g_hash_table_lookup (m->weights, "preprocessor.featurizer.0.mel_scale.fb");
  gsize n = (gsize)n_fft * 2 * q_n;
  m->dft = g_new0 (float, n);
  m->dft_hi = g_new0 (float, n);
  m->dft_lo = g_new0 (float, n);
  for (guint k = 0; k < n_fft; k++)
    {
      double w = k >= off && k < off + c->win_length ? win->data[k - off] : 0.0;
      for (guint q = 0; q < 2 * q_n; q++)
        {
          guint f = q % q_n;
          double a = 2.0 * G_PI * (double)(((guint64)f * k) % n_fft) / n_fft;
          double v = q < q_n ? w * cos (a) : -w * sin (a);
          double hi = trunc (v * 128.0) / 128.0;
          m->dft[(gsize)k * 2 * q_n + q] = (float)v;
          m->dft_hi[(gsize)k * 2 * q_n + q] = (float)hi;
          m->dft_lo[(gsize)k * 2 * q_n + q] = (float)(v - hi);
        }
    }
  m->mel_fb2 = g_new (float, (gsize)2 * q_n * c->n_mels);
  memcpy (m->mel_fb2, fb->data, sizeof (float) * q_n * c->n_mels);
  memcpy (m->mel_fb2 + (gsize)q_n * c->n_mels, fb->data, sizeof (float) * q_n * c->n_mels);
}

/* ---- the model ---- */

MorokGigaAm *
morok_gigaam_load (const char *path, GError **error)
{
  g_return_val_if_fail (path != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);
  g_autoptr (MorokSafetensors) st = morok_safetensors_open (path, error);
  if (!st)
    return NULL;
  g_autoptr (MorokGigaAm) m = g_new0 (MorokGigaAm, 1);
  m->ref_count = 1;
  m->path = g_strdup (path);
  m->file = g_path_get_basename (path);
  m->weights = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify)weight_free);
  m->tables = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  const char *json = morok_safetensors_metadata (st, "morok.config");
  if (!json)
    {
      g_set_error (error, MOROK_IO_ERROR, MOROK_IO_ERROR_NOT_FOUND,
                   "%s: no 'morok.config' in __metadata__: not a Morok GigaAM file "
                   "(convert it with scripts/gigaam/convert.py)",
                   m->file);
      return NULL;
    }
  if (!read_config (m, json, error) || !read_weights (m, st, error))
    return NULL;
  make_frontend_tables (m);
  m->max_batch = 1;
  m->max_samples = (gint64)DEFAULT_MAX_SECONDS * m->config.sample_rate;
  g_debug ("%s: GigaAM %s, %u layers, d_model %u, %u heads, conv kernel %u, %u classes", m->file,
           m->config.version == MOROK_GIGAAM_V3 ? "v3" : "v2", m->config.n_layers,
           m->config.d_model, m->config.n_heads, m->config.conv_kernel, m->config.n_classes);
  return g_steal_pointer (&m);
}

MorokGigaAm *
morok_gigaam_ref (MorokGigaAm *model)
{
  g_return_val_if_fail (model != NULL, NULL);
  g_atomic_int_inc (&model->ref_count);
  return model;
}

void
morok_gigaam_unref (MorokGigaAm *model)
{
  if (!model || !g_atomic_int_dec_and_test (&model->ref_count))
    return;
  g_strfreev (model->config.tokens);
  g_free (model->config.piece_types);
  g_free (model->config.unk_surface);
  g_hash_table_unref (model->weights);
  g_hash_table_unref (model->tables);
  g_free (model->dft);
  g_free (model->dft_hi);
  g_free (model->dft_lo);
  g_free (model->mel_fb2);
  g_free (model->path);
  g_free (model->file);
  g_free (model);
}

const MorokGigaAmConfig *
morok_gigaam_config (const MorokGigaAm *model)
{
  g_return_val_if_fail (model != NULL, NULL);
  return &model->config;
}

const char *
morok_gigaam_path (const MorokGigaAm *model)
{
  g_return_val_if_fail (model != NULL, NULL);
  return model->path;
}

gboolean
morok_gigaam_check_sample_rate (const MorokGigaAm *model, guint rate, GError **error)
{
  g_return_val_if_fail (model != NULL, FALSE);
  if (model->config.sample_rate == rate)
    return TRUE;
  g_set_error (error, MOROK_IO_ERROR, MOROK_IO_ERROR_UNSUPPORTED,
               "%s: 'preprocessor.sample_rate' is %u Hz, the audio is %u Hz", model->file,
               model->config.sample_rate, rate);
  return FALSE;
}

void
morok_gigaam_set_limits (MorokGigaAm *model, guint max_batch, gint64 max_samples)
{
  g_return_if_fail (model != NULL);
  g_return_if_fail (max_batch >= 1 && max_samples >= morok_gigaam_min_samples (model));
  model->max_batch = max_batch;
  model->max_samples = max_samples;
}

guint
morok_gigaam_max_batch (const MorokGigaAm *model)
{
  g_return_val_if_fail (model != NULL, 0);
  return model->max_batch;
}

gint64
morok_gigaam_max_samples (const MorokGigaAm *model)
{
  g_return_val_if_fail (model != NULL, 0);
  return model->max_samples;
}

gint64
morok_gigaam_min_samples (const MorokGigaAm *model)
{
  g_return_val_if_fail (model != NULL, 0);
  return model->config.center ? model->config.n_fft / 2 + 1 : model->config.n_fft;
}

gint64
morok_gigaam_feature_frames (const MorokGigaAm *model, gint64 samples)
{
  g_return_val_if_fail (model != NULL, 0);
  const MorokGigaAmConfig *c = &model->config;
  if (c->center)
    return samples < 0 ? 0 : samples / c->hop_length + 1;
  return samples < c->n_fft ? 0 : (samples - c->n_fft) / c->hop_length + 1;
}

gint64
morok_gigaam_encoded_frames (const MorokGigaAm *model, gint64 samples)
{
  g_return_val_if_fail (model != NULL, 0);
  return gigaam_stage_frames (model, samples, 2);
}

gint64
gigaam_stage_frames (const MorokGigaAm *model, gint64 samples, guint stage)
{
  gint64 t = morok_gigaam_feature_frames (model, samples);
  for (guint i = 0; i < stage; i++)
    t = subsample_length (&model->config, t);
  return t;
}

void
morok_gigaam_vocabulary (const MorokGigaAm *model, MorokVocabulary *out)
{
  g_return_if_fail (model != NULL && out != NULL);
  const MorokGigaAmConfig *c = &model->config;
  *out = (MorokVocabulary){ .tokens = (const char *const *)c->tokens,
                            .n_tokens = c->n_classes - 1,
                            .sentencepiece = c->vocab_type == MOROK_GIGAAM_VOCAB_SENTENCEPIECE,
                            .types = c->piece_types,
                            .unk_surface = c->unk_surface,
                            .strip_first_space = c->strip_first_space };
}

double
morok_gigaam_frame_seconds (const MorokGigaAm *model)
{
  g_return_val_if_fail (model != NULL, 0);
  return 4.0 * model->config.hop_length / model->config.sample_rate;
}

/* ---- for the builders ---- */

/* A plan has packed the weight and reads it nowhere else. */
static void
release_weight (gpointer weight, gconstpointer data)
{
  GigaAmWeight *w = weight;
  if (w->data == data)
    g_clear_pointer (&w->data, g_free);
}

void
morok_gigaam_set_release_packed (MorokGigaAm *model, gboolean release)
{
  g_return_if_fail (model != NULL);
  model->release_packed = release;
}

MorokTensor *
gigaam_weight (MorokGigaAm *model, MorokGraph *g, GError **error, const char *fmt, ...)
{
  if (error && *error)
    return NULL;
  va_list ap;
  va_start (ap, fmt);
  g_autofree char *name = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  GigaAmWeight *w = g_hash_table_lookup (model->weights, name);
  if (!w || !w->data)
    {
      g_set_error (error, MOROK_TENSOR_ERROR, MOROK_TENSOR_ERROR_ARGUMENT,
                   w ? "%s: weight '%s' was freed once a plan had packed it "
                       "(morok_gigaam_set_release_packed): load the model again"
                     : "%s: the model has no weight '%s'",
                   model->file, name);
      return NULL;
    }
  if (!model->release_packed)
    return morok_tensor_weight (g, name, MOROK_DTYPE_F32, w->data, w->dims, w->rank);
  return morok_tensor_weight_with_release (g, name, MOROK_DTYPE_F32, w->data, w->dims, w->rank,
                                           release_weight, w);
}

float *
gigaam_table (MorokGigaAm *model, const char *name, gsize n, gboolean *out_fill)
{
  g_autofree char *key = g_strdup_printf ("%s:%" G_GSIZE_FORMAT, name, n);
  float *t = g_hash_table_lookup (model->tables, key);
  *out_fill = t == NULL;
  if (!t)
    {
      t = g_new0 (float, MAX (n, 1));
      g_hash_table_insert (model->tables, g_steal_pointer (&key), t);
    }
  return t;
}
