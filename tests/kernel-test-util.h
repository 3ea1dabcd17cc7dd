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

/* TRUE (and the test skipped, saying why) if this CPU cannot run @k's ISA. */
static inline gboolean
skip_unless_runnable (const MorokKernelExports *k)
{
  if (morok_kernel_exports_runnable (k))
    return FALSE;
  g_test_skip_printf ("this CPU cannot run the %s path", k->name);
  return TRUE;
}
