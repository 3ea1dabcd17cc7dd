/* SPDX-License-Identifier: MIT */
/* A GigaAM model as a model hub publishes it, a folder: config.json (the
 * upstream config, under "cfg" or at the top level), model.safetensors or
 * shards listed by model.safetensors.index.json, and tokenizer.model when
 * the config names a SentencePiece model. The files are mapped as they are;
 * the tensors are found by their upstream names (a common prefix such as
 * "model." dropped), the config normalised (gigaam-hub-config.c), and the
 * front-end's window and filterbank made from it when the folder has none,
 * all as scripts/gigaam/convert.py does, so that a folder loads as the file
 * converted from it. */
#define G_LOG_DOMAIN "morok-models"
#include "models/gigaam-hub-private.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "io/morok-io.h"

#define WINDOW "preprocessor.featurizer.0.spectrogram.window"
#define MEL_FB "preprocessor.featurizer.0.mel_scale.fb"
#define INDEX "model.safetensors.index.json"

/* ---- the tensors of a file or folder ---- */

/* A tensor made at load: its description and its storage. */
typedef struct
{
  MorokSafetensor tensor;
  gint64 dims[2];
  float *data;
} MadeTensor;

static void
made_tensor_free (MadeTensor *t)
{
  g_free (t->data);
  g_free ((char *) t->tensor.name);
  g_free (t);
}

const MorokSafetensor *
gigaam_tensors_get (const MorokGigaAm *m, const char *name, GError **error)
{
  const GigaAmTensors *t = &m->tensors;
  if (!t->by_name)
    return morok_safetensors_get (t->files->pdata[0], name, error);
  const MorokSafetensor *found = g_hash_table_lookup (t->by_name, name);
  if (!found)
    g_set_error (error, MOROK_IO_ERROR, MOROK_IO_ERROR_NOT_FOUND,
                 "%s: no tensor '%s' in the folder's weights", m->path, name);
  return found;
}

void
gigaam_tensors_clear (GigaAmTensors *t)
{
  g_clear_pointer (&t->by_name, g_hash_table_unref);
  g_clear_pointer (&t->made, g_hash_table_unref);
  g_clear_pointer (&t->files, g_ptr_array_unref);
}

gboolean
gigaam_hub_missing (GigaAmHub *h, const char *name)
{
  g_set_error (h->error, MOROK_IO_ERROR, MOROK_IO_ERROR_NOT_FOUND,
               "%s: no tensor '%s' in the folder's weights", h->dir, name);
  return FALSE;
}

/* ---- the folder's files ---- */

/* A JSON file of the folder as an object. */
static JsonParser *
read_json (const char *path, GError **error)
{
  g_autofree char *text = NULL;
  gsize len;
  g_autoptr (GError) local = NULL;
  if (!g_file_get_contents (path, &text, &len, &local))
    {
      g_autofree char *what = morok_io_describe_path (
          path, g_error_matches (local, G_FILE_ERROR, G_FILE_ERROR_ACCES)   ? EACCES
                : g_error_matches (local, G_FILE_ERROR, G_FILE_ERROR_NOENT) ? ENOENT
                                                                            : EIO);
      g_set_error (error, MOROK_IO_ERROR, MOROK_IO_ERROR_OPEN, "%s", what);
      return NULL;
    }
  g_autoptr (JsonParser) parser = json_parser_new ();
  if (!json_parser_load_from_data (parser, text, (gssize) len, &local)
      || !JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)))
    {
      g_set_error (error, MOROK_IO_ERROR, MOROK_IO_ERROR_MALFORMED, "%s: not a JSON object%s%s",
                   path, local ? ": " : "", local ? local->message : "");
      return NULL;
    }
  return g_steal_pointer (&parser);
}

static int
compare_names (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const char *const *) a, *(const char *const *) b);
}

/* The safetensors files: those the index names, in name order, or
 * model.safetensors. */
