/* SPDX-License-Identifier: MIT */
/* GigaAM models as model hub folders (config.json, safetensors under
 * upstream's names, tokenizer.model), loaded with no conversion: each of the
 * six upstream kinds, written by scripts/gigaam/make-hub-fixtures.py from a
 * converted fixture, loads as that file does (the same config, the same
 * weights, read in place where stored as f32), and bad folders fail with a
 * MOROK_IO_ERROR naming the file and what is wrong. */
#include <glib.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>

#include "fixtures.h"
#include "hub-fixtures.h"
#include "models/gigaam-private.h"
#include "temp-dir.h"

static char *tmp_dir;

static MorokGigaAm *
load_ok (const char *path)
{
  g_autoptr (GError) error = NULL;
  MorokGigaAm *m = morok_gigaam_load (path, &error);
  g_assert_no_error (error);
  return m;
}

/* Largest |a - b| of @n floats. */
static double
max_diff (const float *a, const float *b, gsize n)
{
  double d = 0;
  for (gsize i = 0; i < n; i++)
    d = MAX (d, fabs ((double) a[i] - b[i]));
  return d;
}

/* ---- the same model ---- */

static void
assert_same_config (const MorokGigaAmConfig *a, const MorokGigaAmConfig *b)
{
  /* every field but the pointers, compared as numbers */
  g_assert_cmpint (a->version, ==, b->version);
  g_assert_cmpuint (a->sample_rate, ==, b->sample_rate);
  g_assert_cmpuint (a->n_fft, ==, b->n_fft);
  g_assert_cmpuint (a->win_length, ==, b->win_length);
  g_assert_cmpuint (a->hop_length, ==, b->hop_length);
  g_assert_cmpint (a->center, ==, b->center);
  g_assert_cmpuint (a->n_mels, ==, b->n_mels);
  g_assert_cmpfloat (a->log_clamp[0], ==, b->log_clamp[0]);
  g_assert_cmpfloat (a->log_clamp[1], ==, b->log_clamp[1]);
  g_assert_cmpuint (a->n_layers, ==, b->n_layers);
  g_assert_cmpuint (a->d_model, ==, b->d_model);
  g_assert_cmpuint (a->n_heads, ==, b->n_heads);
  g_assert_cmpuint (a->ff_dim, ==, b->ff_dim);
  g_assert_cmpuint (a->conv_kernel, ==, b->conv_kernel);
  g_assert_cmpint (a->conv_batch_norm, ==, b->conv_batch_norm);
  g_assert_cmpuint (a->subs_kernel, ==, b->subs_kernel);
  g_assert_cmpuint (a->subs_padding, ==, b->subs_padding);
  g_assert_cmpfloat (a->rope_base, ==, b->rope_base);
  g_assert_cmpfloat (a->layer_norm_eps, ==, b->layer_norm_eps);
  g_assert_cmpfloat (a->batch_norm_eps, ==, b->batch_norm_eps);
  g_assert_cmpint (a->head, ==, b->head);
  g_assert_cmpuint (a->pred_hidden, ==, b->pred_hidden);
  g_assert_cmpuint (a->pred_layers, ==, b->pred_layers);
  g_assert_cmpuint (a->joint_hidden, ==, b->joint_hidden);
  g_assert_cmpuint (a->n_classes, ==, b->n_classes);
  g_assert_cmpuint (a->blank_id, ==, b->blank_id);
  g_assert_cmpint (a->vocab_type, ==, b->vocab_type);
  for (guint i = 0; i + 1 < a->n_classes; i++)
    g_assert_cmpstr (a->tokens[i], ==, b->tokens[i]);
  g_assert_true ((a->piece_types == NULL) == (b->piece_types == NULL));
  if (a->piece_types)
    {
      g_assert_cmpmem (a->piece_types, (a->n_classes - 1) * sizeof (MorokPieceType), b->piece_types,
                       (b->n_classes - 1) * sizeof (MorokPieceType));
      g_assert_cmpstr (a->unk_surface, ==, b->unk_surface);
      g_assert_cmpint (a->strip_first_space, ==, b->strip_first_space);
    }
}

/* The folder and the file converted from the same model have the same
 * config and the same weights, value for value (the folders store them as
 * f32, f16 or bf16 and the loader reads each as f32, as it does a file's);
 * a folder without the front-end's window and filterbank makes them from
 * the config, within 1e-6 of torchaudio's (which the file holds). */
