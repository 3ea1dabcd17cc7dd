/* SPDX-License-Identifier: MIT */
/* Greedy CTC decoding (see ctc-decode.h). */
#define G_LOG_DOMAIN "morok-models"
#include "models/ctc-decode.h"

guint
morok_ctc_greedy_decode (const float *scores, gint64 n_frames, gsize row_stride, guint n_classes,
                         guint blank, MorokCtcToken *out)
{
  g_return_val_if_fail (n_frames <= 0 || (scores != NULL && out != NULL), 0);
  g_return_val_if_fail (n_classes >= 1 && row_stride >= n_classes, 0);
  guint n = 0, prev = G_MAXUINT;
  for (gint64 f = 0; f < n_frames; f++)
    {
      const float *row = scores + (gsize) f * row_stride;
      guint best = 0;
      for (guint c = 1; c < n_classes; c++)
        if (row[c] > row[best])
          best = c;
      if (best != blank && best == prev)
        out[n - 1].n_frames++;
      else if (best != blank)
        out[n++] = (MorokCtcToken){ .id = best, .frame = f, .n_frames = 1 };
      prev = best;
    }
  return n;
}
