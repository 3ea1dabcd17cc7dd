/* SPDX-License-Identifier: MIT */
/* The generated JIT API: variable setters and their rules, prepare, execute
 * and execute_with_vars semantics, the accessors, input specs, the prepare
 * configuration and the data-independence contract. */
#include "jit-fixtures.h"
#include <glib/gstdio.h>
#include <string.h>

/* ---- fixtures of this file ---- */

/* ScaleJit: x [4] -> x * model->scale; the scale is read in build. */
typedef struct
{
  float scale;
} Scale;

#define SCALE_JIT_INPUTS(X) X (x)
#define SCALE_JIT_VARS(X)
MOROK_JIT_DECLARE (ScaleJit, scale_jit, Scale, SCALE_JIT_INPUTS, SCALE_JIT_VARS)

static MorokTensor *
scale_build (Scale *model, MorokTensor *x, GError **error)
{
  return morok_tensor_mul_scalar (x, model->scale, error);
}
MOROK_JIT_DEFINE (ScaleJit, scale_jit, Scale, SCALE_JIT_INPUTS, SCALE_JIT_VARS, scale_build, NULL)

/* ScaleInputJit: x [4], s [1] -> x * s; the scale is an input. */
#define SCALE_INPUT_JIT_INPUTS(X) X (x) X (s)
MOROK_JIT_DECLARE (ScaleInputJit, scale_input_jit, Scale, SCALE_INPUT_JIT_INPUTS, SCALE_JIT_VARS)

static MorokTensor *
scale_input_build (Scale *model, MorokTensor *x, MorokTensor *s, GError **error)
{
  return morok_tensor_mul (x, s, error);
}
MOROK_JIT_DEFINE (ScaleInputJit, scale_input_jit, Scale, SCALE_INPUT_JIT_INPUTS, SCALE_JIT_VARS,
                  scale_input_build, NULL)

static gint64
bound_of (gpointer jit, const char *name, gboolean upper)
{
  gint64 lo, hi;
  g_assert_true (morok_jit_var_bounds (jit, name, &lo, &hi));
  return upper ? hi : lo;
}

#define EXPECT_CRITICAL(fn)                                                                        \
  g_test_expect_message ("morok-jit", G_LOG_LEVEL_CRITICAL, "*" fn "*assertion*failed*")

/* ---- variables and their setters ---- */

/* _new evaluates the bound expressions with `model` in scope. */
static void
test_new_evaluates_bounds (void)
{
  g_autoptr (GainJit) jit = gain_jit_new (gain_new (2, 37, 3, NULL));
  g_assert_cmpint (bound_of (jit, "t", FALSE), ==, 1);
  g_assert_cmpint (bound_of (jit, "t", TRUE), ==, 37);
  g_assert_false (morok_jit_var_bounds (gain_jit_jit (jit), "u", NULL, NULL));
}

static MorokTensor *
never_called (gpointer model, MorokTensor *const *inputs, MorokVariable *const *vars,
              GError **error)
{
  g_assert_not_reached ();
}

/* The generic constructor rejects a name given twice (the DSL cannot: it
 * would not compile). */
static void
test_new_rejects_duplicate_names (void)
{
  const char *inputs[] = { "x", "x" };
  MorokJitVarDecl vars[] = { { "t", 1, 4 }, { "t", 1, 8 } };
  EXPECT_CRITICAL ("morok_jit_new");
  g_assert_null (morok_jit_new ("Twice", NULL, NULL, inputs, 2, vars, 1, never_called));
  EXPECT_CRITICAL ("morok_jit_new");
  g_assert_null (morok_jit_new ("Twice", NULL, NULL, inputs, 1, vars, 2, never_called));
  g_test_assert_expected_messages ();
}

/* The three setters set max, min, and both, and return the wrapper so they chain. */
static void
test_setters_chain (void)
{
  Window *model = g_new0 (Window, 1);
  *model = (Window){ 4, 10 };
  g_autoptr (WindowJit) jit = window_jit_new (model);
  WindowJit *same = window_jit_with_t_min_bound (window_jit_with_t_bound (jit, 8), 2);
  g_assert_true (same == jit);
  g_assert_true (window_jit_with_b_fixed (jit, 3) == jit);
  g_assert_cmpint (bound_of (jit, "t", FALSE), ==, 2);
  g_assert_cmpint (bound_of (jit, "t", TRUE), ==, 8);
  g_assert_cmpint (bound_of (jit, "b", FALSE), ==, 3);
  g_assert_cmpint (bound_of (jit, "b", TRUE), ==, 3);
}