static void
test_same_model (void)
{
  for (guint k = 0; k < HUB_N_FIXTURES; k++)
    {
      g_test_message ("%s", hub_fixtures[k].kind);
      g_autofree char *dir = hub_fixture_path (hub_fixtures[k].kind);
      g_autofree char *file = fixture_path (hub_fixtures[k].file);
      g_autoptr (MorokGigaAm) folder = load_ok (dir);
      g_autoptr (MorokGigaAm) conv = load_ok (file);
      assert_same_config (morok_gigaam_config (folder), morok_gigaam_config (conv));
      g_assert_cmpuint (g_hash_table_size (folder->weights), ==, g_hash_table_size (conv->weights));
      GHashTableIter iter;
      gpointer name, value;
      g_hash_table_iter_init (&iter, conv->weights);
      while (g_hash_table_iter_next (&iter, &name, &value))
        {
          const GigaAmWeight *want = value;
          const GigaAmWeight *got = g_hash_table_lookup (folder->weights, name);
          g_assert_nonnull (got);
          g_assert_cmpuint (got->rank, ==, want->rank);
          g_assert_cmpmem (got->dims, want->rank * sizeof (gint64), want->dims,
                           want->rank * sizeof (gint64));
          gsize n = 1;
          for (guint i = 0; i < want->rank; i++)
            n *= (gsize) want->dims[i];
          if (hub_fixtures[k].made_frontend && g_str_has_prefix (name, "preprocessor."))
            {
              /* torchaudio computes the filterbank in f32, Morok in double */
              double d = max_diff (got->data, want->data, n);
              g_test_message ("%s: made from the config, %g from torchaudio's", (char *) name, d);
              g_assert_cmpfloat (d, <=, 1e-5);
            }
          else
            g_assert_cmpmem (got->data, n * sizeof (float), want->data, n * sizeof (float));
        }
      /* so are the front-end's tables made from them */
      gsize q = morok_gigaam_config (conv)->n_fft / 2 + 1;
      gsize basis = (gsize) morok_gigaam_config (conv)->n_fft * 2 * q;
      double tol = hub_fixtures[k].made_frontend ? 1e-5 : 0;
      g_assert_cmpfloat (max_diff (folder->dft, conv->dft, basis), <=, tol);
      g_assert_cmpfloat (
          max_diff (folder->mel_fb2, conv->mel_fb2, 2 * q * morok_gigaam_config (conv)->n_mels), <=,
          tol);
    }
}

/* A folder's f32 weights are read in place from its mapped file, as a
 * converted f32 file's are: the model holds copies only of the subsampling
 * weights it reorders (v3: conv.0 [d, F, s] and conv.2 [d, d, s]), where
 * the same folder's f16 weights are all copied. */
static void
test_weights_in_place (void)
{
  g_autofree char *dir = hub_fixture_path ("v3_ctc");
  g_autoptr (MorokGigaAm) m = load_ok (dir);
  const MorokGigaAmConfig *c = morok_gigaam_config (m);
  gsize reordered = ((gsize) c->d_model * c->n_mels * c->subs_kernel
                     + (gsize) c->d_model * c->d_model * c->subs_kernel)
                    * sizeof (float);
  g_assert_cmpuint (morok_gigaam_weight_bytes_owned (m), ==, reordered);
  g_autofree char *file = fixture_path ("gigaam-v3-tiny.safetensors");
  g_autoptr (MorokGigaAm) f16 = load_ok (file);
  g_assert_cmpuint (morok_gigaam_weight_bytes_owned (f16), >, 4 * reordered);
}

/* ---- bad folders ---- */

/* Copies the hub folder @kind to a new folder under tmp_dir. (transfer full) */
static char *
copy_folder (const char *kind)
{
  static guint n;
  g_autofree char *src = hub_fixture_path (kind);
  g_autofree char *name = g_strdup_printf ("%s-%u", kind, n++);
  char *dst = g_build_filename (tmp_dir, name, NULL);
  g_assert_cmpint (g_mkdir (dst, 0755), ==, 0);
  g_autoptr (GDir) d = g_dir_open (src, 0, NULL);
  for (const char *f; (f = g_dir_read_name (d));)
    {
      g_autofree char *from = g_build_filename (src, f, NULL);
      g_autofree char *to = g_build_filename (dst, f, NULL);
      g_autofree char *bytes = NULL;
      gsize len;
      g_assert_true (g_file_get_contents (from, &bytes, &len, NULL));
      g_assert_true (g_file_set_contents (to, bytes, (gssize) len, NULL));
    }
  return dst;
}

