/* SPDX-License-Identifier: MIT */
/* The kernel library (kernels/kernel-lib.c): the kernel headers' GEMM and
 * attention compiled once per ISA into libmorok, which units that define
 * MOROK_KERNEL_LIB call through symbols the ELF loader resolves.
 *
 * A unit's call reaches the library and computes what the library's own
 * export table computes, bit for bit, also from an image mapped more than
 * 4 GiB away; a name that is not the library's stays an undefined-symbol
 * error, as does a 32-bit call that cannot reach. The library is found
 * with the default flags on the CPU it was built on, and not for another
 * -march or with MOROK_KERNEL_LIB=0. That a whole model computes the same
 * through the library as with the bodies inlined is test-silero-vad's and
 * test-gigaam's. */
#include <glib.h>
#include <gio/gio.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kernel-test-util.h"
#include "kernels/morok-compiler.h"
#include "prepare/morok-renderer.h"

#define M 37
#define N 45
#define K 300

/* C = A·B through the library's morok_gemm_f32, [M, K]·[K, N], row-major. */
static const char kernel[]
    = "void\n"
      "morok_k0 (void *const *bufs, const int64_t *v, uint32_t tid, uint32_t nthreads)\n"
      "{\n"
      "  morok_gemm_f32 (v[0], v[1], v[2], bufs[1], v[2], 1, bufs[2], v[1], 1, bufs[0], v[1], 0);\n"
      "}\n";

/* The library of this CPU's ISA, or NULL with the test skipped, saying why. */
static const MorokKernelLib *
lib_or_skip (void)
{
  const char *why = NULL;
  const MorokKernelLib *lib = morok_kernel_lib_find (morok_isa_detect (), NULL, &why);
  if (lib == NULL)
    g_test_skip_printf ("no kernel library here: %s", why);
  return lib;
}

/* A unit calling the library: the ISA and MOROK_KERNEL_LIB, the prelude,
 * then @body. (transfer full) */
static char *
unit_source (const char *body)
{
  static const char *const isa_macro[]
      = { "MOROK_ISA_PORTABLE", "MOROK_ISA_AVX2", "MOROK_ISA_AVX512" };
  return g_strdup_printf ("#define MOROK_KERNEL_LIB 1\n#define %s 1\n%s\n%s",
                          isa_macro[morok_isa_detect ()], morok_render_prelude (), body);
}

/* The object of @source compiled by clang with @plt_flag (-fno-plt or
 * -fplt) beside the JIT's usual flags. (transfer full) */
