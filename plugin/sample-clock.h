/* SPDX-License-Identifier: MIT */
/* The time of each sample of a stream, for buffers with or without PTS: a
 * buffer with a PTS pins its first sample to it; samples after follow on at
 * the rate; before any PTS, sample 0 is the segment's start.
 *
 *   morok_sample_clock_init (&clock, 16000);              // a new segment
 *   morok_sample_clock_sync (&clock, seen, GST_BUFFER_PTS (buf), &segment);
 *   GstClockTime t = morok_sample_clock_time (&clock, seen + 100);
 */
#pragma once

#include <gst/gst.h>

G_BEGIN_DECLS

typedef struct
{
  guint rate;
  GstClockTime base; /* time of sample base_sample; NONE until synced */
  gint64 base_sample;
} MorokSampleClock;

/* Unsynced: the next sync pins the stream. */
void morok_sample_clock_init (MorokSampleClock *clock, guint rate);
/* Sample @sample (of the stream since the segment) starts a buffer stamped
 * @pts: a valid @pts pins it there; without one, the clock goes on, or,
 * never pinned, starts at @segment's start (0 when it is not in TIME). */
void morok_sample_clock_sync (MorokSampleClock *clock, gint64 sample, GstClockTime pts,
                              const GstSegment *segment);
/* The time of @sample, never before 0; NONE before the first sync. */
GstClockTime morok_sample_clock_time (const MorokSampleClock *clock, gint64 sample);

G_END_DECLS
