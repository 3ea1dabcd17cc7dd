/* SPDX-License-Identifier: MIT */
#include "caps-refusal.h"

static GstPadProbeReturn
caps_probe (GstPad *pad, GstPadProbeInfo *info, gpointer user_data)
{
  GstEvent *event = GST_PAD_PROBE_INFO_EVENT (info);
  if (GST_EVENT_TYPE (event) != GST_EVENT_CAPS)
    return GST_PAD_PROBE_OK;
  GstCaps *caps;
  gst_event_parse_caps (event, &caps);
  g_autoptr (GstCaps) templ = gst_pad_get_pad_template_caps (pad);
  if (!gst_caps_is_subset (caps, templ))
    ((MorokCapsRefused) user_data) (GST_ELEMENT (GST_PAD_PARENT (pad)), pad, caps);
  return GST_PAD_PROBE_OK;
}

void
morok_caps_refusal_watch (GstPad *sinkpad, MorokCapsRefused refused)
{
  gst_pad_add_probe (sinkpad, GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM, caps_probe, refused, NULL);
}
