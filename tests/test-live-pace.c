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

/* Decode costs with no noise: fastest, median and slowest alike. */
static MorokLiveCost
steady (double window_ms, double half_ms, double window_s)
{
  guint64 d = (guint64) (window_ms * MS);
  return (MorokLiveCost){ d, d, d, (guint64) (half_ms * MS), window_s };
}

/* A small model: nine decodes are under the 100 ms floor, whatever its
 * half costs (the budget, 7 / (7 x 2/3 ms a second) = 1.5 s, is longer),
 * and with none timed (half_ns 0). */
static void
test_cheap (void)
{
  MorokLiveCost cost = steady (7, 0, 6.0), timed = steady (7, 5, 6.0);
  assert_ms (morok_live_interval (&cost), 100);
  assert_ms (morok_live_interval (&timed), 100);
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
  MorokLiveCost a = steady (50, 35, 2.0), b = steady (50, 30, 2.0);
  assert_ms (morok_live_interval (&a), 450);
  assert_ms (morok_live_interval (&b), 357.142857);
  assert_ms (morok_live_latency (50 * MS), 120);
}

/* A slow machine: the budget's 285.71 ms (marginal 112.5 ms a second, the
 * window's mean) would be under two decodes, 450. */
static void
test_two_decodes (void)
{
  MorokLiveCost cost = steady (225, 112, 2.0);
  assert_ms (morok_live_interval (&cost), 450);
  assert_ms (morok_live_latency (225 * MS), 470);
}

/* The marginal cost is at most the window's mean (100 ms over 2 s: 50 ms a
 * second, not 90): 100 / (7 x 50) s = 285.71 ms. */
static void
test_marginal_bound (void)
{
  MorokLiveCost cost = steady (100, 10, 2.0);
  assert_ms (morok_live_interval (&cost), 285.714286);
}

/* No half timed, or one the noise made as slow as the whole: nine decodes. */
static void
test_untimed (void)
{
  MorokLiveCost none = steady (160, 0, 2.0), noisy = steady (160, 170, 2.0);
  assert_ms (morok_live_interval (&none), 1440);
  assert_ms (morok_live_interval (&noisy), 1440);
}

/* A noisy machine, each rule on its own run: the budget on the fastest
 * (45 ms, half 30: marginal 15 ms a second, 45 / (7 x 15) s = 428.57 ms,
 * under nine median decodes, 9 x 50 = 450); the floor on the slowest (a
 * median of 100 and a slowest of 300 ms: the shorter of nine decodes,
 * 900, and the budget, 100 / (7 x 50) s = 285.71, is under two slowest,
 * 600). The latency follows the slowest: 2 x 300 + 20. */
static void
test_noisy (void)
{
  MorokLiveCost fast = { 45 * MS, 50 * MS, 60 * MS, 30 * MS, 2.0 };
  assert_ms (morok_live_interval (&fast), 428.571429);
  MorokLiveCost slow = { 100 * MS, 100 * MS, 300 * MS, 50 * MS, 2.0 };
  assert_ms (morok_live_interval (&slow), 600);
  assert_ms (morok_live_latency (slow.slowest_ns), 620);
  /* nine median decodes cap it (450), not nine of the slowest (720) */
  MorokLiveCost capped = { 50 * MS, 50 * MS, 80 * MS, 0, 2.0 };
  assert_ms (morok_live_interval (&capped), 450);
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
  g_test_add_func ("/live-pace/noisy", test_noisy);
  g_test_add_func ("/live-pace/window", test_window);
  return g_test_run ();
}
