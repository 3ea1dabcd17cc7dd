/* SPDX-License-Identifier: MIT */
/* Greedy CTC decoding (models/ctc-decode.h) on small hand-made score
 * tables. */
#include <glib.h>

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

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/ctc/greedy/collapse-and-blanks", test_ctc_greedy);
  return g_test_run ();
}
