/* SPDX-License-Identifier: MIT */
/* What this CPU runs: every question about its instructions asked in one
 * place — the contraction ISA (kernels/isa.c), the instructions of each
 * precision (morok_weight_pack_missing), the permission Linux gives for
 * AMX tiles, and the kernel cache's key (kernels/object-cache.c).
 *
 *   if (!morok_cpu_has (MOROK_CPU_AVX512_VNNI))
 *     g_print ("int8 needs %s\n", morok_cpu_feature_name (MOROK_CPU_AVX512_VNNI));
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef enum
{
  MOROK_CPU_AVX2_FMA,    /* AVX2 and FMA: the avx2 ISA */
  MOROK_CPU_AVX512F,     /* the avx512 ISA */
  MOROK_CPU_AVX512_FP16, /* precision f16 */
  MOROK_CPU_AVX512_BF16, /* bf16 and bf16x3 without AMX (vdpbf16ps) */
  MOROK_CPU_AVX512_VNNI, /* int8 on zmm (vpdpbusd) */
  MOROK_CPU_AVX_VNNI,    /* int8 on ymm */
  MOROK_CPU_AMX_BF16,    /* AMX-BF16 and AMX-TILE, and Linux lets this process use the
                          * tiles (asked once: arch_prctl ARCH_REQ_XCOMP_PERM) */
  MOROK_CPU_AMX_INT8,    /* AMX-INT8 and AMX-TILE, and the same permission: int8 on tiles */
} MorokCpuFeature;

gboolean morok_cpu_has (MorokCpuFeature feature);
/* "AVX512-VNNI", ...; static. */
const char *morok_cpu_feature_name (MorokCpuFeature feature);
/* What -march=native depends on (vendor, family, model and feature flags of
 * /proc/cpuinfo's first CPU, or a fixed list of answers where /proc is not
 * readable), for the kernel cache's key. (transfer none, static) */
const char *morok_cpu_signature (void);

G_END_DECLS