/* A max below the min is a critical, and the bounds stay as they were. */
static void
test_setter_max_below_min (void)
{
  g_autoptr (GainJit) jit = gain_jit_new (gain_new (2, 10, 3, NULL));
  gain_jit_with_t_min_bound (jit, 4);
  EXPECT_CRITICAL ("morok_jit_set_var_max");
  g_assert_true (gain_jit_with_t_bound (jit, 3) == jit);
  g_test_assert_expected_messages ();
  g_assert_cmpint (bound_of (jit, "t", TRUE), ==, 10);
}

/* A min above the max is a critical, and the bounds stay as they were. */
static void
test_setter_min_above_max (void)
{
  g_autoptr (GainJit) jit = gain_jit_new (gain_new (2, 10, 3, NULL));
  EXPECT_CRITICAL ("morok_jit_set_var_min");
  g_assert_true (gain_jit_with_t_min_bound (jit, 11) == jit);
  g_test_assert_expected_messages ();
  g_assert_cmpint (bound_of (jit, "t", FALSE), ==, 1);
}

/* Fixing a variable at 0 is a critical: a dimension has at least one element. */
static void
test_setter_fixed_zero (void)
{
  g_autoptr (GainJit) jit = gain_jit_new (gain_new (2, 10, 3, NULL));
  EXPECT_CRITICAL ("morok_jit_set_var_fixed");
  g_assert_true (gain_jit_with_t_fixed (jit, 0) == jit);
  g_test_assert_expected_messages ();
  g_assert_cmpint (bound_of (jit, "t", FALSE), ==, 1);
  g_assert_cmpint (bound_of (jit, "t", TRUE), ==, 10);
}

/* After prepare the bounds are part of the plan: every setter is a critical. */
static void
test_setter_after_prepare (void)
{
  g_autoptr (GainJit) jit = gain_jit_new_prepared (2, 10, 3);
  EXPECT_CRITICAL ("morok_jit_set_var_max");
  gain_jit_with_t_bound (jit, 5);
  EXPECT_CRITICAL ("morok_jit_set_var_min");
  gain_jit_with_t_min_bound (jit, 2);
  EXPECT_CRITICAL ("morok_jit_set_var_fixed");
  gain_jit_with_t_fixed (jit, 4);
  g_test_assert_expected_messages ();
  g_assert_cmpint (bound_of (jit, "t", FALSE), ==, 1);
  g_assert_cmpint (bound_of (jit, "t", TRUE), ==, 10);
}

/* A fixed variable is a constant of the plan: its one value runs, others fail. */
static void
test_fixed_variable_runs_only_its_value (void)
{
  GError *e = NULL;
  g_autoptr (GainJit) jit = gain_jit_with_t_fixed (gain_jit_new (gain_new (1, 10, 2, NULL)), 6);
  g_autoptr (MorokInputSpec) x = morok_input_spec_f32 (MOROK_SHAPE (10, 2));
  g_assert_true (gain_jit_prepare (jit, x, &e));
  g_assert_true (gain_jit_execute (jit, &e));
  g_assert_cmpint (gain_jit_output (jit, &e)->shape[0], ==, 6);
  g_assert_false (gain_jit_execute_with_vars (jit, (MorokVarValue[]){ { "t", 5 } }, 1, &e));
  g_assert_error (e, MOROK_JIT_ERROR, MOROK_JIT_ERROR_RUNTIME);
  g_clear_error (&e);
}

/* ---- prepare and execute ---- */

/* A wrapper is prepared once: a second prepare fails with its own error
 * (the error-handling pattern of the docs reads error->message) and the plan
 * stays. */
static void
test_second_prepare_is_rejected (void)
{
  GError *e = NULL;
  g_autoptr (GainJit) jit = gain_jit_new_prepared (2, 10, 3);
  MorokPlan *plan = morok_jit_plan (gain_jit_jit (jit));
  g_autoptr (MorokInputSpec) x = morok_input_spec_f32 (MOROK_SHAPE (10, 3));
  g_assert_false (gain_jit_prepare (jit, x, &e));
  g_assert_error (e, MOROK_JIT_ERROR, MOROK_JIT_ERROR_ALREADY_PREPARED);
  g_assert_cmpstr (e->message, ==, "GainJit: prepared already (a wrapper is prepared once)");
  g_clear_error (&e);
  g_assert_true (morok_jit_plan (gain_jit_jit (jit)) == plan);
  g_assert_true (gain_jit_execute (jit, &e));
}

