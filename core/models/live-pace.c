/* SPDX-License-Identifier: MIT */
#include "models/live-pace.h"

#include <math.h>

double
morok_live_window (guint64 probe_ns, double probe_s, double lo, double hi)
{
  double seconds = floor (probe_s * MOROK_LIVE_MIN_INTERVAL_NS / MOROK_LIVE_DECODES / probe_ns);
  return CLAMP (seconds, lo, hi);
}

gboolean
morok_live_wants_half (guint64 window_ns)
{
  /* two decodes are the budget rule's floor: it can only shorten an
   * interval longer than that */
  return MOROK_LIVE_DECODES * window_ns > MAX (MOROK_LIVE_MIN_INTERVAL_NS, 2 * window_ns);
}

guint64
morok_live_interval (const MorokLiveCost *cost)
{
  guint64 d = cost->window_ns, f = cost->fastest_ns, interval = MOROK_LIVE_DECODES * d;
  if (cost->half_ns > 0 && cost->half_ns < f && cost->window_s > 0)
    {
      /* ns of decoding a second of audio, no more than the window's mean */
      double marginal = MIN ((f - cost->half_ns) / (cost->window_s / 2), f / cost->window_s);
      guint64 budget = (guint64) (f / (MOROK_LIVE_BUDGET * marginal) * 1e9);
      interval = MIN (interval, MAX (budget, 2 * d));
    }
  return MAX (interval, MOROK_LIVE_MIN_INTERVAL_NS);
}

guint64
morok_live_latency (guint64 window_ns)
{
  return MAX (50 * MOROK_LIVE_MS, 2 * window_ns + 20 * MOROK_LIVE_MS);
}
