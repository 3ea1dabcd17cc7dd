/* SPDX-License-Identifier: MIT */
/* Tests of the safetensors reader: the GigaAM fixtures read back as the
 * scripts that wrote them say (tests/fixtures/gigaam-tiny-expected.json, made
 * by scripts/gigaam/make-fixtures.py), and bad files give a MOROK_IO_ERROR
 * naming the file and tensor, never a crash. */
#include <glib.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>

#include "fixtures.h"
#include "base/morok-dtype.h"
#include "io/safetensors.h"

static char *tmp_dir;

/* Writes u64 header length, header text and data_size bytes 0, 1, 2, ...
 * into tmp_dir/name; header_len < 0 means strlen (header). */
static char *
write_safetensors (const char *name, const char *header, gint64 header_len, gsize data_size)
{
  gsize text_len = strlen (header);
  guint64 len_le = GUINT64_TO_LE (header_len < 0 ? (guint64) text_len : (guint64) header_len);
  g_autoptr (GByteArray) bytes = g_byte_array_new ();
  g_byte_array_append (bytes, (const guint8 *) &len_le, 8);
  g_byte_array_append (bytes, (const guint8 *) header, text_len);
  for (gsize i = 0; i < data_size; i++)
    {
      guint8 b = (guint8) i;
      g_byte_array_append (bytes, &b, 1);
    }
  char *path = g_build_filename (tmp_dir, name, NULL);
  g_assert_true (g_file_set_contents (path, (const char *) bytes->data, bytes->len, NULL));
  return path;
}

/* ---- fixtures ---- */

static void
check_expected_tensor (MorokSafetensors *st, JsonObject *want)
{
  const char *name = json_object_get_string_member (want, "name");
  const MorokSafetensor *t = morok_safetensors_find (st, name);
  g_assert_nonnull (t);
  g_test_message ("%s: %s", morok_safetensors_path (st), name);
  g_assert_cmpstr (morok_safetensor_dtype_name (t->dtype), ==,
                   json_object_get_string_member (want, "dtype"));
  JsonArray *shape = json_object_get_array_member (want, "shape");
  g_assert_cmpuint (t->rank, ==, json_array_get_length (shape));
  gint64 n = 1;
  for (guint i = 0; i < t->rank; i++)
    {
      g_assert_cmpint (t->dims[i], ==, json_array_get_int_element (shape, i));
      n *= t->dims[i];
    }
  g_assert_cmpint (t->n_elements, ==, n);
  g_assert_cmpuint (t->n_bytes, ==, n * morok_safetensor_dtype_size (t->dtype));

  JsonArray *first = json_object_get_array_member (want, "first");
  if (morok_safetensor_dtype_is_float (t->dtype))
    {
      g_autoptr (GError) error = NULL;
      g_autofree float *values = morok_safetensor_dup_f32 (t, &error);
      g_assert_no_error (error);
      /* the expected values are the stored ones, printed as doubles: exact */
      for (guint i = 0; i < json_array_get_length (first); i++)
        g_assert_cmpfloat (values[i], ==, (float) json_array_get_double_element (first, i));
      double sum = 0, abs_sum = 0;
      for (gint64 i = 0; i < n; i++)
        {
          sum += values[i];
          abs_sum += fabs (values[i]);
        }
      double want_abs = json_object_get_double_member (want, "abs_sum");
      g_assert_cmpfloat_with_epsilon (abs_sum, want_abs, 1e-9 * want_abs + 1e-12);
      g_assert_cmpfloat_with_epsilon (sum, json_object_get_double_member (want, "sum"),
                                      1e-9 * want_abs + 1e-12);
    }
  else
    {
      g_assert_true (t->dtype == MOROK_SAFETENSOR_DTYPE_I64);
      gint64 sum = 0;
      for (gint64 i = 0; i < n; i++)
        {
          gint64 v;
          memcpy (&v, (const guint8 *) t->data + 8 * i, 8);
          v = GINT64_FROM_LE (v);
          if (i < json_array_get_length (first))
            g_assert_cmpint (v, ==, json_array_get_int_element (first, i));
          sum += v;
        }
      g_assert_cmpint (sum, ==, json_object_get_int_member (want, "sum"));
    }
}

/* Every fixture file has the tensors, shapes, values and metadata that
 * make-fixtures.py printed into gigaam-tiny-expected.json. */
