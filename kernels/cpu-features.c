/* SPDX-License-Identifier: MIT */
/* What this CPU runs: CPUID (and Linux's AMX permission), asked once. */
#include "kernels/cpu-features.h"
#if defined(__x86_64__)
#include <cpuid.h>
#endif
#if defined(__x86_64__) && defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#define ARCH_REQ_XCOMP_PERM 0x1023 /* asm/prctl.h */
#define XFEATURE_XTILEDATA 18
#endif

#if defined(__x86_64__)
/* CPUID.(7, @sub) register @reg (0 EAX .. 3 EDX) bit @bit */
static gboolean
cpuid7_bit (guint sub, guint reg, guint bit)
{
  guint r[4];
  return __get_cpuid_count (7, sub, &r[0], &r[1], &r[2], &r[3]) && (r[reg] >> bit & 1u);
}
#endif

/* CPUID.(7, 0).EDX 24 AMX-TILE, then the kernel's permission to use the tiles */
static gpointer
request_amx (gpointer unused)
{
  (void) unused;
#if defined(__x86_64__) && defined(__linux__)
  if (!cpuid7_bit (0, 3, 24))
    return GINT_TO_POINTER (FALSE);
  return GINT_TO_POINTER (syscall (SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) == 0);
#else
  return GINT_TO_POINTER (FALSE);
#endif
}

gboolean
morok_cpu_has (MorokCpuFeature feature)
{
#if defined(__x86_64__)
  static GOnce amx = G_ONCE_INIT;
  __builtin_cpu_init ();
  switch (feature)
    {
    case MOROK_CPU_AVX2_FMA:
      return __builtin_cpu_supports ("avx2") && __builtin_cpu_supports ("fma");
    case MOROK_CPU_AVX512F: return __builtin_cpu_supports ("avx512f") != 0;
    case MOROK_CPU_AVX512_FP16: return cpuid7_bit (0, 3, 23); /* EDX 23 */
    case MOROK_CPU_AVX512_BF16: return cpuid7_bit (1, 0, 5);  /* (7, 1).EAX 5 */
    case MOROK_CPU_AVX512_VNNI: return cpuid7_bit (0, 2, 11); /* ECX 11 */
    case MOROK_CPU_AVX_VNNI: return cpuid7_bit (1, 0, 4);     /* (7, 1).EAX 4 */
    case MOROK_CPU_AMX_BF16:                                  /* EDX 22 */
      return cpuid7_bit (0, 3, 22) && GPOINTER_TO_INT (g_once (&amx, request_amx, NULL));
    case MOROK_CPU_AMX_INT8: /* EDX 25 */
      return cpuid7_bit (0, 3, 25) && GPOINTER_TO_INT (g_once (&amx, request_amx, NULL));
    }
#endif
  (void) feature;
  return FALSE;
}

const char *
morok_cpu_feature_name (MorokCpuFeature feature)
{
  static const char *const names[] = { "AVX2 and FMA", "AVX512F",  "AVX512-FP16", "AVX512-BF16",
                                       "AVX512-VNNI",  "AVX-VNNI", "AMX-BF16",    "AMX-INT8" };
  return (guint) feature < G_N_ELEMENTS (names) ? names[feature] : "?";
}

const char *
morok_cpu_signature (void)
{
  static const char *features;

  if (g_once_init_enter (&features))
    {
      g_autofree char *cpuinfo = NULL;
      GString *s = g_string_new (NULL);

      if (g_file_get_contents ("/proc/cpuinfo", &cpuinfo, NULL, NULL))
        {
          g_auto (GStrv) lines = g_strsplit (cpuinfo, "\n", -1);
          for (guint i = 0; lines[i] != NULL && lines[i][0] != '\0'; i++)
            if (g_str_has_prefix (lines[i], "vendor_id")
                || g_str_has_prefix (lines[i], "cpu family")
                || g_str_has_prefix (lines[i], "model\t") || g_str_has_prefix (lines[i], "flags"))
              g_string_append_printf (s, "%s\n", lines[i]);
        }
      if (s->len == 0)
        {
          __builtin_cpu_init ();
          g_string_append_printf (
              s,
              "sse4.2=%d avx=%d avx2=%d fma=%d avx512f=%d avx512bw=%d "
              "avx512vl=%d avx512vnni=%d",
              !!__builtin_cpu_supports ("sse4.2"), !!__builtin_cpu_supports ("avx"),
              !!__builtin_cpu_supports ("avx2"), !!__builtin_cpu_supports ("fma"),
              !!__builtin_cpu_supports ("avx512f"), !!__builtin_cpu_supports ("avx512bw"),
              !!__builtin_cpu_supports ("avx512vl"), !!__builtin_cpu_supports ("avx512vnni"));
        }
      g_once_init_leave (&features, g_string_free (s, FALSE));
    }
  return features;
}
