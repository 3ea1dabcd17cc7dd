/* SPDX-License-Identifier: MIT */
/* Safetensors reader: map the file, check the whole header once, then hand
 * out tensors that point into the mapping. See safetensors.h for the layout. */
#define G_LOG_DOMAIN "morok-io"

#include "safetensors.h"
#include "base/morok-dtype.h"

#include <json-glib/json-glib.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Header lengths above this are taken for garbage, not for a header (the
 * reference implementation uses the same limit). */
#define HEADER_SIZE_MAX ((guint64) 100 * 1024 * 1024)

struct _MorokSafetensors
{
  char *path;
  char *display; /* basename of path, for messages */
  GMappedFile *file;
  const guint8 *bytes;
  gsize size;
  MorokSafetensor *tensors; /* [n_tensors], sorted by offset */
  guint n_tensors;
  gint64 *dims;          /* every tensor's dims, back to back */
  GStringChunk *strings; /* names, metadata keys and values */
  GHashTable *by_name;   /* name -> MorokSafetensor *, borrowed */
  GHashTable *metadata;  /* key -> value, borrowed */
};

static const struct
{
  const char *name;
  gsize size;
  gboolean is_float;
} dtypes[] = {
  [MOROK_SAFETENSOR_DTYPE_F64] = { "F64", 8, TRUE },
  [MOROK_SAFETENSOR_DTYPE_F32] = { "F32", 4, TRUE },
  [MOROK_SAFETENSOR_DTYPE_F16] = { "F16", 2, TRUE },
  [MOROK_SAFETENSOR_DTYPE_BF16] = { "BF16", 2, TRUE },
  [MOROK_SAFETENSOR_DTYPE_I64] = { "I64", 8, FALSE },
  [MOROK_SAFETENSOR_DTYPE_I32] = { "I32", 4, FALSE },
  [MOROK_SAFETENSOR_DTYPE_I16] = { "I16", 2, FALSE },
  [MOROK_SAFETENSOR_DTYPE_I8] = { "I8", 1, FALSE },
  [MOROK_SAFETENSOR_DTYPE_U8] = { "U8", 1, FALSE },
  [MOROK_SAFETENSOR_DTYPE_BOOL] = { "BOOL", 1, FALSE },
};

/* ---- dtypes ---- */

const char *
morok_safetensor_dtype_name (MorokSafetensorDtype dtype)
{
  g_return_val_if_fail ((guint) dtype < G_N_ELEMENTS (dtypes), NULL);
  return dtypes[dtype].name;
}

gsize
morok_safetensor_dtype_size (MorokSafetensorDtype dtype)
{
  g_return_val_if_fail ((guint) dtype < G_N_ELEMENTS (dtypes), 0);
  return dtypes[dtype].size;
}

gboolean
morok_safetensor_dtype_is_float (MorokSafetensorDtype dtype)
{
  g_return_val_if_fail ((guint) dtype < G_N_ELEMENTS (dtypes), FALSE);
  return dtypes[dtype].is_float;
}

static gboolean
dtype_from_name (const char *name, MorokSafetensorDtype *out)
{
  for (guint i = 0; i < G_N_ELEMENTS (dtypes); i++)
    if (strcmp (dtypes[i].name, name) == 0)
      {
        *out = (MorokSafetensorDtype) i;
        return TRUE;
      }
  return FALSE;
}

/* ---- header checks ---- */

/* Sets error to "<file>: <message>"; always returns FALSE. */
static gboolean G_GNUC_PRINTF (4, 5)
    fail (GError **error, MorokIoError code, const MorokSafetensors *st, const char *format, ...)
{
  va_list args;
  va_start (args, format);
  g_autofree char *message = g_strdup_vprintf (format, args);
  va_end (args);
  g_set_error (error, MOROK_IO_ERROR, code, "%s: %s", st->display, message);
  return FALSE;
}