/* After prepare the variables sit at their upper bounds: the output has the
 * maximal shape before any execute, and after a plain execute. */
static void
test_prepare_binds_upper_bounds (void)
{
  GError *e = NULL;
  g_autoptr (WindowJit) jit = window_jit_new_prepared (3, 7);
  const MorokBuffer *out = window_jit_output (jit, &e);
  g_assert_cmpint (out->shape[0], ==, 3);
  g_assert_cmpint (out->shape[1], ==, 7);
  g_assert_true (window_jit_execute (jit, &e));
  g_assert_cmpint (out->shape[0], ==, 3);
  g_assert_cmpint (out->shape[1], ==, 7);
  g_assert_cmpfloat (((float *) out->data)[20], ==, 21); /* x[2, 6] + 1 */
}

/* execute_with_vars gives the listed variables their values and puts every
 * unlisted one back at its upper bound, although the plan underneath keeps
 * the previous value. */
static void
test_with_vars_resets_unlisted (void)
{
  GError *e = NULL;
  g_autoptr (WindowJit) jit = window_jit_new_prepared (4, 9);
  const MorokBuffer *out = window_jit_output (jit, &e);
  MorokVarValue both[] = { { "b", 2 }, { "t", 3 } }, only_b[] = { { "b", 1 } };
  g_assert_true (window_jit_execute_with_vars (jit, both, 2, &e));
  g_assert_cmpint (out->shape[0], ==, 2);
  g_assert_cmpint (out->shape[1], ==, 3);
  g_assert_true (window_jit_execute_with_vars (jit, only_b, 1, &e));
  g_assert_cmpint (out->shape[0], ==, 1);
  g_assert_cmpint (out->shape[1], ==, 9); /* t back at its upper bound */
  const float *y = out->data;
  for (int i = 0; i < 9; i++)
    g_assert_cmpfloat (y[i], ==, i + 1);

  /* the plan itself keeps t from the previous call */
  MorokPlan *plan = morok_jit_plan (window_jit_jit (jit));
  g_assert_true (morok_plan_execute (plan, both, 2, &e));
  g_assert_true (morok_plan_execute (plan, only_b, 1, &e));
  g_assert_cmpint (out->shape[1], ==, 3);
}

/* A plain execute after execute_with_vars runs every variable at its upper bound. */
static void
test_execute_resets_all (void)
{
  GError *e = NULL;
  g_autoptr (WindowJit) jit = window_jit_new_prepared (4, 9);
  const MorokBuffer *out = window_jit_output (jit, &e);
  g_assert_true (window_jit_execute_with_vars (jit, (MorokVarValue[]){ { "t", 2 } }, 1, &e));
  g_assert_cmpint (out->shape[1], ==, 2);
  g_assert_true (window_jit_execute (jit, &e));
  g_assert_cmpint (out->shape[0], ==, 4);
  g_assert_cmpint (out->shape[1], ==, 9);
}

/* A value out of bounds fails with RUNTIME, naming the bounds, and the last
 * output (values and shape) is left as it was. */
static void
test_out_of_bounds_changes_nothing (void)
{
  GError *e = NULL;
  g_autoptr (WindowJit) jit = window_jit_new_prepared (4, 9);
  const MorokBuffer *out = window_jit_output (jit, &e);
  g_assert_true (window_jit_execute_with_vars (jit, (MorokVarValue[]){ { "b", 2 } }, 1, &e));
  float before = ((float *) out->data)[0];
  g_assert_false (window_jit_execute_with_vars (jit, (MorokVarValue[]){ { "t", 10 } }, 1, &e));
  g_assert_error (e, MOROK_JIT_ERROR, MOROK_JIT_ERROR_RUNTIME);
  g_assert_nonnull (strstr (e->message, "[1, 9]"));
  g_clear_error (&e);
  g_assert_cmpint (out->shape[0], ==, 2);
  g_assert_cmpfloat (((float *) out->data)[0], ==, before);
}

