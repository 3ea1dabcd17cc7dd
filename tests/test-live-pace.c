/* SPDX-License-Identifier: MIT */
/* The live transcriber's automatic window, interval and latency (models/live-pace.h)
 * on decode costs like those of the machines in docs/benchmarks.md; the
 * expected values are worked out by hand from the rules the header states. */
#include <glib.h>

#include "models/live-pace.h"

#define MS 1000000.0

static void
assert_ms (guint64 ns, double ms)
{
  g_assert_cmpfloat_with_epsilon (ns / MS, ms, 1e-3);
}

/* A small model: nine decodes are under the 100 ms floor; no half is timed. */
static void
test_cheap (void)
{
  g_assert_false (morok_live_wants_half (7 * MS));
  MorokLiveCost cost = { 7 * MS, 7 * MS, 0, 6.0 };
  assert_ms (morok_live_interval (&cost), 100);
  assert_ms (morok_live_latency (7 * MS), 50);
  assert_ms (morok_live_latency (40 * MS), 100);
}

/* A fast machine: the budget allows no shorter interval than nine decodes
 * (marginal 15 ms a second: 50 / (7 x 15) s = 476.19 ms > 450), or a
 * shorter one where the decode's fixed part is smaller (marginal 20 ms:
 * 357.14 ms). */
static void
test_budget (void)
{
  g_assert_true (morok_live_wants_half (50 * MS));
  MorokLiveCost a = { 50 * MS, 50 * MS, 35 * MS, 2.0 };
  assert_ms (morok_live_interval (&a), 450);
  MorokLiveCost b = { 50 * MS, 50 * MS, 30 * MS, 2.0 };
  assert_ms (morok_live_interval (&b), 357.142857);
  assert_ms (morok_live_latency (50 * MS), 120);
}

/* A slow machine: the budget's 284 ms would be under two decodes, 450. */
static void
test_two_decodes (void)
{
  MorokLiveCost cost = { 225 * MS, 225 * MS, 112 * MS, 2.0 };
  assert_ms (morok_live_interval (&cost), 450);
  assert_ms (morok_live_latency (225 * MS), 470);
}

/* The marginal cost is at most the window's mean (100 ms over 2 s: 50 ms a
 * second, not 90): 100 / (7 x 50) s = 285.71 ms. */
static void
test_marginal_bound (void)
{
  MorokLiveCost cost = { 100 * MS, 100 * MS, 10 * MS, 2.0 };
  assert_ms (morok_live_interval (&cost), 285.714286);
}

/* No half timed, or one the noise made as slow as the whole: nine decodes. */
static void
test_untimed (void)
{
  MorokLiveCost none = { 160 * MS, 160 * MS, 0, 2.0 },
                noisy = { 160 * MS, 150 * MS, 170 * MS, 2.0 };
  assert_ms (morok_live_interval (&none), 1440);
  assert_ms (morok_live_interval (&noisy), 1440);
}

/* The budget compares the fastest runs, the floor follows the median: a
 * window whose median a busy machine pushed up to 380 ms (fastest 360,
 * half 255) has a marginal 105 ms a second, a budget of 360 / (7 x 105) s
 * = 489.80 ms and the floor, 760 ms; 50 ms (fastest 45, half 30): marginal
 * 15 ms, 45 / (7 x 15) s = 428.57 ms, under nine decodes (450). */
static void
test_fastest (void)
{
  MorokLiveCost slow = { 380 * MS, 360 * MS, 255 * MS, 2.0 };
  assert_ms (morok_live_interval (&slow), 760);
  MorokLiveCost fast = { 50 * MS, 45 * MS, 30 * MS, 2.0 };
  assert_ms (morok_live_interval (&fast), 428.571429);
}

/* The window: 2 s decoded in 3 ms -> 2 x 100 / 9 / 3 = 7.4 s, kept to 6;
 * in 5 ms 4.4 -> 4 s; in 9 ms 2.5 -> 2 s; in 50 ms 0.4 -> the floor, 2 s
 * (or 3 s where twice the hold asks for it). */
static void
test_window (void)
{
  g_assert_cmpfloat (morok_live_window (3 * MS, 2.0, 2.0, 6.0), ==, 6.0);
  g_assert_cmpfloat (morok_live_window (5 * MS, 2.0, 2.0, 6.0), ==, 4.0);
  g_assert_cmpfloat (morok_live_window (9 * MS, 2.0, 2.0, 6.0), ==, 2.0);
  g_assert_cmpfloat (morok_live_window (50 * MS, 2.0, 2.0, 6.0), ==, 2.0);
  g_assert_cmpfloat (morok_live_window (50 * MS, 2.0, 3.0, 6.0), ==, 3.0);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/live-pace/cheap", test_cheap);
  g_test_add_func ("/live-pace/budget", test_budget);
  g_test_add_func ("/live-pace/two-decodes", test_two_decodes);
  g_test_add_func ("/live-pace/marginal-bound", test_marginal_bound);
  g_test_add_func ("/live-pace/untimed", test_untimed);
  g_test_add_func ("/live-pace/fastest", test_fastest);
  g_test_add_func ("/live-pace/window", test_window);
  return g_test_run ();
}
