/* SPDX-License-Identifier: MIT */
/* Loading GigaAM model files: the tiny fixtures' configs and closed-form
 * lengths (against the reference's, scripts/gigaam/make-fixtures.py), and
 * bad files (truncated, wrong shapes, missing tensors, metadata or config
 * fields, unsupported models) as MOROK_IO_ERRORs naming the file and what is
 * wrong, never a crash. */
#include <glib.h>
#include "fixtures.h"
#include <glib/gstdio.h>
#include <string.h>

#include "io/safetensors.h"
#include "models/gigaam.h"

static char *tmp_dir;

/* Element @i of the I64 tensor @name of @st. */
static gint64
i64_at (MorokSafetensors *st, const char *name, guint i)
{
  GError *e = NULL;
  const MorokSafetensor *t = morok_safetensors_get (st, name, &e);
  g_assert_no_error (e);
  g_assert_true (t->dtype == MOROK_SAFETENSOR_DTYPE_I64 && (gint64) i < t->n_elements);
  gint64 v;
  memcpy (&v, (const guint8 *) t->data + 8 * i, 8);
  return v;
}

/* The fixtures' configs read as make-fixtures.py wrote them, and the
 * closed-form lengths are the reference's. */
static void
test_load_config (void)
{
  static const struct
  {
    const char *version;
    MorokGigaAmVersion v;
    guint n_fft, kernel, subs_kernel;
    gboolean center, batch_norm;
  } want[] = {
    { "v3", MOROK_GIGAAM_V3, 320, 5, 5, FALSE, FALSE },
    { "v2", MOROK_GIGAAM_V2, 400, 31, 3, TRUE, TRUE },
  };
  g_autofree char *audio_path = fixture_path ("gigaam-audio.safetensors");
  g_autoptr (MorokSafetensors) audio = morok_safetensors_open (audio_path, NULL);
  g_assert_nonnull (audio);
  for (guint k = 0; k < G_N_ELEMENTS (want); k++)
    {
      GError *e = NULL;
      g_autofree char *name = g_strdup_printf ("gigaam-%s-tiny.safetensors", want[k].version);
      g_autofree char *ref_name
          = g_strdup_printf ("gigaam-%s-tiny-ref.safetensors", want[k].version);
      g_autofree char *path = fixture_path (name), *ref_path = fixture_path (ref_name);
      g_autoptr (MorokGigaAm) m = morok_gigaam_load (path, &e);
      g_assert_no_error (e);
      g_autoptr (MorokSafetensors) ref = morok_safetensors_open (ref_path, &e);
      g_assert_no_error (e);
      const MorokGigaAmConfig *c = morok_gigaam_config (m);
      g_assert_cmpint (c->version, ==, want[k].v);
      g_assert_cmpuint (c->sample_rate, ==, 16000);
      g_assert_cmpuint (c->n_fft, ==, want[k].n_fft);
      g_assert_cmpuint (c->win_length, ==, want[k].n_fft);
      g_assert_cmpuint (c->hop_length, ==, 160);
      g_assert_cmpint (c->center, ==, want[k].center);
      g_assert_cmpuint (c->n_mels, ==, 64);
      g_assert_cmpfloat (c->log_clamp[0], ==, 1e-9);
      g_assert_cmpfloat (c->log_clamp[1], ==, 1e9);
      g_assert_cmpuint (c->n_layers, ==, 2);
      g_assert_cmpuint (c->d_model, ==, 64);
      g_assert_cmpuint (c->n_heads, ==, 4);
      g_assert_cmpuint (c->ff_dim, ==, 256);
      g_assert_cmpuint (c->conv_kernel, ==, want[k].kernel);
      g_assert_cmpint (c->conv_batch_norm, ==, want[k].batch_norm);
      g_assert_cmpuint (c->subs_kernel, ==, want[k].subs_kernel);
      g_assert_cmpfloat (c->rope_base, ==, 5000.0);
      g_assert_cmpuint (c->n_classes, ==, 34);
      g_assert_cmpuint (c->blank_id, ==, 33);
      g_assert_cmpint (c->vocab_type, ==, MOROK_GIGAAM_VOCAB_CHAR);
      g_assert_cmpstr (c->tokens[0], ==, " ");
      g_assert_cmpstr (c->tokens[32], ==, "я");
      g_assert_null (c->tokens[33]);
      g_assert_cmpfloat (morok_gigaam_frame_seconds (m), ==, 0.04);
      g_assert_cmpint (morok_gigaam_min_samples (m), ==, want[k].center ? 201 : 320);
      for (guint i = 0; i < 3; i++)
        {
          g_autofree char *an = g_strdup_printf ("audio.%u", i);
          g_autofree char *fl = g_strdup_printf ("alone.%u.feature_lengths", i);
          g_autofree char *el = g_strdup_printf ("alone.%u.encoded_lengths", i);
          gint64 n = morok_safetensors_find (audio, an)->n_elements;
          g_assert_cmpint (morok_gigaam_feature_frames (m, n), ==, i64_at (ref, fl, 0));
          g_assert_cmpint (morok_gigaam_encoded_frames (m, n), ==, i64_at (ref, el, 0));
        }
    }
}

