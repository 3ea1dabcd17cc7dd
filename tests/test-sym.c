/* SPDX-License-Identifier: MIT */
/* Symbolic integers: simplification, canonical forms, bounds and evaluation. */
#include "base/morok-sym.h"

/* Equal expressions built in different orders are one node. */
static void
test_canonical (void)
{
  g_autoptr (MorokSymPool) p = morok_sym_pool_new ();
  const MorokSym *t = morok_sym_var (morok_variable_new (p, "t", 1, 100));
  const MorokSym *b = morok_sym_var (morok_variable_new (p, "b", 1, 4));
  g_assert_true (morok_sym_add (t, b) == morok_sym_add (b, t));
  g_assert_true (morok_sym_add (morok_sym_add (t, b), morok_sym_const (p, 3))
                 == morok_sym_add (morok_sym_add_c (b, 1), morok_sym_add_c (t, 2)));
  g_assert_true (morok_sym_mul (t, b) == morok_sym_mul (b, t));
  gint64 c;
  /* (t + 1) - t = 1, t - t = 0, 2t - t = t */
  g_assert_true (morok_sym_is_const (morok_sym_sub (morok_sym_add_c (t, 1), t), &c) && c == 1);
  g_assert_true (morok_sym_is_const (morok_sym_sub (t, t), &c) && c == 0);
  g_assert_true (morok_sym_sub (morok_sym_mul_c (t, 2), t) == t);
}

/* Rules with their algebra, and bounds by interval arithmetic. */
static void
test_simplify_and_bounds (void)
{
  g_autoptr (MorokSymPool) p = morok_sym_pool_new ();
  const MorokSym *t = morok_sym_var (morok_variable_new (p, "t", 1, 100));
  gint64 c;
  g_assert_true (morok_sym_mul_c (t, 1) == t);                               /* t * 1 */
  g_assert_true (morok_sym_is_const (morok_sym_mul_c (t, 0), &c) && c == 0); /* t * 0 */
  g_assert_true (morok_sym_div_c (morok_sym_mul_c (t, 4), 2) == morok_sym_mul_c (t, 2));
  g_assert_true (morok_sym_div_c (morok_sym_div_c (t, 2), 3) == morok_sym_div_c (t, 6));
  g_assert_true (morok_sym_mod (t, morok_sym_const (p, 101)) == t); /* t < 101 */
  g_assert_true (morok_sym_min (t, morok_sym_const (p, 200)) == t);
  g_assert_true (morok_sym_max (t, morok_sym_const (p, 0)) == t);
  /* frames after two stride-2 convs: (((t + 2·2 - 5) / 2 + 1) + 2·2 - 5) / 2 + 1 */
  const MorokSym *f1 = morok_sym_add_c (morok_sym_div_c (morok_sym_add_c (t, -1), 2), 1);
  const MorokSym *f2 = morok_sym_add_c (morok_sym_div_c (morok_sym_add_c (f1, -1), 2), 1);
  g_assert_cmpint (morok_sym_lo (f2), ==, 1);
  g_assert_cmpint (morok_sym_hi (f2), ==, 25);
  for (gint64 v = 1; v <= 100; v++)
    {
      gint64 want1 = (v - 1) / 2 + 1;
      g_assert_cmpint (morok_sym_eval (f2, &v), ==, (want1 - 1) / 2 + 1);
    }
  const MorokSym *m = morok_sym_mod (morok_sym_add_c (t, 5), morok_sym_const (p, 7));
  g_assert_cmpint (morok_sym_lo (m), ==, 0);
  g_assert_cmpint (morok_sym_hi (m), ==, 6);
  const MorokSym *prod = morok_sym_mul (t, morok_sym_add_c (t, -50));
  g_assert_cmpint (morok_sym_lo (prod), <=, -49 * 100);
  g_assert_cmpint (morok_sym_hi (prod), >=, 100 * 50);
}

/* Floor division and modulo of negative values round toward -inf. */
static void
test_floor_semantics (void)
{
  g_autoptr (MorokSymPool) p = morok_sym_pool_new ();
  gint64 c;
  g_assert_true (morok_sym_is_const (morok_sym_div_c (morok_sym_const (p, -7), 2), &c) && c == -4);
  g_assert_true (
      morok_sym_is_const (morok_sym_mod (morok_sym_const (p, -7), morok_sym_const (p, 3)), &c)
      && c == 2);
}

/* Rendering gives C with variables by slot, and text with names. */
static void
test_render (void)
{
  g_autoptr (MorokSymPool) p = morok_sym_pool_new ();
  morok_variable_new (p, "b", 1, 4);
  const MorokSym *t = morok_sym_var (morok_variable_new (p, "t", 1, 100));
  const MorokSym *e = morok_sym_add_c (morok_sym_div_c (t, 2), 1);
  g_autofree char *text = morok_sym_to_string (e);
  g_assert_cmpstr (text, ==, "(floordiv(t, 2) + 1)");
  GString *c = g_string_new (NULL);
  morok_sym_render (e, c, "v[%u]");
  g_assert_cmpstr (c->str, ==, "(MOROK_IDIV(v[1], 2) + 1)");
  g_string_free (c, TRUE);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/sym/canonical-forms", test_canonical);
  g_test_add_func ("/sym/simplify-and-bounds", test_simplify_and_bounds);
  g_test_add_func ("/sym/floor-semantics", test_floor_semantics);
  g_test_add_func ("/sym/render", test_render);
  return g_test_run ();
}
