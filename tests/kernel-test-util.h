/* SPDX-License-Identifier: MIT */
/* Small helpers of the kernel-header tests (test-kernel-*.c). */
#pragma once

#include <glib.h>
#include <stdint.h>
#include <string.h>

#include "kernel-headers-export.h"

static inline uint32_t
bits_of (float x)
{
  uint32_t u;
  memcpy (&u, &x, 4);
  return u;
}

static inline float
float_of (uint32_t u)
{
  float x;
  memcpy (&x, &u, 4);
  return x;
}

/* Whether @k runs here: this CPU runs its ISA, and MOROK_MARCH does not ask
 * for kernels for another CPU. The library's objects are built with
 * -march=native, which on an AVX-512 machine puts AVX-512 even in the AVX2
 * and portable objects, and valgrind (run with MOROK_MARCH=x86-64-v3,
 * docs/testing.md) cannot run that: there only the baseline object runs. */
static inline gboolean
exports_runnable_here (const MorokKernelExports *k)
{
  const char *march = g_getenv ("MOROK_MARCH");
  /* baseline and avx2v3 are built for a fixed -march, the others for native */
  if (strcmp (k->name, "baseline") != 0 && strcmp (k->name, "avx2v3") != 0 && march && *march
      && strcmp (march, "native") != 0)
    return FALSE;
  return morok_kernel_exports_runnable (k);
}

/* TRUE (and the test skipped, saying why) if @k does not run here. */
static inline gboolean
skip_unless_runnable (const MorokKernelExports *k)
{
  if (exports_runnable_here (k))
    return FALSE;
  g_test_skip_printf ("the %s path does not run here (this CPU lacks it, or MOROK_MARCH "
                      "is set and the objects are built for -march=native)",
                      k->name);
  return TRUE;
}