/* A copy of the v3 fixture, edited as fixture_write_gigaam (), in tmp_dir. */
static char *
write_variant (const char *name, FixtureGigaAmEdit edit, gsize truncate)
{
  char *path = g_build_filename (tmp_dir, name, NULL);
  fixture_write_gigaam (path, edit, truncate);
  return path;
}

static void
edit_shape (JsonObject *header, JsonObject *config)
{
  /* same bytes, other shape: [64] -> [32, 2] */
  JsonArray *shape = json_array_new ();
  json_array_add_int_element (shape, 32);
  json_array_add_int_element (shape, 2);
  json_object_set_array_member (
      json_object_get_object_member (header, "encoder.layers.1.norm_out.weight"), "shape", shape);
}

static void
edit_missing_tensor (JsonObject *header, JsonObject *config)
{
  json_object_remove_member (header, "encoder.layers.1.self_attn.linear_k.bias");
}

static void
edit_no_config (JsonObject *header, JsonObject *config)
{
  json_object_remove_member (json_object_get_object_member (header, "__metadata__"),
                             "morok.config");
}

static void
edit_d_model (JsonObject *header, JsonObject *config)
{
  json_object_set_int_member (json_object_get_object_member (config, "encoder"), "d_model", 32);
  json_object_set_int_member (json_object_get_object_member (config, "encoder"), "n_heads", 2);
  json_object_set_int_member (json_object_get_object_member (config, "head"), "feat_in", 32);
}

static void
edit_heads (JsonObject *header, JsonObject *config)
{
  json_object_set_int_member (json_object_get_object_member (config, "encoder"), "n_heads", 3);
}

static void
edit_missing_key (JsonObject *header, JsonObject *config)
{
  json_object_remove_member (json_object_get_object_member (config, "encoder"), "n_layers");
}

static void
edit_model_class (JsonObject *header, JsonObject *config)
{
  json_object_set_string_member (config, "model_class", "ssl");
}

/* a frame of 65536 samples: the front-end's tables would take 100 GB */
static void
edit_n_fft (JsonObject *header, JsonObject *config)
{
  JsonObject *pre = json_object_get_object_member (config, "preprocessor");
  json_object_set_int_member (pre, "n_fft", 65536);
  json_object_set_int_member (pre, "win_length", 65536);
}

/* model_class rnnt over a CTC head */
static void
edit_head_type (JsonObject *header, JsonObject *config)
{
  json_object_set_string_member (config, "model_class", "rnnt");
}

static void
edit_attention (JsonObject *header, JsonObject *config)
{
  json_object_set_string_member (json_object_get_object_member (config, "encoder"),
                                 "self_attention_model", "rel_pos");
}

static void
edit_vocabulary (JsonObject *header, JsonObject *config)
{
  JsonObject *v = json_object_get_object_member (config, "vocabulary");
  json_array_remove_element (json_object_get_array_member (v, "tokens"), 0);
}

/* Bad model files give a MOROK_IO_ERROR naming the file and what is wrong,
 * never a crash. */
