/* SPDX-License-Identifier: MIT */
/* Contraction ISAs: detection on this CPU, names. */
#include "kernels/morok-isa.h"
#include "kernels/cpu-features.h"

MorokIsa
morok_isa_detect (void)
{
  if (morok_cpu_has (MOROK_CPU_AVX512F))
    return MOROK_ISA_AVX512;
  if (morok_cpu_has (MOROK_CPU_AVX2_FMA))
    return MOROK_ISA_AVX2;
  return MOROK_ISA_PORTABLE;
}

const char *
morok_isa_name (MorokIsa isa)
{
  static const char *const names[] = { "portable", "avx2", "avx512" };
  return (guint) isa < G_N_ELEMENTS (names) ? names[isa] : "?";
}

gboolean
morok_isa_parse (const char *name, MorokIsa *out)
{
  for (guint i = 0; i <= MOROK_ISA_AVX512; i++)
    if (name && g_ascii_strcasecmp (name, morok_isa_name (i)) == 0)
      {
        *out = i;
        return TRUE;
      }
  return FALSE;
}