/* A variable name the wrapper does not declare fails with RUNTIME. */
static void
test_unknown_variable (void)
{
  GError *e = NULL;
  g_autoptr (WindowJit) jit = window_jit_new_prepared (4, 9);
  g_assert_false (window_jit_execute_with_vars (jit, (MorokVarValue[]){ { "frames", 2 } }, 1, &e));
  g_assert_error (e, MOROK_JIT_ERROR, MOROK_JIT_ERROR_RUNTIME);
  g_assert_nonnull (strstr (e->message, "'frames'"));
  g_clear_error (&e);
}

/* The profiled executes time each kernel and follow the same variable rules. */
static void
test_profiled (void)
{
  GError *e = NULL;
  g_autoptr (WindowJit) jit = window_jit_new_prepared (4, 9);
  g_autoptr (GArray) p1 = window_jit_execute_with_vars_profiled (
      jit, (MorokVarValue[]){ { "b", 3 }, { "t", 5 } }, 2, &e);
  g_assert_nonnull (p1);
  g_assert_cmpuint (p1->len, ==, window_jit_prepared_kernels (jit, &e));
  g_assert_nonnull (g_array_index (p1, MorokKernelProfile, 0).name);
  g_assert_cmpint (window_jit_output (jit, &e)->shape[1], ==, 5);
  g_autoptr (GArray) p2 = window_jit_execute_profiled (jit, &e);
  g_assert_nonnull (p2);
  g_assert_cmpint (window_jit_output (jit, &e)->shape[1], ==, 9);
  g_assert_null (
      window_jit_execute_with_vars_profiled (jit, (MorokVarValue[]){ { "b", 0 } }, 1, &e));
  g_assert_error (e, MOROK_JIT_ERROR, MOROK_JIT_ERROR_RUNTIME);
  g_clear_error (&e);
}

/* The accessors describe the plan: the input's buffer id points at the
 * buffer _x_mut hands out, the output buffers are the output, and the
 * kernel count is the plan's. */
static void
test_accessors (void)
{
  GError *e = NULL;
  g_autoptr (ScaleInputJit) jit = scale_input_jit_new (&(Scale){ 0 });
  g_autoptr (MorokInputSpec) x = morok_input_spec_f32 (MOROK_SHAPE (4));
  g_autoptr (MorokInputSpec) s = morok_input_spec_f32 (MOROK_SHAPE (1));
  g_assert_true (scale_input_jit_prepare (jit, x, s, &e));
  guint n_bufs, n_ids, n_outs;
  void *const *bufs = scale_input_jit_buffers (jit, &n_bufs, &e);
  const guint *ids = scale_input_jit_input_buffer_ids (jit, &n_ids, &e);
  const MorokBuffer *outs = scale_input_jit_output_buffers (jit, &n_outs, &e);
  g_assert_no_error (e);
  g_assert_cmpuint (n_ids, ==, 2);
  g_assert_cmpuint (ids[0], !=, ids[1]);
  g_assert_cmpuint (ids[1], <, n_bufs);
  g_assert_true (bufs[ids[0]] == scale_input_jit_x_mut (jit, &e)->data);
  g_assert_true (bufs[ids[1]] == scale_input_jit_s_mut (jit, &e)->data);
  g_assert_cmpuint (n_outs, ==, 1);
  g_assert_true (&outs[0] == scale_input_jit_output (jit, &e));
  g_assert_cmpuint (scale_input_jit_prepared_kernels (jit, &e), ==,
                    morok_plan_n_steps (morok_jit_plan (scale_input_jit_jit (jit))));
  g_assert_cmpuint (scale_input_jit_prepared_kernels (jit, &e), >=, 1);
  g_assert_cmpint (scale_input_jit_x_mut (jit, &e)->shape[0], ==, 4);
}

/* _free frees the model with the DEFINE's free function, once; a NULL free
 * function leaves the model to its owner. */
static void
test_model_free (void)
{
  int freed = 0;
  GainJit *jit = gain_jit_new (gain_new (1, 4, 2, &freed));
  g_assert_cmpint (freed, ==, 0);
  gain_jit_free (jit);
  g_assert_cmpint (freed, ==, 1);
  gain_jit_free (NULL);
  Scale borrowed = { 3 };
  scale_jit_free (scale_jit_new (&borrowed));
  g_assert_cmpfloat (borrowed.scale, ==, 3); /* still ours */
}

/* ---- the data-independence contract ---- */

/* A model field read inside the build function is a constant of the plan:
 * changing it after prepare does not change the output. */
