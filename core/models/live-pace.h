/* SPDX-License-Identifier: MIT */
/* How much audio a live transcriber decodes at a time, how often, and how
 * long it lets a decode take, from what decodes cost on this machine
 * (times in ns):
 *
 *   double window_s = morok_live_window (probe_ns, 2.0, 2.0, 6.0);
 *   MorokLiveCost cost = { .window_ns = ..., .fastest_ns = ..., .half_ns = ...,
 *                          .window_s = window_s };
 *   guint64 interval = morok_live_interval (&cost);
 *   guint64 latency = morok_live_latency (cost.window_ns);
 *
 * The interval is the longest of MOROK_LIVE_MIN_INTERVAL_NS and the
 * shortest of
 *
 *   - MOROK_LIVE_DECODES decodes: the stream's decoding keeps at most one
 *     core's 1 / MOROK_LIVE_DECODES, whatever the model costs offline;
 *   - the interval at which decoding costs MOROK_LIVE_BUDGET times the
 *     offline decoding of the same audio, but two decodes at least
 *     (decodes that take twice their measured time, as the latency allows,
 *     still keep up).
 *
 * The offline cost of a second of audio is taken as the window's marginal
 * one, (fastest_ns - half_ns) over half the window: a long utterance costs
 * at least that a second (the marginal cost leaves out the decode's fixed
 * part, which the utterance still pays once, and its attention grows with
 * its length), so live decoding costs at most the budget. The budget
 * compares the fastest runs (a busy machine only slows a run, and the
 * difference of two slowed runs can be anything); the floor follows the
 * slowest, what decodes take in the machine's slow moments. half_ns 0 (not
 * timed), or a marginal cost the noise made no larger than zero, leaves
 * the first rule alone. */
#pragma once

#include <glib.h>

#define MOROK_LIVE_MS G_GUINT64_CONSTANT (1000000)
#define MOROK_LIVE_MIN_INTERVAL_NS (100 * MOROK_LIVE_MS)
#define MOROK_LIVE_DECODES 9
#define MOROK_LIVE_BUDGET 7

typedef struct
{
  guint64 window_ns;  /* one decode of the whole window: the slowest of the runs timed */
  guint64 fastest_ns; /* the fastest of those runs */
  guint64 half_ns;    /* the fastest decode of its first half; 0: not timed */
  double window_s;    /* the window, seconds of audio */
} MorokLiveCost;

/* The automatic window (s): the longest whole number of seconds in
 * [@lo, @hi] whose decode, estimated from one of @probe_s seconds that
 * took @probe_ns, keeps MOROK_LIVE_DECODES of them within
 * MOROK_LIVE_MIN_INTERVAL_NS: a cheap model gets more left context at no
 * cost in latency. */
double morok_live_window (guint64 probe_ns, double probe_s, double lo, double hi);

/* Whether the budget rule can change the interval of a decode that takes
 * @window_ns: when not, half_ns need not be timed. */
gboolean morok_live_wants_half (guint64 window_ns);

guint64 morok_live_interval (const MorokLiveCost *cost);

/* Twice a decode and 20 ms, at least 50 ms: a decode in progress when one
 * falls due, then that one. */
guint64 morok_live_latency (guint64 window_ns);
