/* SPDX-License-Identifier: MIT */
/* The C renderer: one freestanding translation unit per schedule.
 *
 * Kernel i of the schedule becomes `void morok_k<i> (void *const *bufs,
 * const int64_t *vars, uint32_t tid, uint32_t nthreads)` (MorokKernelFn):
 * constant shapes are literals, variables are read from vars[slot], buffers
 * are restrict pointers, and each thread takes its share of the rows. */
#pragma once

#include <glib.h>
#include "graph/morok-schedule.h"

G_BEGIN_DECLS

/* Contractions with at most this many rows (or columns) run without packing
 * (morok_gemm_f32's small paths); the renderer passes it to the kernel
 * headers, and lowering lays constant operands out for them. */
#define MOROK_GEMM_SMALL 8

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

/* The headers every translation unit starts with (the kernels/include headers, in
 * order); a static string. */
const char *morok_render_prelude (void);

/* The whole translation unit, prelude included. (transfer full) */
char *morok_render_schedule (const MorokSchedule *sched, MorokIsa isa, GError **error);

G_END_DECLS
