/* SPDX-License-Identifier: MIT */
/* Building a MorokProgram: what prepare (core/prepare) hands the runtime.
 *
 * The builder takes plain facts, nothing of the graph: how many buffers and
 * where each lives (constant memory of the program, a slice of each
 * context's arena, a block of each context's own), the variables' names and
 * bounds by slot, the steps in order, and each output's shape as a short
 * postfix program over the variable slots (MorokShapeInstr), which a
 * context evaluates after each execute.
 *
 *   g_autoptr (MorokProgramBuilder) b = morok_program_builder_new (2, 1);
 *   morok_program_builder_set_var (b, 0, "t", 1, 100);
 *   morok_program_builder_buffer_context (b, 0, 100 * 16 * 4);          // input [t, 16]
 *   morok_program_builder_buffer_context (b, 1, 100 * 16 * 4);          // output
 *   morok_program_builder_add_input (b, 0, MOROK_DTYPE_F32, 2, (gint64[]){ 100, 16 });
 *   static const MorokShapeInstr shape[] = { { MOROK_SHAPE_VAR, 0 }, { MOROK_SHAPE_CONST, 16 } };
 *   morok_program_builder_add_output (b, 1, MOROK_DTYPE_F32, 2, (gint64[]){ 100, 16 }, shape, 2);
 *   morok_program_builder_add_step (b, fn, (guint[]){ 1, 0 }, 2, 1, FALSE, "k0 mul f32[t, 16]",
 *                                   1600, 12800);   // fn's bufs[0] is buffer 1, bufs[1] buffer 0
 *   morok_program_builder_add_object (b, g_steal_pointer (&object));
 *   MorokProgram *program = morok_program_builder_finish (g_steal_pointer (&b));
 */
#pragma once

#include "runtime/morok-runtime.h"

G_BEGIN_DECLS

/* One instruction of a shape program: CONST and VAR push a value (the
 * constant, the variable in slot `arg`), the others pop b, then a, and push
 * a op b. DIV and MOD are floor division and its remainder (b >= 1). */
typedef enum
{
  MOROK_SHAPE_CONST,
  MOROK_SHAPE_VAR,
  MOROK_SHAPE_ADD,
  MOROK_SHAPE_MUL,
  MOROK_SHAPE_DIV,
  MOROK_SHAPE_MOD,
  MOROK_SHAPE_MIN,
  MOROK_SHAPE_MAX,
} MorokShapeOp;

typedef struct
{
  MorokShapeOp op;
  gint64 arg;
} MorokShapeInstr;

/* The deepest stack a shape program may need. */
#define MOROK_SHAPE_STACK 32

typedef struct _MorokProgramBuilder MorokProgramBuilder;

/* A program of @n_buffers buffers (every one placed before finish) and
 * @n_vars variables (slots 0 .. n_vars - 1). (transfer full) */
MorokProgramBuilder *morok_program_builder_new (guint n_buffers, guint n_vars);
/* Frees what was given to the builder (object, kept memory); NULL is a no-op. */
void morok_program_builder_free (MorokProgramBuilder *b);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (MorokProgramBuilder, morok_program_builder_free)

/* Variable @slot: @name is copied; contexts start it at @max. */
void morok_program_builder_set_var (MorokProgramBuilder *b, guint slot, const char *name,
                                    gint64 min, gint64 max);

/* ---- where each buffer lives ---- */
/* Constant memory outside the program (a model's weight); it must outlive it. */
void morok_program_builder_buffer_extern (MorokProgramBuilder *b, guint buffer, gconstpointer data);
/* Constant memory of the program: @bytes, 64-byte aligned and zeroed, for
 * the caller to fill before finish (packed weights). (transfer none) NULL
 * when out of memory. */
gpointer morok_program_builder_buffer_constant (MorokProgramBuilder *b, guint buffer, gsize bytes);
/* Makes the next @n buffer_constant calls, of @bytes in all, share one
 * block, mapped in huge pages and made resident at once: a prepare that
 * writes hundreds of MB of panels spent more on faulting their pages in
 * one at a time than on packing (GigaAM f32). Call it once,
 * before them; a constant past the reservation gets memory of its own.
 * FALSE when out of memory. */
gboolean morok_program_builder_reserve_constants (MorokProgramBuilder *b, gsize bytes, guint n);
/* @bytes at @offset of each context's arena of morok_program_builder_set_arena bytes. */
void morok_program_builder_buffer_arena (MorokProgramBuilder *b, guint buffer, gsize offset,
                                         gsize bytes);
void morok_program_builder_set_arena (MorokProgramBuilder *b, gsize bytes);
/* @bytes of each context's own, 64-byte aligned, zeroed when the context is made. */
void morok_program_builder_buffer_context (MorokProgramBuilder *b, guint buffer, gsize bytes);
/* As buffer_context; its last 64 bytes hold the counter of steps whose
 * threads share their tasks (zeroed before each such step). */
void morok_program_builder_buffer_scratch (MorokProgramBuilder *b, guint buffer, gsize bytes);
/* Memory from malloc or aligned_alloc that the program frees (folded weights). */
void morok_program_builder_keep (MorokProgramBuilder *b, gpointer block);
/* Adds to morok_program_packed_bytes. */
void morok_program_builder_add_packed_bytes (MorokProgramBuilder *b, gsize bytes);

/* ---- inputs, outputs, steps ---- */
/* The next input: context buffer @buffer, of @shape (its upper bounds). */
void morok_program_builder_add_input (MorokProgramBuilder *b, guint buffer, MorokDType dtype,
                                      guint rank, const gint64 *shape);
/* The next output: buffer @buffer, at most @max_shape; @code (copied) leaves
 * its @rank dims on the stack, first dim deepest. FALSE (and no output) if
 * the code needs more than MOROK_SHAPE_STACK values or leaves other than
 * @rank. */
gboolean morok_program_builder_add_output (MorokProgramBuilder *b, guint buffer, MorokDType dtype,
                                           guint rank, const gint64 *max_shape,
                                           const MorokShapeInstr *code, guint n_code);
/* The next step: @fn on up to @nthreads threads, called with its binding
 * table: bufs[i] is buffer @bindings[i] (copied) of the context; @name is
 * copied. Steps of one computation over other buffers share their @fn. */
void morok_program_builder_add_step (MorokProgramBuilder *b, MorokKernelFn fn,
                                     const guint *bindings, guint n_bindings, guint nthreads,
                                     gboolean shared_tasks, const char *name, double flops,
                                     double bytes);
/* An object some steps' functions live in; the program frees it. */
void morok_program_builder_add_object (MorokProgramBuilder *b, MorokObject *object);

/* The program (transfer full); frees @b. */
MorokProgram *morok_program_builder_finish (MorokProgramBuilder *b);

G_END_DECLS
