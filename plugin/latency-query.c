/* SPDX-License-Identifier: MIT */
#include "latency-query.h"

void
morok_latency_query_add (GstQuery *query, GstClockTime ours)
{
  g_return_if_fail (GST_QUERY_TYPE (query) == GST_QUERY_LATENCY);
  g_return_if_fail (GST_CLOCK_TIME_IS_VALID (ours));
  gboolean live;
  GstClockTime min, max;
  gst_query_parse_latency (query, &live, &min, &max);
  gst_query_set_latency (query, live, min + ours, GST_CLOCK_TIME_IS_VALID (max) ? max + ours : max);
}

gboolean
morok_latency_query_upstream_live (GstPad *sinkpad, gboolean unanswered, GstClockTime *out_min)
{
  g_autoptr (GstQuery) query = gst_query_new_latency ();
  gboolean live = unanswered;
  GstClockTime min = 0;
  if (gst_pad_peer_query (sinkpad, query))
    gst_query_parse_latency (query, &live, &min, NULL);
  if (out_min)
    *out_min = min;
  return live;
}