static void
test_fixtures_match_expected (void)
{
  g_autofree char *expected_path = fixture_path ("gigaam-tiny-expected.json");
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (GError) error = NULL;
  g_assert_true (json_parser_load_from_file (parser, expected_path, &error));
  JsonObject *files = json_node_get_object (json_parser_get_root (parser));
  g_autoptr (GList) names = json_object_get_members (files);
  g_assert_cmpuint (g_list_length (names), ==, 5);
  for (GList *l = names; l; l = l->next)
    {
      JsonObject *want = json_object_get_object_member (files, l->data);
      g_autofree char *path = fixture_path (l->data);
      g_autoptr (MorokSafetensors) st = morok_safetensors_open (path, &error);
      g_assert_no_error (error);
      g_assert_cmpuint (morok_safetensors_n_tensors (st), ==,
                        json_object_get_int_member (want, "n_tensors"));
      JsonObject *meta = json_object_get_object_member (want, "metadata");
      g_autoptr (GList) keys = json_object_get_members (meta);
      for (GList *k = keys; k; k = k->next)
        g_assert_cmpstr (morok_safetensors_metadata (st, k->data), ==,
                         json_object_get_string_member (meta, k->data));
      JsonArray *tensors = json_object_get_array_member (want, "tensors");
      for (guint i = 0; i < json_array_get_length (tensors); i++)
        check_expected_tensor (st, json_array_get_object_element (tensors, i));
    }
}

/* The model files carry their config as JSON under morok.config, and it
 * agrees with the weights' shapes (d_model, layers, kernel, classes). */
static void
test_fixtures_config_matches_weights (gconstpointer data)
{
  const char *version = data;
  g_autofree char *name = g_strdup_printf ("gigaam-%s-tiny.safetensors", version);
  g_autofree char *path = fixture_path (name);
  g_autoptr (GError) error = NULL;
  g_autoptr (MorokSafetensors) st = morok_safetensors_open (path, &error);
  g_assert_no_error (error);
  const char *text = morok_safetensors_metadata (st, "morok.config");
  g_assert_nonnull (text);
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_assert_true (json_parser_load_from_data (parser, text, -1, &error));
  JsonObject *cfg = json_node_get_object (json_parser_get_root (parser));
  g_assert_cmpstr (json_object_get_string_member (cfg, "format"), ==, "morok-gigaam");
  JsonObject *enc = json_object_get_object_member (cfg, "encoder");
  gint64 d = json_object_get_int_member (enc, "d_model");
  gint64 k = json_object_get_int_member (enc, "conv_kernel_size");
  gint64 classes
      = json_object_get_int_member (json_object_get_object_member (cfg, "head"), "num_classes");
  JsonObject *vocab = json_object_get_object_member (cfg, "vocabulary");
  g_assert_cmpint (d, ==, 64);
  g_assert_cmpint (json_object_get_int_member (enc, "n_layers"), ==, 2);
  g_assert_cmpint (k, ==, strcmp (version, "v3") == 0 ? 5 : 31);
  g_assert_cmpint (classes, ==, 34);
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (vocab, "tokens")), ==,
                    classes - 1);

  gint64 depthwise[] = { d, 1, k };
  gint64 ff1[] = { 4 * d, d };
  gint64 head[] = { classes, d, 1 };
  g_assert_nonnull (morok_safetensors_get_shaped (st, "encoder.layers.1.conv.depthwise_conv.weight",
                                                  3, depthwise, &error));
  g_assert_nonnull (morok_safetensors_get_shaped (
      st, "encoder.layers.0.feed_forward1.linear1.weight", 2, ff1, &error));
  g_assert_nonnull (
      morok_safetensors_get_shaped (st, "head.decoder_layers.0.weight", 3, head, &error));
  g_assert_no_error (error);
}

/* Asking for the wrong shape, or a missing tensor, names file and tensor. */
static void
test_get_reports_shape_and_absence (void)
{
  g_autofree char *path = fixture_path ("gigaam-v3-tiny.safetensors");
  g_autoptr (GError) error = NULL;
  g_autoptr (MorokSafetensors) st = morok_safetensors_open (path, &error);
  g_assert_no_error (error);

  gint64 want[] = { 128, -1, 5 };
  g_assert_null (
      morok_safetensors_get_shaped (st, "encoder.pre_encode.conv.0.weight", 3, want, &error));
  g_assert_error (error, MOROK_IO_ERROR, MOROK_IO_ERROR_MALFORMED);
  g_assert_cmpstr (error->message, ==,
                   "gigaam-v3-tiny.safetensors: tensor 'encoder.pre_encode.conv.0.weight' is "
                   "[64,64,5], expected [128,-1,5]");
  g_clear_error (&error);

  g_assert_null (morok_safetensors_find (st, "encoder.layers.2.norm_out.weight"));
  g_assert_null (morok_safetensors_get (st, "encoder.layers.2.norm_out.weight", &error));
  g_assert_error (error, MOROK_IO_ERROR, MOROK_IO_ERROR_NOT_FOUND);
  g_assert_nonnull (strstr (error->message, "'encoder.layers.2.norm_out.weight'"));
}

