/* SPDX-License-Identifier: MIT */
#include "models/live-pace.h"

#include <math.h>

double
morok_live_window (guint64 probe_ns, double probe_s, double lo, double hi)
{
  double seconds = floor (probe_s * MOROK_LIVE_MIN_INTERVAL_NS / MOROK_LIVE_DECODES / probe_ns);
  return CLAMP (seconds, lo, hi);
}

guint64
morok_live_interval (const MorokLiveCost *cost)
{
  guint64 f = cost->fastest_ns, interval = MOROK_LIVE_DECODES * cost->median_ns;
  if (cost->half_ns > 0 && cost->half_ns < f && cost->window_s > 0)
    {
      /* ns of decoding a second of audio, no more than the window's mean */
      double marginal = MIN ((f - cost->half_ns) / (cost->window_s / 2), f / cost->window_s);
      interval = MIN (interval, (guint64) (f / (MOROK_LIVE_BUDGET * marginal) * 1e9));
    }
  /* decodes as slow as the slowest timed, twice over, still keep up */
  return MAX (MAX (interval, 2 * cost->slowest_ns), MOROK_LIVE_MIN_INTERVAL_NS);
}

guint64
morok_live_latency (guint64 slowest_ns)
{
  return MAX (50 * MOROK_LIVE_MS, 2 * slowest_ns + 20 * MOROK_LIVE_MS);
}
