/* SPDX-License-Identifier: MIT */
/* The commit rules of live decoding (stream-commit.h). */
#define G_LOG_DOMAIN "morok-models"
#include "models/stream-commit.h"

#include <string.h>

/* Neighbouring decodes place the same word this close, in frames. */
#define SAME_PLACE 2
/* A decode's last frame has the least right context: the hold commits no
 * token that starts in it. */
#define EDGE_FRAMES 1

typedef enum
{
  TOKEN_IN_WORD,  /* goes on the word before it, or begins one after a separator */
  TOKEN_BEGINS,   /* begins a word (a SentencePiece piece with "▁") */
  TOKEN_SEPARATES /* belongs to no word (a character vocabulary's space) */
} TokenKind;

struct _MorokStreamCommit
{
  guint8 *kinds; /* TokenKind per class */
  guint n_kinds, max_tokens;
  gboolean rnnt, begins; /* begins: the vocabulary marks words' first pieces */
  gint64 hold;

  gint64 frame;                   /* the first frame the next decode covers */
  gint64 floor;                   /* no word is placed before it (settle) */
  gboolean run_on;                /* CTC: the frame is the end of the last committed run */
  gboolean cut;                   /* the last committed word may go on (begins only) */
  guint at_frame;                 /* RNN-T: committed tokens of the commit frame */
  guint last_id;                  /* the last committed token's class */
  MorokCtcToken *hyp, *prev;      /* [max_tokens]: this decode's, the last one's tentative */
  guint n_hyp, n_prev, tentative; /* hyp[tentative ..] is uncommitted */
  MorokCtcToken *done;            /* [max_tokens]: committed by the last update */
  guint n_done;
  guint *word_at, *word_len; /* [max_tokens]: its words, in done */
  guint n_words;
};

static TokenKind
kind_of (const MorokVocabulary *vocab, guint id)
{
  const char *text = vocab->tokens[id];
  if (strcmp (text, " ") == 0)
    return TOKEN_SEPARATES;
  return vocab->sentencepiece && g_str_has_prefix (text, "\u2581") ? TOKEN_BEGINS : TOKEN_IN_WORD;
}

MorokStreamCommit *
morok_stream_commit_new (const MorokVocabulary *vocab, gboolean rnnt, guint max_tokens, gint64 hold)
{
  g_return_val_if_fail (vocab != NULL && max_tokens > 0, NULL);
  MorokStreamCommit *sc = g_new0 (MorokStreamCommit, 1);
  sc->n_kinds = vocab->n_tokens;
  sc->kinds = g_new0 (guint8, MAX (sc->n_kinds, 1));
  for (guint id = 0; id < sc->n_kinds; id++)
    {
      sc->kinds[id] = kind_of (vocab, id);
      sc->begins |= sc->kinds[id] == TOKEN_BEGINS;
    }
  sc->rnnt = rnnt;
  sc->max_tokens = max_tokens;
  sc->hold = hold;
  sc->hyp = g_new (MorokCtcToken, max_tokens);
  sc->prev = g_new (MorokCtcToken, max_tokens);
  sc->done = g_new (MorokCtcToken, max_tokens);
  sc->word_at = g_new (guint, max_tokens);
  sc->word_len = g_new (guint, max_tokens);
  return sc;
}

void
morok_stream_commit_free (MorokStreamCommit *sc)
{
  if (!sc)
    return;
  g_free (sc->kinds);
  g_free (sc->hyp);
  g_free (sc->prev);
  g_free (sc->done);
  g_free (sc->word_at);
  g_free (sc->word_len);
  g_free (sc);
}

void
morok_stream_commit_reset (MorokStreamCommit *sc)
{
  g_return_if_fail (sc != NULL);
  sc->frame = sc->floor = 0;
  sc->run_on = sc->cut = FALSE;
  sc->at_frame = 0;
  sc->n_hyp = sc->n_prev = sc->tentative = sc->n_done = sc->n_words = 0;
}

gint64
morok_stream_commit_frame (const MorokStreamCommit *sc)
{
  g_return_val_if_fail (sc != NULL, 0);
  return sc->frame;
}

gint64
morok_stream_commit_settled (const MorokStreamCommit *sc)
{
  g_return_val_if_fail (sc != NULL, 0);
  return MAX (sc->frame, sc->floor);
}

guint
morok_stream_commit_frame_tokens (const MorokStreamCommit *sc)
{
  g_return_val_if_fail (sc != NULL, 0);
  return sc->rnnt ? sc->at_frame : 0;
}

static TokenKind
kind (const MorokStreamCommit *sc, guint id)
{
  return id < sc->n_kinds ? sc->kinds[id] : TOKEN_IN_WORD;
}

/* The word of @t[0 .. @n) that starts at or after @from: its first token at
 * *at, its length; FALSE when only separators are left. */
static gboolean
next_word (const MorokStreamCommit *sc, const MorokCtcToken *t, guint n, guint from, guint *at,
           guint *len)
{
  guint i = from;
  while (i < n && kind (sc, t[i].id) == TOKEN_SEPARATES)
    i++;
  if (i == n)
    return FALSE;
  guint j = i + 1;
  while (j < n && kind (sc, t[j].id) == TOKEN_IN_WORD)
    j++;
  *at = i;
  *len = j - i;
  return TRUE;
}

/* Whether the last decode had word @hyp[at .. at + len) as its @k-th
 * tentative word, in the same place. */
