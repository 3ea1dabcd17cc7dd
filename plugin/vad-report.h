/* SPDX-License-Identifier: MIT */
/* What morokvad reports of a stream, on its always pads and on each
 * request pad alike: the `morokvad` element message of a segment boundary,
 * the voice activity of a buffer's GstAudioLevelMeta and the error for caps
 * it does not take.
 *
 *   MorokVadReportTo to = { element, pad, gate, &clock, &segment };
 *   morok_vad_report_events (&to, ev, morok_vad_segmenter_push (seg, p, ev, G_N_ELEMENTS (ev)));
 *   morok_vad_report_meta (buf, morok_vad_segmenter_speaking (seg));
 *   morok_caps_refusal_watch (sinkpad, morok_vad_report_refused_caps);
 */
#pragma once

#include "caps-refusal.h"
#include "sample-clock.h"
#include "silence-gate.h"
#include "models/vad-segmenter.h"
#include <gst/gst.h>

G_BEGIN_DECLS

/* Where the boundaries of a stream go. */
typedef struct
{
  GstElement *element;           /* posts the messages (when its post-messages is TRUE) */
  GstPad *pad;                   /* nullable: the request pad named in the field `pad` */
  MorokSilenceGate *gate;        /* nullable: told of each boundary (remove-silence) */
  const MorokSampleClock *clock; /* times the boundaries */
  const GstSegment *segment;     /* their stream and running times */
} MorokVadReportTo;

/* Tells @to's gate of the @n events @ev and posts a `morokvad` message for
 * each. Call outside the element's object lock. */
void morok_vad_report_events (const MorokVadReportTo *to, const MorokVadEvent *ev, guint n);
/* Sets voice_activity of @buf's level meta to @speaking, adding the meta
 * (level 127) when @buf has none. @buf must be writable. */
void morok_vad_report_meta (GstBuffer *buf, gboolean speaking);

/* For morokvad's sink pads (caps-refusal.h): the error saying what works,
 * naming the pad when it is a request pad. */
void morok_vad_report_refused_caps (GstElement *element, GstPad *pad, GstCaps *caps);

G_END_DECLS