/* A JSON integer >= 0 (not a float, string or negative number). */
static gboolean
node_get_count (JsonNode *node, guint64 *out)
{
  if (!JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_INT64)
    return FALSE;
  gint64 v = json_node_get_int (node);
  if (v < 0)
    return FALSE;
  *out = (guint64) v;
  return TRUE;
}

static void
format_dims (GString *s, const gint64 *dims, guint rank)
{
  g_string_append_c (s, '[');
  for (guint i = 0; i < rank; i++)
    g_string_append_printf (s, "%s%" G_GINT64_FORMAT, i ? "," : "", dims[i]);
  g_string_append_c (s, ']');
}

static gboolean
parse_metadata (MorokSafetensors *st, JsonNode *node, GError **error)
{
  if (JSON_NODE_HOLDS_NULL (node))
    return TRUE;
  if (!JSON_NODE_HOLDS_OBJECT (node))
    return fail (error, MOROK_IO_ERROR_MALFORMED, st, "__metadata__ is not a JSON object");
  JsonObject *obj = json_node_get_object (node);
  g_autoptr (GList) keys = json_object_get_members (obj);
  for (GList *l = keys; l; l = l->next)
    {
      JsonNode *value = json_object_get_member (obj, l->data);
      if (!JSON_NODE_HOLDS_VALUE (value) || json_node_get_value_type (value) != G_TYPE_STRING)
        return fail (error, MOROK_IO_ERROR_MALFORMED, st, "__metadata__ '%s' is not a string",
                     (const char *) l->data);
      g_hash_table_insert (st->metadata, g_string_chunk_insert (st->strings, l->data),
                           g_string_chunk_insert (st->strings, json_node_get_string (value)));
    }
  return TRUE;
}

/* Fills t (name, dtype, rank, n_elements, offset, n_bytes) and dims[0..rank)
 * from one header entry; data_size is the length of the data buffer. */