static gboolean
agreed (const MorokStreamCommit *sc, guint k, guint at, guint len)
{
  guint p = 0, p_at = 0, p_len = 0;
  for (guint w = 0; w <= k; w++, p = p_at + p_len)
    if (!next_word (sc, sc->prev, sc->n_prev, p, &p_at, &p_len))
      return FALSE;
  if (p_len != len || ABS (sc->prev[p_at].frame - sc->hyp[at].frame) > SAME_PLACE)
    return FALSE;
  for (guint i = 0; i < len; i++)
    if (sc->prev[p_at + i].id != sc->hyp[at + i].id)
      return FALSE;
  return TRUE;
}

/* Where @t is placed: not before the floor. */
static MorokCtcToken
placed (const MorokStreamCommit *sc, const MorokCtcToken *t)
{
  MorokCtcToken p = *t;
  if (p.frame < sc->floor)
    {
      p.n_frames = MAX (1, p.frame + p.n_frames - sc->floor);
      p.frame = sc->floor;
    }
  return p;
}

/* Commits hyp[tentative .. upto). */
static void
commit_through (MorokStreamCommit *sc, guint upto)
{
  for (guint i = sc->tentative; i < upto; i++)
    {
      const MorokCtcToken *t = &sc->hyp[i];
      sc->at_frame = t->frame == sc->frame ? sc->at_frame + 1 : 1;
      sc->frame = t->frame;
      sc->done[sc->n_done++] = placed (sc, t);
    }
  if (upto > sc->tentative)
    {
      const MorokCtcToken *last = &sc->hyp[upto - 1];
      sc->frame = sc->rnnt ? last->frame : last->frame + last->n_frames;
      sc->last_id = last->id;
      sc->run_on = !sc->rnnt;
    }
  sc->tentative = upto;
}

guint
morok_stream_commit_update (MorokStreamCommit *sc, const MorokCtcToken *tokens, guint n,
                            gint64 end_frame, gboolean final)
{
  g_return_val_if_fail (sc != NULL && (n == 0 || tokens != NULL), 0);
  sc->n_hyp = sc->n_done = sc->n_words = sc->tentative = 0;
  gint64 start = sc->frame;
  for (guint i = 0; i < n && sc->n_hyp < sc->max_tokens; i++)
    {
      if (tokens[i].frame < start)
        continue;
      /* CTC: the last committed token's run going on */
      if (sc->run_on && sc->n_hyp == 0 && tokens[i].frame == start && tokens[i].id == sc->last_id)
        continue;
      /* the rest of a word committed before its end: that word is final,
       * and these pieces make no word of their own */
      if (sc->cut && sc->n_hyp == 0 && kind (sc, tokens[i].id) == TOKEN_IN_WORD)
        continue;
      sc->hyp[sc->n_hyp++] = tokens[i];
    }
  guint at, len;
  for (guint k = 0; next_word (sc, sc->hyp, sc->n_hyp, sc->tentative, &at, &len); k++)
    {
      gboolean followed = at + len < sc->n_hyp;
      /* where the vocabulary marks first pieces, a word without one is
       * missing its start, which more audio may still bring */
      gboolean whole = !sc->begins || kind (sc, sc->hyp[at].id) == TOKEN_BEGINS;
      gboolean agree = followed && whole && agreed (sc, k, at, len);
      if (!final && !agree && MAX (sc->hyp[at].frame, sc->floor) > end_frame - sc->hold)
        break;
      /* held: the word as far as the edge frames */
      guint take = len;
      if (!final && !agree)
        for (take = 1; take < len && sc->hyp[at + take].frame < end_frame - EDGE_FRAMES; take++)
          ;
      guint first = sc->n_done + (at - sc->tentative);
      commit_through (sc, at + take);
      sc->word_at[sc->n_words] = first;
      sc->word_len[sc->n_words++] = take;
      sc->cut = sc->begins && !final && (!followed || take < len);
      if (take < len)
        break;
    }
  if (final)
    commit_through (sc, sc->n_hyp);
  /* what stays tentative is what the next decode is compared with */
  sc->n_prev = sc->n_hyp - sc->tentative;
  memcpy (sc->prev, sc->hyp + sc->tentative, sc->n_prev * sizeof (MorokCtcToken));
  return sc->n_words;
}

void
morok_stream_commit_settle (MorokStreamCommit *sc, gint64 frame)
{
  g_return_if_fail (sc != NULL);
  if (frame <= morok_stream_commit_settled (sc))
    return;
  /* separators belong to no word: they may be passed over */
  guint at, len;
  if (next_word (sc, sc->hyp, sc->n_hyp, sc->tentative, &at, &len) && sc->hyp[at].frame < frame)
    return;
  /* the decodes go on covering these frames: a word a later decode finds
   * there (with more right context) is kept, placed at the floor */
  sc->floor = frame;
}

guint
morok_stream_commit_n_words (const MorokStreamCommit *sc)
{
  g_return_val_if_fail (sc != NULL, 0);
  return sc->n_words;
}

const MorokCtcToken *
morok_stream_commit_word (const MorokStreamCommit *sc, guint w, guint *out_n)
{
  g_return_val_if_fail (sc != NULL && w < sc->n_words && out_n != NULL, NULL);
  *out_n = sc->word_len[w];
  return sc->done + sc->word_at[w];
}

const MorokCtcToken *
morok_stream_commit_tentative (const MorokStreamCommit *sc, guint *out_n)
{
  g_return_val_if_fail (sc != NULL && out_n != NULL, NULL);
  *out_n = sc->n_hyp - sc->tentative;
  return sc->hyp + sc->tentative;
}

const MorokCtcToken *
morok_stream_commit_tokens (const MorokStreamCommit *sc, guint *out_n)
{
  g_return_val_if_fail (sc != NULL && out_n != NULL, NULL);
  *out_n = sc->n_done;
  return sc->done;
}
