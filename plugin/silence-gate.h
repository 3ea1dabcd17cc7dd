/* SPDX-License-Identifier: MIT */
/* The silence gate of morokvad remove-silence=true: audio is held until the
 * speech segments around it are known, then its parts inside segments are
 * pushed as buffers and the parts outside as GAP events.
 *
 *   morok_silence_gate_hold (gate, buf, first_sample);
 *   morok_silence_gate_speech_start (gate, sample);    // from the segmenter
 *   morok_silence_gate_speech_end (gate, sample);
 *   ret = morok_silence_gate_release (gate, srcpad, analysed - delay);
 */
#pragma once

#include "sample-clock.h"
#include <gst/gst.h>

G_BEGIN_DECLS

typedef struct _MorokSilenceGate MorokSilenceGate;

MorokSilenceGate *morok_silence_gate_new (void);
void morok_silence_gate_free (MorokSilenceGate *gate);
/* Bytes per frame and rate of the audio to come, and the clock that times
 * its buffers without PTS (the element's; read when they are released);
 * drops anything held. */
void morok_silence_gate_configure (MorokSilenceGate *gate, gint bpf, guint rate,
                                   const MorokSampleClock *clock);
/* Drops the held audio and the segments. */
void morok_silence_gate_reset (MorokSilenceGate *gate);

/* Holds @buf (transfer full), whose first frame is sample @start of the stream. */
void morok_silence_gate_hold (MorokSilenceGate *gate, GstBuffer *buf, gint64 start);
/* A speech segment starts / ends at @sample (samples of the stream). */
void morok_silence_gate_speech_start (MorokSilenceGate *gate, gint64 sample);
void morok_silence_gate_speech_end (MorokSilenceGate *gate, gint64 sample);

/* Pushes on @pad every held buffer that ends at or before @decided
 * (G_MAXINT64: all of them): its parts in speech as buffers (cut at the
 * boundaries, timestamps adjusted), its other parts as GAP events; times
 * of buffers without PTS come from the clock. */
GstFlowReturn morok_silence_gate_release (MorokSilenceGate *gate, GstPad *pad, gint64 decided);

G_END_DECLS