static void
test_load_bad_files (void)
{
  static const struct
  {
    const char *name;
    FixtureGigaAmEdit edit;
    gsize truncate;
    MorokIoError code;
    const char *says; /* part of the message */
  } cases[] = {
    { "truncated-header.safetensors", NULL, 100, MOROK_IO_ERROR_TRUNCATED, "truncated-header" },
    { "truncated-data.safetensors", NULL, 300000, MOROK_IO_ERROR_TRUNCATED, "truncated-data" },
    { "shape.safetensors", edit_shape, 0, MOROK_IO_ERROR_MALFORMED,
      "'encoder.layers.1.norm_out.weight'" },
    { "missing.safetensors", edit_missing_tensor, 0, MOROK_IO_ERROR_NOT_FOUND,
      "encoder.layers.1.self_attn.linear_k.bias" },
    { "no-config.safetensors", edit_no_config, 0, MOROK_IO_ERROR_NOT_FOUND, "morok.config" },
    { "d-model.safetensors", edit_d_model, 0, MOROK_IO_ERROR_MALFORMED, "expected [32" },
    { "heads.safetensors", edit_heads, 0, MOROK_IO_ERROR_MALFORMED, "n_heads" },
    { "key.safetensors", edit_missing_key, 0, MOROK_IO_ERROR_NOT_FOUND, "'encoder.n_layers'" },
    { "class.safetensors", edit_model_class, 0, MOROK_IO_ERROR_UNSUPPORTED, "'ssl'" },
    { "head-type.safetensors", edit_head_type, 0, MOROK_IO_ERROR_MALFORMED, "'head.type'" },
    { "n-fft.safetensors", edit_n_fft, 0, MOROK_IO_ERROR_MALFORMED, "n_fft" },
    { "attention.safetensors", edit_attention, 0, MOROK_IO_ERROR_UNSUPPORTED, "rel_pos" },
    { "vocabulary.safetensors", edit_vocabulary, 0, MOROK_IO_ERROR_MALFORMED, "vocabulary.tokens" },
  };
  for (guint k = 0; k < G_N_ELEMENTS (cases); k++)
    {
      GError *e = NULL;
      g_autofree char *path = write_variant (cases[k].name, cases[k].edit, cases[k].truncate);
      MorokGigaAm *m = morok_gigaam_load (path, &e);
      g_assert_null (m);
      g_test_message ("%s: %s", cases[k].name, e ? e->message : "(no error)");
      g_assert_error (e, MOROK_IO_ERROR, (gint) cases[k].code);
      g_assert_nonnull (strstr (e->message, cases[k].name));
      g_assert_nonnull (strstr (e->message, cases[k].says));
      g_clear_error (&e);
      /* without a GError to fill, the same file fails the same way */
      g_assert_null (morok_gigaam_load (path, NULL));
      g_unlink (path);
    }
  GError *e = NULL;
  g_assert_null (morok_gigaam_load ("/nonexistent/gigaam.safetensors", &e));
  g_assert_error (e, MOROK_IO_ERROR, MOROK_IO_ERROR_OPEN);
  g_clear_error (&e);
}

static void
edit_sample_rate (JsonObject *header, JsonObject *config)
{
  json_object_set_int_member (json_object_get_object_member (config, "preprocessor"), "sample_rate",
                              48000);
}

/* A model made for 48 kHz is a valid file, but not one for 16 kHz audio:
 * morok_gigaam_check_sample_rate () says so, naming the file and both
 * rates; the fixture itself is a 16 kHz model. */
static void
test_load_sample_rate (void)
{
  g_autofree char *fixture = fixture_path ("gigaam-v3-tiny.safetensors");
  g_autoptr (MorokGigaAm) ok = morok_gigaam_load (fixture, NULL);
  g_assert_nonnull (ok);
  g_assert_true (morok_gigaam_check_sample_rate (ok, 16000, NULL));

  g_autofree char *path = write_variant ("rate-48k.safetensors", edit_sample_rate, 0);
  GError *e = NULL;
  g_autoptr (MorokGigaAm) m = morok_gigaam_load (path, &e);
  g_assert_no_error (e);
  g_assert_cmpuint (morok_gigaam_config (m)->sample_rate, ==, 48000);
  g_assert_true (morok_gigaam_check_sample_rate (m, 48000, NULL));
  g_assert_false (morok_gigaam_check_sample_rate (m, 16000, &e));
  g_assert_error (e, MOROK_IO_ERROR, MOROK_IO_ERROR_UNSUPPORTED);
  g_test_message ("%s", e->message);
  g_assert_nonnull (strstr (e->message, "rate-48k.safetensors"));
  g_assert_nonnull (strstr (e->message, "48000 Hz"));
  g_assert_nonnull (strstr (e->message, "16000 Hz"));
  g_clear_error (&e);
  g_unlink (path);
}

/* head.joint.joint_net.1.weight stored [J, C] instead of [C, J] (same bytes) */
static void
edit_joint_shape (JsonObject *header, JsonObject *config)
{
  JsonArray *shape = json_object_get_array_member (
      json_object_get_object_member (header, "head.joint.joint_net.1.weight"), "shape");
  gint64 c = json_array_get_int_element (shape, 0), j = json_array_get_int_element (shape, 1);
  JsonArray *swapped = json_array_new ();
  json_array_add_int_element (swapped, j);
  json_array_add_int_element (swapped, c);
  json_object_set_array_member (
      json_object_get_object_member (header, "head.joint.joint_net.1.weight"), "shape", swapped);
}