static void
test_build_time_value_is_baked (void)
{
  GError *e = NULL;
  g_autoptr (ScaleJit) jit = scale_jit_new (&(Scale){ 2 });
  g_autoptr (MorokInputSpec) x = morok_input_spec_f32 (MOROK_SHAPE (4));
  g_assert_true (scale_jit_prepare (jit, x, &e));
  float *xv = scale_jit_x_mut (jit, &e)->data;
  for (int i = 0; i < 4; i++)
    xv[i] = (float) i;
  scale_jit_model (jit)->scale = 5;
  g_assert_true (scale_jit_execute (jit, &e));
  const float *y = scale_jit_output (jit, &e)->data;
  for (int i = 0; i < 4; i++)
    g_assert_cmpfloat (y[i], ==, 2 * i); /* the scale at prepare, not 5 */
}

/* The same value passed through an input buffer is read on every execute. */
static void
test_input_value_is_not_baked (void)
{
  GError *e = NULL;
  g_autoptr (ScaleInputJit) jit = scale_input_jit_new (&(Scale){ 0 });
  g_autoptr (MorokInputSpec) x = morok_input_spec_f32 (MOROK_SHAPE (4));
  g_autoptr (MorokInputSpec) s = morok_input_spec_f32 (MOROK_SHAPE (1));
  g_assert_true (scale_input_jit_prepare (jit, x, s, &e));
  float *xv = scale_input_jit_x_mut (jit, &e)->data, *sv = scale_input_jit_s_mut (jit, &e)->data;
  for (int i = 0; i < 4; i++)
    xv[i] = (float) i;
  const float *y = scale_input_jit_output (jit, &e)->data;
  sv[0] = 2;
  g_assert_true (scale_input_jit_execute (jit, &e));
  g_assert_cmpfloat (y[3], ==, 6);
  sv[0] = 5;
  g_assert_true (scale_input_jit_execute (jit, &e));
  for (int i = 0; i < 4; i++)
    g_assert_cmpfloat (y[i], ==, 5 * i);
}

/* ---- input specs ---- */

/* The shortcuts make specs of their dtype with the given shape. */
static void
test_input_spec_shortcuts (void)
{
  g_autoptr (MorokInputSpec) a = morok_input_spec_f32 (MOROK_SHAPE (2, 3, 4));
  g_autoptr (MorokInputSpec) b = morok_input_spec_i32 (MOROK_SHAPE (5));
  g_autoptr (MorokInputSpec) c = morok_input_spec_i64 (MOROK_SHAPE (1, 7));
  g_autoptr (MorokInputSpec) d = morok_input_spec_new (MOROK_SHAPE (6), MOROK_DTYPE_U8);
  g_assert_cmpint (a->dtype, ==, MOROK_DTYPE_F32);
  g_assert_cmpint (b->dtype, ==, MOROK_DTYPE_I32);
  g_assert_cmpint (c->dtype, ==, MOROK_DTYPE_I64);
  g_assert_cmpint (d->dtype, ==, MOROK_DTYPE_U8);
  g_assert_cmpuint (a->rank, ==, 3);
  g_assert_cmpint (a->shape[2], ==, 4);
  g_assert_cmpint (morok_input_spec_numel (a), ==, 24);
  g_assert_cmpint (c->shape[1], ==, 7);
}

/* A dimension below 1 is a critical and gives no spec. */
static void
test_input_spec_rejects_empty_dim (void)
{
  g_test_expect_message ("morok-jit", G_LOG_LEVEL_CRITICAL, "*shape[i] >= 1*");
  g_assert_null (morok_input_spec_f32 (MOROK_SHAPE (3, 0)));
  g_test_assert_expected_messages ();
}

/* ---- prepare configuration ---- */

