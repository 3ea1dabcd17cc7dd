/* SPDX-License-Identifier: MIT */
/* The plan's insides, for the code that builds it (prepare/prepare.c). */
#pragma once

#include "runtime/morok-runtime.h"

typedef struct
{
  MorokKernelFn fn;
  guint nthreads;
  gboolean shared_tasks; /* the task counter is zeroed before it runs */
  char *name;
  double flops, bytes;
} MorokStep;

typedef struct
{
  guint buffer;                          /* index into bufs */
  guint rank;
  const MorokSym *shape[MOROK_MAX_RANK]; /* evaluated after each execute */
} MorokPlanOutput;

struct _MorokPlan
{
  MorokGraph *graph;   /* owns the syms the shapes refer to */
  MorokObject *object; /* owns the kernels' code */
  GArray *steps;       /* MorokStep */
  void **bufs;
  guint n_bufs;
  gpointer arena;
  GPtrArray *owned;    /* aligned allocations freed with the plan */
  GPtrArray *folded;   /* weights computed at prepare, 64-byte aligned (free) */
  MorokBuffer *inputs;
  guint n_inputs;
  MorokBuffer *outputs;
  MorokPlanOutput *out_info;
  guint n_outputs;
  gint64 *vars;        /* by slot */
  guint n_vars;
  gsize arena_bytes;
  gsize packed_bytes;  /* PACKED buffers */
  gint64 *task_counter; /* in the SCRATCH buffer's last 64 bytes, NULL without one */
};

/* 64-byte aligned, zeroed, freed with the plan. */
gpointer morok_plan_alloc (MorokPlan *plan, gsize bytes);
MorokPlan *morok_plan_new_empty (MorokGraph *graph);
