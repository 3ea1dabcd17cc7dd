/* SPDX-License-Identifier: MIT */
/* Tests of core/io/onnx-reader on malformed input: every truncation, seeded
 * bit flips and handmade bad buffers must give a model or a MOROK_IO_ERROR
 * naming the file, never a crash or a read outside the data. Inputs are the
 * hand-built tests/fixtures/onnx-tiny.onnx and, when fetched, the Silero
 * files in $MOROK_MODEL_DIR. Under valgrind:
 *   meson test -C build --setup valgrind onnx-malformed
 */
#include "io/onnx-reader.h"
#include "onnx-test-util.h"

#include <string.h>

/* Parses a buffer that may be malformed: it must give a model or an error
 * in MOROK_IO_ERROR that names `name`, never both or neither. Returns TRUE
 * when it parsed. */
static gboolean
parse_or_fail_cleanly (const guint8 *data, gsize size, const char *name)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (MorokOnnxModel) model = morok_onnx_model_load_from_data (data, size, name, &error);

  if (model != NULL)
    {
      g_assert_null (error);
      /* Whatever parsed must be walkable and convertible without crashing. */
      guint n;
      const MorokOnnxTensor *const *tensors = morok_onnx_model_tensors (model, &n);
      for (guint k = 0; k < n; k++)
        {
          g_autoptr (GError) conv_error = NULL;
          g_autofree float *values = morok_onnx_tensor_to_f32 (tensors[k], NULL, &conv_error);
          g_assert_true ((values == NULL) == (conv_error != NULL));
        }
      return TRUE;
    }
  g_assert_nonnull (error);
  g_assert_true (error->domain == MOROK_IO_ERROR);
  g_assert_true (g_str_has_prefix (error->message, name));
  return FALSE;
}

/* --- Truncations and bit flips ------------------------------------------- */

/* Every prefix of the first 4 KB of v4 and v5, and of the whole hand-built
 * model, parses or fails cleanly. */
static void
test_malformed_every_truncation (void)
{
  static const char *const versions[] = { "v4", "v5" };
  g_autofree char *tiny = g_test_build_filename (G_TEST_DIST, "fixtures", "onnx-tiny.onnx", NULL);
  g_autofree char *tiny_data = NULL;
  gsize tiny_len;

  g_assert_true (g_file_get_contents (tiny, &tiny_data, &tiny_len, NULL));
  for (gsize len = 0; len <= tiny_len; len++)
    parse_or_fail_cleanly ((const guint8 *) tiny_data, len, "onnx-tiny.onnx");
  g_assert_true (parse_or_fail_cleanly ((const guint8 *) tiny_data, tiny_len, "onnx-tiny.onnx"));

  for (guint v = 0; v < G_N_ELEMENTS (versions); v++)
    {
      gsize len;
      g_autofree char *data = silero_contents (versions[v], &len);
      if (data == NULL)
        return;
      for (gsize cut = 0; cut < MIN (len, 4096); cut++)
        g_assert_false (parse_or_fail_cleanly ((const guint8 *) data, cut, "cut.onnx"));
    }
}

/* Flips 1 to 3 random bits (seeded) and parses; returns how many parsed. */
static guint
flip_and_parse (GRand *rand, const guint8 *orig, gsize len, gsize lo, gsize hi, guint rounds)
{
  g_autofree guint8 *copy = g_memdup2 (orig, len);
  guint parsed = 0;

  for (guint k = 0; k < rounds; k++)
    {
      gsize pos[3];
      guint n_flips = (guint) g_rand_int_range (rand, 1, 4);
      for (guint f = 0; f < n_flips; f++)
        {
          pos[f] = lo + (gsize) g_rand_int_range (rand, 0, (gint32) (hi - lo));
          copy[pos[f]] ^= (guint8) (1u << g_rand_int_range (rand, 0, 8));
        }
      parsed += parse_or_fail_cleanly (copy, len, "flipped.onnx");
      for (guint f = 0; f < n_flips; f++)
        copy[pos[f]] = orig[pos[f]];
    }
  return parsed;
}

/* Seeded random bit flips in the hand-built model and in the structure
 * parts of v5 (its first 340 bytes and its last 76 KB of nodes; the middle is
 * weight bytes) parse or fail cleanly. */
static void
test_malformed_bit_flips (void)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed (20240611);
  g_autofree char *tiny = g_test_build_filename (G_TEST_DIST, "fixtures", "onnx-tiny.onnx", NULL);
  g_autofree char *data = NULL;
  gsize len;
  guint parsed;

  g_assert_true (g_file_get_contents (tiny, &data, &len, NULL));
  parsed = flip_and_parse (rand, (const guint8 *) data, len, 0, len, 3000);
  g_test_message ("onnx-tiny.onnx: %u of 3000 flipped copies parsed", parsed);
  g_clear_pointer (&data, g_free);

  data = silero_contents ("v5", &len);
  if (data == NULL)
    return;
  parsed = flip_and_parse (rand, (const guint8 *) data, len, 0, 340, 100);
  parsed += flip_and_parse (rand, (const guint8 *) data, len, len - 76 * 1024, len, 200);
  g_test_message ("silero_vad_v5.onnx: %u of 300 flipped copies parsed", parsed);
}

