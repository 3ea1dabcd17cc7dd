/* SPDX-License-Identifier: MIT */
/* Greedy CTC decoding (models/ctc-decode.h) on small hand-made score
 * tables. */
#include <glib.h>
#include <math.h>

#include "models/ctc-decode.h"

/* Scores that pick @ids frame by frame (blank = 3). */
static void
scores_for (const guint *ids, guint n, float *out)
{
  for (guint f = 0; f < n; f++)
    for (guint c = 0; c < 4; c++)
      out[f * 4 + c] = c == ids[f] ? -0.1f : -3.0f;
}

/* Repeats collapse, blanks drop and separate, and each token keeps the
 * frames of its run; the first of equal scores wins. */
static void
test_ctc_greedy (void)
{
  const guint ids[] = { 3, 0, 0, 3, 0, 1, 1, 1, 3, 3, 2, 0 };
  float scores[G_N_ELEMENTS (ids) * 4];
  scores_for (ids, G_N_ELEMENTS (ids), scores);
  MorokCtcToken tok[G_N_ELEMENTS (ids)];
  guint n = morok_ctc_greedy_decode (scores, G_N_ELEMENTS (ids), 4, 4, 3, tok);
  const MorokCtcToken want[]
      = { { 0, 1, 2 }, { 0, 4, 1 }, { 1, 5, 3 }, { 2, 10, 1 }, { 0, 11, 1 } };
  g_assert_cmpuint (n, ==, G_N_ELEMENTS (want));
  for (guint i = 0; i < n; i++)
    {
      g_assert_cmpuint (tok[i].id, ==, want[i].id);
      g_assert_cmpint (tok[i].frame, ==, want[i].frame);
      g_assert_cmpint (tok[i].n_frames, ==, want[i].n_frames);
    }
  const float tie[] = { 0.5f, 0.5f, 0.5f, 0.5f };
  g_assert_cmpuint (morok_ctc_greedy_decode (tie, 1, 4, 4, 3, tok), ==, 1);
  g_assert_cmpuint (tok[0].id, ==, 0);
  g_assert_cmpuint (morok_ctc_greedy_decode (scores, 0, 4, 4, 3, tok), ==, 0);
}

/* The plain scan that morok_best_class must agree with. */
static guint
scan_best (const float *x, guint n)
{
  guint best = 0;
  for (guint k = 1; k < n; k++)
    if (x[k] > x[best])
      best = k;
  return best;
}

/* morok_best_class against the scan: random scores of every length up to
 * past an RNN-T joint's 1025 classes, the largest repeated at random
 * places (ties across its eight chains), NaNs strewn in or first, signed
 * zeros as the largest. */
static void
test_best_class (void)
{
  GRand *rand = g_rand_new_with_seed (5);
  float x[1040];
  for (guint n = 1; n <= G_N_ELEMENTS (x); n += n < 40 ? 1 : 37)
    for (guint round = 0; round < 40; round++)
      {
        for (guint k = 0; k < n; k++)
          x[k] = (float) g_rand_double_range (rand, -20, 0);
        guint kind = round % 5;
        if (kind >= 1) /* ties: the largest again at up to three places */
          for (guint t = 0, at = g_rand_int_range (rand, 0, n); t < 3; t++)
            x[g_rand_int_range (rand, 0, n)] = x[at] = 1.0f;
        if (kind == 2) /* NaNs anywhere */
          for (guint t = 0; t < 4; t++)
            x[g_rand_int_range (rand, 0, n)] = NAN;
        if (kind == 3) /* a NaN first: nothing wins over it */
          x[0] = NAN;
        if (kind == 4) /* signed zeros as the largest */
          for (guint k = 0; k < n; k++)
            x[k] = x[k] > 0 ? (g_rand_boolean (rand) ? 0.0f : -0.0f) : x[k];
        g_assert_cmpuint (morok_best_class (x, n), ==, scan_best (x, n));
      }
  g_rand_free (rand);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/ctc/greedy/collapse-and-blanks", test_ctc_greedy);
  g_test_add_func ("/ctc/best-class/as-a-scan", test_best_class);
  return g_test_run ();
}