/* An RNN-T file whose joint output weight has the wrong shape is an error
 * naming the file and the tensor; the unedited file loads. */
static void
test_load_rnnt_head_shape (void)
{
  GError *e = NULL;
  g_autofree char *path = g_build_filename (tmp_dir, "joint-shape.safetensors", NULL);
  g_autofree char *good = fixture_path ("gigaam-v2-rnnt-tiny.safetensors");
  g_autoptr (MorokGigaAm) model = morok_gigaam_load (good, &e);
  g_assert_no_error (e);
  g_assert_cmpint (morok_gigaam_config (model)->head, ==, MOROK_GIGAAM_HEAD_RNNT);
  g_assert_cmpuint (morok_gigaam_config (model)->pred_layers, ==, 2);
  fixture_write_edited ("gigaam-v2-rnnt-tiny.safetensors", path, edit_joint_shape, 0);
  g_assert_null (morok_gigaam_load (path, &e));
  g_test_message ("%s", e->message);
  g_assert_error (e, MOROK_IO_ERROR, MOROK_IO_ERROR_MALFORMED);
  g_assert_nonnull (strstr (e->message, "joint-shape.safetensors"));
  g_assert_nonnull (strstr (e->message, "'head.joint.joint_net.1.weight'"));
  g_clear_error (&e);
  g_unlink (path);
}

static void
edit_no_piece_types (JsonObject *header, JsonObject *config)
{
  json_object_remove_member (json_object_get_object_member (config, "vocabulary"), "piece_types");
}

static void
edit_piece_type_name (JsonObject *header, JsonObject *config)
{
  JsonArray *types = json_object_get_array_member (
      json_object_get_object_member (config, "vocabulary"), "piece_types");
  json_array_remove_element (types, 3);
  json_array_add_string_element (types, "bogus"); /* the last piece's type */
}

static void
edit_byte_piece (JsonObject *header, JsonObject *config)
{
  JsonObject *v = json_object_get_object_member (config, "vocabulary");
  JsonArray *types = json_object_get_array_member (v, "piece_types");
  guint last = json_array_get_length (types) - 1;
  json_array_remove_element (types, last);
  json_array_add_string_element (types, "byte"); /* a piece not spelled <0xNN> */
}

static void
edit_unk_surface (JsonObject *header, JsonObject *config)
{
  json_object_set_int_member (json_object_get_object_member (config, "vocabulary"), "unk_surface",
                              7);
}

/* A SentencePiece model's piece types load (the fixture's <unk> is the
 * unknown piece, decoded as " ⁇ "); a missing, unknown or inconsistent one
 * is an error naming the file and the field. */
static void
test_load_piece_types (void)
{
  static const struct
  {
    const char *name;
    FixtureGigaAmEdit edit;
    MorokIoError code;
    const char *says;
  } cases[] = {
    { "no-types.safetensors", edit_no_piece_types, MOROK_IO_ERROR_NOT_FOUND,
      "'vocabulary.piece_types' is missing" },
    { "type-name.safetensors", edit_piece_type_name, MOROK_IO_ERROR_MALFORMED,
      "'vocabulary.piece_types[46]' must be" },
    { "byte-piece.safetensors", edit_byte_piece, MOROK_IO_ERROR_MALFORMED, "expected <0xNN>" },
    { "unk-surface.safetensors", edit_unk_surface, MOROK_IO_ERROR_MALFORMED,
      "'vocabulary.unk_surface' must be a string" },
  };
  const char *fixture = "gigaam-v3-e2e-ctc-tiny.safetensors";
  g_autofree char *good = fixture_path (fixture);
  GError *e = NULL;
  g_autoptr (MorokGigaAm) model = morok_gigaam_load (good, &e);
  g_assert_no_error (e);
  const MorokGigaAmConfig *c = morok_gigaam_config (model);
  g_assert_cmpint (c->piece_types[0], ==, MOROK_PIECE_UNKNOWN);
  g_assert_cmpint (c->piece_types[1], ==, MOROK_PIECE_NORMAL);
  g_assert_cmpstr (c->unk_surface, ==, " \xe2\x81\x87 ");
  g_assert_true (c->strip_first_space);
  for (guint k = 0; k < G_N_ELEMENTS (cases); k++)
    {
      g_autofree char *path = g_build_filename (tmp_dir, cases[k].name, NULL);
      fixture_write_edited (fixture, path, cases[k].edit, 0);
      g_assert_null (morok_gigaam_load (path, &e));
      g_test_message ("%s: %s", cases[k].name, e ? e->message : "(no error)");
      g_assert_error (e, MOROK_IO_ERROR, (gint) cases[k].code);
      g_assert_nonnull (strstr (e->message, cases[k].name));
      g_assert_nonnull (strstr (e->message, cases[k].says));
      g_clear_error (&e);
      g_unlink (path);
    }
}

