/* SPDX-License-Identifier: MIT */
/* The errors a JIT wrapper reports: each MOROK_JIT_ERROR code prepare and
 * the per-step calls can raise, caused on purpose by a build function that
 * misbehaves as its model says. (RUNTIME: test-jit-api.c; OUTPUT_LAYOUT_
 * MISMATCH: test-jit-recurrent.c.) */
#include "jit/morok-jit.h"
#include "broken-compilers.h"
#include <glib/gstdio.h>
#include <string.h>

typedef enum
{
  FAULT_NONE,             /* x[:t] + y[:t] */
  FAULT_OWN_ERROR,        /* fails with an error of the model's own domain */
  FAULT_NULL,             /* returns NULL, sets no error */
  FAULT_OTHER_GRAPH,      /* returns a tensor of a graph of its own */
  FAULT_SHAPES,           /* adds [8, 2] and [2, 8] */
  FAULT_UNUSED_INPUT,     /* ignores y */
  FAULT_UNDECLARED_INPUT, /* reads an input z it made itself */
  FAULT_SECOND_X,         /* reads a second input named x it made itself */
} Fault;

typedef struct
{
  Fault fault;
  gint64 max_t;
} Faulty;

#define FAULTY_ERROR (g_quark_from_static_string ("faulty-model-error"))

static MorokGraph *other_graph; /* FAULT_OTHER_GRAPH's, freed by main */

#define FAULTY_JIT_INPUTS(X) X (x) X (y)
#define FAULTY_JIT_VARS(X) X (t, 1, model->max_t)
MOROK_JIT_DECLARE (FaultyJit, faulty_jit, Faulty, FAULTY_JIT_INPUTS, FAULTY_JIT_VARS)

static MorokTensor *
faulty_build (Faulty *model, MorokTensor *x, MorokTensor *y, MorokVariable *t, GError **error)
{
  MorokTensor *xt = morok_jit_try_shrink (x, 0, t, error);
  MorokTensor *yt = morok_jit_try_shrink (y, 0, t, error);
  const MorokSym *sh[2];
  switch (model->fault)
    {
    case FAULT_NONE: return morok_tensor_add (xt, yt, error);
    case FAULT_OWN_ERROR:
      g_set_error (error, FAULTY_ERROR, 7, "weights of layer 3 are missing");
      return NULL;
    case FAULT_NULL: return NULL;
    case FAULT_OTHER_GRAPH:
      morok_tensor_syms (other_graph, (gint64[]){ 2 }, 1, sh);
      return morok_tensor_input (other_graph, "elsewhere", MOROK_DTYPE_F32, sh, 1);
    case FAULT_SHAPES: return morok_tensor_add (x, morok_tensor_transpose (y, 0, 1, error), error);
    case FAULT_UNUSED_INPUT: return morok_tensor_mul_scalar (xt, 2, error);
    case FAULT_UNDECLARED_INPUT:
    case FAULT_SECOND_X:
      morok_tensor_syms (x->graph, (gint64[]){ 8, 2 }, 2, sh);
      MorokTensor *extra = morok_tensor_input (x->graph, model->fault == FAULT_SECOND_X ? "x" : "z",
                                               MOROK_DTYPE_F32, sh, 2);
      return morok_tensor_add (morok_tensor_add (x, y, error), extra, error);
    }
  return NULL;
}

MOROK_JIT_DEFINE (FaultyJit, faulty_jit, Faulty, FAULTY_JIT_INPUTS, FAULTY_JIT_VARS, faulty_build,
                  NULL)

/* Prepares a FaultyJit for x and y [8, 2]; returns the error, or NULL. */
static GError *
prepare_faulty (Fault fault, gint64 max_t)
{
  Faulty model = { fault, max_t };
  g_autoptr (FaultyJit) jit = faulty_jit_new (&model);
  g_autoptr (MorokInputSpec) spec = morok_input_spec_f32 (MOROK_SHAPE (8, 2));
  GError *e = NULL;
  gboolean ok = faulty_jit_prepare (jit, spec, spec, &e);
  g_assert_true (ok == (e == NULL));
  if (!ok)
    g_assert_false (morok_jit_is_prepared (faulty_jit_jit (jit)));
  return e;
}