/* --- Handmade buffers ---------------------------------------------------- */

/* A tiny protobuf writer. */
static void
put_varint (GByteArray *b, guint64 v)
{
  do
    {
      guint8 byte = (guint8) ((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
      g_byte_array_append (b, &byte, 1);
      v >>= 7;
    }
  while (v != 0);
}

static void
put_tag (GByteArray *b, guint field, guint wire)
{
  put_varint (b, (guint64) field << 3 | wire);
}

static void
put_bytes (GByteArray *b, guint field, const void *data, gsize len)
{
  put_tag (b, field, 2);
  put_varint (b, len);
  g_byte_array_append (b, data, (guint) len);
}

/* Appends `sub` as a length-delimited field and frees it. */
static void
put_msg (GByteArray *b, guint field, GByteArray *sub)
{
  put_bytes (b, field, sub->data, sub->len);
  g_byte_array_unref (sub);
}

static void
put_fixed32 (GByteArray *b, guint field, float f)
{
  guint32 bits;
  guint8 le[4];

  memcpy (&bits, &f, 4);
  for (guint k = 0; k < 4; k++)
    le[k] = (guint8) (bits >> (8 * k));
  put_tag (b, field, 5);
  g_byte_array_append (b, le, 4);
}

/* A model holding one graph holding one initializer. */
static GByteArray *
model_with_tensor (GByteArray *tensor)
{
  GByteArray *graph = g_byte_array_new ();
  GByteArray *model = g_byte_array_new ();

  put_msg (graph, 5, tensor);
  put_msg (model, 7, graph);
  return model;
}

/* Packed dims and one-value-per-field float_data, which onnx.helper never
 * writes, read like their usual encodings. */
static void
test_malformed_accepts_other_encodings (void)
{
  GByteArray *t = g_byte_array_new ();
  static const guint8 packed_dims[] = { 2, 2 };
  g_autoptr (GError) error = NULL;

  put_bytes (t, 1, packed_dims, sizeof packed_dims);
  put_tag (t, 2, 0);
  put_varint (t, MOROK_ONNX_DTYPE_FLOAT);
  for (guint k = 0; k < 4; k++)
    put_fixed32 (t, 4, 0.5f * (float) k);
  put_bytes (t, 8, "w", 1);
  g_autoptr (GByteArray) model = model_with_tensor (t);
  g_autoptr (MorokOnnxModel) m
      = morok_onnx_model_load_from_data (model->data, model->len, "hand.onnx", &error);
  g_assert_no_error (error);
  const MorokOnnxTensor *w = morok_onnx_model_find_tensor (m, "w");
  g_assert_cmpuint (w->rank, ==, 2);
  g_autofree float *v = morok_onnx_tensor_to_f32 (w, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpfloat (v[3], ==, 1.5f);
}

typedef struct
{
  const char *what; /* the claim, for the log */
  const guint8 *data;
  gsize len;
  gint code;           /* expected MorokIoError */
  const char *message; /* expected error message */
} BadCase;

#define BYTES(...) (const guint8[]){ __VA_ARGS__ }, sizeof ((const guint8[]){ __VA_ARGS__ })

/* Handmade bad buffers fail with the right code and a message that says
 * where. */
static void
test_malformed_handmade_buffers (void)
{
  /* clang-format off */
  const BadCase cases[] = {
    { "huge length", BYTES (0x3a, 0xff, 0xff, 0xff, 0xff, 0x0f), MOROK_IO_ERROR_TRUNCATED,
      "bad.onnx: truncated length-delimited field 7 at offset 1 (ModelProto): needs 4294967295 "
      "bytes, the data has 0 left" },
    { "varint overflow", BYTES (0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f),
      MOROK_IO_ERROR_MALFORMED,
      "bad.onnx: varint overflows 64 bits at offset 1 (ModelProto)" },
    { "cut varint", BYTES (0x08, 0xff), MOROK_IO_ERROR_TRUNCATED,
      "bad.onnx: truncated varint at offset 1 (ModelProto)" },
    { "graph as varint", BYTES (0x38, 0x01), MOROK_IO_ERROR_MALFORMED,
      "bad.onnx: field 7 of ModelProto has wire type 0, expected 2, at offset 1" },
    { "group wire type", BYTES (0x3b), MOROK_IO_ERROR_MALFORMED,
      "bad.onnx: unsupported group wire type 3 for field 7 at offset 0 (ModelProto)" },
    { "field number 0", BYTES (0x02, 0x00), MOROK_IO_ERROR_MALFORMED,
      "bad.onnx: invalid field number 0 at offset 0 (ModelProto)" },
    { "no graph", BYTES (0x08, 0x08), MOROK_IO_ERROR_MALFORMED,
      "bad.onnx: no graph (ModelProto field 7) in 2 bytes" },
    { "two graphs", BYTES (0x3a, 0x00, 0x3a, 0x00), MOROK_IO_ERROR_MALFORMED,
      "bad.onnx: second graph at offset 2" },
    { "node overruns its graph", BYTES (0x3a, 0x02, 0x0a, 0x05, 0x08, 0x08), MOROK_IO_ERROR_MALFORMED,
      "bad.onnx: overlong length-delimited field 1 at offset 3 (GraphProto): needs 5 bytes, the "
      "enclosing message has 0 left" },
    { "cut float attribute",
      BYTES (0x3a, 0x06, 0x0a, 0x04, 0x2a, 0x02, 0x15, 0x00, 0x08, 0x08), MOROK_IO_ERROR_MALFORMED,
      "bad.onnx: overlong 32-bit field 2 at offset 7 (AttributeProto): needs 4 bytes, the "
      "enclosing message has 1 left" },
    { "negative dim", BYTES (0x3a, 0x0f, 0x2a, 0x0d, 0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                             0xff, 0xff, 0xff, 0x01, 0x10, 0x01),
      MOROK_IO_ERROR_MALFORMED, "bad.onnx: tensor '' at offset 4 has a negative dimension -1" },
    { "raw_data too short", BYTES (0x3a, 0x0a, 0x2a, 0x08, 0x08, 0x03, 0x10, 0x01, 0x4a, 0x02,
                                   0x00, 0x00),
      MOROK_IO_ERROR_MALFORMED,
      "bad.onnx: tensor '' at offset 4 has 2 bytes of raw_data, FLOAT [3] needs 12" },
    { "packed floats not a multiple of 4", BYTES (0x3a, 0x09, 0x2a, 0x07, 0x10, 0x01, 0x22, 0x03,
                                                  0x00, 0x00, 0x00),
      MOROK_IO_ERROR_MALFORMED,
      "bad.onnx: packed field 4 of TensorProto is 3 bytes, not a multiple of 4, before offset 11" },
    { "fewer typed values than dims", BYTES (0x3a, 0x08, 0x2a, 0x06, 0x08, 0x02, 0x10, 0x07,
                                             0x38, 0x05),
      MOROK_IO_ERROR_MALFORMED,
      "bad.onnx: tensor '' at offset 4 has 1 values in field 7, INT64 [2] needs 2" },
    { "unterminated packed varint", BYTES (0x3a, 0x08, 0x2a, 0x06, 0x10, 0x07, 0x3a, 0x02, 0x05,
                                           0x80, 0x08, 0x08),
      MOROK_IO_ERROR_MALFORMED, "bad.onnx: unterminated varint at offset 9 (TensorProto)" },
    { "oversized dims", BYTES (0x3a, 0x18, 0x2a, 0x16, 0x08, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x08,
                               0xff, 0xff, 0xff, 0xff, 0x0f, 0x08, 0xff, 0xff, 0xff, 0xff, 0x0f,
                               0x10, 0x01, 0x4a, 0x00),
      MOROK_IO_ERROR_MALFORMED,
      "bad.onnx: tensor '' at offset 4 has an oversized dimension 4294967295" },
  };
  /* clang-format on */

  for (guint k = 0; k < G_N_ELEMENTS (cases); k++)
    {
      g_autoptr (GError) error = NULL;
      g_test_message ("%s", cases[k].what);
      g_assert_null (
          morok_onnx_model_load_from_data (cases[k].data, cases[k].len, "bad.onnx", &error));
      g_assert_error (error, MOROK_IO_ERROR, cases[k].code);
      g_assert_cmpstr (error->message, ==, cases[k].message);
    }
}

/* Subgraphs nested deeper than the reader allows fail instead of
 * exhausting the stack. */
static void
test_malformed_deep_nesting (void)
{
  GByteArray *graph = g_byte_array_new ();
  g_autoptr (GError) error = NULL;

  for (guint depth = 0; depth < 200; depth++)
    {
      GByteArray *attr = g_byte_array_new ();
      GByteArray *node = g_byte_array_new ();
      GByteArray *outer = g_byte_array_new ();
      put_bytes (attr, 1, "g", 1);
      put_msg (attr, 6, graph);
      put_msg (node, 5, attr);
      put_msg (outer, 1, node);
      graph = outer;
    }
  GByteArray *model = g_byte_array_new ();
  put_msg (model, 7, graph);
  g_assert_null (morok_onnx_model_load_from_data (model->data, model->len, "deep.onnx", &error));
  g_assert_error (error, MOROK_IO_ERROR, MOROK_IO_ERROR_MALFORMED);
  g_assert_true (strstr (error->message, "nested more than 32 deep") != NULL);
  g_byte_array_unref (model);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/onnx-reader/malformed/every-truncation", test_malformed_every_truncation);
  g_test_add_func ("/onnx-reader/malformed/bit-flips", test_malformed_bit_flips);
  g_test_add_func ("/onnx-reader/malformed/accepts-other-encodings",
                   test_malformed_accepts_other_encodings);
  g_test_add_func ("/onnx-reader/malformed/handmade-buffers", test_malformed_handmade_buffers);
  g_test_add_func ("/onnx-reader/malformed/deep-nesting", test_malformed_deep_nesting);
  return g_test_run ();
}