static GBytes *
compile_with (const char *source, const char *plt_flag)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *clang = g_find_program_in_path ("clang");
  g_assert_nonnull (clang);
  g_autoptr (GSubprocess) proc
      = g_subprocess_new (G_SUBPROCESS_FLAGS_STDIN_PIPE | G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error,
                          clang, "-x", "c", "-std=c11", "-c", "-ffreestanding", "-fPIC", plt_flag,
                          "-O2", "-march=native", "-o", "-", "-", NULL);
  g_assert_no_error (error);
  g_autoptr (GBytes) in = g_bytes_new_static (source, strlen (source));
  GBytes *out = NULL;
  g_assert_true (g_subprocess_communicate (proc, in, NULL, &out, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (g_subprocess_get_successful (proc));
  return out;
}

typedef struct
{
  float a[M * K], b[K * N], c[M * N], want[M * N];
} Product;

/* Random A and B, and C through the export table's gemm_f32 of the same ISA. */
static void
product_init (Product *p)
{
  static const MorokKernelExports *const by_isa[]
      = { &morok_kernel_exports_portable, &morok_kernel_exports_avx2,
          &morok_kernel_exports_avx512 };
  for (int i = 0; i < M * K; i++)
    p->a[i] = g_test_rand_double_range (-1, 1);
  for (int i = 0; i < K * N; i++)
    p->b[i] = g_test_rand_double_range (-1, 1);
  by_isa[morok_isa_detect ()]->gemm_f32 (M, N, K, p->a, K, 1, p->b, N, 1, p->want, N, 0);
}

/* Runs @obj's morok_k0 on @p; asserts C is the export table's, bit for bit. */
static void
assert_runs_product (MorokObject *obj, Product *p)
{
  g_autoptr (GError) error = NULL;
  MorokKernelFn fn = (MorokKernelFn) morok_object_lookup (obj, "morok_k0", &error);
  g_assert_no_error (error);
  void *bufs[] = { p->c, p->a, p->b };
  const int64_t v[] = { M, N, K };
  memset (p->c, 0xff, sizeof p->c);
  fn (bufs, v, 0, 1);
  g_assert_cmpmem (p->c, sizeof p->c, p->want, sizeof p->want);
}

/* Compiled through morok_compile with the library, the unit's call runs the
 * library's GEMM. */
static void
test_unit_calls_library (void)
{
  const MorokKernelLib *lib = lib_or_skip ();
  if (!lib)
    return;
  g_autofree char *src = unit_source (kernel);
  g_autoptr (GError) error = NULL;
  MorokCompileOptions opts;
  morok_compile_options_init (&opts);
  opts.use_cache = FALSE;
  opts.lib = lib;
  g_autoptr (MorokObject) obj = morok_compile (src, &opts, &error);
  g_assert_no_error (error);
  g_autofree Product *p = g_new (Product, 1);
  product_init (p);
  assert_runs_product (obj, p);
}

/* The address @distance bytes from libmorok's code, page-aligned. */
static gpointer
far_from_library (gint64 distance)
{
  guintptr at = (guintptr) (gpointer) morok_kernel_lib_find + distance;
  return (gpointer) (at & ~(guintptr) 0xffff);
}

/* How far @obj's morok_k0 lies from libmorok's code. */
static gint64
distance_from_library (MorokObject *obj)
{
  gint64 d = (gint64) (guintptr) morok_object_lookup (obj, "morok_k0", NULL)
             - (gint64) (guintptr) (gpointer) morok_kernel_lib_find;
  return ABS (d);
}

/* An image 16 GiB above or below libmorok still calls it, through its GOT
 * slot; a PLT32 call from there is a relocation error, never a jump. */
static void
test_call_reaches_any_distance (void)
{
  const MorokKernelLib *lib = lib_or_skip ();
  if (!lib)
    return;
  g_autofree char *src = unit_source (kernel);
  g_autoptr (GBytes) got_call = compile_with (src, "-fno-plt");
  g_autoptr (GBytes) plt_call = compile_with (src, "-fplt");
  g_autofree Product *p = g_new (Product, 1);
  product_init (p);
  const gint64 distances[] = { (gint64) 16 << 30, -((gint64) 16 << 30) };
  guint placed = 0;
  for (guint i = 0; i < G_N_ELEMENTS (distances); i++)
    {
      g_autoptr (GError) error = NULL;
      gpointer hint = far_from_library (distances[i]);
      MorokObject *obj = morok_object_load_full (g_bytes_get_data (got_call, NULL),
                                                 g_bytes_get_size (got_call), lib, hint, &error);
      g_assert_no_error (error);
      gboolean far = distance_from_library (obj) > ((gint64) 4 << 30);
      if (far)
        assert_runs_product (obj, p);
      morok_object_free (obj);
      if (!far)
        continue; /* the system put it elsewhere: nothing shown */
      placed++;
      obj = morok_object_load_full (g_bytes_get_data (plt_call, NULL), g_bytes_get_size (plt_call),
                                    lib, hint, &error);
      if (obj) /* then placed within reach, elsewhere */
        g_assert_cmpint (distance_from_library (obj), <, (gint64) 2 << 30);
      else
        {
          g_assert_error (error, MOROK_COMPILE_ERROR, MOROK_COMPILE_ERROR_RELOCATION);
          g_assert_nonnull (strstr (error->message, "does not fit in 32 bits"));
          g_test_message ("%+" G_GINT64_FORMAT " GiB: the GOT call runs, the PLT32 one is "
                          "refused: %s",
                          distances[i] >> 30, error->message);
        }
      morok_object_free (obj);
    }
  if (placed == 0)
    g_test_skip ("the system mapped no image more than 4 GiB from libmorok");
}

/* A name the library does not have stays an undefined symbol, named, with
 * the library or without it. */
static void
test_unknown_symbol_is_error (void)
{
  const MorokKernelLib *lib = lib_or_skip ();
  if (!lib)
    return;
  g_autofree char *src = unit_source ("void morok_gemm_f64 (void);\n"
                                      "void morok_k0 (void) { morok_gemm_f64 (); }\n");
  g_autoptr (GBytes) obj = compile_with (src, "-fno-plt");
  const MorokKernelLib *libs[] = { lib, NULL };
  for (guint i = 0; i < G_N_ELEMENTS (libs); i++)
    {
      g_autoptr (GError) error = NULL;
      g_assert_null (morok_object_load_full (g_bytes_get_data (obj, NULL), g_bytes_get_size (obj),
                                             libs[i], NULL, &error));
      g_assert_error (error, MOROK_COMPILE_ERROR, MOROK_COMPILE_ERROR_RELOCATION);
      g_assert_nonnull (strstr (error->message, "undefined symbol 'morok_gemm_f64'"));
    }
  /* a library function, loaded without the library */
  g_autofree char *calling = unit_source (kernel);
  g_autoptr (GBytes) calls = compile_with (calling, "-fno-plt");
  g_autoptr (GError) error = NULL;
  g_assert_null (
      morok_object_load (g_bytes_get_data (calls, NULL), g_bytes_get_size (calls), &error));
  g_assert_error (error, MOROK_COMPILE_ERROR, MOROK_COMPILE_ERROR_RELOCATION);
  g_assert_nonnull (strstr (error->message, "undefined symbol 'morok_gemm_f32'"));
}

/* The library is not used for units of another -march, nor when
 * MOROK_KERNEL_LIB=0; its identity is a SHA-256 in hex. */
static void
test_find_only_for_its_flags (void)
{
  const MorokKernelLib *lib = lib_or_skip ();
  if (!lib)
    return;
  g_assert_cmpuint (strlen (morok_kernel_lib_id (lib)), ==, 64);
  const char *why = NULL;
  MorokCompileOptions opts;
  morok_compile_options_init (&opts);
  opts.march = "x86-64-v3";
  g_assert_null (morok_kernel_lib_find (morok_isa_detect (), &opts, &why));
  g_assert_nonnull (strstr (why, "flags"));
  morok_compile_options_init (&opts);
  opts.opt_level = 1;
  g_assert_null (morok_kernel_lib_find (morok_isa_detect (), &opts, NULL));
  g_setenv ("MOROK_KERNEL_LIB", "0", TRUE);
  g_assert_null (morok_kernel_lib_find (morok_isa_detect (), NULL, &why));
  g_unsetenv ("MOROK_KERNEL_LIB");
  g_assert_cmpstr (why, ==, "MOROK_KERNEL_LIB=0");
  g_assert_true (morok_kernel_lib_find (morok_isa_detect (), NULL, NULL) == lib);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/kernel-lib/unit/calls-library", test_unit_calls_library);
  g_test_add_func ("/kernel-lib/load/call-reaches-any-distance", test_call_reaches_any_distance);
  g_test_add_func ("/kernel-lib/load/unknown-symbol-is-error", test_unknown_symbol_is_error);
  g_test_add_func ("/kernel-lib/find/only-for-its-flags", test_find_only_for_its_flags);
  return g_test_run ();
}
