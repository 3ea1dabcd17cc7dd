/* SPDX-License-Identifier: MIT */
#include "fixtures.h"
#include "io/safetensors.h"
#include "kernels/morok-isa.h"
#include "kernels/weight-pack.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char *
fixture_path (const char *name)
{
  const char *dir = g_getenv ("G_TEST_SRCDIR");
  return g_build_filename (dir ? dir : ".", "fixtures", name, NULL);
}

static guint32
le32 (const guint8 *p)
{
  return (guint32) p[0] | (guint32) p[1] << 8 | (guint32) p[2] << 16 | (guint32) p[3] << 24;
}

gint16 *
fixture_read_wav (const char *name, guint *out_rate, gsize *out_n)
{
  g_autofree char *path = fixture_path (name);
  g_autofree guint8 *d = NULL;
  gsize len;
  g_assert_true (g_file_get_contents (path, (char **) &d, &len, NULL));
  g_assert_true (len >= 12 && memcmp (d, "RIFF", 4) == 0 && memcmp (d + 8, "WAVE", 4) == 0);
  const guint8 *fmt = NULL, *data = NULL;
  gsize data_len = 0;
  for (gsize at = 12; at + 8 <= len;)
    {
      gsize size = le32 (d + at + 4);
      g_assert_cmpuint (size, <=, len - at - 8);
      if (memcmp (d + at, "fmt ", 4) == 0 && size >= 16)
        fmt = d + at + 8;
      else if (memcmp (d + at, "data", 4) == 0)
        data = d + at + 8, data_len = size;
      at += 8 + size + (size & 1);
    }
  g_assert_nonnull (fmt);
  g_assert_nonnull (data);
  g_assert_cmpuint (fmt[0] | fmt[1] << 8, ==, 1);    /* PCM */
  g_assert_cmpuint (fmt[2] | fmt[3] << 8, ==, 1);    /* mono */
  g_assert_cmpuint (fmt[14] | fmt[15] << 8, ==, 16); /* bits */
  if (out_rate)
    *out_rate = le32 (fmt + 4);
  *out_n = data_len / 2;
  gint16 *s = g_new (gint16, MAX (*out_n, 1));
  for (gsize i = 0; i < *out_n; i++)
    s[i] = (gint16) (data[2 * i] | data[2 * i + 1] << 8);
  return s;
}

GArray *
fixture_read_floats (const char *name)
{
  g_autofree char *path = fixture_path (name);
  g_autofree char *text = NULL;
  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  GArray *out = g_array_new (FALSE, FALSE, sizeof (float));
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  for (guint i = 0; lines[i]; i++)
    if (lines[i][0] && lines[i][0] != '#')
      {
        float v = (float) g_ascii_strtod (lines[i], NULL);
        g_array_append_val (out, v);
      }
  return out;
}

void
fixture_write_gigaam (const char *path, FixtureGigaAmEdit edit, gsize truncate)
{
  fixture_write_edited ("gigaam-v3-tiny.safetensors", path, edit, truncate);
}

void
fixture_write_edited (const char *fixture, const char *path, FixtureGigaAmEdit edit, gsize truncate)
{
  g_autofree char *src = fixture_path (fixture);
  g_autofree char *bytes = NULL;
  gsize len;
  g_assert_true (g_file_get_contents (src, &bytes, &len, NULL));
  if (truncate)
    {
      g_assert_true (g_file_set_contents (path, bytes, MIN (truncate, len), NULL));
      return;
    }
  guint64 hlen;
  memcpy (&hlen, bytes, 8);
  hlen = GUINT64_FROM_LE (hlen);
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_assert_true (json_parser_load_from_data (parser, bytes + 8, (gssize) hlen, NULL));
  JsonObject *header = json_node_get_object (json_parser_get_root (parser));
  JsonObject *meta = json_object_get_object_member (header, "__metadata__");
  g_autoptr (JsonParser) cp = json_parser_new ();
  g_assert_true (json_parser_load_from_data (
      cp, json_object_get_string_member (meta, "morok.config"), -1, NULL));
  JsonObject *config = json_node_get_object (json_parser_get_root (cp));
  edit (header, config);
  if (json_object_has_member (meta, "morok.config"))
    {
      g_autofree char *cs = json_to_string (json_parser_get_root (cp), FALSE);
      json_object_set_string_member (meta, "morok.config", cs);
    }
  g_autofree char *h = json_to_string (json_parser_get_root (parser), FALSE);
  guint64 nl = GUINT64_TO_LE ((guint64) strlen (h));
  g_autoptr (GByteArray) out = g_byte_array_new ();
  g_byte_array_append (out, (const guint8 *) &nl, 8);
  g_byte_array_append (out, (const guint8 *) h, strlen (h));
  g_byte_array_append (out, (const guint8 *) bytes + 8 + hlen, len - 8 - hlen);
  g_assert_true (g_file_set_contents (path, (const char *) out->data, out->len, NULL));
}

