/* SPDX-License-Identifier: MIT */
/* The C renderer: one freestanding translation unit per schedule.
 *
 * Kernel i of the schedule becomes `void morok_k<i> (void *const *bufs,
 * const int64_t *vars, uint32_t tid, uint32_t nthreads)` (MorokKernelFn):
 * constant shapes are literals, variables are read from vars[slot], buffers
 * are restrict pointers, and each thread takes its share of the rows.
 * Prepare (prepare/prepare.c) calls it on the schedule and compiles the result:
 *
 *   g_autofree char *src = morok_render_schedule (sched, morok_isa_detect (), &error);
 *   g_autoptr (MorokObject) obj = src ? morok_compile (src, NULL, &error) : NULL;
 *   MorokKernelFn k0 = obj ? (MorokKernelFn) morok_object_lookup (obj, "morok_k0", &error) : NULL;
 */
#pragma once

#include <glib.h>
#include "graph/morok-schedule.h"
#include "kernels/morok-isa.h"

G_BEGIN_DECLS

/* The headers every translation unit starts with (the kernels/include headers, in
 * order); a static string. */
const char *morok_render_prelude (void);

/* The whole translation unit, prelude included. (transfer full) */
char *morok_render_schedule (const MorokSchedule *sched, MorokIsa isa, GError **error);

G_END_DECLS