/* The usage example at the top of safetensors.h, as written there. */
static gboolean
header_example (const char *path)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (MorokSafetensors) st = morok_safetensors_open (path, &error);
  if (!st)
    return FALSE;
  const MorokSafetensor *w = morok_safetensors_get (st, "head.decoder_layers.0.weight", &error);
  g_autofree float *wf = w ? morok_safetensor_dup_f32 (w, &error) : NULL;
  if (!wf)
    return FALSE;
  const char *config = morok_safetensors_metadata (st, "morok.config");
  for (guint i = 0; i < morok_safetensors_n_tensors (st); i++)
    g_test_message ("%s", morok_safetensors_nth (st, i)->name);
  return config != NULL;
}

/* The header's usage example runs on a fixture. */
static void
test_header_example_runs (void)
{
  g_autofree char *path = fixture_path ("gigaam-v3-tiny.safetensors");
  g_assert_true (header_example (path));
}

/* ---- conversions ---- */

/* f16 and bf16 bit patterns convert to the float they denote, including
 * subnormals, signed zero, infinities and NaN. */
static void
test_half_conversions (void)
{
  static const struct
  {
    guint16 bits;
    float value;
  } f16[] = {
    { 0x0000, 0.0f },
    { 0x3c00, 1.0f },
    { 0xc000, -2.0f },
    { 0x3555, 0x1.554p-2f },  /* 0.333 rounded */
    { 0x7bff, 65504.0f },     /* largest finite */
    { 0x0400, 0x1p-14f },     /* smallest normal */
    { 0x0001, 0x1p-24f },     /* smallest subnormal */
    { 0x03ff, 0x1.ff8p-15f }, /* largest subnormal */
    { 0x8001, -0x1p-24f },
    { 0x7c00, INFINITY },
    { 0xfc00, -INFINITY },
  }, bf16[] = {
    { 0x3f80, 1.0f },
    { 0xc049, -3.140625f },
    { 0x0001, 0x1p-133f }, /* smallest subnormal */
    { 0x7f80, INFINITY },
  };
  for (guint i = 0; i < G_N_ELEMENTS (f16); i++)
    g_assert_cmpfloat (morok_f16_to_f32 (f16[i].bits), ==, f16[i].value);
  for (guint i = 0; i < G_N_ELEMENTS (bf16); i++)
    g_assert_cmpfloat (morok_bf16_to_f32 (bf16[i].bits), ==, bf16[i].value);
  g_assert_true (signbit (morok_f16_to_f32 (0x8000)) && morok_f16_to_f32 (0x8000) == 0.0f);
  g_assert_true (isnan (morok_f16_to_f32 (0x7e00)) && isnan (morok_bf16_to_f32 (0x7fc0)));
}

/* A small hand-made file (unaligned data, a scalar, an empty tensor, a gap)
 * reads back: order by offset, dims, values, metadata. */