void
fixture_write_f32 (const char *fixture, const char *path)
{
  g_autofree char *src = fixture_path (fixture);
  g_autoptr (MorokSafetensors) st = morok_safetensors_open (src, NULL);
  g_assert_nonnull (st);
  g_autoptr (JsonBuilder) h = json_builder_new ();
  g_autoptr (GByteArray) data = g_byte_array_new ();
  json_builder_begin_object (h);
  json_builder_set_member_name (h, "__metadata__");
  json_builder_begin_object (h);
  g_autofree const char **keys = morok_safetensors_metadata_keys (st);
  for (guint i = 0; keys[i]; i++)
    {
      json_builder_set_member_name (h, keys[i]);
      json_builder_add_string_value (h, morok_safetensors_metadata (st, keys[i]));
    }
  json_builder_end_object (h);
  for (guint i = 0; i < morok_safetensors_n_tensors (st); i++)
    {
      const MorokSafetensor *t = morok_safetensors_nth (st, i);
      gboolean to_f32 = morok_safetensor_dtype_is_float (t->dtype);
      guint64 begin = data->len;
      if (to_f32)
        {
          g_autofree float *f = morok_safetensor_dup_f32 (t, NULL);
          g_assert_nonnull (f);
          g_byte_array_append (data, (const guint8 *) f, t->n_elements * sizeof (float));
        }
      else
        g_byte_array_append (data, t->data, t->n_bytes);
      json_builder_set_member_name (h, t->name);
      json_builder_begin_object (h);
      json_builder_set_member_name (h, "dtype");
      json_builder_add_string_value (h, to_f32 ? "F32" : morok_safetensor_dtype_name (t->dtype));
      json_builder_set_member_name (h, "shape");
      json_builder_begin_array (h);
      for (guint d = 0; d < t->rank; d++)
        json_builder_add_int_value (h, t->dims[d]);
      json_builder_end_array (h);
      json_builder_set_member_name (h, "data_offsets");
      json_builder_begin_array (h);
      json_builder_add_int_value (h, (gint64) begin);
      json_builder_add_int_value (h, (gint64) data->len);
      json_builder_end_array (h);
      json_builder_end_object (h);
    }
  json_builder_end_object (h);
  g_autoptr (JsonNode) root = json_builder_get_root (h);
  g_autofree char *json = json_to_string (root, FALSE);
  g_autoptr (GString) header = g_string_new (json);
  while (header->len % 8) /* the format's padding: spaces */
    g_string_append_c (header, ' ');
  guint64 nl = GUINT64_TO_LE ((guint64) header->len);
  g_autoptr (GByteArray) out = g_byte_array_new ();
  g_byte_array_append (out, (const guint8 *) &nl, 8);
  g_byte_array_append (out, (const guint8 *) header->str, header->len);
  g_byte_array_append (out, data->data, data->len);
  g_assert_true (g_file_set_contents (path, (const char *) out->data, out->len, NULL));
}

gint64
fixture_mapped_pages_resident (const char *path, gsize offset, gsize n)
{
  g_autofree char *real = realpath (path, NULL);
  FILE *maps = fopen ("/proc/self/maps", "r");
  FILE *pagemap = fopen ("/proc/self/pagemap", "rb");
  g_assert_nonnull (real);
  gint64 resident = maps && pagemap ? 0 : -1;
  const guint64 page = (guint64) sysconf (_SC_PAGESIZE);
  const guint64 lo = (offset + page - 1) / page * page, hi = (offset + n) / page * page;
  char line[4096];
  while (resident >= 0 && fgets (line, sizeof line, maps))
    {
      guint64 start, end, file_offset;
      int name_at = 0;
      line[strcspn (line, "\n")] = 0;
      if (sscanf (line,
                  "%" G_GINT64_MODIFIER "x-%" G_GINT64_MODIFIER "x %*s %" G_GINT64_MODIFIER
                  "x %*s %*s %n",
                  &start, &end, &file_offset, &name_at)
              < 3
          || name_at == 0 || strcmp (line + name_at, real) != 0)
        continue;
      /* file bytes [file_offset, file_offset + end - start) at [start, end) */
      for (guint64 at = MAX (lo, file_offset); at < MIN (hi, file_offset + end - start); at += page)
        {
          guint64 entry = 0;
          guint64 vpage = (start + at - file_offset) / page;
          g_assert_cmpint (fseeko (pagemap, (off_t) (vpage * 8), SEEK_SET), ==, 0);
          g_assert_cmpuint (fread (&entry, 8, 1, pagemap), ==, 1);
          resident += entry >> 63; /* bit 63: present in RAM */
        }
    }
  if (maps)
    fclose (maps);
  if (pagemap)
    fclose (pagemap);
  return resident;
}

double
fixture_int8_tol (void)
{
  return morok_weight_pack_int8_amax (morok_isa_detect ()) == 127 ? 2e-1 : 4e-1;
}

float *
fixture_gigaam_utterance (guint i, gsize *out_n)
{
  g_autofree char *path = fixture_path ("gigaam-audio.safetensors");
  g_autofree char *name = g_strdup_printf ("audio.%u", i);
  GError *e = NULL;
  g_autoptr (MorokSafetensors) audio = morok_safetensors_open (path, &e);
  g_assert_no_error (e);
  const MorokSafetensor *t = morok_safetensors_get (audio, name, &e);
  g_assert_no_error (e);
  *out_n = (gsize) t->n_elements;
  float *wave = morok_safetensor_dup_f32 (t, &e);
  g_assert_no_error (e);
  return wave;
}