static void
assert_prepare_fails (Fault fault, gint64 max_t, MorokJitError code, const char *message)
{
  g_autoptr (GError) e = prepare_faulty (fault, max_t);
  g_assert_error (e, MOROK_JIT_ERROR, (gint) code);
  g_test_message ("%s", e->message);
  g_assert_nonnull (strstr (e->message, message));
}

/* ---- NOT_PREPARED ---- */

/* Every per-step call before prepare fails with NOT_PREPARED. */
static void
test_per_step_calls_fail_before_prepare (void)
{
  Faulty model = { FAULT_NONE, 8 };
  g_autoptr (FaultyJit) jit = faulty_jit_new (&model);
  GError *e[11] = { NULL };
  guint n = 99;
  g_assert_null (faulty_jit_x_mut (jit, &e[0]));
  g_assert_null (faulty_jit_y_mut (jit, &e[1]));
  g_assert_null (faulty_jit_output (jit, &e[2]));
  g_assert_false (faulty_jit_execute (jit, &e[3]));
  g_assert_false (faulty_jit_execute_with_vars (jit, (MorokVarValue[]){ { "t", 2 } }, 1, &e[4]));
  g_assert_null (faulty_jit_execute_profiled (jit, &e[5]));
  g_assert_null (faulty_jit_buffers (jit, &n, &e[6]));
  g_assert_cmpuint (n, ==, 0);
  g_assert_null (faulty_jit_output_buffers (jit, NULL, &e[7]));
  g_assert_null (faulty_jit_input_buffer_ids (jit, NULL, &e[8]));
  g_assert_cmpuint (faulty_jit_prepared_kernels (jit, &e[9]), ==, 0);
  g_assert_null (faulty_jit_execute_with_vars_profiled (jit, NULL, 0, &e[10]));
  for (guint i = 0; i < G_N_ELEMENTS (e); i++)
    {
      g_assert_error (e[i], MOROK_JIT_ERROR, MOROK_JIT_ERROR_NOT_PREPARED);
      g_assert_nonnull (strstr (e[i]->message, "FaultyJit"));
      g_clear_error (&e[i]);
    }
}

/* A prepare that failed leaves the wrapper unprepared: execute still fails
 * with NOT_PREPARED, not with something worse. */
static void
test_execute_fails_after_failed_prepare (void)
{
  Faulty model = { FAULT_NULL, 8 };
  g_autoptr (FaultyJit) jit = faulty_jit_new (&model);
  g_autoptr (MorokInputSpec) spec = morok_input_spec_f32 (MOROK_SHAPE (8, 2));
  GError *e = NULL;
  g_assert_false (faulty_jit_prepare (jit, spec, spec, &e));
  g_clear_error (&e);
  g_assert_false (faulty_jit_execute (jit, &e));
  g_assert_error (e, MOROK_JIT_ERROR, MOROK_JIT_ERROR_NOT_PREPARED);
  g_clear_error (&e);
}

/* ---- BUILD ---- */

/* The build function's own error becomes BUILD, its message kept. */
static void
test_build_own_error (void)
{
  assert_prepare_fails (FAULT_OWN_ERROR, 8, MOROK_JIT_ERROR_BUILD,
                        "FaultyJit: build: weights of layer 3 are missing");
}

/* NULL without an error is BUILD too. */
static void
test_build_null (void)
{
  assert_prepare_fails (FAULT_NULL, 8, MOROK_JIT_ERROR_BUILD, "without an error");
}

/* A tensor of another graph is BUILD. */
static void
test_build_other_graph (void)
{
  assert_prepare_fails (FAULT_OTHER_GRAPH, 8, MOROK_JIT_ERROR_BUILD, "another graph");
}