static void
test_open_reads_hand_made_file (void)
{
  /* data: f32 {1.5, -2} | f16 {1, -4} | bf16 {1.5, 3.140625} | i64 12345 | 4-byte gap | f32 7 */
  static const guint8 data[] = {
    0x00, 0x00, 0xc0, 0x3f, 0x00, 0x00, 0x00, 0xc0, 0x00, 0x3c, 0x00, 0xc4, 0xc0, 0x3f, 0x49, 0x40,
    0x39, 0x30, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0xe0, 0x40,
  };
  const char *header = "{\"__metadata__\":{\"k\":\"v\",\"a\":\"b\"},"
                       "\"last\":{\"dtype\":\"F32\",\"shape\":[],\"data_offsets\":[28,32]},"
                       "\"bf16\":{\"dtype\":\"BF16\",\"shape\":[1,2],\"data_offsets\":[12,16]},"
                       "\"f32\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                       "\"i64\":{\"dtype\":\"I64\",\"shape\":[],\"data_offsets\":[16,24]},"
                       "\"empty\":{\"dtype\":\"F32\",\"shape\":[0,3],\"data_offsets\":[32,32]},"
                       "\"f16\":{\"dtype\":\"F16\",\"shape\":[2],\"data_offsets\":[8,12]}}";
  g_autofree char *path = write_safetensors ("good.safetensors", header, -1, 0);
  {
    g_autoptr (GByteArray) bytes = g_byte_array_new ();
    g_autofree char *text = NULL;
    gsize len;
    g_assert_true (g_file_get_contents (path, &text, &len, NULL));
    g_byte_array_append (bytes, (const guint8 *) text, len);
    g_byte_array_append (bytes, data, sizeof data);
    g_assert_true (g_file_set_contents (path, (const char *) bytes->data, bytes->len, NULL));
  }
  g_autoptr (GError) error = NULL;
  g_autoptr (MorokSafetensors) st = morok_safetensors_open (path, &error);
  g_assert_no_error (error);

  static const char *const order[] = { "f32", "f16", "bf16", "i64", "last", "empty" };
  g_assert_cmpuint (morok_safetensors_n_tensors (st), ==, G_N_ELEMENTS (order));
  for (guint i = 0; i < G_N_ELEMENTS (order); i++)
    {
      const MorokSafetensor *t = morok_safetensors_nth (st, i);
      g_assert_cmpstr (t->name, ==, order[i]);
      g_assert_true (morok_safetensors_find (st, order[i]) == t);
      g_assert_cmpstr (t->file, ==, "good.safetensors");
    }
  float v[2];
  const MorokSafetensor *t = morok_safetensors_find (st, "f32");
  g_assert_true (morok_safetensor_read_f32 (t, v, 2, &error));
  g_assert_cmpfloat (v[0], ==, 1.5f);
  g_assert_cmpfloat (v[1], ==, -2.0f);
  t = morok_safetensors_find (st, "f16");
  g_assert_true (morok_safetensor_read_f32 (t, v, 2, &error));
  g_assert_cmpfloat (v[0], ==, 1.0f);
  g_assert_cmpfloat (v[1], ==, -4.0f);
  t = morok_safetensors_find (st, "bf16");
  g_assert_cmpuint (t->rank, ==, 2);
  g_assert_cmpint (t->dims[0], ==, 1);
  g_assert_cmpint (t->dims[1], ==, 2);
  g_assert_true (morok_safetensor_read_f32 (t, v, 2, &error));
  g_assert_cmpfloat (v[0], ==, 1.5f);
  g_assert_cmpfloat (v[1], ==, 3.140625f);
  t = morok_safetensors_find (st, "last");
  g_assert_cmpuint (t->rank, ==, 0);
  g_assert_cmpint (t->n_elements, ==, 1);
  g_assert_true (morok_safetensor_read_f32 (t, v, 1, &error));
  g_assert_cmpfloat (v[0], ==, 7.0f);
  t = morok_safetensors_find (st, "empty");
  g_assert_cmpint (t->n_elements, ==, 0);
  g_autofree float *none = morok_safetensor_dup_f32 (t, &error);
  g_assert_nonnull (none);

  t = morok_safetensors_find (st, "i64");
  gint64 i64;
  memcpy (&i64, t->data, 8);
  g_assert_cmpint (GINT64_FROM_LE (i64), ==, 12345);
  g_assert_false (morok_safetensor_read_f32 (t, v, 1, &error));
  g_assert_error (error, MOROK_IO_ERROR, MOROK_IO_ERROR_UNSUPPORTED);
  g_assert_cmpstr (error->message, ==,
                   "good.safetensors: tensor 'i64': dtype I64 does not convert to f32");

  g_autofree const char **keys = morok_safetensors_metadata_keys (st);
  g_assert_cmpstr (keys[0], ==, "a");
  g_assert_cmpstr (keys[1], ==, "k");
  g_assert_null (keys[2]);
  g_assert_cmpstr (morok_safetensors_metadata (st, "k"), ==, "v");
  g_assert_null (morok_safetensors_metadata (st, "morok.config"));
}

/* ---- bad files ---- */

