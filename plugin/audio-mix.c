/* SPDX-License-Identifier: MIT */
/* Interleaved F32LE and S16LE frames mixed down to mono f32: see audio-mix.h. */
#include "audio-mix.h"
#include <math.h>
#include <string.h>

/* @n frames of @ch interleaved channels mixed to mono into @dst; a
 * non-finite mix counts as silence. Returns how many did. */
gsize
morok_audio_mix_f32 (float *restrict dst, const guint8 *restrict src, gsize n, guint ch)
{
  if (ch == 1)
    memcpy (dst, src, n * sizeof (float));
  else
    for (gsize f = 0; f < n; f++)
      {
        float sum = 0, v;
        for (guint c = 0; c < ch; c++)
          {
            memcpy (&v, src + (f * ch + c) * sizeof (float), sizeof v);
            sum += v;
          }
        dst[f] = sum / ch;
      }
  gsize bad = 0;
  for (gsize f = 0; f < n; f++)
    if (!isfinite (dst[f]))
      dst[f] = 0.0f, bad++;
  return bad;
}

void
morok_audio_mix_s16 (float *restrict dst, const guint8 *restrict src, gsize n, guint ch)
{
  const float scale = 1.0f / (32768.0f * ch);
  for (gsize f = 0; f < n; f++)
    {
      gint32 sum = 0;
      gint16 v;
      for (guint c = 0; c < ch; c++)
        {
          memcpy (&v, src + (f * ch + c) * sizeof v, sizeof v);
          sum += v;
        }
      dst[f] = (float) sum * scale;
    }
}