static GPtrArray *
weight_files (const char *dir, JsonParser **out_index, GError **error)
{
  g_autoptr (GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *index = g_build_filename (dir, INDEX, NULL);
  g_autofree char *single = g_build_filename (dir, "model.safetensors", NULL);
  if (g_file_test (index, G_FILE_TEST_EXISTS))
    {
      if (!(*out_index = read_json (index, error)))
        return NULL;
      JsonObject *root = json_node_get_object (json_parser_get_root (*out_index));
      JsonNode *map = json_object_get_member (root, "weight_map");
      if (!map || !JSON_NODE_HOLDS_OBJECT (map))
        {
          g_set_error (error, MOROK_IO_ERROR, MOROK_IO_ERROR_MALFORMED,
                       "%s: no \"weight_map\" object", index);
          return NULL;
        }
      g_autoptr (GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);
      g_autoptr (GList) members = json_object_get_members (json_node_get_object (map));
      for (GList *l = members; l; l = l->next)
        {
          const char *file = json_object_get_string_member_with_default (json_node_get_object (map),
                                                                         l->data, NULL);
          if (!file || strchr (file, '/') || file[0] == '.' || !*file)
            {
              g_set_error (error, MOROK_IO_ERROR, MOROK_IO_ERROR_MALFORMED,
                           "%s: tensor '%s' maps to no file name of the folder", index,
                           (const char *) l->data);
              return NULL;
            }
          if (g_hash_table_add (seen, (gpointer) file))
            g_ptr_array_add (names, g_strdup (file));
        }
      g_ptr_array_sort (names, compare_names);
    }
  else if (g_file_test (single, G_FILE_TEST_EXISTS))
    g_ptr_array_add (names, g_strdup ("model.safetensors"));
  if (names->len == 0)
    {
      g_autofree char *bin = g_build_filename (dir, "pytorch_model.bin", NULL);
      g_set_error (error, MOROK_IO_ERROR, MOROK_IO_ERROR_NOT_FOUND,
                   g_file_test (bin, G_FILE_TEST_EXISTS)
                       ? "%s: its weights are pytorch_model.bin, which Morok does not read: "
                         "convert the folder with scripts/gigaam/convert.py"
                       : "%s: no model.safetensors (nor " INDEX ")",
                   dir);
      return NULL;
    }
  return g_steal_pointer (&names);
}

/* Maps every weight file into m->tensors.files and every tensor by its
 * stored name into @stored; with an index, each tensor must be in the file
 * it names. */
static gboolean
open_weights (MorokGigaAm *m, const char *dir, GHashTable *stored, GError **error)
{
  g_autoptr (JsonParser) index = NULL;
  g_autoptr (GPtrArray) names = weight_files (dir, &index, error);
  if (!names)
    return FALSE;
  for (guint i = 0; i < names->len; i++)
    {
      g_autofree char *path = g_build_filename (dir, names->pdata[i], NULL);
      MorokSafetensors *st = morok_safetensors_open (path, error);
      if (!st)
        return FALSE;
      g_ptr_array_add (m->tensors.files, st);
      for (guint k = 0; k < morok_safetensors_n_tensors (st); k++)
        {
          const MorokSafetensor *t = morok_safetensors_nth (st, k);
          g_hash_table_insert (stored, (gpointer) t->name, (gpointer) t);
        }
    }
  if (!index)
    return TRUE;
  JsonObject *map = json_object_get_object_member (
      json_node_get_object (json_parser_get_root (index)), "weight_map");
  g_autoptr (GList) members = json_object_get_members (map);
  for (GList *l = members; l; l = l->next)
    {
      const MorokSafetensor *t = g_hash_table_lookup (stored, l->data);
      const char *file = json_object_get_string_member (map, l->data);
      if (!t || strcmp (t->file, file) != 0)
        {
          g_set_error (error, MOROK_IO_ERROR, MOROK_IO_ERROR_NOT_FOUND,
                       "%s/%s: no tensor '%s', which " INDEX " puts there", dir, file,
                       (const char *) l->data);
          return FALSE;
        }
    }
  return TRUE;
}

/* Upstream names: the prefix in front of "encoder.layers.0." (a wrapper's
 * "model.", "module.") dropped from the tensors that have it, and the
 * front-end's buffers under the names of a Sequential featurizer. */
static gboolean
map_names (MorokGigaAm *m, GHashTable *stored, GError **error)
{
  g_autoptr (GList) names = g_hash_table_get_keys (stored);
  names = g_list_sort (names, (GCompareFunc) strcmp);
  const char *probe = NULL;
  for (GList *l = names; l && !probe; l = l->next)
    {
      const char *at = strstr (l->data, "encoder.layers.0.");
      if (at && (at == (const char *) l->data || at[-1] == '.'))
        probe = l->data;
    }
  if (!probe)
    {
      g_set_error (error, MOROK_IO_ERROR, MOROK_IO_ERROR_NOT_FOUND,
                   "%s: no 'encoder.layers.0.*' tensors: not GigaAM weights", m->path);
      return FALSE;
    }
  gsize prefix = strstr (probe, "encoder.layers.0.") - probe;
  GHashTable *by_name = m->tensors.by_name;
  for (GList *l = names; l; l = l->next)
    if (strncmp (l->data, probe, prefix) == 0)
      g_hash_table_insert (by_name, g_strdup ((const char *) l->data + prefix),
                           g_hash_table_lookup (stored, l->data));
  static const char *const flat[][2] = {
    { "preprocessor.featurizer.spectrogram.window", WINDOW },
    { "preprocessor.featurizer.mel_scale.fb", MEL_FB },
  };
  for (guint i = 0; i < G_N_ELEMENTS (flat); i++)
    {
      gpointer t = g_hash_table_lookup (by_name, flat[i][0]);
      if (t && !g_hash_table_contains (by_name, flat[i][1]))
        g_hash_table_insert (by_name, g_strdup (flat[i][1]), t);
    }
  return TRUE;
}

/* The SentencePiece model a config asks for: the folder's tokenizer.model,
 * else the file decoding.model_path names, beside the weights. */
static gboolean
open_tokenizer (GigaAmHub *h, JsonObject *cfg, GError **error)
{
  if (!gigaam_hub_wants_tokenizer (cfg))
    return TRUE;
  const char *named = gigaam_hub_named_tokenizer (cfg);
  g_autofree char *base = named ? g_path_get_basename (named) : NULL;
  const char *candidates[] = { "tokenizer.model", base };
  for (guint i = 0; i < G_N_ELEMENTS (candidates) && candidates[i]; i++)
    {
      g_autofree char *path = g_build_filename (h->dir, candidates[i], NULL);
      if (g_file_test (path, G_FILE_TEST_EXISTS))
        return (h->tokenizer = morok_sp_model_load (path, error)) != NULL;
    }
  if (named)
    g_set_error (error, MOROK_IO_ERROR, MOROK_IO_ERROR_NOT_FOUND,
                 "%s: config.json names the tokenizer '%s' (decoding.model_path), and the folder "
                 "has neither tokenizer.model nor %s",
                 h->dir, named, base);
  else
    g_set_error (error, MOROK_IO_ERROR, MOROK_IO_ERROR_NOT_FOUND,
                 "%s: config.json has no vocabulary (decoding.vocabulary) and the folder no "
                 "tokenizer.model",
                 h->dir);
  return FALSE;
}

/* config.json's upstream config: "cfg" if it has one, else the top level;
 * it must look like a GigaAM ASR model's before the weights are read. */
static JsonObject *
upstream_config (const char *config_file, JsonParser *parser, GError **error)
{
  JsonObject *root = json_node_get_object (json_parser_get_root (parser));
  JsonNode *cfg = json_object_get_member (root, "cfg");
  JsonObject *c = cfg && JSON_NODE_HOLDS_OBJECT (cfg) ? json_node_get_object (cfg) : root;
  JsonNode *enc = json_object_get_member (c, "encoder");
  if (enc && JSON_NODE_HOLDS_OBJECT (enc))
    return c;
  const char *type = json_object_get_string_member_with_default (root, "model_type", NULL);
  g_set_error (error, MOROK_IO_ERROR, MOROK_IO_ERROR_UNSUPPORTED,
               "%s: not a GigaAM ASR model's config (no \"encoder\" section, under \"cfg\" or at "
               "the top level)%s%s%s",
               config_file, type ? "; its model_type is '" : "", type ? type : "", type ? "'" : "");
  return NULL;
}

char *
gigaam_hub_open (MorokGigaAm *m, const char *dir, GError **error)
{
  if (g_access (dir, R_OK | X_OK) != 0)
    {
      g_set_error (error, MOROK_IO_ERROR, MOROK_IO_ERROR_OPEN,
                   "%s: no permission to read the folder", dir);
      return NULL;
    }
  g_autofree char *config_file = g_build_filename (dir, "config.json", NULL);
  if (!g_file_test (config_file, G_FILE_TEST_EXISTS))
    {
      g_set_error (error, MOROK_IO_ERROR, MOROK_IO_ERROR_NOT_FOUND,
                   "%s: no config.json: a GigaAM model folder holds config.json and "
                   "model.safetensors (a converted file is one .safetensors file)",
                   dir);
      return NULL;
    }
  g_autoptr (JsonParser) parser = read_json (config_file, error);
  JsonObject *cfg = parser ? upstream_config (config_file, parser, error) : NULL;
  if (!cfg)
    return NULL;
  m->tensors.by_name = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr (GHashTable) stored = g_hash_table_new (g_str_hash, g_str_equal);
  if (!open_weights (m, dir, stored, error) || !map_names (m, stored, error))
    return NULL;
  GigaAmHub h = { dir, config_file, m->tensors.by_name, NULL, error };
  char *json = open_tokenizer (&h, cfg, error) ? gigaam_hub_normalise (&h, cfg) : NULL;
  morok_sp_model_free (h.tokenizer);
  return json;
}

/* ---- the front-end's tables, made from the config ---- */

static void
add_made (MorokGigaAm *m, const char *name, float *data, gint64 d0, gint64 d1)
{
  MadeTensor *t = g_new0 (MadeTensor, 1);
  guint rank = d1 ? 2 : 1;
  t->dims[0] = d0, t->dims[1] = d1;
  t->data = data;
  gint64 n = d0 * (d1 ? d1 : 1);
  t->tensor = (MorokSafetensor){ .name = g_strdup (name),
                                 .file = "config.json",
                                 .dtype = MOROK_SAFETENSOR_DTYPE_F32,
                                 .rank = rank,
                                 .dims = t->dims,
                                 .n_elements = n,
                                 .data = data,
                                 .n_bytes = (gsize) n * sizeof (float) };
  if (!m->tensors.made)
    m->tensors.made = g_hash_table_new_full (g_direct_hash, g_direct_equal, NULL,
                                             (GDestroyNotify) made_tensor_free);
  g_hash_table_insert (m->tensors.made, &t->tensor, t);
  g_hash_table_insert (m->tensors.by_name, g_strdup (name), &t->tensor);
}

/* HTK mel of @hz, and back. */
static double
hz_to_mel (double hz)
{
  return 2595.0 * log10 (1.0 + hz / 700.0);
}

static double
mel_to_hz (double mel)
{
  return 700.0 * (pow (10.0, mel / 2595.0) - 1.0);
}

/* torchaudio's melscale_fbanks (norm None, HTK): [n_fft/2+1, F] triangles
 * over F + 2 points equally spaced in mel from f_min to f_max, each rising
 * from its left point to its centre and falling to its right one, on the
 * bins' frequencies 0 .. sample_rate / 2. In double, stored as f32. */
static float *
mel_filterbank (const MorokGigaAmConfig *c)
{
  guint bins = c->n_fft / 2 + 1, F = c->n_mels;
  double f_max = c->sample_rate / 2.0, top = (double) (c->sample_rate / 2);
  double m_lo = hz_to_mel (0.0), m_hi = hz_to_mel (f_max);
  g_autofree double *pts = g_new (double, F + 2);
  for (guint i = 0; i < F + 2; i++)
    pts[i] = mel_to_hz (m_lo + (m_hi - m_lo) * i / (F + 1));
  float *fb = g_new0 (float, (gsize) bins *F);
  for (guint k = 0; k < bins; k++)
    {
      double f = bins > 1 ? top * k / (bins - 1) : 0.0;
      for (guint j = 0; j < F; j++)
        {
          double down = (f - pts[j]) / (pts[j + 1] - pts[j]);
          double up = (pts[j + 2] - f) / (pts[j + 2] - pts[j + 1]);
          fb[(gsize) k * F + j] = (float) MAX (0.0, MIN (down, up));
        }
    }
  return fb;
}

void
gigaam_hub_add_frontend (MorokGigaAm *m)
{
  const MorokGigaAmConfig *c = &m->config;
  if (!g_hash_table_contains (m->tensors.by_name, WINDOW))
    {
      /* periodic Hann: 0.5 - 0.5 cos (2π n / N), as torch.hann_window (N) */
      float *w = g_new (float, c->win_length);
      for (guint n = 0; n < c->win_length; n++)
        w[n] = (float) (0.5 - 0.5 * cos (2.0 * G_PI * n / c->win_length));
      add_made (m, WINDOW, w, c->win_length, 0);
    }
  if (!g_hash_table_contains (m->tensors.by_name, MEL_FB))
    add_made (m, MEL_FB, mel_filterbank (c), c->n_fft / 2 + 1, c->n_mels);
}