typedef struct
{
  const char *path;   /* test path under /safetensors/open/refuses/ */
  const char *header; /* JSON text after the length, or NULL: a file of header_len zeros */
  gint64 header_len;  /* the stated length; -1: strlen (header) */
  gsize data_size;    /* bytes after the header */
  MorokIoError code;
  const char *message; /* expected part of the message */
} BadFile;

#define T(name, dtype, shape, offsets)                                                             \
  "\"" name "\":{\"dtype\":\"" dtype "\",\"shape\":" shape ",\"data_offsets\":" offsets "}"

static const BadFile bad_files[] = {
  { "empty-file", NULL, 0, 0, MOROK_IO_ERROR_TRUNCATED,
    "bad.safetensors: 0 bytes, shorter than the 8-byte header length" },
  { "five-bytes", NULL, 5, 0, MOROK_IO_ERROR_TRUNCATED, "5 bytes, shorter than" },
  { "header-past-end", "{}", 1000, 0, MOROK_IO_ERROR_TRUNCATED,
    "header length 1000 past end of file (10 bytes)" },
  { "absurd-header-length", "{}", G_MAXINT64, 0, MOROK_IO_ERROR_MALFORMED, "is absurd" },
  { "empty-header", "", -1, 0, MOROK_IO_ERROR_MALFORMED, "header is not" },
  { "bad-json", "{\"w\": {\"dtype\": ", -1, 0, MOROK_IO_ERROR_MALFORMED,
    "header is not valid JSON" },
  { "json-array", "[1, 2]", -1, 0, MOROK_IO_ERROR_MALFORMED, "header is not a JSON object" },
  { "entry-not-object", "{\"w\": 3}", -1, 0, MOROK_IO_ERROR_MALFORMED,
    "tensor 'w': entry is not a JSON object" },
  { "no-dtype", "{\"w\":{\"shape\":[1],\"data_offsets\":[0,4]}}", -1, 4, MOROK_IO_ERROR_MALFORMED,
    "tensor 'w': no dtype" },
  { "dtype-not-string", "{\"w\":{\"dtype\":4,\"shape\":[1],\"data_offsets\":[0,4]}}", -1, 4,
    MOROK_IO_ERROR_MALFORMED, "tensor 'w': dtype is not a string" },
  { "unknown-dtype", "{" T ("w", "F8_E4M3", "[4]", "[0,4]") "}", -1, 4, MOROK_IO_ERROR_UNSUPPORTED,
    "tensor 'w': dtype 'F8_E4M3' is not supported" },
  { "negative-dim", "{" T ("w", "F32", "[-1]", "[0,4]") "}", -1, 4, MOROK_IO_ERROR_MALFORMED,
    "tensor 'w': shape entry 0 is not an integer >= 0" },
  { "fractional-dim", "{" T ("w", "F32", "[1.5]", "[0,4]") "}", -1, 4, MOROK_IO_ERROR_MALFORMED,
    "shape entry 0" },
  { "shape-not-array", "{" T ("w", "F32", "\"1\"", "[0,4]") "}", -1, 4, MOROK_IO_ERROR_MALFORMED,
    "tensor 'w': shape is not an array" },
  { "rank-nine", "{" T ("w", "F32", "[1,1,1,1,1,1,1,1,1]", "[0,4]") "}", -1, 4,
    MOROK_IO_ERROR_MALFORMED, "rank 9 above the limit 8" },
  { "one-offset", "{" T ("w", "F32", "[1]", "[0]") "}", -1, 4, MOROK_IO_ERROR_MALFORMED,
    "data_offsets is not two integers" },
  { "reversed-offsets", "{" T ("w", "F32", "[1]", "[4,0]") "}", -1, 4, MOROK_IO_ERROR_MALFORMED,
    "data_offsets [4, 0] end before they begin" },
  { "offsets-past-end", "{" T ("encoder.layers.0.norm_out.weight", "F32", "[16]", "[0,64]") "}", -1,
    16, MOROK_IO_ERROR_TRUNCATED,
    "bad.safetensors: tensor 'encoder.layers.0.norm_out.weight': data_offsets [0, 64] past end "
    "of file (16 bytes of data)" },
  { "huge-offsets", "{" T ("w", "F32", "[1]", "[18446744073709551612,18446744073709551616]") "}",
    -1, 4, MOROK_IO_ERROR_MALFORMED, "" },
  { "size-mismatch", "{" T ("w", "F32", "[3]", "[0,8]") "}", -1, 8, MOROK_IO_ERROR_MALFORMED,
    "tensor 'w': shape [3] of F32 needs 12 bytes, data_offsets [0, 8] hold 8" },
  { "size-overflow", "{" T ("w", "F32", "[4611686018427387904,4]", "[0,8]") "}", -1, 8,
    MOROK_IO_ERROR_MALFORMED, "needs more than 2^64 bytes" },
  { "overlap", "{" T ("a", "F32", "[2]", "[0,8]") "," T ("b", "F32", "[2]", "[4,12]") "}", -1, 12,
    MOROK_IO_ERROR_MALFORMED, "tensor 'b': data_offsets [4, 12] overlap tensor 'a' [0, 8]" },
  { "same-span", "{" T ("a", "I32", "[1]", "[0,4]") "," T ("b", "F32", "[1]", "[0,4]") "}", -1, 4,
    MOROK_IO_ERROR_MALFORMED, "overlap" },
  { "metadata-not-object", "{\"__metadata__\":[\"a\"]}", -1, 0, MOROK_IO_ERROR_MALFORMED,
    "__metadata__ is not a JSON object" },
  { "metadata-not-string", "{\"__metadata__\":{\"n\":3}}", -1, 0, MOROK_IO_ERROR_MALFORMED,
    "__metadata__ 'n' is not a string" },
};

