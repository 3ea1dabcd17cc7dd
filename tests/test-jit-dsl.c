/* SPDX-License-Identifier: MIT */
/* The DSL checks the build function's parameter list at compile time: a
 * wrapper is compiled with each C compiler on PATH (cc, clang, gcc), and a
 * build function that does not match the declared inputs and variables
 * must be rejected, while a matching one compiles without a warning under
 * -Wall -Wextra -Werror. */
#include "jit-dsl-config.h" /* JIT_DSL_SOURCE_ROOT, JIT_DSL_GLIB_CFLAGS */
#include <glib/gstdio.h>
#include <stdlib.h>
#include <string.h>

/* A wrapper with inputs a, b and variable t, or as @inputs and @vars say;
 * @params is the build function's parameter list between model and error. */
static char *
wrapper_source (const char *inputs, const char *vars, const char *params, const char *model_type)
{
  return g_strdup_printf (
      "#include \"jit/morok-jit.h\"\n"
      "typedef struct { gint64 max_t; } Model;\n"
      "static void model_free (Model *m) { g_free (m); }\n"
      "#define T_INPUTS(X) %s\n"
      "#define T_VARS(X) %s\n"
      "MOROK_JIT_DECLARE (TJit, t_jit, Model, T_INPUTS, T_VARS)\n"
      "static MorokTensor *\n"
      "build (%s *model, %s GError **error)\n"
      "{\n"
      "  return morok_tensor_add (a, b, error);\n"
      "}\n"
      "MOROK_JIT_DEFINE (TJit, t_jit, Model, T_INPUTS, T_VARS, build, model_free)\n",
      inputs, vars, model_type, params);
}

/* The distinct C compilers on PATH among cc, clang and gcc, or NULL. */
static GStrv
find_compilers (void)
{
  static const char *const names[] = { "cc", "clang", "gcc" };
  g_autoptr (GStrvBuilder) found = g_strv_builder_new ();
  g_autoptr (GHashTable) seen = g_hash_table_new_full (g_str_hash, g_str_equal, free, NULL);
  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    {
      g_autofree char *path = g_find_program_in_path (names[i]);
      char *real = path ? realpath (path, NULL) : NULL; /* cc is often gcc or clang */
      if (real && g_hash_table_add (seen, real))
        g_strv_builder_add (found, path);
    }
  GStrv ccs = g_strv_builder_end (found);
  if (!ccs[0])
    {
      g_strfreev (ccs);
      g_test_skip ("no C compiler on PATH");
      return NULL;
    }
  return ccs;
}

/* Compiles @source with @cc (syntax and types only, the project's warning
 * flags); returns whether the compiler accepted it, and its stderr. */
