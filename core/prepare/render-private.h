/* SPDX-License-Identifier: MIT */
/* render-private.h (private to core/prepare): what the renderer's files
 * share. render-expr.c renders values and indices, render-kernels.c the
 * loop and attention kernels, render-matmul.c the contractions, renderer.c
 * the translation unit. */
#pragma once

#include "prepare/morok-renderer.h"

G_BEGIN_DECLS

/* Before the generated loops: clang does not unroll them. The row loops
 * of loop kernels (NO_UNROLL), the loops along a row, its elements or its
 * regions, and a matmul's epilogue (render_no_unroll: four vectors a step
 * where a step of four fits, one otherwise, as clang chose for them).
 * Their trip counts are mostly literals, and clang fully unrolled them,
 * every vector of a row of 768 spelled out, which cost more compile time
 * than anything else in a unit and nothing measurable at run time (Silero's
 * and GigaAM's plans run as fast either way). Reductions keep clang's choice (no compile time
 * to gain there). Per loop, not -fno-unroll-loops for the unit: that flag
 * also stops clang's own unrolling of the loops around the GEMM tiles (a
 * unit compiled without the kernel library holds the GEMM bodies) and the
 * four vectors a step of long loops (clang 14's output: one vector a step). */
#define NO_UNROLL "#pragma clang loop unroll(disable)"
#define NO_UNROLL_VECTOR "#pragma clang loop unroll(disable) interleave_count(4)"
#define NO_UNROLL_STEP 64 /* four vectors of 16 floats */

/* The pragma for a loop of @len iterations, < 0 where that is no constant */
static inline const char *
render_no_unroll (gint64 len)
{
  return len < 0 || len >= NO_UNROLL_STEP ? NO_UNROLL_VECTOR : NO_UNROLL;
}

/* @s's value, or -1 where it is no constant */
static inline gint64
render_const_len (const MorokSym *s)
{
  gint64 v;
  return morok_sym_is_const (s, &v) ? v : -1;
}

/* Iterations of an innermost loop for it to count as vectorised. */
#define VECTOR_MIN 8

typedef struct
{
  const MorokSchedule *sched;
  const MorokScheduleKernel *ker;
  GString *out;
  GPtrArray *scopes; /* GHashTable* "node@idx" -> temp name; innermost last */
  guint n_tmp;
  guint indent;
  gboolean vector;   /* in a loop clang vectorises: guarded loads (render_guarded) */
  gboolean mm_block; /* a matmul epilogue reads the contraction's block in scratch, not `out` */
  char *guard;       /* inside a padded or concatenated source: when its loads are in bounds */
  gboolean guarded;  /* a guarded load was rendered since render_loop_mark */
  GError **error;
} Ctx;

/* The C type a buffer of @t is stored as. */
G_GNUC_INTERNAL const char *render_storage_type (MorokDType t);
/* A symbolic integer as a C expression (variables read from v[slot]). */
G_GNUC_INTERNAL char *render_sym_c (const MorokSym *s);
/* Appends one line of code at the current indent. */
G_GNUC_INTERNAL void render_line (Ctx *c, const char *fmt, ...) G_GNUC_PRINTF (2, 3);
/* Around the header and body of an innermost loop: if the body has guarded
 * loads, render_loop_vectorise puts a pragma before the header that lets
 * clang vectorise it (render-expr.c). */
G_GNUC_INTERNAL gsize render_loop_mark (Ctx *c);
G_GNUC_INTERNAL void render_loop_vectorise (Ctx *c, gsize mark);
/* A loop scope: values computed inside are not reused outside. */
G_GNUC_INTERNAL void render_scope_push (Ctx *c);
G_GNUC_INTERNAL void render_scope_pop (Ctx *c);
/* The row-major flat index of @n at the multi-index @idx. */
G_GNUC_INTERNAL char *render_flat_index (const MorokNode *n, char **idx);
/* A constant of @t as an exact C literal. */
G_GNUC_INTERNAL char *render_literal (MorokDType t, double v);
/* The C expression of @n's value at the multi-index @idx (temporaries
 * declared as needed); NULL with c->error set. */
G_GNUC_INTERNAL char *render_value (Ctx *c, MorokNode *n, char **idx);
/* Stores @v as the kernel's output at @idx. */
G_GNUC_INTERNAL void render_store (Ctx *c, const MorokNode *root, char **idx, const char *v);
/* In a scope of its own: @value at @vidx, stored as @root's element at
 * @idx. FALSE (error set) when it cannot be rendered. */
G_GNUC_INTERNAL gboolean render_store_value (Ctx *c, const MorokNode *root, char **idx,
                                             MorokNode *value, char **vidx);
/* The kernel's buffer pointers, from its binding table bufs[]: slot 0 is
 * `out`, slot r + 1 is b<r + 1> (reads[r]), the scratch is last. */
G_GNUC_INTERNAL void render_declare_buffers (Ctx *c);
/* The slot (and b<slot> name) of buffer @buf, which the kernel reads. */
G_GNUC_INTERNAL guint render_buffer_slot (const Ctx *c, guint buf);
/* Decomposes the flat row number @row into idx[0 .. count-1] over @n's dims. */
G_GNUC_INTERNAL void render_split_rows (Ctx *c, const MorokNode *n, guint count, const char *row,
                                        char **idx);
/* The product of @n's first @count dims as C. */
G_GNUC_INTERNAL char *render_dims_product (const MorokNode *n, guint count);
/* The flat index of idx[0 .. count-1] over @n's first @count dims. */
G_GNUC_INTERNAL char *render_dims_flat (const MorokNode *n, guint count, char **idx);
/* Kernel bodies, one per kind: element-wise and reduction loops,
 * contractions (render-matmul.c), attention, DFT; FALSE with c->error set. */
G_GNUC_INTERNAL gboolean render_loop_kernel (Ctx *c);
G_GNUC_INTERNAL gboolean render_attention_kernel (Ctx *c);
G_GNUC_INTERNAL gboolean render_dft_kernel (Ctx *c);
G_GNUC_INTERNAL gboolean render_matmul_kernel (Ctx *c);

G_END_DECLS
