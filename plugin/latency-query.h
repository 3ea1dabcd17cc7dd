/* SPDX-License-Identifier: MIT */
/* The LATENCY query of an element that holds data back: it forwards the
 * query upstream and adds its own latency to the answer, the minimum (the
 * most it holds a buffer) and the maximum (what it can buffer) alike, an
 * unbounded maximum staying unbounded.
 *
 *   if (!gst_pad_peer_query (sinkpad, query))
 *     return FALSE;
 *   morok_latency_query_add (query, ours);
 *   return TRUE;
 */
#pragma once

#include <gst/gst.h>

G_BEGIN_DECLS

/* Adds @ours (a valid time) to the minimum of @query, a LATENCY query that
 * upstream answered, and to its maximum unless that is GST_CLOCK_TIME_NONE;
 * the live flag is kept. */
void morok_latency_query_add (GstQuery *query, GstClockTime ours);
/* TRUE if the peer of @sinkpad answers a LATENCY query live: a live source
 * feeds it. FALSE when it answers not live; @unanswered when it answers
 * not at all (unlinked, or a live source whose caps are not negotiated
 * before it runs). @out_min (nullable): the answer's minimum, 0 when
 * unanswered. */
gboolean morok_latency_query_upstream_live (GstPad *sinkpad, gboolean unanswered,
                                            GstClockTime *out_min);

G_END_DECLS