/* Bounds from a model field that leave no value (t in [1, 0]) are BUILD. */
static void
test_build_empty_bounds (void)
{
  assert_prepare_fails (FAULT_NONE, 0, MOROK_JIT_ERROR_BUILD, "'t' has bounds [1, 0]");
}

/* ---- TENSOR ---- */

/* Shapes that do not fit inside the build function are TENSOR, with the shapes. */
static void
test_tensor_shapes (void)
{
  assert_prepare_fails (FAULT_SHAPES, 8, MOROK_JIT_ERROR_TENSOR, "[8, 2]");
}

/* A bound past the input's maximal shape (t up to 9 of 8 rows) is TENSOR. */
static void
test_tensor_bound_past_input (void)
{
  assert_prepare_fails (FAULT_NONE, 9, MOROK_JIT_ERROR_TENSOR, "may leave the axis");
}

/* ---- INPUT_BUFFER_NOT_FOUND and DUPLICATE_INPUT_BUFFER ---- */

/* A declared input the output does not read has no buffer to be found. */
static void
test_unused_input (void)
{
  assert_prepare_fails (FAULT_UNUSED_INPUT, 8, MOROK_JIT_ERROR_INPUT_BUFFER_NOT_FOUND,
                        "declared input 'y' is not read");
}

/* An input the build function made itself has no wrapper buffer. */
static void
test_undeclared_input (void)
{
  assert_prepare_fails (FAULT_UNDECLARED_INPUT, 8, MOROK_JIT_ERROR_INPUT_BUFFER_NOT_FOUND,
                        "input 'z' [8, 2], which is not a declared input");
}

/* A second input of a declared name would alias the wrapper's buffer. */
static void
test_second_input_of_same_name (void)
{
  assert_prepare_fails (FAULT_SECOND_X, 8, MOROK_JIT_ERROR_DUPLICATE_INPUT_BUFFER,
                        "second input 'x'");
}

/* ---- DEVICE ---- */

/* Without a compiler (MOROK_CC=/nonexistent, no cache) prepare fails with
 * DEVICE naming the path; with the compiler back, the same wrapper prepares. */
static void
test_device_missing_compiler (void)
{
  Faulty model = { FAULT_NONE, 8 };
  g_autoptr (FaultyJit) jit = faulty_jit_new (&model);
  g_autoptr (MorokInputSpec) spec = morok_input_spec_f32 (MOROK_SHAPE (8, 2));
  GError *e = NULL;
  g_setenv ("MOROK_CC", "/nonexistent", TRUE);
  g_setenv ("MOROK_CACHE", "0", TRUE);
  gboolean ok = faulty_jit_prepare (jit, spec, spec, &e);
  g_unsetenv ("MOROK_CC");
  g_unsetenv ("MOROK_CACHE");
  g_assert_false (ok);
  g_assert_error (e, MOROK_JIT_ERROR, MOROK_JIT_ERROR_DEVICE);
  g_test_message ("%s", e->message);
  g_assert_nonnull (strstr (e->message, "/nonexistent"));
  g_clear_error (&e);
  g_assert_true (faulty_jit_prepare (jit, spec, spec, &e));
  g_assert_no_error (e);
}

/* A compiler that exits early or rejects a flag (MOROK_CC, no cache) fails
 * prepare with DEVICE naming it and carrying its stderr; no SIGPIPE reaches
 * the process, and the wrapper prepares once the compiler is back. */
