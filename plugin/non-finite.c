/* SPDX-License-Identifier: MIT */
/* The warning about non-finite input samples: see non-finite.h. */
#include "non-finite.h"

void
morok_non_finite_warn (GstElement *element, const char *pad, guint64 bad, gsize n, GstClockTime pts,
                       gboolean *told)
{
  if (*told || bad == 0)
    return;
  *told = TRUE;
  g_autoptr (GError) warning
      = g_error_new (GST_STREAM_ERROR, GST_STREAM_ERROR_FORMAT,
                     "%s%sThe audio has samples that are not numbers (NaN or infinity): they "
                     "count as silence",
                     pad ? pad : "", pad ? ": " : "");
  g_autofree char *debug = g_strdup_printf ("%" G_GUINT64_FORMAT " of %" G_GSIZE_FORMAT
                                            " in the buffer at %" GST_TIME_FORMAT
                                            "; later ones are not reported until a flush",
                                            bad, n, GST_TIME_ARGS (pts));
  GST_WARNING_OBJECT (element, "%s (%s)", warning->message, debug);
  GstStructure *details = gst_structure_new (MOROK_NON_FINITE_INPUT, "samples", G_TYPE_UINT64, bad,
                                             "pts", G_TYPE_UINT64, (guint64) pts, NULL);
  if (pad)
    gst_structure_set (details, "pad", G_TYPE_STRING, pad, NULL);
  gst_element_post_message (element, gst_message_new_warning_with_details (
                                         GST_OBJECT (element), warning, debug, details));
}