/* Every MOROK_* setting reaches the plan options. */
static void
test_config_from_env (void)
{
  g_setenv ("MOROK_THREADS", "1", TRUE);
  g_setenv ("MOROK_OPT", "1", TRUE);
  g_setenv ("MOROK_CACHE", "0", TRUE);
  g_setenv ("MOROK_CACHE_DIR", "/tmp/c", TRUE);
  g_setenv ("MOROK_DUMP_DIR", "/tmp/d", TRUE);
  g_setenv ("MOROK_CC", "/usr/bin/clang", TRUE);
  g_setenv ("MOROK_ISA", "portable", TRUE);
  g_autoptr (MorokPrepareConfig) config = morok_prepare_config_from_env ();
  MorokPlanOptions o;
  GError *e = NULL;
  g_assert_true (morok_prepare_config_to_plan_options (config, &o, &e));
  g_assert_cmpuint (o.threads, ==, 1);
  g_assert_cmpint (o.compile.opt_level, ==, 1);
  g_assert_false (o.compile.use_cache);
  g_assert_cmpstr (o.compile.cache_dir, ==, "/tmp/c");
  g_assert_cmpstr (o.compile.dump_dir, ==, "/tmp/d");
  g_assert_cmpstr (o.compile.cc, ==, "/usr/bin/clang");
  g_assert_cmpint (o.isa, ==, MOROK_ISA_PORTABLE);
  const char *names[] = { "MOROK_THREADS",  "MOROK_OPT", "MOROK_CACHE", "MOROK_CACHE_DIR",
                          "MOROK_DUMP_DIR", "MOROK_CC",  "MOROK_ISA" };
  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    g_unsetenv (names[i]);
}

/* Without environment the defaults hold, and the setters change them. */
static void
test_config_setters (void)
{
  g_autoptr (MorokPrepareConfig) config = morok_prepare_config_new ();
  MorokPlanOptions o;
  GError *e = NULL;
  g_assert_true (morok_prepare_config_to_plan_options (config, &o, &e));
  g_assert_cmpuint (o.threads, ==, 0);
  g_assert_cmpint (o.compile.opt_level, ==, 2);
  g_assert_true (o.compile.use_cache);
  g_assert_null (o.compile.dump_dir);
  g_assert_cmpint (o.isa, ==, morok_isa_detect ());
  morok_prepare_config_set_threads (config, 2);
  morok_prepare_config_set_opt_level (config, 3);
  morok_prepare_config_set_use_cache (config, FALSE);
  morok_prepare_config_set_cache_dir (config, "/tmp/x");
  morok_prepare_config_set_dump_dir (config, "/tmp/y");
  morok_prepare_config_set_cc (config, "clang");
  morok_prepare_config_set_isa (config, MOROK_ISA_PORTABLE);
  g_assert_true (morok_prepare_config_to_plan_options (config, &o, &e));
  g_assert_cmpuint (o.threads, ==, 2);
  g_assert_cmpint (o.compile.opt_level, ==, 3);
  g_assert_false (o.compile.use_cache);
  g_assert_cmpstr (o.compile.cache_dir, ==, "/tmp/x");
  g_assert_cmpstr (o.compile.dump_dir, ==, "/tmp/y");
  g_assert_cmpstr (o.compile.cc, ==, "clang");
  g_assert_cmpint (o.isa, ==, MOROK_ISA_PORTABLE);
}

/* An unusable environment value fails the mapping with DEVICE, naming the
 * variable, until a setter replaces it. */