static gboolean
parse_tensor (MorokSafetensors *st, const char *name, JsonNode *node, gsize data_size,
              MorokSafetensor *t, gint64 *dims, GError **error)
{
  if (!JSON_NODE_HOLDS_OBJECT (node))
    return fail (error, MOROK_IO_ERROR_MALFORMED, st, "tensor '%s': entry is not a JSON object",
                 name);
  JsonObject *obj = json_node_get_object (node);
  JsonNode *dtype = json_object_get_member (obj, "dtype");
  JsonNode *shape = json_object_get_member (obj, "shape");
  JsonNode *offsets = json_object_get_member (obj, "data_offsets");
  if (!dtype || !shape || !offsets)
    return fail (error, MOROK_IO_ERROR_MALFORMED, st, "tensor '%s': no %s", name,
                 !dtype   ? "dtype"
                 : !shape ? "shape"
                          : "data_offsets");
  t->name = g_string_chunk_insert (st->strings, name);
  t->file = st->display;

  if (!JSON_NODE_HOLDS_VALUE (dtype) || json_node_get_value_type (dtype) != G_TYPE_STRING)
    return fail (error, MOROK_IO_ERROR_MALFORMED, st, "tensor '%s': dtype is not a string", name);
  if (!dtype_from_name (json_node_get_string (dtype), &t->dtype))
    return fail (error, MOROK_IO_ERROR_UNSUPPORTED, st, "tensor '%s': dtype '%s' is not supported",
                 name, json_node_get_string (dtype));

  if (!JSON_NODE_HOLDS_ARRAY (shape))
    return fail (error, MOROK_IO_ERROR_MALFORMED, st, "tensor '%s': shape is not an array", name);
  JsonArray *dims_array = json_node_get_array (shape);
  t->rank = json_array_get_length (dims_array);
  if (t->rank > MOROK_SAFETENSOR_RANK_MAX)
    return fail (error, MOROK_IO_ERROR_MALFORMED, st, "tensor '%s': rank %u above the limit %d",
                 name, t->rank, MOROK_SAFETENSOR_RANK_MAX);
  guint64 n_elements = 1;
  gboolean overflow = FALSE;
  for (guint i = 0; i < t->rank; i++)
    {
      guint64 d;
      if (!node_get_count (json_array_get_element (dims_array, i), &d))
        return fail (error, MOROK_IO_ERROR_MALFORMED, st,
                     "tensor '%s': shape entry %u is not an integer >= 0", name, i);
      dims[i] = (gint64) d;
      overflow |= !g_uint64_checked_mul (&n_elements, n_elements, d);
    }

  guint64 begin, end;
  if (!JSON_NODE_HOLDS_ARRAY (offsets) || json_array_get_length (json_node_get_array (offsets)) != 2
      || !node_get_count (json_array_get_element (json_node_get_array (offsets), 0), &begin)
      || !node_get_count (json_array_get_element (json_node_get_array (offsets), 1), &end))
    return fail (error, MOROK_IO_ERROR_MALFORMED, st,
                 "tensor '%s': data_offsets is not two integers >= 0", name);
  if (begin > end)
    return fail (error, MOROK_IO_ERROR_MALFORMED, st,
                 "tensor '%s': data_offsets [%" G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT
                 "] end before they begin",
                 name, begin, end);
  if (end > data_size)
    return fail (error, MOROK_IO_ERROR_TRUNCATED, st,
                 "tensor '%s': data_offsets [%" G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT
                 "] past end of file (%" G_GSIZE_FORMAT " bytes of data)",
                 name, begin, end, data_size);

  guint64 n_bytes = 0;
  overflow |= !g_uint64_checked_mul (&n_bytes, n_elements, dtypes[t->dtype].size);
  if (overflow || n_bytes != end - begin)
    {
      g_autoptr (GString) s = g_string_new (NULL);
      format_dims (s, dims, t->rank);
      g_autofree char *needs = overflow ? g_strdup ("more than 2^64")
                                        : g_strdup_printf ("%" G_GUINT64_FORMAT, n_bytes);
      return fail (error, MOROK_IO_ERROR_MALFORMED, st,
                   "tensor '%s': shape %s of %s needs %s bytes, data_offsets [%" G_GUINT64_FORMAT
                   ", %" G_GUINT64_FORMAT "] hold %" G_GUINT64_FORMAT,
                   name, s->str, dtypes[t->dtype].name, needs, begin, end, end - begin);
    }
  t->n_elements = (gint64) n_elements;
  t->n_bytes = (gsize) n_bytes;
  t->offset = (gsize) begin; /* relative to the data buffer until open () rebases it */
  return TRUE;
}

static int
compare_by_offset (const void *a, const void *b)
{
  const MorokSafetensor *x = a, *y = b;
  if (x->offset != y->offset)
    return x->offset < y->offset ? -1 : 1;
  if (x->n_bytes != y->n_bytes)
    return x->n_bytes < y->n_bytes ? -1 : 1;
  return strcmp (x->name, y->name);
}

/* Sorts the tensors by offset and refuses overlapping spans (empty tensors
 * overlap nothing). */
static gboolean
check_overlaps (MorokSafetensors *st, GError **error)
{
  qsort (st->tensors, st->n_tensors, sizeof (MorokSafetensor), compare_by_offset);
  const MorokSafetensor *prev = NULL;
  for (guint i = 0; i < st->n_tensors; i++)
    {
      const MorokSafetensor *t = &st->tensors[i];
      if (t->n_bytes == 0)
        continue;
      if (prev && prev->offset + prev->n_bytes > t->offset)
        return fail (error, MOROK_IO_ERROR_MALFORMED, st,
                     "tensor '%s': data_offsets [%" G_GSIZE_FORMAT ", %" G_GSIZE_FORMAT
                     "] overlap tensor '%s' [%" G_GSIZE_FORMAT ", %" G_GSIZE_FORMAT "]",
                     t->name, t->offset, t->offset + t->n_bytes, prev->name, prev->offset,
                     prev->offset + prev->n_bytes);
      prev = t;
    }
  return TRUE;
}

