/* SPDX-License-Identifier: MIT */
/* The scheduler: from a rewritten graph to kernels and buffers.
 *
 *   g_autoptr (MorokSchedule) s = morok_schedule_new (&out, 1, inputs, n_inputs, &error);
 *   for (guint k = 0; k < s->kernels->len; k++)
 *     {
 *       const MorokScheduleKernel *ker = &g_array_index (s->kernels, MorokScheduleKernel, k);
 *       // ker->root is stored in buffer morok_schedule_buffer_of (s, ker->root) - 1
 *     }
 *
 * A node is "realized" when its value is stored in a buffer; every other
 * node is recomputed inline, inside the kernel of the realized node that
 * reads it. The fusion decisions (graph/schedule.c) are:
 *  - leaves (INPUT, WEIGHT) are buffers, outputs are realized;
 *  - an element-wise or view node is inlined into its consumers, unless it
 *    is computed (not a view) and read by more than one node, or it is a
 *    reflect pad that another reflect pad reads through inlined views; one
 *    read by several element-wise or reduction nodes whose stored sources
 *    all but one broadcast (x - mean) is inlined all the same;
 *  - a reduction is inlined (as a loop) only when it reaches its kernel's
 *    root through element-wise ops alone, so it runs once per output element;
 *    otherwise the end of the element-wise chain after it is realized, and
 *    the reduction inlined there (or, with no chain, realized itself);
 *  - a matmul is a kernel of its own, whose element-wise consumers (bias,
 *    activation, residual, scale) are fused in as an epilogue when it reaches
 *    them through element-wise ops alone; its operands must be strided views
 *    (permute, expand, shrink, window, compatible reshape) of buffers, and an
 *    operand that is not is realized first (e.g. the im2col of a conv);
 *  - an attention node is a kernel of its own, with strided operands as a
 *    matmul's: the scores never reach memory; so is a DFT magnitude.
 * Intermediate buffers share one arena, placed by liveness, sized at the
 * variables' upper bounds. */
#pragma once

#include "graph/morok-graph.h"

G_BEGIN_DECLS

typedef enum
{
  MOROK_BUFFER_INPUT,   /* owned by the plan, written by the caller */
  MOROK_BUFFER_OUTPUT,  /* owned by the plan, read by the caller */
  MOROK_BUFFER_WEIGHT,  /* the model's host data, used in place */
  MOROK_BUFFER_TEMP,    /* a slice of the arena */
  MOROK_BUFFER_PACKED,  /* a WEIGHT operand of matmuls in the GEMM's panels, made at prepare */
  MOROK_BUFFER_SCRATCH, /* working memory of products with packed weights (AMX: A laid out
                         * in tiles; f32, f16: blocks of C before the epilogue), a slice per
                         * thread, then (its last 64 bytes) the counter through which the
                         * threads of a step share its tasks */
} MorokBufferKind;

/* PACKED buffers: B [k, n] read from buffer `source` at offset + k*sbk + n*sbn,
 * in panels of nr columns for products in `format` (kernels/weight-pack.h). */
typedef struct
{
  guint source;
  gint64 offset, k, n, sbk, sbn;
  guint nr;
  MorokPrecision format;
} MorokPacking;

typedef struct
{
  MorokBufferKind kind;
  MorokNode *node;   /* the value it holds (contiguous, row-major, actual shape) */
  gsize bytes;       /* at the variables' upper bounds */
  gsize offset;      /* TEMP: byte offset in the arena */
  gint first, last;  /* index of the kernel that writes it / that reads it last */
  MorokPacking pack; /* PACKED only */
} MorokScheduleBuffer;

typedef enum
{
  MOROK_KERNEL_LOOP,      /* a loop nest over the root's shape (with inline reductions) */
  MOROK_KERNEL_MATMUL,    /* a contraction, then the root as its epilogue */
  MOROK_KERNEL_ATTENTION, /* the root is an ATTENTION node (softmax (q.k) v in one pass) */
  MOROK_KERNEL_DFT,       /* the root is a DFT_MAG node (an FFT of 16 frames at a time) */
} MorokKernelKind;

typedef struct
{
  MorokKernelKind kind;
  MorokNode *root;       /* the value this kernel writes */
  MorokNode *matmul;     /* MATMUL kernels: the contraction the epilogue reads */
  guint out;             /* buffer of root */
  GArray *reads;         /* guint buffer indices read, no duplicates */
  guint packed_b;        /* MATMUL: buffer index + 1 of B packed, 0 if B is read as it is */
  guint scratch;         /* buffer index + 1 of the plan's SCRATCH, 0 if it uses none */
  gsize scratch_stride;  /* bytes of it per thread (thread tid's at tid * stride) */
  gboolean shared_tasks; /* its threads take tasks from the scratch's counter in turn */
  double flops, bytes;   /* estimates at the upper bounds */
} MorokScheduleKernel;

/* A strided view of a buffer: element (i0, i1, ...) of the view is element
 * offset + sum i_k * stride[k] of the base's buffer. */
typedef struct
{
  MorokNode *base;
  const MorokSym *offset;
  const MorokSym *stride[MOROK_MAX_RANK];
} MorokStrided;

typedef struct
{
  GArray *buffers;          /* MorokScheduleBuffer: inputs first, in the order given */
  GArray *kernels;          /* MorokScheduleKernel, in execution order */
  GHashTable *buffer_of;    /* MorokNode* -> GUINT_TO_POINTER (buffer index + 1) */
  guint *outputs;           /* buffer index of each output */
  MorokNode **output_nodes; /* each output as asked for (its shape is the plan's) */
  guint n_outputs;
  gsize arena_bytes;
} MorokSchedule;

/* Schedules the graph that computes @outputs from @inputs (INPUT nodes, which
 * get buffers 0 .. n_inputs - 1 even if unused). (transfer full) */
MorokSchedule *morok_schedule_new (MorokNode *const *outputs, guint n_outputs,
                                   MorokNode *const *inputs, guint n_inputs, GError **error);
void morok_schedule_free (MorokSchedule *sched);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (MorokSchedule, morok_schedule_free)

/* Buffer index + 1 of a realized node, 0 if it is computed inline. */
guint morok_schedule_buffer_of (const MorokSchedule *sched, const MorokNode *node);
/* Whether a step of @ker may be split over the pool's threads: estimated
 * at 4 MFLOP or 1 MiB moved and more. Below, it runs on the calling thread
 * (handing a step to the pool costs a few µs when a worker is spinning and
 * tens of µs when it sleeps, about what 4 MFLOP take on one core). */
gboolean morok_schedule_kernel_splits (const MorokScheduleKernel *ker);
/* @node as a strided view of a realized node; FALSE if it is not one. */
gboolean morok_schedule_strided (const MorokSchedule *sched, MorokNode *node, MorokStrided *out);

/* Follows view ops down from @node while they stay strided; stops at a node
 * for which @realized says TRUE (or a leaf). On failure *stop is the node
 * that is not strided: a computed node or a PAD, CAT or merging reshape. */
gboolean morok_strided_walk (MorokNode *node, gboolean (*realized) (MorokNode *n, gpointer ctx),
                             gpointer ctx, MorokStrided *out, MorokNode **stop);

G_END_DECLS
