/* SPDX-License-Identifier: MIT */
/* The silence gate of morokvad remove-silence=true: audio is held until the
 * speech segments around it are known, then its parts inside segments are
 * pushed as buffers and the parts outside as GAP events.
 *
 * Exact (the default): the segmenter's events open and close the segments,
 * and a held buffer leaves whole once all of it is decided, so exactly the
 * segments' audio passes.
 *
 *   morok_silence_gate_hold (gate, buf, first_sample);
 *   morok_silence_gate_speech_start (gate, sample);    // from the segmenter
 *   morok_silence_gate_speech_end (gate, sample);
 *   ret = morok_silence_gate_release (gate, srcpad, analysed - hold);
 *
 * Live: the segmenter's tentative spans (morok_vad_segmenter_tentative ())
 * open and close them instead, followed after each chunk, and a buffer is
 * cut where the decided audio ends, so that no sample waits longer than the
 * hold: every segment's audio passes, and that of speech the segmenter
 * later drops or trims too.
 *
 *   hold = morok_silence_gate_choose_mode (gate, sinkpad, &params); // as a stream starts
 *   morok_silence_gate_follow (gate, seg);             // after each push
 */
#pragma once

#include "sample-clock.h"
#include "models/vad-segmenter.h"
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
/* Drops the held audio and the segments; the mode stays. */
void morok_silence_gate_reset (MorokSilenceGate *gate);
/* Live mode when the peer of @sinkpad answers the LATENCY query live (a
 * live source feeds it), exact mode otherwise; call as a stream starts,
 * while nothing is held. Returns the samples to hold back for @params in
 * that mode (morok_silence_gate_hold_len ()). */
gint64 morok_silence_gate_choose_mode (MorokSilenceGate *gate, GstPad *sinkpad,
                                       const MorokVadParams *params);
gboolean morok_silence_gate_is_live (const MorokSilenceGate *gate);
/* Samples the gate holds audio back in @live mode or exact: exact, the
 * segmenter's worst event delay plus the chunk being filled
 * (morok_vad_params_delay_max () + window); live, its tentative delay
 * (morok_vad_params_tentative_delay ()). */
gint64 morok_silence_gate_hold_len (const MorokVadParams *params, gboolean live);

/* Holds @buf (transfer full), whose first frame is sample @start of the stream. */
void morok_silence_gate_hold (MorokSilenceGate *gate, GstBuffer *buf, gint64 start);
/* A speech segment starts / ends at @sample (samples of the stream). */
void morok_silence_gate_speech_start (MorokSilenceGate *gate, gint64 sample);
void morok_silence_gate_speech_end (MorokSilenceGate *gate, gint64 sample);
/* Live mode: opens or closes the segment after @seg's tentative span as it
 * stands after a push. */
void morok_silence_gate_follow (MorokSilenceGate *gate, const MorokVadSegmenter *seg);

/* Pushes on @pad every held buffer that ends at or before @decided
 * (G_MAXINT64: all of them), in live mode also the part before @decided of
 * the next: its parts in speech as buffers (cut at the boundaries,
 * timestamps adjusted), its other parts as GAP events; times of buffers
 * without PTS come from the clock. */
GstFlowReturn morok_silence_gate_release (MorokSilenceGate *gate, GstPad *pad, gint64 decided);

G_END_DECLS
