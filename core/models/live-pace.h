/* SPDX-License-Identifier: MIT */
/* How much audio a live transcriber decodes at a time, how often, and how
 * long it lets a decode take, from what decodes cost on this machine
 * (times in ns). A few runs of each decode are timed; a busy machine only
 * slows a run, so their fastest is the machine's own speed, their median
 * what decodes cost on average, their slowest what one may take in the
 * machine's slow moments:
 *
 *   double window_s = morok_live_window (probe_median_ns, 2.0, 2.0, 6.0);
 *   MorokLiveCost cost = { .fastest_ns = ..., .median_ns = ..., .slowest_ns = ...,
 *                          .half_ns = ..., .window_s = window_s };
 *   guint64 interval = morok_live_interval (&cost);
 *   guint64 latency = morok_live_latency (cost.slowest_ns);
 *
 * The interval is the shorter of
 *
 *   - MOROK_LIVE_DECODES median decodes: the stream's decoding keeps about
 *     one core's 1 / MOROK_LIVE_DECODES, whatever the model costs offline;
 *   - the interval at which decoding costs MOROK_LIVE_BUDGET times the
 *     offline decoding of the same audio;
 *
 * but at least two slowest decodes (decodes that take that long, as the
 * latency allows, still keep up) and MOROK_LIVE_MIN_INTERVAL_NS.
 *
 * The offline cost of a second of audio is taken as the window's marginal
 * one, (fastest_ns - half_ns) over half the window: a long utterance costs
 * at least that a second (the marginal cost leaves out the decode's fixed
 * part, which the utterance still pays once, and its attention grows with
 * its length), so live decoding costs at most the budget. The difference
 * is taken between the fastest runs: two runs slowed unevenly can differ
 * by anything. half_ns 0 (not timed), or a marginal cost no larger than
 * zero, leaves the first rule alone. */
#pragma once

#include <glib.h>

#define MOROK_LIVE_MS G_GUINT64_CONSTANT (1000000)
#define MOROK_LIVE_MIN_INTERVAL_NS (100 * MOROK_LIVE_MS)
#define MOROK_LIVE_DECODES 9
#define MOROK_LIVE_BUDGET 7

typedef struct
{
  /* one decode of the whole window: the fastest, median and slowest run */
  guint64 fastest_ns, median_ns, slowest_ns;
  guint64 half_ns; /* the fastest decode of its first half; 0: not timed */
  double window_s; /* the window, seconds of audio */
} MorokLiveCost;

/* The automatic window (s): the longest whole number of seconds in
 * [@lo, @hi] whose decode, estimated from one of @probe_s seconds that
 * took @probe_ns (the median run), keeps MOROK_LIVE_DECODES of them within
 * MOROK_LIVE_MIN_INTERVAL_NS: a cheap model gets more left context at no
 * cost in latency. */
double morok_live_window (guint64 probe_ns, double probe_s, double lo, double hi);

guint64 morok_live_interval (const MorokLiveCost *cost);

/* Twice the slowest decode and 20 ms, at least 50 ms: a decode in progress
 * when one falls due, then that one. */
guint64 morok_live_latency (guint64 slowest_ns);
