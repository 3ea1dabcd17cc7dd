/* SPDX-License-Identifier: MIT */
/* Rounds of one batched Silero plan for morokvad's request pads: every
 * stream (a seat) brings its chunks from its own streaming thread, and the
 * chunks that are ready run together through one morok_vad_batch_run.
 *
 * A seat brings all the full chunks of a buffer at once; they run in that
 * many rounds. A round runs one chunk of each seat that has one, as soon as
 * every seat that is waited for has brought its chunk, or when a seat in it
 * has waited @max_wait since it brought its chunks (from then on its
 * chunks run without waiting: a buffer is held @max_wait at most, plus the
 * executes). A seat
 * that a round runs without (it brought nothing in time), one that has not
 * brought a chunk yet, one at EOS (morok_vad_rounds_idle ()) and one
 * flushing is not waited for until it brings a chunk: a stalled stream
 * holds the others up once, for @max_wait at most, and never blocks them.
 *
 *   MorokVadSeat *seat = morok_vad_rounds_join (rounds, &error);  // caps
 *   ret = morok_vad_rounds_run (rounds, seat, chunks, n, probs, late, &error); // per buffer
 *   morok_vad_rounds_idle (rounds, seat);                          // EOS
 *   morok_vad_rounds_leave (rounds, seat);                         // release
 */
#pragma once

#include "models/silero-vad.h"
#include <gst/gst.h>

G_BEGIN_DECLS

typedef struct _MorokVadRounds MorokVadRounds;
typedef struct _MorokVadSeat MorokVadSeat;

/* Rounds at @rate for up to @max_streams seats of @model (a reference is
 * taken); the first join acquires the batched plan from the registry
 * (prepared by the first element of the process that asks for it, under
 * the key of @plan_key, the single-stream plan's, and the bound) and opens
 * a context of it. (transfer full) */
MorokVadRounds *morok_vad_rounds_new (MorokSileroVad *model, guint rate, guint max_streams,
                                      GstClockTime max_wait, const char *plan_key);
/* Frees @rounds, whose seats must all have left. */
void morok_vad_rounds_free (MorokVadRounds *rounds);
guint morok_vad_rounds_rate (const MorokVadRounds *rounds);
/* Samples of a chunk: 512 at 16 kHz, 256 at 8 kHz. */
guint morok_vad_rounds_chunk_len (const MorokVadRounds *rounds);

/* A seat for a new stream (zero context and state), preparing the batched
 * plan if it is the first; NULL with the prepare's error, or
 * MOROK_JIT_ERROR_RUNTIME when all seats are taken. Owned by @rounds until
 * morok_vad_rounds_leave (). */
MorokVadSeat *morok_vad_rounds_join (MorokVadRounds *rounds, GError **error);
/* Frees @seat, which is not running; the others no longer wait for it. */
void morok_vad_rounds_leave (MorokVadRounds *rounds, MorokVadSeat *seat);
/* The stream starts over (zero context and state); not while it runs. */
void morok_vad_rounds_reset (MorokVadRounds *rounds, MorokVadSeat *seat);
/* Not waited for until its next chunk (EOS). */
void morok_vad_rounds_idle (MorokVadRounds *rounds, MorokVadSeat *seat);
/* FLUSH_START (@flushing TRUE): a run of @seat in progress or to come
 * returns GST_FLOW_FLUSHING at once, until FLUSH_STOP (FALSE). Any thread. */
void morok_vad_rounds_set_flushing (MorokVadRounds *rounds, MorokVadSeat *seat, gboolean flushing);

/* Runs the @n chunks at @chunks (chunk_len samples each, in stream order,
 * in [-1, 1); read until this returns) in the next @n rounds and writes
 * their speech probabilities to @out_probs[0 .. n). Blocks until all have
 * run: at most @max_wait less @late (how long after its time the buffer
 * came) plus the executes. GST_FLOW_OK;
 * GST_FLOW_FLUSHING (flushing: the rest not run); GST_FLOW_ERROR with
 * @error when an execute failed. */
GstFlowReturn morok_vad_rounds_run (MorokVadRounds *rounds, MorokVadSeat *seat, const float *chunks,
                                    guint n, float *out_probs, GstClockTime late, GError **error);

/* Rounds run, chunks run in them and µs spent in their executes
 * (@out_execute_us nullable) since @rounds was made. */
void morok_vad_rounds_counts (MorokVadRounds *rounds, guint64 *out_rounds, guint64 *out_chunks,
                              gdouble *out_execute_us);

G_END_DECLS