static void
test_config_bad_env (void)
{
  static const char *const cases[][2] = {
    { "MOROK_THREADS", "many" },
    { "MOROK_OPT", "7" },
    { "MOROK_ISA", "avx9" },
    { "MOROK_PRECISION", "f8" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_setenv (cases[i][0], cases[i][1], TRUE);
      g_autoptr (MorokPrepareConfig) config = morok_prepare_config_from_env ();
      g_unsetenv (cases[i][0]);
      MorokPlanOptions o;
      GError *e = NULL;
      g_assert_false (morok_prepare_config_to_plan_options (config, &o, &e));
      g_assert_error (e, MOROK_JIT_ERROR, MOROK_JIT_ERROR_DEVICE);
      g_assert_nonnull (strstr (e->message, cases[i][0]));
      g_clear_error (&e);
      morok_prepare_config_set_threads (config, 1);
      morok_prepare_config_set_opt_level (config, 2);
      morok_prepare_config_set_isa (config, MOROK_ISA_PORTABLE);
      morok_prepare_config_set_precision (config, MOROK_PRECISION_F32);
      g_assert_true (morok_prepare_config_to_plan_options (config, &o, &e));
    }
}

/* Each precision's name parses back to it; the default is f32. */
static void
test_precision_names (void)
{
  for (guint p = 0; p < MOROK_PRECISION_COUNT; p++)
    {
      MorokPrecision got = MOROK_PRECISION_COUNT;
      g_assert_true (morok_precision_parse (morok_precision_name (p), &got));
      g_assert_cmpint (got, ==, p);
    }
  MorokPrecision got;
  g_assert_false (morok_precision_parse ("f64", &got));
  g_assert_false (morok_precision_parse (NULL, &got));
  g_assert_cmpstr (morok_precision_name (MOROK_PRECISION_BF16X3), ==, "bf16x3");
  g_autoptr (MorokPrepareConfig) config = morok_prepare_config_new ();
  MorokPlanOptions o;
  g_assert_true (morok_prepare_config_to_plan_options (config, &o, NULL));
  g_assert_cmpint (o.precision, ==, MOROK_PRECISION_F32);
}

/* prepare_with_config uses the config it is given: a dump folder receives
 * the plan's C source. */
static void
test_prepare_with_config_dumps_source (void)
{
  GError *e = NULL;
  g_autofree char *dir = g_dir_make_tmp ("morok-dump-XXXXXX", NULL);
  g_autoptr (MorokPrepareConfig) config = morok_prepare_config_new ();
  morok_prepare_config_set_dump_dir (config, dir);
  g_autoptr (GainJit) jit = gain_jit_new (gain_new (3, 5, 2, NULL));
  g_autoptr (MorokInputSpec) x = morok_input_spec_f32 (MOROK_SHAPE (5, 2));
  g_assert_true (gain_jit_prepare_with_config (jit, x, config, &e));
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  const char *name = g_dir_read_name (d);
  g_assert_nonnull (name);
  g_assert_true (g_str_has_suffix (name, ".c"));
  g_autofree char *path = g_build_filename (dir, name, NULL);
  g_remove (path);
  g_rmdir (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/jit/new/evaluates-bounds-from-model", test_new_evaluates_bounds);
  g_test_add_func ("/jit/new/free-frees-the-model-once", test_model_free);
  g_test_add_func ("/jit/new/duplicate-name-is-rejected", test_new_rejects_duplicate_names);
  g_test_add_func ("/jit/bounds/setters-set-and-chain", test_setters_chain);
  g_test_add_func ("/jit/bounds/max-below-min-is-rejected", test_setter_max_below_min);
  g_test_add_func ("/jit/bounds/min-above-max-is-rejected", test_setter_min_above_max);
  g_test_add_func ("/jit/bounds/fixed-zero-is-rejected", test_setter_fixed_zero);
  g_test_add_func ("/jit/bounds/setting-after-prepare-is-rejected", test_setter_after_prepare);
  g_test_add_func ("/jit/bounds/fixed-variable-runs-only-its-value",
                   test_fixed_variable_runs_only_its_value);
  g_test_add_func ("/jit/prepare/binds-variables-at-upper-bounds", test_prepare_binds_upper_bounds);
  g_test_add_func ("/jit/prepare/with-config-dumps-source", test_prepare_with_config_dumps_source);
  g_test_add_func ("/jit/prepare/second-prepare-is-rejected", test_second_prepare_is_rejected);
  g_test_add_func ("/jit/execute/with-vars-resets-unlisted-to-upper-bound",
                   test_with_vars_resets_unlisted);
  g_test_add_func ("/jit/execute/plain-execute-runs-at-upper-bounds", test_execute_resets_all);
  g_test_add_func ("/jit/execute/out-of-bounds-changes-nothing",
                   test_out_of_bounds_changes_nothing);
  g_test_add_func ("/jit/execute/unknown-variable-fails", test_unknown_variable);
  g_test_add_func ("/jit/execute/profiled-times-each-kernel", test_profiled);
  g_test_add_func ("/jit/accessors/describe-the-plan", test_accessors);
  g_test_add_func ("/jit/contract/build-time-value-is-baked", test_build_time_value_is_baked);
  g_test_add_func ("/jit/contract/input-value-is-not-baked", test_input_value_is_not_baked);
  g_test_add_func ("/jit/input-spec/shortcuts-set-dtype-and-shape", test_input_spec_shortcuts);
  g_test_add_func ("/jit/input-spec/empty-dim-is-rejected", test_input_spec_rejects_empty_dim);
  g_test_add_func ("/jit/config/from-env-reaches-plan-options", test_config_from_env);
  g_test_add_func ("/jit/config/defaults-and-setters", test_config_setters);
  g_test_add_func ("/jit/config/bad-env-value-fails-until-replaced", test_config_bad_env);
  g_test_add_func ("/jit/config/precision-names", test_precision_names);
  return g_test_run ();
}
