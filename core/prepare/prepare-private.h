/* SPDX-License-Identifier: MIT */
/* prepare-private.h (private to core/prepare): what the stages of prepare
 * share. prepare_build () in prepare.c runs them in this order, one file each
 * where the stage is prepare's own:
 *
 *   rewrite      graph/pattern.c with the rules of rules.c
 *   relayout.c   weight operands copied into the layout their kernel reads
 *   fold.c       weight-only subgraphs computed once, here
 *   schedule     graph/schedule.c: kernels and buffers
 *   pack.c       which products read their weight from packed panels
 *   compile      compile-job.c: rendered (renderer.c, render-*.c) and
 *                compiled on a thread of its own while place.c runs
 *   place.c      where each buffer lives (the panels are packed here),
 *                the inputs' and outputs' shapes, the steps
 */
#pragma once

#include "prepare/morok-prepare.h"
#include "graph/morok-schedule.h"
#include "base/cache-line.h"
#include "runtime/morok-program-builder.h"

G_BEGIN_DECLS

/* ---- prepare.c ---- */

/* Runs the stages on @roots (replaced by their rewritten forms) and
 * returns the program as a plan, or NULL with @error set. @one_shot: the
 * plan runs once, at prepare, to compute the weights folded for the plan
 * being built; it then lays out, folds and packs nothing (one run repays
 * none of them) and lets no owner free a weight, which the plan being
 * built may still read. */
G_GNUC_INTERNAL MorokPlan *prepare_build (MorokGraph *graph, MorokNode **roots, guint n_roots,
                                          MorokNode *const *inputs, guint n_inputs,
                                          const MorokPlanOptions *opts, gboolean one_shot,
                                          GError **error);

/* @n's shape as integers; FALSE if a dimension is not a constant. */
static inline gboolean
prepare_const_shape (const MorokNode *n, gint64 *dims)
{
  for (guint i = 0; i < n->rank; i++)
    if (!morok_sym_is_const (n->shape[i], &dims[i]))
      return FALSE;
  return TRUE;
}

/* Threads a step of the plan may use. */
static inline guint
prepare_plan_threads (const MorokPlanOptions *opts)
{
  return opts->threads ? MIN (opts->threads, morok_thread_pool_size ()) : morok_thread_pool_size ();
}

/* ---- relayout.c ---- */

/* @n with its weight operands copied where their kernel would read them
 * slowly in place; @map memoises over the graph. */
G_GNUC_INTERNAL MorokNode *prepare_relayout (MorokNode *n, MorokPrecision precision,
                                             GHashTable *map);

/* ---- fold.c ---- */

/* Replaces the weight-only subgraphs of @roots worth computing once by
 * weights whose data @keep owns (64-byte aligned, free ()). FALSE with
 * @error set when the plan that computes them fails. */
G_GNUC_INTERNAL gboolean prepare_fold (MorokGraph *graph, MorokNode **roots, guint n_roots,
                                       const MorokPlanOptions *opts, GPtrArray *keep,
                                       GError **error);

/* ---- pack.c ---- */

/* Gives each product whose B is a weight the packed buffer of its panels
 * (shared by kernels reading the same view), and the scratch its A is
 * packed into. */
G_GNUC_INTERNAL void prepare_pack_weights (MorokSchedule *sched, const MorokPlanOptions *opts);

/* One packed buffer to fill. */
typedef struct
{
  guint buffer;
  gpointer dst;
} PackJob;

/* The panels prepare makes, packed by two threads where there are two
 * cores (GigaAM full size: 1.2 GB of panels, most of a warm prepare), in
 * schedule order, each weight released as soon as its last panel is made. */
typedef struct
{
  const MorokSchedule *sched;
  GArray *jobs;             /* PackJob */
  gint next;                /* the next job to take */
  GHashTable *read, *packs; /* release_packed_source's; read NULL: no release */
  GMutex lock;              /* guards packs */
} Packing;

/* Fills every job of @pk; returns when all are done. */
G_GNUC_INTERNAL void prepare_pack_panels (Packing *pk);

/* ---- place.c ---- */

/* Where each buffer of @sched lives, the panels packed. @release: owners
 * may free the weights that only packing reads (not for a one-shot plan). */
G_GNUC_INTERNAL gboolean prepare_place_buffers (MorokProgramBuilder *b, const MorokSchedule *sched,
                                                gboolean release, GError **error);
/* Variables by slot, input and output shapes: copied out of the graph. */
G_GNUC_INTERNAL gboolean prepare_describe_io (MorokProgramBuilder *b, MorokSymPool *pool,
                                              const MorokSchedule *sched, guint n_inputs,
                                              GError **error);
/* The steps: each kernel's function @fns[k] with its binding table. */
G_GNUC_INTERNAL void prepare_add_steps (MorokProgramBuilder *b, const MorokSchedule *sched,
                                        const MorokPlanOptions *opts, MorokKernelFn *fns);

G_END_DECLS
