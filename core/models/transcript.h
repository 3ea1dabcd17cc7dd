/* SPDX-License-Identifier: MIT */
/* From decoded tokens (CTC or RNN-T, models/ctc-decode.h's MorokCtcToken:
 * an id and the encoded frame that emitted it) to what a user reads: the
 * utterance's text and its words, each with a start and an end time.
 *
 * The text is what upstream GigaAM's Tokenizer.decode gives: characters
 * concatenated; SentencePiece pieces as SentencePiece's own decoder joins
 * them: "▁" (U+2581) a space, a leading one dropped while the text is still
 * empty (strip_first_space); a control piece (<s>, </s>) nothing; the
 * unknown piece its unk_surface (" ⁇ " by default); a run of byte pieces
 * <0xNN> its bytes as UTF-8, each byte that starts no well-formed character
 * one U+FFFD. Nothing is trimmed.
 *
 * Words follow upstream's rules (gigaam/timestamps_utils.py), over each
 * token's piece as stored (upstream's IdToPiece: a byte or control piece
 * by its name): a piece starting with "▁" begins a new word (the "▁" is
 * dropped); a " " token (in either vocabulary) ends the word and belongs
 * to none.
 * A word's text is its pieces joined, spaces trimmed (an empty one is
 * dropped); it starts at its first token's frame and ends after its last
 * token's frame: start = frame₀ · s, end = (frameₙ + 1) · s, s the seconds
 * per encoded frame (40 ms for GigaAM at 16 kHz).
 *
 *   MorokVocabulary vocab;
 *   morok_gigaam_vocabulary (model, &vocab);
 *   g_autoptr (MorokTranscript) tr
 *       = morok_transcript_new (tokens, n, &vocab, morok_gigaam_frame_seconds (model));
 *   g_print ("%s\n", tr->text);
 *   for (guint i = 0; i < tr->n_words; i++)
 *     g_print ("%.2f-%.2f %s\n", tr->words[i].start, tr->words[i].end, tr->words[i].text);
 */
#pragma once

#include <glib.h>

#include "models/ctc-decode.h"

G_BEGIN_DECLS

/* A SentencePiece piece's type (ModelProto's SentencePiece.Type). */
typedef enum
{
  MOROK_PIECE_NORMAL,
  MOROK_PIECE_UNKNOWN,      /* its text is the vocabulary's unk_surface */
  MOROK_PIECE_CONTROL,      /* <s>, </s>: no text */
  MOROK_PIECE_USER_DEFINED, /* its text, as a normal piece */
  MOROK_PIECE_UNUSED,       /* its text, as SentencePiece decodes it */
  MOROK_PIECE_BYTE,         /* <0xNN>: the byte NN */
} MorokPieceType;

/* What text and words are made from (morok_gigaam_vocabulary () fills one
 * from a model). Borrowed: the pointers must outlive the calls. */
typedef struct
{
  const char *const *tokens;   /* [n_tokens] UTF-8: the text of class i */
  guint n_tokens;              /* an id at or past it is skipped */
  gboolean sentencepiece;      /* FALSE: characters */
  const MorokPieceType *types; /* [n_tokens] SentencePiece types; NULL: all normal */
  const char *unk_surface;     /* the unknown piece's text; NULL: " ⁇ " */
  gboolean strip_first_space;  /* drop a leading "▁" while the text is empty */
} MorokVocabulary;

typedef struct
{
  char *text;   /* UTF-8 */
  double start; /* seconds from the utterance's first sample */
  double end;   /* seconds, > start */
} MorokWord;

typedef struct
{
  char *text; /* the utterance as the model's tokenizer decodes it */
  MorokWord *words;
  guint n_words;
} MorokTranscript;

/* The text and words of @tokens in @vocab. (transfer full) */
MorokTranscript *morok_transcript_new (const MorokCtcToken *tokens, guint n,
                                       const MorokVocabulary *vocab, double frame_seconds);
void morok_transcript_free (MorokTranscript *tr);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (MorokTranscript, morok_transcript_free)

/* The byte NN of a piece spelled <0xNN> (hex digits either case), or -1. */
gint morok_piece_byte (const char *piece);

G_END_DECLS
