/* SPDX-License-Identifier: MIT */
/* Text and word times of decoded tokens (transcript.h). */
#define G_LOG_DOMAIN "morok-models"
#include "models/transcript.h"

#include <string.h>

#define WORD_START "\xe2\x96\x81"    /* U+2581, SentencePiece's word start */
#define UNK_SURFACE " \xe2\x81\x87 " /* SentencePiece's default: U+2047 in spaces */
#define REPLACEMENT 0xFFFD

gint
morok_piece_byte (const char *piece)
{
  if (!piece || strlen (piece) != 6 || strncmp (piece, "<0x", 3) != 0 || piece[5] != '>')
    return -1;
  gint hi = g_ascii_xdigit_value (piece[3]), lo = g_ascii_xdigit_value (piece[4]);
  return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

/* ---- text ---- */

/* Appends @bytes as SentencePiece decodes a run of byte pieces: each
 * well-formed UTF-8 character (shortest form, no surrogate, at most
 * U+10FFFF) as itself, every other byte as one U+FFFD. */
static void
append_bytes (GString *s, const guint8 *b, gsize n)
{
  static const gunichar min[] = { 0, 0, 0x80, 0x800, 0x10000 };
  for (gsize i = 0; i < n;)
    {
      guint len = b[i] < 0x80             ? 1
                  : (b[i] & 0xE0) == 0xC0 ? 2
                  : (b[i] & 0xF0) == 0xE0 ? 3
                  : (b[i] & 0xF8) == 0xF0 ? 4
                                          : 0;
      gunichar c = len == 1 ? b[i] : b[i] & (0x7F >> len);
      gboolean ok = len > 0 && i + len <= n;
      for (guint k = 1; ok && k < len; k++)
        {
          ok = (b[i + k] & 0xC0) == 0x80;
          c = c << 6 | (b[i + k] & 0x3F);
        }
      ok = ok && c >= min[len] && (c < 0xD800 || c >= 0xE000) && c <= 0x10FFFF;
      g_string_append_unichar (s, ok ? c : REPLACEMENT);
      i += ok ? len : 1;
    }
}

/* Appends @piece with each "▁" as a space. */
static void
append_piece (GString *s, const char *piece)
{
  for (const char *w; (w = strstr (piece, WORD_START)); piece = w + strlen (WORD_START))
    {
      g_string_append_len (s, piece, w - piece);
      g_string_append_c (s, ' ');
    }
  g_string_append (s, piece);
}

static char *
text_new (const MorokCtcToken *tokens, guint n, const MorokVocabulary *v)
{
  GString *s = g_string_new (NULL);
  g_autoptr (GByteArray) run = g_byte_array_new (); /* the pending byte pieces */
  for (guint i = 0; i < n; i++)
    {
      if (tokens[i].id >= v->n_tokens)
        continue;
      const char *piece = v->tokens[tokens[i].id];
      if (!v->sentencepiece)
        {
          g_string_append (s, piece);
          continue;
        }
      MorokPieceType type = v->types ? v->types[tokens[i].id] : MOROK_PIECE_NORMAL;
      gint byte = type == MOROK_PIECE_BYTE ? morok_piece_byte (piece) : -1;
      if (byte >= 0)
        {
          guint8 b = (guint8) byte;
          g_byte_array_append (run, &b, 1);
          continue;
        }
      append_bytes (s, run->data, run->len);
      g_byte_array_set_size (run, 0);
      if (type == MOROK_PIECE_CONTROL)
        continue;
      if (type == MOROK_PIECE_UNKNOWN)
        {
          g_string_append (s, v->unk_surface ? v->unk_surface : UNK_SURFACE);
          continue;
        }
      if (s->len == 0 && v->strip_first_space && g_str_has_prefix (piece, WORD_START))
        piece += strlen (WORD_START);
      append_piece (s, piece);
    }
  append_bytes (s, run->data, run->len);
  return g_string_free (s, FALSE);
}

/* ---- words ---- */

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
morok_transcript_new (const MorokCtcToken *tokens, guint n, const MorokVocabulary *vocab,
                      double frame_seconds)
{
  g_return_val_if_fail (vocab != NULL && (n == 0 || (tokens != NULL && vocab->tokens != NULL)),
                        NULL);
  gboolean sp = vocab->sentencepiece;
  GArray *words = g_array_new (FALSE, FALSE, sizeof (MorokWord));
  Pending p = { g_string_new (NULL), -1, -1 };

  for (guint i = 0; i < n; i++)
    {
      if (tokens[i].id >= vocab->n_tokens)
        continue;
      const char *piece = vocab->tokens[tokens[i].id];
      if (sp && g_str_has_prefix (piece, WORD_START))
        {
          commit (&p, words, frame_seconds);
          piece += strlen (WORD_START);
        }
      else if (strcmp (piece, " ") == 0) /* a space token, in either vocabulary */
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
  tr->text = text_new (tokens, n, vocab);
  tr->n_words = words->len;
  tr->words = (MorokWord *) g_array_free (words, FALSE);
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
