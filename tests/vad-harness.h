/* SPDX-License-Identifier: MIT */
/* morokvad in a GstHarness on 16 kHz mono S16 audio (the espeak-ng
 * fixture), for the element's tests.
 *
 *   GstHarness *h = vad_harness ("remove-silence", "true");
 *   push_pcm (h, pcm, 0, n, 1000);
 *   gst_harness_push_event (h, gst_event_new_eos ());
 *   g_autoptr (GArray) bounds = collect_boundaries (h);
 *   vad_teardown (h);
 */
#pragma once

#include <gst/check/gstharness.h>

/* A segment boundary the element posted. */
typedef struct
{
  gboolean start;
  GstClockTime ts;
} Boundary;

/* A harness around morokvad with @prop set to @value (both may be NULL),
 * with a bus of its own, behind an upstream that is not live (as filesrc
 * is: gst_harness_set_live () changes that). */
GstHarness *vad_harness (const char *prop, const char *value);
/* Drops the bus vad_harness () gave the element (and its queued messages),
 * then the harness. */
void vad_teardown (GstHarness *h);
/* (transfer full) Samples [@first, @first + @n) of @pcm as a buffer with
 * their PTS and duration. */
GstBuffer *pcm_buffer (const gint16 *pcm, gsize first, gsize n);
/* Pushes @n samples from @first in buffers of @block samples. */
void push_pcm (GstHarness *h, const gint16 *pcm, gsize first, gsize n, gsize block);
/* (transfer full) The boundaries posted on @h's bus since the last call,
 * in order (a GArray of Boundary); checks each message's fields. */
GArray *collect_boundaries (GstHarness *h);
/* (transfer full) The segments (MorokVadSegment) of morok_vad_segments ()
 * at the defaults for @probs (floats, one per chunk) of @n_samples. */
GArray *expected_segments (GArray *probs, gsize n_samples);
