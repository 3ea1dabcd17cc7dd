/* SPDX-License-Identifier: MIT */
/* Which kernel library, if any, the units of a prepare may call: the
 * per-ISA objects of kernel-headers-export.c, built with the JIT's flags
 * for the build machine's CPU, are used only where a unit would be
 * compiled exactly as they were (the same flags, -march=native on the same
 * CPU), so that calling them computes what the inlined bodies would. */
#define G_LOG_DOMAIN "morok-kernels"

#include "kernels/kernel-lib.h"
#include "kernels/cpu-features.h"
#include "kernels/weight-pack.h"

/* The library is built with morok-gemm.h's default small-contraction
 * bound; the renderer defines the same one in every unit. */
G_STATIC_ASSERT (MOROK_GEMM_SMALL == 8);

const MorokKernelLib *
morok_kernel_lib_find (MorokIsa isa, const MorokCompileOptions *opts, const char **out_why)
{
  static MorokKernelLib libs[MOROK_ISA_AVX512 + 1];
  static gsize filled;
  const MorokKernelLibBuild *b = &morok_kernel_lib_build;
  const char *why = NULL;
  MorokCompileOptions defaults;

  g_return_val_if_fail ((guint) isa <= MOROK_ISA_AVX512, NULL);
  if (opts == NULL)
    {
      morok_compile_options_init (&defaults);
      opts = &defaults;
    }
  g_autofree char *flags = morok_compile_flags_line (opts);
  if (b->id == NULL)
    why = "libmorok was built without clang";
  else if (g_strcmp0 (g_getenv ("MOROK_KERNEL_LIB"), "0") == 0)
    why = "MOROK_KERNEL_LIB=0";
  else if (g_strcmp0 (flags, b->flags) != 0)
    why = "the units' flags are not the ones it was built with (MOROK_MARCH, -O, extra flags)";
  else if (g_strcmp0 (morok_cpu_signature (), b->cpu) != 0)
    why = "it was built on another CPU";
  else if (isa > morok_isa_detect ())
    why = "this CPU does not run its ISA";
  if (out_why)
    *out_why = why;
  if (why)
    return NULL;
  if (g_once_init_enter (&filled))
    {
      for (guint i = 0; i <= MOROK_ISA_AVX512; i++)
        libs[i] = (MorokKernelLib){ .isa = i, .id = b->id, .symbols = b->symbols[i] };
      g_once_init_leave (&filled, 1);
    }
  return &libs[isa];
}

const char *
morok_kernel_lib_id (const MorokKernelLib *lib)
{
  g_return_val_if_fail (lib != NULL, NULL);
  return lib->id;
}
