/* SPDX-License-Identifier: MIT */
/* Live decoding of GigaAM: an utterance decoded again each time its audio
 * has grown, through the same prepared plan as a whole utterance (only the
 * length changes), its words committed as they become stable
 * (models/stream-commit.h says when).
 *
 * A decode covers a window of the utterance's audio ending at its end: at
 * most @window samples, starting on an encoded frame's boundary, so that
 * its frames are the utterance's frames. Only the frames from the commit
 * frame on are decoded (CTC: greedily; RNN-T: the predictor resumes from
 * its state after the last committed token, and takes the states the last
 * decode saved where it emits that decode's tokens again); the frames
 * before it are the window's left context (audio the decodes found no
 * word in for a hold is settled but still decoded: stream-commit.h's
 * _settle). When the unsettled audio no longer fits in a window with a
 * quarter window of left context before it (the decodes fell behind), the
 * window stops short of the end and the caller decodes again (@out_more):
 * no audio is skipped, and what a window leaves behind is committed by the
 * hold rule.
 *
 *   st = morok_gigaam_stream_new (model, ctc, NULL, NULL, &settings, &error);
 *   // per decode of the utterance's first n samples:
 *   do
 *     {
 *       if (!morok_gigaam_stream_decode (st, samples, n, final, &more, &error))
 *         return FALSE;
 *       const MorokStreamCommit *sc = morok_gigaam_stream_commit (st);
 *       // its newly committed words, its tentative tokens
 *     }
 *   while (more);
 *   morok_gigaam_stream_reset (st);   // the next utterance
 *
 * Nothing is compiled or allocated per decode (but the first RNN-T decode
 * reserves its room for tokens and their states).
 */
#pragma once

#include "models/gigaam-encoder-jit.h"
#include "models/rnnt-decode.h"
#include "models/stream-commit.h"

G_BEGIN_DECLS

typedef struct
{
  gint64 window; /* samples a decode covers at most */
  gint64 hold;   /* samples after its start that a word is committed at the latest */
} MorokGigaAmStreamSettings;

typedef struct _MorokGigaAmStream MorokGigaAmStream;

/* Decodes with @ctc (a CTC model), or @rnnt and @decoder (an RNN-T model),
 * prepared for utterances of at least @settings->window samples
 * (borrowed: they must outlive the stream; nothing else may run them
 * meanwhile). (transfer full) or NULL with MOROK_JIT_ERROR_RUNTIME when
 * the window does not fit the plan or holds less than twice the hold. */
MorokGigaAmStream *morok_gigaam_stream_new (MorokGigaAm *model, GigaAmCtcJit *ctc,
                                            GigaAmRnntJit *rnnt, MorokRnntDecoder *decoder,
                                            const MorokGigaAmStreamSettings *settings,
                                            GError **error);
void morok_gigaam_stream_free (MorokGigaAmStream *st);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (MorokGigaAmStream, morok_gigaam_stream_free)

/* A new utterance (an RNN-T decoder's saved states are dropped). */
void morok_gigaam_stream_reset (MorokGigaAmStream *st);
/* Decodes the utterance's first @n samples (@samples), @final when that is
 * all of it; *@out_more: the window stopped short of @n, decode again. The
 * commit state (_commit) tells what this decode committed. FALSE with the
 * plan's error. */
gboolean morok_gigaam_stream_decode (MorokGigaAmStream *st, const float *samples, gint64 n,
                                     gboolean final, gboolean *out_more, GError **error);
/* (transfer none) */
const MorokStreamCommit *morok_gigaam_stream_commit (const MorokGigaAmStream *st);
/* The audio (samples) past a word's first frame that a decode must cover
 * to commit the word by the hold: a decode of the utterance's first n
 * samples commits every word whose first frame starts at or before
 * n - this (placed, stream-commit.h: not before the settled frame). At
 * most the hold and a frame; less by what the last frame's encoding
 * needs of audio beyond its start (v3: half a frame). */
gint64 morok_gigaam_stream_hold_delay (const MorokGigaAmStream *st);

G_END_DECLS
