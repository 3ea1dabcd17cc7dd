/* SPDX-License-Identifier: MIT */
/* Peak throughput of one core for each product instruction the precisions
 * use, where this CPU has it: f32 FMA (vfmadd231ps zmm, every precision's
 * f32 path), f16 FMA (vfmadd231ph zmm, precision f16), bf16 dot
 * (vdpbf16ps zmm, bf16 and bf16x3 without AMX) and int8 dot (vpdpbusd zmm,
 * int8), and the 256-bit forms AVX2 machines have: vfmadd231ps ymm,
 * vpdpbusd ymm (AVX-VNNI) and vpmaddwd ymm (int16 pairs to int32, the
 * widest integer product of AVX2 without VNNI; it does not accumulate, so
 * a kernel adds a vpaddd to each). Each loop issues 120 independent-enough instructions (10
 * accumulators, more than latency x ports on the CPUs here) per iteration
 * and is timed in the thread's CPU time, so other jobs on the machine do not
 * count (their cache traffic does not matter: the loop touches no memory).
 * The figure is the best of three runs of 200 M instructions; an operation
 * is one multiply or one add (an FMA on 16 floats is 32, vpdpbusd 128).
 *
 *   taskset -c 1 build/bench/isa-peaks
 *
 * The yardstick for the GFLOP/s that bench-gigaam --profile and bench-gemm
 * print: docs/benchmarks.md quotes it per machine. */
#include <stdio.h>
#include <time.h>

#define INSNS 200000000L
#define PER_ITER 120

static double
thread_seconds (void)
{
  struct timespec t;
  clock_gettime (CLOCK_THREAD_CPUTIME_ID, &t);
  return (double) t.tv_sec + (double) t.tv_nsec * 1e-9;
}

/* an instruction into accumulator @i (0-9) of register kind @r ("zmm" or
 * "ymm") from the two sources 14 and 15 (AVX2 has 16 vector registers) */
#define ACC(op, r, i) op " %%" r "14, %%" r "15, %%" r #i "\n\t"
/* string pieces that clang-format 14 lays out differently on each pass */
/* clang-format off */
#define TEN(op, r) \
  ACC (op, r, 0) ACC (op, r, 1) ACC (op, r, 2) ACC (op, r, 3) ACC (op, r, 4) \
  ACC (op, r, 5) ACC (op, r, 6) ACC (op, r, 7) ACC (op, r, 8) ACC (op, r, 9)
#define TWELVE_TENS(op, r) \
  TEN (op, r) TEN (op, r) TEN (op, r) TEN (op, r) TEN (op, r) TEN (op, r) \
  TEN (op, r) TEN (op, r) TEN (op, r) TEN (op, r) TEN (op, r) TEN (op, r)
/* clang-format on */

/* time_<name>: one timed loop of @op on @r registers, their sources first
 * cleared with @zero (vpxord for zmm, vpxor for ymm), compiled for @isa;
 * returns seconds for INSNS instructions. (A clobbered xmm register is the
 * whole ymm or zmm register.) */
#define PEAK_LOOP(name, op, r, zero, isa)                                                          \
  __attribute__ ((target (isa))) static double time_##name (void)                                  \
  {                                                                                                \
    double t0 = thread_seconds ();                                                                 \
    __asm__ volatile(zero " %%" r "14, %%" r "14, %%" r "14\n\t" zero " %%" r "15, %%" r           \
                          "15, %%" r "15\n\t"                                                      \
                          "mov %0, %%rcx\n"                                                        \
                          "1:\n\t" TWELVE_TENS (op, r) "dec %%rcx\n\t"                             \
                                                       "jnz 1b\n"                                  \
                     :                                                                             \
                     : "r"(INSNS / PER_ITER)                                                       \
                     : "rcx", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7",      \
                       "xmm8", "xmm9", "xmm14", "xmm15", "cc");                                    \
    return thread_seconds () - t0;                                                                 \
  }

PEAK_LOOP (vfmadd231ps, "vfmadd231ps", "zmm", "vpxord", "avx512f")
PEAK_LOOP (vfmadd231ph, "vfmadd231ph", "zmm", "vpxord", "avx512fp16")
PEAK_LOOP (vdpbf16ps, "vdpbf16ps", "zmm", "vpxord", "avx512bf16")
PEAK_LOOP (vpdpbusd, "vpdpbusd", "zmm", "vpxord", "avx512vnni")
PEAK_LOOP (vfmadd231ps_ymm, "vfmadd231ps", "ymm", "vpxor", "avx2,fma")
PEAK_LOOP (vpdpbusd_ymm, "%{vex%} vpdpbusd", "ymm", "vpxor", "avxvnni")
PEAK_LOOP (vpmaddwd_ymm, "vpmaddwd", "ymm", "vpxor", "avx2")

typedef struct
{
  const char *what, *insn, *feature;
  int ops; /* per instruction */
  double (*run) (void);
} Peak;

static int
has (const char *feature)
{
  if (__builtin_strcmp (feature, "avx512f") == 0)
    return __builtin_cpu_supports ("avx512f");
  if (__builtin_strcmp (feature, "avx512fp16") == 0)
    return __builtin_cpu_supports ("avx512fp16");
  if (__builtin_strcmp (feature, "avx512bf16") == 0)
    return __builtin_cpu_supports ("avx512bf16");
  if (__builtin_strcmp (feature, "avx512vnni") == 0)
    return __builtin_cpu_supports ("avx512vnni");
  if (__builtin_strcmp (feature, "avxvnni") == 0)
    return __builtin_cpu_supports ("avxvnni");
  return __builtin_cpu_supports ("avx2") && __builtin_cpu_supports ("fma");
}

int
main (void)
{
  static const Peak peaks[] = {
    { "f32 FMA", "vfmadd231ps zmm", "avx512f", 32, time_vfmadd231ps },
    { "f16 FMA", "vfmadd231ph zmm", "avx512fp16", 64, time_vfmadd231ph },
    { "bf16 dot", "vdpbf16ps zmm", "avx512bf16", 64, time_vdpbf16ps },
    { "int8 dot", "vpdpbusd zmm", "avx512vnni", 128, time_vpdpbusd },
    { "f32 FMA", "vfmadd231ps ymm", "avx2", 16, time_vfmadd231ps_ymm },
    { "int8 dot", "vpdpbusd ymm", "avxvnni", 64, time_vpdpbusd_ymm },
    { "int16 dot", "vpmaddwd ymm", "avx2", 32, time_vpmaddwd_ymm },
  };
  printf ("%-9s %-16s %12s\n", "product", "instruction", "G ops/s");
  for (unsigned i = 0; i < sizeof peaks / sizeof peaks[0]; i++)
    {
      const Peak *p = &peaks[i];
      if (!has (p->feature))
        {
          printf ("%-9s %-16s %12s  (this CPU has no %s)\n", p->what, p->insn, "-", p->feature);
          continue;
        }
      double best = 1e30;
      for (int r = 0; r < 3; r++)
        {
          double s = p->run ();
          if (s < best)
            best = s;
        }
      long done = INSNS / PER_ITER * PER_ITER;
      printf ("%-9s %-16s %12.1f\n", p->what, p->insn, (double) done * p->ops / best / 1e9);
    }
  return 0;
}