static gboolean
compiles (const char *cc, const char *source, gboolean werror, char **out_stderr)
{
  g_autofree char *dir = g_dir_make_tmp ("morok-dsl-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "wrapper.c", NULL);
  g_assert_true (g_file_set_contents (path, source, -1, NULL));
  g_auto (GStrv) glib_flags = NULL;
  if (*JIT_DSL_GLIB_CFLAGS)
    g_assert_true (g_shell_parse_argv (JIT_DSL_GLIB_CFLAGS, NULL, &glib_flags, NULL));

  g_autoptr (GPtrArray) argv = g_ptr_array_new ();
  const char *fixed[] = { cc,
                          "-std=c11",
                          "-fsyntax-only",
                          "-Wall",
                          "-Wextra",
                          "-Wno-unused-parameter",
                          "-I" JIT_DSL_SOURCE_ROOT,
                          "-I" JIT_DSL_SOURCE_ROOT "/core" };
  for (guint i = 0; i < G_N_ELEMENTS (fixed); i++)
    g_ptr_array_add (argv, (char *) fixed[i]);
  if (werror)
    g_ptr_array_add (argv, "-Werror");
  for (guint i = 0; glib_flags && glib_flags[i]; i++)
    g_ptr_array_add (argv, glib_flags[i]);
  g_ptr_array_add (argv, path);
  g_ptr_array_add (argv, NULL);

  int status = -1;
  GError *e = NULL;
  g_assert_true (g_spawn_sync (NULL, (char **) argv->pdata, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL,
                               NULL, NULL, out_stderr, &status, &e));
  g_assert_no_error (e);
  g_remove (path);
  g_rmdir (dir);
  return g_spawn_check_wait_status (status, NULL);
}

/* Every compiler rejects a wrapper whose build function takes @params. */
static void
assert_rejected (const char *params, const char *model_type)
{
  g_auto (GStrv) ccs = find_compilers ();
  g_autofree char *src
      = wrapper_source ("X (a) X (b)", "X (t, 1, model->max_t)", params, model_type);
  for (guint i = 0; ccs && ccs[i]; i++)
    {
      g_autofree char *err = NULL;
      gboolean ok = compiles (ccs[i], src, FALSE, &err);
      g_test_message ("%s said:\n%s", ccs[i], err);
      g_assert_false (ok);
      g_assert_nonnull (strstr (err, "conflicting types for"));
    }
}

/* Every compiler accepts @src without a warning. */
static void
assert_accepted (const char *src)
{
  g_auto (GStrv) ccs = find_compilers ();
  for (guint i = 0; ccs && ccs[i]; i++)
    {
      g_autofree char *err = NULL;
      gboolean ok = compiles (ccs[i], src, TRUE, &err);
      g_test_message ("%s said:\n%s", ccs[i], err);
      g_assert_true (ok);
    }
}

/* (Model *, a, b, t) matches and compiles cleanly: the test can fail. */
static void
test_matching_compiles (void)
{
  g_autofree char *src
      = wrapper_source ("X (a) X (b)", "X (t, 1, model->max_t)",
                        "MorokTensor *a, MorokTensor *b, MorokVariable *t,", "Model");
  assert_accepted (src);
}

/* Leaving out the variable's parameter does not compile. */
static void
test_missing_variable (void)
{
  assert_rejected ("MorokTensor *a, MorokTensor *b,", "Model");
}

/* The variable before the inputs does not compile. */
static void
test_swapped (void)
{
  assert_rejected ("MorokVariable *t, MorokTensor *a, MorokTensor *b,", "Model");
}

/* An input parameter more than declared does not compile. */
static void
test_extra_input (void)
{
  assert_rejected ("MorokTensor *a, MorokTensor *b, MorokTensor *c, MorokVariable *t,", "Model");
}

/* Another model type does not compile. */
static void
test_wrong_model (void)
{
  assert_rejected ("MorokTensor *a, MorokTensor *b, MorokVariable *t,", "GString");
}

/* A wrapper without variables compiles cleanly. */
static void
test_no_variables (void)
{
  g_autofree char *src
      = wrapper_source ("X (a) X (b)", "", "MorokTensor *a, MorokTensor *b,", "Model");
  assert_accepted (src);
}

/* The limits, 16 inputs and 16 variables, compile cleanly. */
static void
test_sixteen_each (void)
{
  GString *ins = g_string_new ("X (a) X (b)"), *vars = g_string_new (NULL);
  GString *params = g_string_new ("MorokTensor *a, MorokTensor *b, ");
  for (int i = 2; i < 16; i++)
    {
      g_string_append_printf (ins, " X (in%d)", i);
      g_string_append_printf (params, "MorokTensor *in%d, ", i);
    }
  for (int i = 0; i < 16; i++)
    {
      g_string_append_printf (vars, " X (v%d, 1, model->max_t + %d)", i, i);
      g_string_append_printf (params, "MorokVariable *v%d, ", i);
    }
  g_autofree char *src = wrapper_source (ins->str, vars->str, params->str, "Model");
  assert_accepted (src);
  g_string_free (ins, TRUE), g_string_free (vars, TRUE), g_string_free (params, TRUE);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/jit/dsl/matching-build-function-compiles", test_matching_compiles);
  g_test_add_func ("/jit/dsl/missing-variable-parameter-is-rejected", test_missing_variable);
  g_test_add_func ("/jit/dsl/swapped-parameters-are-rejected", test_swapped);
  g_test_add_func ("/jit/dsl/extra-input-parameter-is-rejected", test_extra_input);
  g_test_add_func ("/jit/dsl/other-model-type-is-rejected", test_wrong_model);
  g_test_add_func ("/jit/dsl/no-variables-compiles", test_no_variables);
  g_test_add_func ("/jit/dsl/sixteen-inputs-and-variables-compile", test_sixteen_each);
  return g_test_run ();
}
