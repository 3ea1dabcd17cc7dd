/* SPDX-License-Identifier: MIT */
#include "fixtures.h"
#include <string.h>

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
fixture_write_edited (const char *fixture, const char *path, FixtureGigaAmEdit edit,
                      gsize truncate)
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
