/* SPDX-License-Identifier: MIT */
/* Greedy CTC decoding (see ctc-decode.h). */
#define G_LOG_DOMAIN "morok-models"
#include "models/ctc-decode.h"

/* The largest along eight independent chains, then its first place, so
 * that no compare waits for the last one's select (a scan carrying the
 * best one's place does, and over an RNN-T joint's 1025 classes it costs
 * as much as the joint's product). */
guint
morok_best_class (const float *scores, guint n)
{
  g_return_val_if_fail (n >= 1 && scores != NULL, 0);
  float top[8];
  for (guint l = 0; l < 8; l++)
    top[l] = scores[0];
  guint k = 0;
  for (; k + 8 <= n; k += 8)
    for (guint l = 0; l < 8; l++)
      top[l] = scores[k + l] > top[l] ? scores[k + l] : top[l];
  for (; k < n; k++)
    top[0] = scores[k] > top[0] ? scores[k] : top[0];
  for (guint l = 1; l < 8; l++)
    top[0] = top[l] > top[0] ? top[l] : top[0];
  for (k = 0; k < n; k++)
    if (scores[k] == top[0])
      return k;
  return 0;
}

guint
morok_ctc_greedy_decode (const float *scores, gint64 n_frames, gsize row_stride, guint n_classes,
                         guint blank, MorokCtcToken *out)
{
  g_return_val_if_fail (n_frames <= 0 || (scores != NULL && out != NULL), 0);
  g_return_val_if_fail (n_classes >= 1 && row_stride >= n_classes, 0);
  guint n = 0, prev = G_MAXUINT;
  for (gint64 f = 0; f < n_frames; f++)
    {
      guint best = morok_best_class (scores + (gsize) f * row_stride, n_classes);
      if (best != blank && best == prev)
        out[n - 1].n_frames++;
      else if (best != blank)
        out[n++] = (MorokCtcToken){ .id = best, .frame = f, .n_frames = 1 };
      prev = best;
    }
  return n;
}