static void
remove_in (const char *dir, const char *name)
{
  g_autofree char *path = g_build_filename (dir, name, NULL);
  g_assert_cmpint (g_remove (path), ==, 0);
}

static void
write_in (const char *dir, const char *name, const char *text)
{
  g_autofree char *path = g_build_filename (dir, name, NULL);
  g_assert_true (g_file_set_contents (path, text, -1, NULL));
}

/* config.json of @dir, its upstream config (under "cfg" or not) edited by @edit. */
static void
edit_config (const char *dir, void (*edit) (JsonObject *cfg))
{
  g_autofree char *path = g_build_filename (dir, "config.json", NULL);
  g_autoptr (JsonParser) p = json_parser_new ();
  g_assert_true (json_parser_load_from_file (p, path, NULL));
  JsonObject *root = json_node_get_object (json_parser_get_root (p));
  edit (json_object_has_member (root, "cfg") ? json_object_get_object_member (root, "cfg") : root);
  g_autofree char *text = json_to_string (json_parser_get_root (p), TRUE);
  g_assert_true (g_file_set_contents (path, text, -1, NULL));
}

static void
edit_ssl (JsonObject *cfg)
{
  json_object_set_string_member (cfg, "model_class", "ssl");
}

static void
edit_huge_fft (JsonObject *cfg)
{
  json_object_set_int_member (json_object_get_object_member (cfg, "preprocessor"), "n_fft", 4096);
}

static void
edit_three_layers (JsonObject *cfg)
{
  json_object_set_int_member (json_object_get_object_member (cfg, "encoder"), "n_layers", 3);
}

/* Rewrites @dir/model.safetensors with the tensor @name's dims swapped
 * (its bytes kept): a weight of the wrong shape. */
static void
swap_dims (const char *dir, const char *name)
{
  g_autofree char *path = g_build_filename (dir, "model.safetensors", NULL);
  g_autofree char *bytes = NULL;
  gsize len;
  g_assert_true (g_file_get_contents (path, &bytes, &len, NULL));
  guint64 hlen;
  memcpy (&hlen, bytes, 8);
  hlen = GUINT64_FROM_LE (hlen);
  g_autoptr (JsonParser) p = json_parser_new ();
  g_assert_true (json_parser_load_from_data (p, bytes + 8, (gssize) hlen, NULL));
  JsonObject *t
      = json_object_get_object_member (json_node_get_object (json_parser_get_root (p)), name);
  JsonArray *shape = json_object_get_array_member (t, "shape");
  gint64 d0 = json_array_get_int_element (shape, 0), d1 = json_array_get_int_element (shape, 1);
  JsonArray *swapped = json_array_new ();
  json_array_add_int_element (swapped, d1);
  json_array_add_int_element (swapped, d0);
  json_object_set_array_member (t, "shape", swapped);
  g_autofree char *header = json_to_string (json_parser_get_root (p), FALSE);
  g_autoptr (GString) out = g_string_new (NULL);
  gsize padded = (strlen (header) + 7) / 8 * 8;
  guint64 le = GUINT64_TO_LE ((guint64) padded);
  g_string_append_len (out, (const char *) &le, 8);
  g_string_append (out, header);
  while (out->len < 8 + padded)
    g_string_append_c (out, ' ');
  g_string_append_len (out, bytes + 8 + hlen, (gssize) (len - 8 - hlen));
  g_assert_true (g_file_set_contents (path, out->str, (gssize) out->len, NULL));
}

/* Each case: a copy of a hub folder, broken one way, fails to load with the
 * code and words given (and the folder or file named). */
