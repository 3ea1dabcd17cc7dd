/* SPDX-License-Identifier: MIT */
/* Text and word times of decoded tokens (transcript.h). */
#define G_LOG_DOMAIN "morok-models"
#include "models/transcript.h"

#include <string.h>

#define WORD_START "\xe2\x96\x81" /* U+2581, SentencePiece's word start */

/* The word being gathered: its pieces and the frames of its first and last
 * token. */
typedef struct
{
  GString *text;
  gint64 first, last; /* -1: no token yet */
} Pending;

static void
commit (Pending *p, GArray *words, double s)
{
  if (p->first >= 0)
    {
      g_autofree char *text = g_strstrip (g_strdup (p->text->str));
      if (text[0] != '\0')
        {
          MorokWord w = { g_steal_pointer (&text), p->first * s, (p->last + 1) * s };
          g_array_append_val (words, w);
        }
    }
  g_string_truncate (p->text, 0);
  p->first = p->last = -1;
}

MorokTranscript *
morok_transcript_new (const MorokCtcToken *tokens, guint n, const char *const *vocab,
                      guint vocab_size, gboolean sentencepiece, double frame_seconds)
{
  g_return_val_if_fail (n == 0 || (tokens != NULL && vocab != NULL), NULL);
  GArray *words = g_array_new (FALSE, FALSE, sizeof (MorokWord));
  Pending p = { g_string_new (NULL), -1, -1 };

  for (guint i = 0; i < n; i++)
    {
      if (tokens[i].id >= vocab_size)
        continue;
      const char *piece = vocab[tokens[i].id];
      if (sentencepiece && g_str_has_prefix (piece, WORD_START))
        {
          commit (&p, words, frame_seconds);
          piece += strlen (WORD_START);
        }
      else if (!sentencepiece && strcmp (piece, " ") == 0)
        {
          commit (&p, words, frame_seconds);
          continue;
        }
      g_string_append (p.text, piece);
      if (p.first < 0)
        p.first = tokens[i].frame;
      p.last = tokens[i].frame;
    }
  commit (&p, words, frame_seconds);
  g_string_free (p.text, TRUE);

  MorokTranscript *tr = g_new0 (MorokTranscript, 1);
  tr->text = morok_ctc_tokens_text (tokens, n, vocab, vocab_size, sentencepiece);
  tr->n_words = words->len;
  tr->words = (MorokWord *)g_array_free (words, FALSE);
  return tr;
}

void
morok_transcript_free (MorokTranscript *tr)
{
  if (!tr)
    return;
  for (guint i = 0; i < tr->n_words; i++)
    g_free (tr->words[i].text);
  g_free (tr->words);
  g_free (tr->text);
  g_free (tr);
}