#undef T

/* Each bad file is refused with its error code and a message that names the
 * file and the culprit. */
static void
test_open_refuses (gconstpointer data)
{
  const BadFile *bad = data;
  g_autofree char *path = NULL;
  if (bad->header)
    path = write_safetensors ("bad.safetensors", bad->header, bad->header_len, bad->data_size);
  else
    {
      path = g_build_filename (tmp_dir, "bad.safetensors", NULL);
      g_autofree char *zeros = g_malloc0 (bad->header_len + 1);
      g_assert_true (g_file_set_contents (path, zeros, bad->header_len, NULL));
    }
  g_autoptr (GError) error = NULL;
  g_autoptr (MorokSafetensors) st = morok_safetensors_open (path, &error);
  g_assert_null (st);
  g_assert_error (error, MOROK_IO_ERROR, (gint) bad->code);
  g_test_message ("%s", error->message);
  g_assert_true (g_str_has_prefix (error->message, "bad.safetensors: "));
  g_assert_nonnull (strstr (error->message, bad->message));
}

/* F32 data aligned for floats is handed out in place (the mapping's own
 * bytes, the values read_f32 gives); f32 data 2 bytes off and other dtypes
 * are not, and dropping a tensor's or the file's pages keeps the values
 * readable (they come back from the file). */
static void
test_f32_in_place (void)
{
  /* data (8-byte aligned: the header is padded): f32 [4] at 0, f16 [1] at
   * 16, f32 [1] at 18 (2 bytes off) */
  static const char header[] = "{\"a\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]},"
                               "\"h\":{\"dtype\":\"F16\",\"shape\":[1],\"data_offsets\":[16,18]},"
                               "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[18,22]}}";
  g_autoptr (GString) padded = g_string_new (header);
  while ((8 + padded->len) % 8)
    g_string_append_c (padded, ' ');
  g_autofree char *path = write_safetensors ("in-place.safetensors", padded->str, -1, 22);
  g_autoptr (GError) error = NULL;
  g_autoptr (MorokSafetensors) st = morok_safetensors_open (path, &error);
  g_assert_no_error (error);
  const MorokSafetensor *a = morok_safetensors_find (st, "a");
  const float *in_place = morok_safetensor_f32_in_place (a);
  g_assert_true (in_place == a->data);
  float want[4];
  g_assert_true (morok_safetensor_read_f32 (a, want, 4, &error));
  morok_safetensor_drop (a);
  morok_safetensors_drop (st);
  g_assert_cmpmem (in_place, sizeof want, want, sizeof want); /* bytes 0, 1, 2, ... */
  g_assert_null (morok_safetensor_f32_in_place (morok_safetensors_find (st, "h")));
  g_assert_null (morok_safetensor_f32_in_place (morok_safetensors_find (st, "b")));
}

/* A missing file or a directory is MOROK_IO_ERROR_OPEN. */
static void
test_open_refuses_unreadable (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *missing = g_build_filename (tmp_dir, "missing.safetensors", NULL);
  g_assert_null (morok_safetensors_open (missing, &error));
  g_assert_error (error, MOROK_IO_ERROR, MOROK_IO_ERROR_OPEN);
  g_assert_nonnull (strstr (error->message, "missing.safetensors"));
  g_clear_error (&error);
  g_assert_null (morok_safetensors_open (tmp_dir, &error));
  g_assert_error (error, MOROK_IO_ERROR, MOROK_IO_ERROR_OPEN);
}