static void
test_bad_folders (void)
{
  g_autofree char *no_config = copy_folder ("v3_ctc");
  remove_in (no_config, "config.json");
  g_autofree char *not_gigaam = copy_folder ("v3_ctc");
  write_in (not_gigaam, "config.json", "{\"model_type\": \"whisper\", \"d_model\": 384}");
  g_autofree char *ssl = copy_folder ("v3_ctc");
  edit_config (ssl, edit_ssl);
  g_autofree char *huge_fft = copy_folder ("v3_ctc");
  edit_config (huge_fft, edit_huge_fft);
  g_autofree char *layers = copy_folder ("v3_ctc");
  edit_config (layers, edit_three_layers);
  g_autofree char *no_weights = copy_folder ("v3_ctc");
  remove_in (no_weights, "model.safetensors");
  g_autofree char *bin_only = copy_folder ("v3_ctc");
  remove_in (bin_only, "model.safetensors");
  write_in (bin_only, "pytorch_model.bin", "a torch pickle");
  g_autofree char *no_shard = copy_folder ("v2_ctc");
  remove_in (no_shard, "model-00002-of-00002.safetensors");
  g_autofree char *bad_index = copy_folder ("v2_ctc");
  write_in (bad_index, "model.safetensors.index.json",
            "{\"weight_map\": {\"encoder.layers.0.norm_out.weight\": "
            "\"model-00001-of-00002.safetensors\"}}");
  g_autofree char *misshapen = copy_folder ("v3_ctc");
  swap_dims (misshapen, "model.encoder.layers.1.feed_forward1.linear1.weight");
  g_autofree char *no_tokenizer = copy_folder ("v3_e2e_ctc");
  remove_in (no_tokenizer, "tokenizer.model");
  g_autofree char *ckpt = g_build_filename (tmp_dir, "v3_ctc.ckpt", NULL);
  write_in (tmp_dir, "v3_ctc.ckpt", "PK\003\004 a torch zip");
  g_autofree char *json = g_build_filename (no_tokenizer, "config.json", NULL);
  const struct
  {
    const char *path;
    MorokIoError code;
    const char *words;
  } cases[] = {
    { no_config, MOROK_IO_ERROR_NOT_FOUND, "no config.json" },
    { not_gigaam, MOROK_IO_ERROR_UNSUPPORTED, "config.json: not a GigaAM ASR model's config" },
    { ssl, MOROK_IO_ERROR_UNSUPPORTED, "model_class 'ssl': not a GigaAM ASR model" },
    { layers, MOROK_IO_ERROR_MALFORMED, "config says encoder.n_layers = 3, the weights 2" },
    /* checked after normalising, as a converted file's morok.config is */
    { huge_fft, MOROK_IO_ERROR_MALFORMED,
      "config.json: 'preprocessor.n_fft' must be an integer in [2, 2048]" },
    { no_weights, MOROK_IO_ERROR_NOT_FOUND, "no model.safetensors" },
    { bin_only, MOROK_IO_ERROR_NOT_FOUND, "pytorch_model.bin, which Morok does not read" },
    { no_shard, MOROK_IO_ERROR_OPEN, "model-00002-of-00002.safetensors: no such file" },
    { bad_index, MOROK_IO_ERROR_NOT_FOUND,
      "model-00001-of-00002.safetensors: no tensor 'encoder.layers.0.norm_out.weight', which "
      "model.safetensors.index.json puts there" },
    { misshapen, MOROK_IO_ERROR_MALFORMED,
      "model.safetensors: tensor 'model.encoder.layers.1.feed_forward1.linear1.weight' is "
      "[64,256], expected [256,64]" },
    { no_tokenizer, MOROK_IO_ERROR_NOT_FOUND,
      "names the tokenizer '/root/.cache/gigaam/v3_e2e_ctc_tokenizer.model'" },
    { ckpt, MOROK_IO_ERROR_UNSUPPORTED, "convert it with scripts/gigaam/convert.py" },
    { json, MOROK_IO_ERROR_UNSUPPORTED, "give the model's folder, which holds config.json" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr (GError) error = NULL;
      g_test_message ("%s", cases[i].words);
      g_assert_null (morok_gigaam_load (cases[i].path, &error));
      g_test_message ("%s", error ? error->message : "(loaded)");
      g_assert_error (error, MOROK_IO_ERROR, (gint) cases[i].code);
      g_assert_nonnull (strstr (error->message, cases[i].words));
      g_autofree char *base = g_path_get_basename (cases[i].path);
      g_assert_nonnull (strstr (error->message, base));
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  tmp_dir = temp_dir_new ();
  g_test_add_func ("/gigaam/folder/same-model", test_same_model);
  g_test_add_func ("/gigaam/folder/weights-in-place", test_weights_in_place);
  g_test_add_func ("/gigaam/folder/bad-folders", test_bad_folders);
  int ret = g_test_run ();
  temp_dir_remove (tmp_dir);
  g_free (tmp_dir);
  return ret;
}