/* Bytes of the f32 copies of the tensors @names of @path, or (NULL) of those
 * stored as another float type; the span of the tensors' data in the file. */
static gsize
f32_bytes (const char *path, const char *const *names, gsize *out_start, gsize *out_end)
{
  g_autoptr (MorokSafetensors) st = morok_safetensors_open (path, NULL);
  g_assert_nonnull (st);
  gsize bytes = 0;
  *out_start = G_MAXSIZE, *out_end = 0;
  for (guint i = 0; i < morok_safetensors_n_tensors (st); i++)
    {
      const MorokSafetensor *t = morok_safetensors_nth (st, i);
      *out_start = MIN (*out_start, t->offset);
      *out_end = MAX (*out_end, t->offset + t->n_bytes);
      if (names ? g_strv_contains (names, t->name)
                : morok_safetensor_dtype_is_float (t->dtype)
                      && t->dtype != MOROK_SAFETENSOR_DTYPE_F32)
        bytes += t->n_elements * sizeof (float);
    }
  return bytes;
}

/* An f32 file is read in place: the model copies only the subsampling
 * weights that it reorders (conv.0 and conv.2, and v2's pre_encode.out),
 * and after the load none of the file's weight pages is resident (each
 * tensor was read once, for the finite check, and its pages dropped). Of
 * the fixtures as committed, the tensors stored as f16 or bf16 are copied,
 * as f32. */
static void
test_load_weights_in_place (void)
{
  static const char *const reordered[]
      = { "encoder.pre_encode.conv.0.weight", "encoder.pre_encode.conv.2.weight",
          "encoder.pre_encode.out.weight", NULL };
  for (guint v = 0; v < 2; v++)
    {
      GError *e = NULL;
      const char *name = v ? "gigaam-v2-tiny.safetensors" : "gigaam-v3-tiny.safetensors";
      g_autofree char *half = fixture_path (name);
      g_autofree char *path = g_build_filename (tmp_dir, name, NULL);
      fixture_write_f32 (name, path);
      gsize start, end;
      gsize all = f32_bytes (half, NULL, &start, &end);
      g_autoptr (MorokGigaAm) hm = morok_gigaam_load (half, &e);
      g_assert_no_error (e);
      g_assert_cmpuint (morok_gigaam_weight_bytes_owned (hm), ==, all);

      /* the bytes counted before the model maps the file: one mapping of it */
      gsize copied = f32_bytes (path, reordered, &start, &end);
      g_autoptr (MorokGigaAm) m = morok_gigaam_load (path, &e);
      g_assert_no_error (e);
      g_assert_cmpuint (morok_gigaam_weight_bytes_owned (m), ==, copied);
      gint64 resident = fixture_mapped_pages_resident (path, start, end - start);
      g_test_message ("%s: %" G_GSIZE_FORMAT " of %" G_GSIZE_FORMAT
                      " weight bytes copied, %" G_GINT64_FORMAT " pages resident",
                      name, copied, all, resident);
      g_unlink (path);
      if (resident < 0)
        {
          g_test_skip ("no /proc/self/pagemap to tell resident pages");
          return;
        }
      g_assert_cmpint (resident, ==, 0);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  tmp_dir = g_dir_make_tmp ("morok-gigaam-load-XXXXXX", NULL);
  g_test_add_func ("/gigaam/load/config", test_load_config);
  g_test_add_func ("/gigaam/load/bad-files", test_load_bad_files);
  g_test_add_func ("/gigaam/load/sample-rate", test_load_sample_rate);
  g_test_add_func ("/gigaam/load/rnnt-head-shape", test_load_rnnt_head_shape);
  g_test_add_func ("/gigaam/load/piece-types", test_load_piece_types);
  g_test_add_func ("/gigaam/load/weights-in-place", test_load_weights_in_place);
  int rc = g_test_run ();
  g_rmdir (tmp_dir);
  g_free (tmp_dir);
  return rc;
}
