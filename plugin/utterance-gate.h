/* SPDX-License-Identifier: MIT */
/* The utterances of morokencoder (and of any element that runs a model once
 * per utterance): mono 16-bit or f32 audio is gathered into utterances,
 * which end at a GAP event, a DISCONT, EOS or max_samples (the audio then
 * goes on as the next one); finished utterances wait until a batch of them
 * is there. Their times come from a sample clock (sample-clock.h), so audio
 * without PTS gets them too.
 *
 * Downstream is told with GAP events how far the output is known, so that a
 * sink prerolls (and a tee's other branches flow) long before the first
 * utterance is complete: a GAP at the segment's start first, then, each time
 * nothing earlier is held, one up to the audio seen so far. A GAP never
 * reaches into time that an utterance still held will cover.
 *
 *   gate = morok_utterance_gate_new (16000, max_samples, batch);  // at prepare
 *   // chain ():
 *   morok_utterance_gate_sync (gate, GST_BUFFER_PTS (buf));
 *   morok_utterance_gate_push_gap_to_held (gate, srcpad);
 *   for (gsize at = 0; at < frames;)
 *     {
 *       at += morok_utterance_gate_append (gate, data + at * bps, frames - at, s16);
 *       if (morok_utterance_gate_batch_full (gate))
 *         ret = run_batch (self);  // _batch (), _push () each output, _batch_done ()
 *     }
 */
#pragma once

#include <gst/gst.h>

G_BEGIN_DECLS

typedef struct
{
  float *samples; /* [max_samples], of which the first n are the utterance's */
  gint64 n;
  GstClockTime pts; /* time of its first sample */
} MorokUtterance;

typedef struct _MorokUtteranceGate MorokUtteranceGate;

/* Utterances of up to @max_samples at @rate Hz, in batches of @batch (1 or
 * more), in a TIME segment from 0 until one is set. */
MorokUtteranceGate *morok_utterance_gate_new (guint rate, gint64 max_samples, guint batch);
void morok_utterance_gate_free (MorokUtteranceGate *gate);
/* A new segment: the clock starts over from @segment's start, and the
 * next GAP starts there. Held audio is kept: end and run it first. */
void morok_utterance_gate_set_segment (MorokUtteranceGate *gate, const GstSegment *segment);
/* A flush: drops the held audio; the clock and the GAPs start over. */
void morok_utterance_gate_flush (MorokUtteranceGate *gate);

/* A buffer stamped @pts (or not) comes: its first sample is there. */
void morok_utterance_gate_sync (MorokUtteranceGate *gate, GstClockTime pts);
/* @frames samples, S16LE when @s16, else F32LE, as floats (non-finite
 * values as 0) into @out; returns how many were not finite. */
gsize morok_utterance_samples_to_f32 (const guint8 *data, gsize frames, gboolean s16, float *out);
/* Appends up to @frames samples (S16LE when @s16, else F32LE; non-finite
 * values as 0, counted into *@non_finite), ending the utterance at
 * max_samples; stops when the batch is full. Returns the samples taken. */
gsize morok_utterance_gate_append (MorokUtteranceGate *gate, const guint8 *data, gsize frames,
                                   gboolean s16, gsize *non_finite);
/* Ends the utterance being gathered (nothing when it is empty). */
void morok_utterance_gate_end (MorokUtteranceGate *gate);
/* A GAP event [@ts, @ts + @duration) came: ends the utterance; the next
 * sample is at its end. */
void morok_utterance_gate_gap (MorokUtteranceGate *gate, GstClockTime ts, GstClockTime duration);

gboolean morok_utterance_gate_batch_full (const MorokUtteranceGate *gate);
/* The finished utterances, in stream order, *out_n of them (0: none);
 * valid until _batch_done (). The samples past n may be overwritten. */
MorokUtterance *morok_utterance_gate_batch (MorokUtteranceGate *gate, guint *out_n);
/* Pushes @buf (transfer full), output for an utterance of the batch, on
 * @pad after a GAP for any time before it not yet told; buffers may
 * overlap, each starting no earlier than the one before. */
GstFlowReturn morok_utterance_gate_push (MorokUtteranceGate *gate, GstPad *pad, GstBuffer *buf);
/* Drops the batch's utterances, then pushes a GAP up to what is held. */
void morok_utterance_gate_batch_done (MorokUtteranceGate *gate, GstPad *pad);
/* Pushes on @pad a GAP from what downstream knows up to @until (nothing
 * when it knows that already); the first after a segment starts at its
 * start. */
void morok_utterance_gate_push_gap (MorokUtteranceGate *gate, GstPad *pad, GstClockTime until);
/* Pushes on @pad a GAP up to where output is known: the first held sample, or
 * when none is held the audio seen so far. The first after a segment starts
 * at the segment's start, even when it is empty. */
void morok_utterance_gate_push_gap_to_held (MorokUtteranceGate *gate, GstPad *pad);

G_END_DECLS
