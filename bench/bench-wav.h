/* SPDX-License-Identifier: MIT */
/* The samples of the fixture WAVs for the benchmark programs. */
#pragma once

#include <glib.h>
#include <string.h>

/* The samples / 32768 of a 16-bit PCM mono WAV (the data chunk found by
 * walking the chunks; no other checks: the fixtures are known), or NULL.
 * (transfer full), g_free. */
static inline float *
bench_read_wav (const char *path, gsize *out_n)
{
  g_autofree guint8 *d = NULL;
  gsize len;
  if (!g_file_get_contents (path, (char **) &d, &len, NULL) || len < 12)
    return NULL;
  for (gsize at = 12; at + 8 <= len;)
    {
      gsize size = d[at + 4] | d[at + 5] << 8 | d[at + 6] << 16 | (gsize) d[at + 7] << 24;
      if (size > len - at - 8)
        size = len - at - 8;
      if (memcmp (d + at, "data", 4) == 0)
        {
          *out_n = size / 2;
          float *s = g_new (float, MAX (*out_n, 1));
          for (gsize i = 0; i < *out_n; i++)
            s[i] = (gint16) (d[at + 8 + 2 * i] | d[at + 9 + 2 * i] << 8) / 32768.0f;
          return s;
        }
      at += 8 + size + (size & 1);
    }
  return NULL;
}
