/* SPDX-License-Identifier: MIT */
/* kernel-lib.h (private to kernels/): the kernel library's build facts
 * (written by kernel-lib-id.py, or kernel-lib-none.c without clang) and
 * what a MorokKernelLib is, for kernel-lib.c, compiler.c and the loader. */
#pragma once

#include <glib.h>
#include <stdint.h>
#include "kernels/kernel-headers-export.h"
#include "kernels/morok-compiler.h"

G_BEGIN_DECLS

typedef struct
{
  const char *id;    /* SHA-256 of what decides the library's code; NULL: no library */
  const char *flags; /* the JIT flags it was built with, as compile_flags_line gives them */
  const char *cpu;   /* morok_cpu_signature () of the CPU it was built on */
  const MorokKernelSymbol *symbols[MOROK_ISA_AVX512 + 1]; /* by MorokIsa */
} MorokKernelLibBuild;

extern const MorokKernelLibBuild morok_kernel_lib_build;

struct _MorokKernelLib
{
  MorokIsa isa;
  const char *id;
  const MorokKernelSymbol *symbols; /* ends with { NULL, NULL } */
};

/* The flags compiler.c passes for @opts (between the compiler's name and
 * "-o - -"), joined by spaces. (transfer full) */
G_GNUC_INTERNAL char *morok_compile_flags_line (const MorokCompileOptions *opts);

G_END_DECLS
