/* SPDX-License-Identifier: MIT */
/* Which words of a growing utterance are final (live transcription). The
 * utterance is decoded again and again as its audio grows; each decode
 * gives a hypothesis, the tokens from the commit frame on. A word of it is
 * committed — final, never changed — when
 *
 *   - two decodes in a row agree on it (the same tokens, starting within
 *     two frames of each other) and something follows it (a separator or
 *     the next word): a word at the audio's edge may still grow; where
 *     the vocabulary marks first pieces, it begins with one (a word
 *     without may still get its start);
 *   - or it started at least @hold frames before the audio's end: the
 *     bound on how long a word waits, which the element's latency states;
 *     such a word is committed as far as the decode's last frame (a
 *     piece there, with the least right context, is often wrong);
 *   - or the utterance is complete (its last decode).
 *
 * Words are committed in order (" " tokens separate them; a SentencePiece
 * piece starting with "▁" begins one). Where the vocabulary marks first
 * pieces so, the pieces that would go on a word the hold committed are
 * dropped: the word is final, and they make no word of their own (with
 * characters they begin the next word). The next decode starts at the
 * commit frame: for CTC the frame after
 * the last committed token's run (a token of the same class starting
 * exactly there is that run going on, not a new token), for RNN-T the
 * frame of the last committed token (the predictor resumes from the state
 * after it; models/rnnt-decode.h).
 *
 *   MorokStreamCommit *sc = morok_stream_commit_new (&vocab, rnnt, max_tokens, hold);
 *   // per decode: tokens of frames >= morok_stream_commit_frame (sc), absolute frames
 *   guint words = morok_stream_commit_update (sc, hyp, n_hyp, end_frame, last_decode);
 *   for (guint w = 0; w < words; w++)       // the newly committed words, in order
 *     { guint n; const MorokCtcToken *t = morok_stream_commit_word (sc, w, &n); ... }
 *   morok_stream_commit_reset (sc);         // the next utterance
 *
 * Allocates nothing after _new.
 */
#pragma once

#include "models/ctc-decode.h"
#include "models/transcript.h"

G_BEGIN_DECLS

typedef struct _MorokStreamCommit MorokStreamCommit;

/* For @vocab's tokens (kept: only which ones separate and begin words),
 * RNN-T decoding or CTC, hypotheses of at most @max_tokens tokens, words
 * forced after @hold frames. (transfer full) */
MorokStreamCommit *morok_stream_commit_new (const MorokVocabulary *vocab, gboolean rnnt,
                                            guint max_tokens, gint64 hold);
void morok_stream_commit_free (MorokStreamCommit *sc);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (MorokStreamCommit, morok_stream_commit_free)

/* A new utterance: nothing committed, no hypothesis. */
void morok_stream_commit_reset (MorokStreamCommit *sc);
/* The first frame the next decode must cover. */
gint64 morok_stream_commit_frame (const MorokStreamCommit *sc);
/* The first frame a word not yet committed may be placed at (the commit
 * frame, or further on where _settle () marked wordless audio): nothing
 * comes out before it. */
gint64 morok_stream_commit_settled (const MorokStreamCommit *sc);
/* RNN-T: the committed tokens of that frame (a frame emits at most
 * MOROK_RNNT_MAX_SYMBOLS); 0 for CTC. */
guint morok_stream_commit_frame_tokens (const MorokStreamCommit *sc);

/* Takes a decode's hypothesis: @n tokens (frames counted from the
 * utterance's first, none before morok_stream_commit_frame (); at most
 * max_tokens are read) of audio whose encoded frames end at @end_frame;
 * @final: the utterance is complete. Commits what the rules allow and
 * returns how many words it committed (read them with _word). */
guint morok_stream_commit_update (MorokStreamCommit *sc, const MorokCtcToken *tokens, guint n,
                                  gint64 end_frame, gboolean final);
/* Settles the frames before @frame when no uncommitted word of the last
 * hypothesis starts before it (separators do not count): audio in which
 * the decodes found no word for a hold. Later decodes still cover it, as
 * a slow word may show only with more right context; a word found there
 * is placed at @frame, so that it is still committed within the hold of
 * the frames settled (and never before output already said is empty). */
void morok_stream_commit_settle (MorokStreamCommit *sc, gint64 frame);
/* How many words the last update committed. */
guint morok_stream_commit_n_words (const MorokStreamCommit *sc);
/* Word @w (0 .. the last update's count - 1) of those the last update
 * committed: its tokens, separators excluded. (transfer none) valid until
 * the next update or reset. */
const MorokCtcToken *morok_stream_commit_word (const MorokStreamCommit *sc, guint w, guint *out_n);
/* The last hypothesis's tokens that stay uncommitted (transfer none),
 * valid until the next update or reset. */
const MorokCtcToken *morok_stream_commit_tentative (const MorokStreamCommit *sc, guint *out_n);
/* Every token the last update committed, separators included, in order
 * (what an RNN-T predictor must step through). (transfer none) valid until
 * the next update or reset. */
const MorokCtcToken *morok_stream_commit_tokens (const MorokStreamCommit *sc, guint *out_n);

G_END_DECLS
