/* SPDX-License-Identifier: MIT */
/* A GigaAM file's "morok.config" (docs/gigaam-model.md): the front-end,
 * encoder and head sizes, the vocabulary with its SentencePiece piece
 * types; every field checked, a bad one a MOROK_IO_ERROR naming the file
 * and the field. */
#define G_LOG_DOMAIN "morok-models"
#include "models/gigaam-private.h"

#include <json-glib/json-glib.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "io/morok-io.h"

/* ---- the config ---- */

/* Reads members of "morok.config"; the first failure is kept in error and
 * every later read returns FALSE, so a whole section reads as one && chain. */
typedef struct
{
  const char *file;
  const char *what; /* "morok.config", or a folder's "config.json" it was made from */
  JsonObject *root;
  GError **error; /* may be NULL: callers need not ask for the message */
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
  g_set_error (r->error, MOROK_IO_ERROR, code, "%s: %s: %s", r->file, r->what, msg);
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
  *out = t == G_TYPE_INT64 ? (double) json_node_get_int (n) : json_node_get_double (n);
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
  *out = (guint) v;
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
            = t == G_TYPE_INT64 ? (double) json_node_get_int (v) : json_node_get_double (v);
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
  if (!config_choice (r, "head", "type", CHOICES ("ctc", "rnnt"), "the head must be ctc or rnnt",
                      &type))
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

gboolean
gigaam_read_config (MorokGigaAm *m, const char *json, GError **error)
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
  ConfigReader r = { m->file, m->folder ? "config.json" : "morok.config",
                     json_node_get_object (json_parser_get_root (parser)), error, FALSE };
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
  m->config.head
      = strcmp (model_class, "rnnt") == 0 ? MOROK_GIGAAM_HEAD_RNNT : MOROK_GIGAAM_HEAD_CTC;
  return read_frontend (&r, &m->config) && read_encoder (&r, &m->config)
         && read_head (&r, &m->config) && read_vocabulary (&r, &m->config);
}