static gboolean
parse_header (MorokSafetensors *st, GError **error)
{
  if (st->size < 8)
    return fail (error, MOROK_IO_ERROR_TRUNCATED, st,
                 "%" G_GSIZE_FORMAT " bytes, shorter than the 8-byte header length", st->size);
  guint64 header_len;
  memcpy (&header_len, st->bytes, 8);
  header_len = GUINT64_FROM_LE (header_len);
  if (header_len > HEADER_SIZE_MAX)
    return fail (error, MOROK_IO_ERROR_MALFORMED, st,
                 "header length %" G_GUINT64_FORMAT " is absurd (limit %" G_GUINT64_FORMAT ")",
                 header_len, HEADER_SIZE_MAX);
  if (header_len > st->size - 8)
    return fail (error, MOROK_IO_ERROR_TRUNCATED, st,
                 "header length %" G_GUINT64_FORMAT " past end of file (%" G_GSIZE_FORMAT " bytes)",
                 header_len, st->size);
  gsize data_start = 8 + (gsize) header_len;
  gsize data_size = st->size - data_start;

  g_autoptr (JsonParser) parser = json_parser_new_immutable ();
  g_autoptr (GError) json_error = NULL;
  if (!json_parser_load_from_data (parser, (const char *) st->bytes + 8, (gssize) header_len,
                                   &json_error))
    return fail (error, MOROK_IO_ERROR_MALFORMED, st, "header is not valid JSON: %s",
                 json_error->message);
  JsonNode *root = json_parser_get_root (parser);
  if (!root || !JSON_NODE_HOLDS_OBJECT (root))
    return fail (error, MOROK_IO_ERROR_MALFORMED, st, "header is not a JSON object");
  JsonObject *obj = json_node_get_object (root);

  g_autoptr (GList) names = json_object_get_members (obj);
  guint n = g_list_length (names);
  st->tensors = g_new0 (MorokSafetensor, MAX (n, 1));
  st->dims = g_new0 (gint64, (gsize) MAX (n, 1) * MOROK_SAFETENSOR_RANK_MAX);
  for (GList *l = names; l; l = l->next)
    {
      const char *name = l->data;
      JsonNode *node = json_object_get_member (obj, name);
      if (strcmp (name, "__metadata__") == 0)
        {
          if (!parse_metadata (st, node, error))
            return FALSE;
          continue;
        }
      gint64 *dims = st->dims + (gsize) st->n_tensors * MOROK_SAFETENSOR_RANK_MAX;
      MorokSafetensor *t = &st->tensors[st->n_tensors];
      if (!parse_tensor (st, name, node, data_size, t, dims, error))
        return FALSE;
      t->dims = dims;
      st->n_tensors++;
    }
  if (!check_overlaps (st, error))
    return FALSE;
  for (guint i = 0; i < st->n_tensors; i++)
    {
      MorokSafetensor *t = &st->tensors[i];
      t->offset += data_start;
      t->data = st->bytes + t->offset;
      g_hash_table_insert (st->by_name, (gpointer) t->name, t);
    }
  return TRUE;
}

/* ---- files ---- */

