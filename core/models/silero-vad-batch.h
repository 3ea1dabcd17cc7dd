/* SPDX-License-Identifier: MIT */
/* Many streams, one plan: Silero VAD over a batch of independent streams,
 * for hosts that batch themselves.
 *
 * A MorokVadBatch is one prepared Silero plan whose audio is [b, C + N] and
 * state [b, S] (b a variable from 1 to the batch's bound): one run
 * computes one chunk of each of up to that many streams, each with its own
 * state and context samples, and gives per stream exactly the probability
 * its own single-stream plan gives. A MorokVadStream holds what one stream
 * carries from chunk to chunk (its last C samples and its [h | c]); a host
 * keeps one per stream and passes those that have a chunk ready:
 *
 *   g_autoptr (MorokVadBatch) batch = morok_vad_batch_new (vad, 16000, 64, NULL, &error);
 *   MorokVadStream *streams[64];
 *   for (guint i = 0; i < 64; i++)
 *     streams[i] = morok_vad_stream_new (batch);
 *   // per round: the n ≤ 64 streams with N new samples ready, in any order
 *   const float *chunks[] = { a, b, c };             // N samples each
 *   MorokVadStream *ready[] = { streams[7], streams[2], streams[40] };
 *   float probs[3];
 *   if (!morok_vad_batch_run (batch, 3, ready, chunks, probs, &error)) ...
 */
#pragma once

#include "jit/morok-jit.h"
#include "models/silero-vad.h"

G_BEGIN_DECLS

typedef struct _MorokVadBatch MorokVadBatch;
typedef struct _MorokVadStream MorokVadStream;

/* Prepares @model (a reference is taken) at @sample_rate for up to
 * @max_streams streams a run. @config NULL: from the environment.
 * (transfer full) or NULL with the error of the JIT's prepare. */
MorokVadBatch *morok_vad_batch_new (MorokSileroVad *model, guint sample_rate, guint max_streams,
                                    const MorokPrepareConfig *config, GError **error);
/* Another batch running @prepared's program in a context of its own
 * (morok_jit_new_context): its runs are independent of @prepared's (on
 * another thread, too); it must not outlive @prepared. (transfer full) or
 * NULL with the context's error. */
MorokVadBatch *morok_vad_batch_new_context (MorokVadBatch *prepared, GError **error);
void morok_vad_batch_free (MorokVadBatch *batch);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (MorokVadBatch, morok_vad_batch_free)

guint morok_vad_batch_max_streams (const MorokVadBatch *batch);
/* N: samples of a stream's chunk (512 at 16 kHz, 256 at 8 kHz). */
guint morok_vad_batch_chunk_len (const MorokVadBatch *batch);

/* A stream at its start (zero context and state) for runs of @batch.
 * (transfer full) */
MorokVadStream *morok_vad_stream_new (const MorokVadBatch *batch);
/* Back to the start of a stream. */
void morok_vad_stream_reset (MorokVadStream *stream);
void morok_vad_stream_free (MorokVadStream *stream);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (MorokVadStream, morok_vad_stream_free)

/* One chunk of each of @n streams (1 ≤ n ≤ the bound; no stream twice):
 * @chunks[i] the N new samples of @streams[i], scaled to [-1, 1). Writes
 * the speech probability of each to @probs[i] and moves each stream on (its
 * context and state). Allocates nothing. Fails with MOROK_JIT_ERROR_RUNTIME
 * for an @n out of bounds, the streams unchanged. */
gboolean morok_vad_batch_run (MorokVadBatch *batch, guint n, MorokVadStream *const *streams,
                              const float *const *chunks, float *probs, GError **error);

G_END_DECLS
