/* SPDX-License-Identifier: MIT */
/* From decoded tokens (CTC or RNN-T, models/ctc-decode.h's MorokCtcToken:
 * an id and the encoded frame that emitted it) to what a user reads: the
 * utterance's text and its words, each with a start and an end time.
 *
 * Words follow upstream GigaAM's rules (gigaam/timestamps_utils.py): with a
 * SentencePiece vocabulary a piece starting with "▁" (U+2581) begins a new
 * word (the "▁" is dropped); with characters a " " token ends the word and
 * belongs to none. A word's text is its pieces joined, spaces trimmed (an
 * empty one is dropped); it starts at its first token's frame and ends
 * after its last token's frame: start = frame₀ · s, end = (frameₙ + 1) · s,
 * s the seconds per encoded frame (40 ms for GigaAM at 16 kHz).
 *
 *   g_autoptr (MorokTranscript) tr = morok_transcript_new (tokens, n, cfg->tokens,
 *       cfg->n_classes - 1, cfg->vocab_type == MOROK_GIGAAM_VOCAB_SENTENCEPIECE,
 *       morok_gigaam_frame_seconds (model));
 *   g_print ("%s\n", tr->text);
 *   for (guint i = 0; i < tr->n_words; i++)
 *     g_print ("%.2f-%.2f %s\n", tr->words[i].start, tr->words[i].end, tr->words[i].text);
 */
#pragma once

#include <glib.h>

#include "models/ctc-decode.h"

G_BEGIN_DECLS

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

/* The text and words of @tokens, whose ids index @vocab (@vocab_size
 * strings; an id past it is skipped). (transfer full) */
MorokTranscript *morok_transcript_new (const MorokCtcToken *tokens, guint n,
                                       const char *const *vocab, guint vocab_size,
                                       gboolean sentencepiece, double frame_seconds);
void morok_transcript_free (MorokTranscript *tr);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (MorokTranscript, morok_transcript_free)

G_END_DECLS
