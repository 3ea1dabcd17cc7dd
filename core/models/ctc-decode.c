/* SPDX-License-Identifier: MIT */
/* Greedy CTC decoding and detokenisation (see ctc-decode.h). */
#define G_LOG_DOMAIN "morok-models"
#include "models/ctc-decode.h"

#include <string.h>

#define SP_SPACE "\xe2\x96\x81" /* U+2581, SentencePiece's word boundary */

guint
morok_ctc_greedy_decode (const float *scores, gint64 n_frames, gsize row_stride, guint n_classes,
                         guint blank, MorokCtcToken *out)
{
  g_return_val_if_fail (n_frames <= 0 || (scores != NULL && out != NULL), 0);
  g_return_val_if_fail (n_classes >= 1 && row_stride >= n_classes, 0);
  guint n = 0, prev = G_MAXUINT;
  for (gint64 f = 0; f < n_frames; f++)
    {
      const float *row = scores + (gsize)f * row_stride;
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

char *
morok_ctc_tokens_text (const MorokCtcToken *tokens, guint n, const char *const *vocab,
                       guint vocab_size, gboolean sentencepiece)
{
  g_return_val_if_fail (n == 0 || (tokens != NULL && vocab != NULL), NULL);
  GString *s = g_string_new (NULL);
  for (guint i = 0; i < n; i++)
    if (tokens[i].id < vocab_size && vocab[tokens[i].id])
      g_string_append (s, vocab[tokens[i].id]);
  if (!sentencepiece)
    return g_string_free (s, FALSE);
  g_string_replace (s, SP_SPACE, " ", 0);
  return g_strstrip (g_string_free (s, FALSE));
}
