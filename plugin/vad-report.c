/* SPDX-License-Identifier: MIT */
#include "vad-report.h"
#include <gst/audio/audio.h>

void
morok_vad_report_events (const MorokVadReportTo *to, const MorokVadEvent *ev, guint n)
{
  if (n == 0) /* most chunks: no property read */
    return;
  for (guint i = 0; i < n && to->gate; i++)
    if (ev[i].type == MOROK_VAD_EVENT_START)
      morok_silence_gate_speech_start (to->gate, ev[i].sample);
    else
      morok_silence_gate_speech_end (to->gate, ev[i].sample);
  gboolean post;
  g_object_get (to->element, "post-messages", &post, NULL);
  for (guint i = 0; i < n && post; i++)
    {
      GstClockTime ts = morok_sample_clock_time (to->clock, ev[i].sample);
      GstClockTime stream_time = gst_segment_to_stream_time (to->segment, GST_FORMAT_TIME, ts);
      GstClockTime running_time = gst_segment_to_running_time (to->segment, GST_FORMAT_TIME, ts);
      GstStructure *s = gst_structure_new (
          "morokvad", "type", G_TYPE_STRING,
          ev[i].type == MOROK_VAD_EVENT_START ? "speech-start" : "speech-end", "timestamp",
          G_TYPE_UINT64, ts, "stream-time", G_TYPE_UINT64, stream_time, "running-time",
          G_TYPE_UINT64, running_time, "probability", G_TYPE_DOUBLE, (gdouble) ev[i].prob, NULL);
      if (to->pad)
        gst_structure_set (s, "pad", G_TYPE_STRING, GST_PAD_NAME (to->pad), NULL);
      gst_element_post_message (to->element, gst_message_new_element (GST_OBJECT (to->element), s));
    }
}

void
morok_vad_report_meta (GstBuffer *buf, gboolean speaking)
{
  GstAudioLevelMeta *meta = gst_buffer_get_audio_level_meta (buf);
  if (meta)
    meta->voice_activity = speaking;
  else
    gst_buffer_add_audio_level_meta (buf, 127, speaking);
}

void
morok_vad_report_refused_caps (GstElement *element, GstPad *pad, GstCaps *caps)
{
  GstPadTemplate *pt = GST_PAD_PAD_TEMPLATE (pad);
  g_autofree char *who = pt && GST_PAD_TEMPLATE_PRESENCE (pt) == GST_PAD_REQUEST
                             ? g_strdup_printf ("%s: ", GST_PAD_NAME (pad))
                             : g_strdup ("");
  const GstStructure *s = gst_caps_get_structure (caps, 0);
  gint rate;
  if (gst_structure_get_int (s, "rate", &rate) && rate != 16000 && rate != 8000)
    GST_ELEMENT_ERROR (element, STREAM, FORMAT,
                       ("%smorokvad works on 16000 or 8000 Hz audio, not %d Hz", who, rate),
                       ("put audioresample before morokvad"));
  else
    {
      g_autofree char *got = gst_caps_to_string (caps);
      GST_ELEMENT_ERROR (element, STREAM, FORMAT,
                         ("%smorokvad takes interleaved F32LE or S16LE audio, not %s", who, got),
                         ("put audioconvert before morokvad"));
    }
}
