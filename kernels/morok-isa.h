/* SPDX-License-Identifier: MIT */
/* Contraction ISAs: which micro-kernels (kernels/include/morok-gemm.h) the
 * generated code uses. Prepare picks one (the CPU's best unless asked
 * otherwise); the renderer and the weight packer follow it.
 *
 *   MorokIsa isa = morok_isa_detect ();              // e.g. MOROK_ISA_AVX512
 *   if (!morok_isa_parse (g_getenv ("MOROK_ISA"), &isa)) ...
 *   g_print ("%s\n", morok_isa_name (isa));          // "avx512"
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef enum
{
  MOROK_ISA_PORTABLE,
  MOROK_ISA_AVX2,
  MOROK_ISA_AVX512,
} MorokIsa;

/* The best contraction path this CPU runs. */
MorokIsa morok_isa_detect (void);
/* "portable", "avx2", "avx512"; parse returns FALSE for anything else. */
const char *morok_isa_name (MorokIsa isa);
gboolean morok_isa_parse (const char *name, MorokIsa *out);

G_END_DECLS
