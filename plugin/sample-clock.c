/* SPDX-License-Identifier: MIT */
#include "sample-clock.h"

void
morok_sample_clock_init (MorokSampleClock *clock, guint rate)
{
  clock->rate = rate;
  clock->base = GST_CLOCK_TIME_NONE;
  clock->base_sample = 0;
}

void
morok_sample_clock_sync (MorokSampleClock *clock, gint64 sample, GstClockTime pts,
                         const GstSegment *segment)
{
  if (GST_CLOCK_TIME_IS_VALID (pts))
    {
      clock->base = pts;
      clock->base_sample = sample;
    }
  else if (!GST_CLOCK_TIME_IS_VALID (clock->base))
    {
      clock->base = segment->format == GST_FORMAT_TIME ? segment->start : 0;
      clock->base_sample = 0;
    }
}

GstClockTime
morok_sample_clock_time (const MorokSampleClock *clock, gint64 sample)
{
  if (!GST_CLOCK_TIME_IS_VALID (clock->base))
    return GST_CLOCK_TIME_NONE;
  if (sample >= clock->base_sample)
    return clock->base
           + gst_util_uint64_scale_int (sample - clock->base_sample, GST_SECOND, clock->rate);
  GstClockTime back
      = gst_util_uint64_scale_int (clock->base_sample - sample, GST_SECOND, clock->rate);
  return clock->base - MIN (back, clock->base);
}