static void
test_device_broken_compiler (void)
{
  Faulty model = { FAULT_NONE, 8 };
  g_autoptr (FaultyJit) jit = faulty_jit_new (&model);
  g_autoptr (MorokInputSpec) spec = morok_input_spec_f32 (MOROK_SHAPE (8, 2));
  g_autofree char *dir = g_dir_make_tmp ("morok-cc-XXXXXX", NULL);
  BrokenCompiler *broken = broken_compilers_new (dir);
  GError *e = NULL;

  g_setenv ("MOROK_CACHE", "0", TRUE);
  for (guint i = 0; broken[i].path != NULL; i++)
    {
      g_setenv ("MOROK_CC", broken[i].path, TRUE);
      g_assert_false (faulty_jit_prepare (jit, spec, spec, &e));
      g_assert_error (e, MOROK_JIT_ERROR, MOROK_JIT_ERROR_DEVICE);
      g_test_message ("%s", e->message);
      g_assert_nonnull (strstr (e->message, broken[i].path));
      g_assert_nonnull (strstr (e->message, broken[i].expect));
      g_clear_error (&e);
    }
  g_unsetenv ("MOROK_CC");
  g_unsetenv ("MOROK_CACHE");
  g_assert_true (faulty_jit_prepare (jit, spec, spec, &e));
  g_assert_no_error (e);
  g_unlink (broken[2].path);
  g_rmdir (dir);
  broken_compilers_free (broken);
}

/* An unknown MOROK_ISA fails prepare with DEVICE. */
static void
test_device_bad_isa (void)
{
  g_setenv ("MOROK_ISA", "sse9", TRUE);
  g_autoptr (GError) e = prepare_faulty (FAULT_NONE, 8);
  g_unsetenv ("MOROK_ISA");
  g_assert_error (e, MOROK_JIT_ERROR, MOROK_JIT_ERROR_DEVICE);
  g_assert_nonnull (strstr (e->message, "MOROK_ISA='sse9'"));
}

/* The well-behaved build prepares and adds. */
static void
test_no_fault (void)
{
  Faulty model = { FAULT_NONE, 8 };
  g_autoptr (FaultyJit) jit = faulty_jit_new (&model);
  g_autoptr (MorokInputSpec) spec = morok_input_spec_f32 (MOROK_SHAPE (8, 2));
  GError *e = NULL;
  g_assert_true (faulty_jit_prepare (jit, spec, spec, &e));
  float *x = faulty_jit_x_mut (jit, &e)->data, *y = faulty_jit_y_mut (jit, &e)->data;
  for (int i = 0; i < 16; i++)
    x[i] = (float) i, y[i] = (float) (100 * i);
  g_assert_true (faulty_jit_execute_with_vars (jit, (MorokVarValue[]){ { "t", 3 } }, 1, &e));
  const MorokBuffer *out = faulty_jit_output (jit, &e);
  g_assert_cmpint (out->shape[0], ==, 3);
  g_assert_cmpfloat (((float *) out->data)[5], ==, 505);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  other_graph = morok_graph_new ();
  g_test_add_func ("/jit/errors/no-fault-prepares", test_no_fault);
  g_test_add_func ("/jit/execute/fails-before-prepare", test_per_step_calls_fail_before_prepare);
  g_test_add_func ("/jit/execute/fails-after-failed-prepare",
                   test_execute_fails_after_failed_prepare);
  g_test_add_func ("/jit/errors/build/own-error-keeps-message", test_build_own_error);
  g_test_add_func ("/jit/errors/build/null-without-error", test_build_null);
  g_test_add_func ("/jit/errors/build/tensor-of-another-graph", test_build_other_graph);
  g_test_add_func ("/jit/errors/build/empty-bounds", test_build_empty_bounds);
  g_test_add_func ("/jit/errors/tensor/shapes-do-not-fit", test_tensor_shapes);
  g_test_add_func ("/jit/errors/tensor/bound-past-input", test_tensor_bound_past_input);
  g_test_add_func ("/jit/errors/input-not-found/declared-input-unused", test_unused_input);
  g_test_add_func ("/jit/errors/input-not-found/undeclared-input-read", test_undeclared_input);
  g_test_add_func ("/jit/errors/duplicate-input/second-input-of-same-name",
                   test_second_input_of_same_name);
  g_test_add_func ("/jit/errors/device/missing-compiler", test_device_missing_compiler);
  g_test_add_func ("/jit/errors/device/broken-compiler", test_device_broken_compiler);
  g_test_add_func ("/jit/errors/device/bad-isa", test_device_bad_isa);
  int r = g_test_run ();
  morok_graph_free (other_graph);
  return r;
}