/* Every prefix of a real file, and the file with random bytes of its header
 * overwritten, either opens or fails with a MOROK_IO_ERROR: never a crash
 * (run it under valgrind to see no invalid read either). */
static void
test_open_survives_damage (void)
{
  g_autofree char *fixture = fixture_path ("gigaam-v3-tiny.safetensors");
  g_autofree char *text = NULL;
  gsize size;
  g_assert_true (g_file_get_contents (fixture, &text, &size, NULL));
  guint64 header_len;
  memcpy (&header_len, text, 8);
  header_len = GUINT64_FROM_LE (header_len);
  g_assert_cmpuint (header_len + 8, <, size);
  g_autofree char *path = g_build_filename (tmp_dir, "damaged.safetensors", NULL);
  g_autofree char *copy = g_memdup2 (text, size);
  gsize cuts[]
      = { 1, 7, 8, 9, 100, header_len + 7, header_len + 8, header_len + 9, size / 2, size - 1 };
  for (guint i = 0; i < G_N_ELEMENTS (cuts); i++)
    {
      g_autoptr (GError) error = NULL;
      g_assert_true (g_file_set_contents (path, text, cuts[i], NULL));
      g_assert_null (morok_safetensors_open (path, &error));
      g_assert_nonnull (error);
      g_assert_true (error->domain == MOROK_IO_ERROR);
    }
  GRand *rand = g_rand_new_with_seed (20240601);
  guint opened = 0;
  for (guint i = 0; i < 60; i++)
    {
      memcpy (copy, text, size);
      for (guint j = 0; j < 1 + i % 4; j++)
        copy[g_rand_int_range (rand, 0, (gint32) header_len + 8)]
            = (char) g_rand_int_range (rand, 0, 256);
      g_autoptr (GError) error = NULL;
      g_assert_true (g_file_set_contents (path, copy, size, NULL));
      g_autoptr (MorokSafetensors) st = morok_safetensors_open (path, &error);
      g_assert_true ((st != NULL) != (error != NULL));
      if (error)
        g_assert_true (error->domain == MOROK_IO_ERROR);
      opened += st != NULL;
    }
  g_rand_free (rand);
  g_test_message ("%u of 60 damaged headers still opened", opened);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  tmp_dir = g_dir_make_tmp ("morok-safetensors-XXXXXX", NULL);
  g_assert_nonnull (tmp_dir);

  g_test_add_func ("/safetensors/fixtures/match-expected", test_fixtures_match_expected);
  g_test_add_data_func ("/safetensors/fixtures/v3-config-matches-weights", "v3",
                        test_fixtures_config_matches_weights);
  g_test_add_data_func ("/safetensors/fixtures/v2-config-matches-weights", "v2",
                        test_fixtures_config_matches_weights);
  g_test_add_func ("/safetensors/get/reports-shape-and-absence",
                   test_get_reports_shape_and_absence);
  g_test_add_func ("/safetensors/example/header-usage-runs", test_header_example_runs);
  g_test_add_func ("/safetensors/f32/half-conversions", test_half_conversions);
  g_test_add_func ("/safetensors/open/reads-hand-made-file", test_open_reads_hand_made_file);
  g_test_add_func ("/safetensors/f32/in-place", test_f32_in_place);
  for (guint i = 0; i < G_N_ELEMENTS (bad_files); i++)
    {
      g_autofree char *name = g_strdup_printf ("/safetensors/open/refuses/%s", bad_files[i].path);
      g_test_add_data_func (name, &bad_files[i], test_open_refuses);
    }
  g_test_add_func ("/safetensors/open/refuses-unreadable", test_open_refuses_unreadable);
  g_test_add_func ("/safetensors/open/survives-damage", test_open_survives_damage);

  int status = g_test_run ();
  g_autoptr (GDir) dir = g_dir_open (tmp_dir, 0, NULL);
  for (const char *name; dir && (name = g_dir_read_name (dir));)
    {
      g_autofree char *p = g_build_filename (tmp_dir, name, NULL);
      g_unlink (p);
    }
  g_rmdir (tmp_dir);
  g_free (tmp_dir);
  return status;
}
