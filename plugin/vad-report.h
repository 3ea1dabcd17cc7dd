/* SPDX-License-Identifier: MIT */
/* What morokvad reports of a stream, on its always pads and on each
 * request pad alike: the `morokvad` element message of a segment boundary,
 * the voice activity of a buffer's GstAudioLevelMeta and the error for caps
 * it does not take.
 *
 *   MorokVadReportTo to = { element, pad, gate, &clock, &segment };
 *   morok_vad_report_events (&to, ev, morok_vad_segmenter_push (seg, p, ev, G_N_ELEMENTS (ev)));
 *   morok_vad_report_meta (buf, morok_vad_segmenter_speaking (seg));
 *   gst_pad_add_probe (sinkpad, GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM,
 *                      morok_vad_report_caps_probe, NULL, NULL);
 */
#pragma once

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

/* A downstream event probe for morokvad's sink pads: a CAPS event that
 * the pad's template refuses (negotiation then fails) first posts an error
 * on the pad's element saying what works, naming the pad when it is a
 * request pad. */
GstPadProbeReturn morok_vad_report_caps_probe (GstPad *pad, GstPadProbeInfo *info,
                                               gpointer user_data);

G_END_DECLS