MorokSafetensors *
morok_safetensors_open (const char *path, GError **error)
{
  g_return_val_if_fail (path != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  g_autoptr (MorokSafetensors) st = g_new0 (MorokSafetensors, 1);
  st->path = g_strdup (path);
  st->display = g_filename_display_basename (path);
  st->strings = g_string_chunk_new (4096);
  st->by_name = g_hash_table_new (g_str_hash, g_str_equal);
  st->metadata = g_hash_table_new (g_str_hash, g_str_equal);

  st->file = morok_io_map_file (path, error);
  if (!st->file)
    return NULL;
  st->bytes = (const guint8 *) g_mapped_file_get_contents (st->file);
  st->size = st->bytes ? g_mapped_file_get_length (st->file) : 0;
  if (!parse_header (st, error))
    return NULL;
  g_debug ("%s: %u tensors, %" G_GSIZE_FORMAT " bytes", st->display, st->n_tensors, st->size);
  return g_steal_pointer (&st);
}

void
morok_safetensors_free (MorokSafetensors *st)
{
  if (!st)
    return;
  g_clear_pointer (&st->file, g_mapped_file_unref);
  g_clear_pointer (&st->by_name, g_hash_table_unref);
  g_clear_pointer (&st->metadata, g_hash_table_unref);
  g_clear_pointer (&st->strings, g_string_chunk_free);
  g_free (st->tensors);
  g_free (st->dims);
  g_free (st->display);
  g_free (st->path);
  g_free (st);
}

const char *
morok_safetensors_path (const MorokSafetensors *st)
{
  g_return_val_if_fail (st != NULL, NULL);
  return st->path;
}

guint
morok_safetensors_n_tensors (const MorokSafetensors *st)
{
  g_return_val_if_fail (st != NULL, 0);
  return st->n_tensors;
}

const MorokSafetensor *
morok_safetensors_nth (const MorokSafetensors *st, guint i)
{
  g_return_val_if_fail (st != NULL, NULL);
  g_return_val_if_fail (i < st->n_tensors, NULL);
  return &st->tensors[i];
}

const MorokSafetensor *
morok_safetensors_find (const MorokSafetensors *st, const char *name)
{
  g_return_val_if_fail (st != NULL, NULL);
  g_return_val_if_fail (name != NULL, NULL);
  return g_hash_table_lookup (st->by_name, name);
}

const MorokSafetensor *
morok_safetensors_get (const MorokSafetensors *st, const char *name, GError **error)
{
  const MorokSafetensor *t = morok_safetensors_find (st, name);
  if (!t && st && name)
    g_set_error (error, MOROK_IO_ERROR, MOROK_IO_ERROR_NOT_FOUND, "%s: no tensor '%s'", st->display,
                 name);
  return t;
}

gboolean
morok_safetensor_check_shape (const MorokSafetensor *t, guint rank, const gint64 *dims,
                              GError **error)
{
  g_return_val_if_fail (t != NULL && (rank == 0 || dims != NULL), FALSE);
  gboolean match = t->rank == rank;
  for (guint i = 0; match && i < rank; i++)
    match = dims[i] < 0 || dims[i] == t->dims[i];
  if (match)
    return TRUE;
  g_autoptr (GString) is = g_string_new (NULL);
  g_autoptr (GString) want = g_string_new (NULL);
  format_dims (is, t->dims, t->rank);
  format_dims (want, dims, rank);
  g_set_error (error, MOROK_IO_ERROR, MOROK_IO_ERROR_MALFORMED,
               "%s: tensor '%s' is %s, expected %s", t->file, t->name, is->str, want->str);
  return FALSE;
}

const MorokSafetensor *
morok_safetensors_get_shaped (const MorokSafetensors *st, const char *name, guint rank,
                              const gint64 *dims, GError **error)
{
  g_return_val_if_fail (rank == 0 || dims != NULL, NULL);
  const MorokSafetensor *t = morok_safetensors_get (st, name, error);
  return t && morok_safetensor_check_shape (t, rank, dims, error) ? t : NULL;
}

const char *
morok_safetensors_metadata (const MorokSafetensors *st, const char *key)
{
  g_return_val_if_fail (st != NULL, NULL);
  g_return_val_if_fail (key != NULL, NULL);
  return g_hash_table_lookup (st->metadata, key);
}

static int
compare_strings (const void *a, const void *b)
{
  return strcmp (*(const char *const *) a, *(const char *const *) b);
}

const char **
morok_safetensors_metadata_keys (const MorokSafetensors *st)
{
  g_return_val_if_fail (st != NULL, NULL);
  guint n = 0;
  const char **keys = (const char **) g_hash_table_get_keys_as_array (st->metadata, &n);
  qsort (keys, n, sizeof (char *), compare_strings);
  return keys;
}

/* ---- data as f32 ---- */

gboolean
morok_safetensor_read_f32 (const MorokSafetensor *tensor, float *dest, gsize n_dest, GError **error)
{
  g_return_val_if_fail (tensor != NULL, FALSE);
  g_return_val_if_fail (dest != NULL || tensor->n_elements == 0, FALSE);
  g_return_val_if_fail (n_dest >= (gsize) tensor->n_elements, FALSE);

  const guint8 *src = tensor->data;
  gsize n = (gsize) tensor->n_elements;
  switch (tensor->dtype)
    {
    case MOROK_SAFETENSOR_DTYPE_F32:
      if (G_BYTE_ORDER == G_LITTLE_ENDIAN)
        {
          if (n)
            memcpy (dest, src, n * sizeof (float));
          return TRUE;
        }
      for (gsize i = 0; i < n; i++)
        {
          guint32 bits;
          memcpy (&bits, src + 4 * i, 4);
          bits = GUINT32_FROM_LE (bits);
          memcpy (&dest[i], &bits, 4);
        }
      return TRUE;
    case MOROK_SAFETENSOR_DTYPE_F64:
      for (gsize i = 0; i < n; i++)
        {
          guint64 bits;
          double d;
          memcpy (&bits, src + 8 * i, 8);
          bits = GUINT64_FROM_LE (bits);
          memcpy (&d, &bits, 8);
          dest[i] = (float) d;
        }
      return TRUE;
    case MOROK_SAFETENSOR_DTYPE_F16:
    case MOROK_SAFETENSOR_DTYPE_BF16:
      for (gsize i = 0; i < n; i++)
        {
          guint16 bits;
          memcpy (&bits, src + 2 * i, 2);
          bits = GUINT16_FROM_LE (bits);
          dest[i] = tensor->dtype == MOROK_SAFETENSOR_DTYPE_F16 ? morok_f16_to_f32 (bits)
                                                                : morok_bf16_to_f32 (bits);
        }
      return TRUE;
    default:
      g_set_error (error, MOROK_IO_ERROR, MOROK_IO_ERROR_UNSUPPORTED,
                   "%s: tensor '%s': dtype %s does not convert to f32", tensor->file, tensor->name,
                   dtypes[tensor->dtype].name);
      return FALSE;
    }
}

const float *
morok_safetensor_f32_in_place (const MorokSafetensor *tensor)
{
  g_return_val_if_fail (tensor != NULL, NULL);
  if (tensor->dtype != MOROK_SAFETENSOR_DTYPE_F32 || G_BYTE_ORDER != G_LITTLE_ENDIAN
      || (guintptr) tensor->data % G_ALIGNOF (float))
    return NULL;
  return tensor->data;
}

void
morok_safetensor_drop (const MorokSafetensor *tensor)
{
  g_return_if_fail (tensor != NULL);
  const guintptr page = (guintptr) sysconf (_SC_PAGESIZE);
  guintptr lo = ((guintptr) tensor->data + page - 1) / page * page;
  guintptr hi = ((guintptr) tensor->data + tensor->n_bytes) / page * page;
  if (hi > lo) /* a read-only private file mapping: the pages come back from the file */
    madvise ((void *) lo, hi - lo, MADV_DONTNEED);
}

void
morok_safetensors_drop (const MorokSafetensors *st)
{
  g_return_if_fail (st != NULL);
  if (st->size)
    madvise ((void *) st->bytes, st->size, MADV_DONTNEED);
}

float *
morok_safetensor_dup_f32 (const MorokSafetensor *tensor, GError **error)
{
  g_return_val_if_fail (tensor != NULL, NULL);
  g_autofree float *out = g_new (float, MAX (tensor->n_elements, 1));
  if (!morok_safetensor_read_f32 (tensor, out, (gsize) tensor->n_elements, error))
    return NULL;
  return g_steal_pointer (&out);
}
