/* SPDX-License-Identifier: MIT */
#include "vad-harness.h"
#include "models/vad-segmenter.h"
#include <gst/check/gstcheck.h>

#define RATE 16000

GstHarness *
vad_harness (const char *prop, const char *value)
{
  GstElement *vad = gst_element_factory_make ("morokvad", NULL);
  if (prop)
    gst_util_set_object_arg (G_OBJECT (vad), prop, value);
  GstHarness *h = gst_harness_new_with_element (vad, "sink", "src");
  gst_object_unref (vad);
  gst_harness_set_live (h, FALSE);
  gst_harness_set_src_caps_str (h, "audio/x-raw, format=S16LE, rate=16000, channels=1, "
                                   "layout=interleaved");
  GstBus *bus = gst_bus_new ();
  gst_element_set_bus (h->element, bus);
  gst_object_unref (bus);
  return h;
}

void
vad_teardown (GstHarness *h)
{
  GstBus *bus = gst_element_get_bus (h->element);
  if (bus)
    {
      gst_bus_set_flushing (bus, TRUE);
      gst_object_unref (bus);
    }
  gst_element_set_bus (h->element, NULL);
  gst_harness_teardown (h);
}

GstBuffer *
pcm_buffer (const gint16 *pcm, gsize first, gsize n)
{
  GstBuffer *buf = gst_buffer_new_memdup (pcm + first, n * 2);
  GST_BUFFER_PTS (buf) = gst_util_uint64_scale_int (first, GST_SECOND, RATE);
  GST_BUFFER_DURATION (buf) = gst_util_uint64_scale_int (n, GST_SECOND, RATE);
  return buf;
}

void
push_pcm (GstHarness *h, const gint16 *pcm, gsize first, gsize n, gsize block)
{
  for (gsize i = 0; i < n; i += block)
    g_assert_cmpint (gst_harness_push (h, pcm_buffer (pcm, first + i, MIN (block, n - i))), ==,
                     GST_FLOW_OK);
}

GArray *
collect_boundaries (GstHarness *h)
{
  GArray *out = g_array_new (FALSE, FALSE, sizeof (Boundary));
  GstBus *bus = gst_element_get_bus (h->element);
  GstMessage *msg;
  while ((msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ELEMENT)))
    {
      const GstStructure *s = gst_message_get_structure (msg);
      if (gst_structure_has_name (s, "morokvad"))
        {
          Boundary b
              = { .start = g_str_equal (gst_structure_get_string (s, "type"), "speech-start") };
          guint64 ts, rt;
          gdouble p;
          g_assert_true (gst_structure_get_uint64 (s, "timestamp", &ts));
          g_assert_true (gst_structure_get_uint64 (s, "running-time", &rt));
          g_assert_true (gst_structure_has_field (s, "stream-time"));
          g_assert_true (gst_structure_get_double (s, "probability", &p));
          g_assert_cmpfloat (p, >=, 0.0);
          b.ts = ts;
          g_array_append_val (out, b);
        }
      gst_message_unref (msg);
    }
  gst_object_unref (bus);
  return out;
}

GArray *
expected_segments (GArray *probs, gsize n_samples)
{
  MorokVadParams params;
  morok_vad_params_init (&params, RATE);
  GArray *segs = g_array_new (FALSE, FALSE, sizeof (MorokVadSegment));
  morok_vad_segments ((const float *) probs->data, probs->len, n_samples, &params, segs);
  return segs;
}
