/* SPDX-License-Identifier: MIT */
/* execute () allocates nothing: this program replaces malloc and its
 * siblings with counting versions (tests/alloc-counter.c) and counts the
 * allocations made by replaying prepared wrappers. */
#include "alloc-counter.h"
#include "jit-fixtures.h"

/* TRUE (and the test skipped) where nothing is counted: under AddressSanitizer
 * or valgrind, which own malloc, every count would be zero. */
static gboolean
skip_without_counter (void)
{
  if (alloc_counter_works ())
    return FALSE;
  g_test_skip ("allocations are not counted here (AddressSanitizer or valgrind owns malloc)");
  return TRUE;
}

/* The counter sees allocations made inside libglib and libmorok, so a zero
 * below means something: a failing execute (its GError) is counted. */
static void
test_counter_sees_library_allocations (void)
{
  if (skip_without_counter ())
    return;
  GError *e = NULL;
  g_autoptr (WindowJit) jit = window_jit_new_prepared (2, 3);
  alloc_counter_start ();
  gboolean ok = window_jit_execute_with_vars (jit, (MorokVarValue[]){ { "t", 9 } }, 1, &e);
  gint n = alloc_counter_stop ();
  g_assert_false (ok);
  g_clear_error (&e);
  g_assert_cmpint (n, >, 0);
}

/* 1000 executes and 1000 execute_with_vars with changing values allocate nothing. */
static void
test_execute_allocates_nothing (void)
{
  if (skip_without_counter ())
    return;
  GError *e = NULL;
  g_autoptr (WindowJit) jit = window_jit_new_prepared (4, 16);
  MorokVarValue vars[] = { { "b", 1 }, { "t", 1 } };
  g_assert_true (window_jit_execute (jit, &e)); /* warm: first calls may set things up */
  g_assert_true (window_jit_execute_with_vars (jit, vars, 2, &e));
  alloc_counter_start ();
  for (int i = 0; i < 1000; i++)
    {
      vars[0].value = 1 + i % 4;
      vars[1].value = 1 + i % 16;
      window_jit_execute (jit, &e);
      window_jit_execute_with_vars (jit, vars, i % 2 + 1, &e);
    }
  g_assert_cmpint (alloc_counter_stop (), ==, 0);
  g_assert_no_error (e);
}

/* 1000 recurrent steps allocate nothing. */
static void
test_recurrent_step_allocates_nothing (void)
{
  if (skip_without_counter ())
    return;
  GError *e = NULL;
  g_autoptr (ToyJit) jit = toy_jit_new_prepared ();
  g_autoptr (MorokJitRecurrent) rec = morok_jit_recurrent_new (jit, 1, 3, 2, &e);
  toy_write_x (jit, 1);
  g_assert_nonnull (morok_jit_recurrent_step (rec, &e));
  alloc_counter_start ();
  for (int i = 0; i < 1000; i++)
    {
      toy_write_x (jit, i);
      morok_jit_recurrent_step (rec, &e);
    }
  g_assert_cmpint (alloc_counter_stop (), ==, 0);
  g_assert_no_error (e);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/jit/alloc/counter-sees-library-allocations",
                   test_counter_sees_library_allocations);
  g_test_add_func ("/jit/alloc/execute-allocates-nothing", test_execute_allocates_nothing);
  g_test_add_func ("/jit/alloc/recurrent-step-allocates-nothing",
                   test_recurrent_step_allocates_nothing);
  return g_test_run ();
}
