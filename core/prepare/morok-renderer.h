/* SPDX-License-Identifier: MIT */
/* The C renderer: freestanding translation units for a schedule.
 *
 * Each distinct kernel becomes `void morok_f<i> (void *const *bufs, const
 * int64_t *vars, uint32_t tid, uint32_t nthreads)` (MorokKernelFn):
 * constant shapes are literals, variables are read from vars[slot], and
 * each thread takes its share of the rows. `bufs` is the kernel's own
 * binding table, not the plan's buffers: slot 0 its output, then what it
 * reads, then the scratch (morok_render_kernel_bindings says which plan
 * buffer each slot is), so that kernels of the same computation over other
 * buffers, as the layers of an encoder, are one function, rendered and
 * compiled once. Prepare (prepare/compile-job.c) renders a schedule, compiles
 * its functions in one or more units side by side and calls each kernel k
 * through function_of[k] with its table:
 *
 *   g_autoptr (MorokRendered) r = morok_render_schedule (sched, morok_isa_detect (), NULL, &error);
 *   g_autoptr (GArray) unit_of = g_array_new (FALSE, FALSE, sizeof (guint));
 *   g_autoptr (GPtrArray) units = morok_render_units (r, 1, unit_of);   // one unit
 *   g_autoptr (MorokObject) obj = morok_compile (units->pdata[0], NULL, &error);
 *   MorokKernelFn f0 = obj ? (MorokKernelFn) morok_object_lookup (obj, "morok_f0", &error) : NULL;
 */
#pragma once

#include <glib.h>
#include "graph/morok-schedule.h"
#include "kernels/morok-isa.h"
#include "kernels/morok-compiler.h"

G_BEGIN_DECLS

typedef struct
{
  char *head;           /* what each unit starts with: ISA macros, the prelude, helpers */
  GPtrArray *functions; /* char *: the distinct functions, the i-th named morok_f<i> */
  GArray *function_of;  /* guint per schedule kernel: the function it runs */
  GArray *cost;         /* guint per function: its relative compile time */
  guint split_cost;     /* the functions' cost from which units are split */
} MorokRendered;

/* The headers every translation unit starts with (the kernels/include headers, in
 * order); a static string. */
const char *morok_render_prelude (void);

/* The schedule's distinct kernel functions, which call the kernel library
 * @lib (nullable: none, the units compile the headers' bodies) for @isa's
 * GEMM and attention. (transfer full) NULL with @error set when a kernel
 * cannot be rendered. */
MorokRendered *morok_render_schedule (const MorokSchedule *sched, MorokIsa isa,
                                      const MorokKernelLib *lib, GError **error);
void morok_rendered_free (MorokRendered *r);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (MorokRendered, morok_rendered_free)

/* The functions as at most @max_units translation units (the head, then
 * their functions) of about equal compile time; one when the functions
 * are cheap. @out_unit_of (guint) gets each function's unit. (transfer
 * full) GPtrArray of char *, deterministic for a schedule (cache keys). */
GPtrArray *morok_render_units (const MorokRendered *r, guint max_units, GArray *out_unit_of);

/* Appends kernel @k's binding table to @out (guint): the plan buffer of
 * each of its slots, in slot order. */
void morok_render_kernel_bindings (const MorokScheduleKernel *k, GArray *out);

G_END_DECLS
