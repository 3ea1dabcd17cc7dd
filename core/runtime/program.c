/* SPDX-License-Identifier: MIT */
/* Programs: built once from plain facts (morok-program-builder.h), then
 * shared by their contexts, reference-counted and never changed. */
#define G_LOG_DOMAIN "morok-runtime"
#include "runtime/program-private.h"
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

struct _MorokProgramBuilder
{
  MorokProgram *program;
  guint8 *reserved; /* morok_program_builder_reserve_constants' block, what is left of it */
  gsize reserved_left;
};

static void
aligned_free (gpointer p)
{
  free (p);
}

typedef struct
{
  gpointer p;
  gsize bytes;
} Mapping;

static void
mapping_clear (gpointer m)
{
  munmap (((Mapping *) m)->p, ((Mapping *) m)->bytes);
}

GArray *
morok_mapped_blocks_new (void)
{
  GArray *blocks = g_array_new (FALSE, FALSE, sizeof (Mapping));
  g_array_set_clear_func (blocks, mapping_clear);
  return blocks;
}

#ifndef MADV_POPULATE_WRITE /* Linux 5.14; older kernels refuse it, and the pages fault in */
#define MADV_POPULATE_WRITE 23
#endif
#define HUGE_PAGE ((gsize) 2 << 20)

gpointer
morok_mapped_block (GArray *blocks, gsize bytes, gboolean filled)
{
  /* a filled block starts on a huge page: the mapping's slack around it
   * is given back */
  gsize len = (bytes + 4095) / 4096 * 4096;
  gsize slack = filled && len >= HUGE_PAGE ? HUGE_PAGE - 4096 : 0;
  guint8 *m = mmap (NULL, len + slack, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED)
    return NULL;
  guint8 *at = slack ? (guint8 *) (((guintptr) m + slack) & ~(guintptr) (HUGE_PAGE - 1)) : m;
  if (at > m)
    munmap (m, at - m);
  if (m + slack > at)
    munmap (at + len, m + slack - at);
  if (filled)
    {
      /* advice only: where it is refused the pages fault in one by one */
      madvise (at, len, MADV_HUGEPAGE);
      madvise (at, len, MADV_POPULATE_WRITE);
    }
  g_array_append_val (blocks, ((Mapping){ at, len }));
  return at;
}

/* ---- the builder ---- */

MorokProgramBuilder *
morok_program_builder_new (guint n_buffers, guint n_vars)
{
  MorokProgram *p = g_new0 (MorokProgram, 1);
  g_atomic_ref_count_init (&p->ref);
  p->objects = g_ptr_array_new_with_free_func ((GDestroyNotify) morok_object_free);
  p->steps = g_array_new (FALSE, TRUE, sizeof (MorokStep));
  p->bindings = g_array_new (FALSE, FALSE, sizeof (guint));
  p->n_bufs = n_buffers;
  p->buffers = g_new0 (MorokProgramBuffer, MAX (n_buffers, 1));
  p->n_vars = n_vars;
  p->vars = g_new0 (MorokProgramVar, MAX (n_vars, 1));
  p->inputs = g_array_new (FALSE, TRUE, sizeof (MorokProgramIO));
  p->outputs = g_array_new (FALSE, TRUE, sizeof (MorokProgramIO));
  p->shape_code = g_array_new (FALSE, FALSE, sizeof (MorokShapeInstr));
  p->owned = g_ptr_array_new_with_free_func (aligned_free);
  p->mapped = morok_mapped_blocks_new ();
  MorokProgramBuilder *b = g_new0 (MorokProgramBuilder, 1);
  b->program = p;
  return b;
}

void
morok_program_builder_free (MorokProgramBuilder *b)
{
  if (!b)
    return;
  morok_program_unref (b->program);
  g_free (b);
}

void
morok_program_builder_set_var (MorokProgramBuilder *b, guint slot, const char *name, gint64 min,
                               gint64 max)
{
  g_return_if_fail (b != NULL && slot < b->program->n_vars && name != NULL && min <= max);
  MorokProgramVar *v = &b->program->vars[slot];
  g_free (v->name);
  *v = (MorokProgramVar){ g_strdup (name), min, max };
}

static MorokProgramBuffer *
buffer_at (MorokProgramBuilder *b, guint buffer)
{
  g_return_val_if_fail (b != NULL && buffer < b->program->n_bufs, NULL);
  return &b->program->buffers[buffer];
}

void
morok_program_builder_buffer_extern (MorokProgramBuilder *b, guint buffer, gconstpointer data)
{
  MorokProgramBuffer *pb = buffer_at (b, buffer);
  if (pb)
    *pb = (MorokProgramBuffer){ .place = MOROK_PLACE_CONSTANT, .data = (gpointer) data };
}

/* 64-byte aligned and zeroed, or NULL. */
static gpointer
alloc_aligned (gsize bytes)
{
  gpointer p = aligned_alloc (64, morok_round_64 (bytes));
  if (p)
    memset (p, 0, morok_round_64 (bytes));
  return p;
}

gboolean
morok_program_builder_reserve_constants (MorokProgramBuilder *b, gsize bytes, guint n)
{
  g_return_val_if_fail (b != NULL && b->reserved == NULL, FALSE);
  if (n == 0)
    return TRUE;
  bytes += (gsize) n * 64; /* what rounding each up to morok_round_64 can add */
  b->reserved = morok_mapped_block (b->program->mapped, bytes, TRUE);
  b->reserved_left = b->reserved ? bytes : 0;
  return b->reserved != NULL;
}

gpointer
morok_program_builder_buffer_constant (MorokProgramBuilder *b, guint buffer, gsize bytes)
{
  MorokProgramBuffer *pb = buffer_at (b, buffer);
  if (!pb)
    return NULL;
  gpointer data;
  if (morok_round_64 (bytes) <= b->reserved_left)
    {
      data = b->reserved;
      b->reserved += morok_round_64 (bytes);
      b->reserved_left -= morok_round_64 (bytes);
    }
  else if (bytes >= MOROK_MAP_MIN)
    data = morok_mapped_block (b->program->mapped, bytes, TRUE);
  else if ((data = alloc_aligned (bytes)))
    g_ptr_array_add (b->program->owned, data);
  *pb = (MorokProgramBuffer){ .place = MOROK_PLACE_CONSTANT, .bytes = bytes, .data = data };
  return data;
}

void
morok_program_builder_buffer_arena (MorokProgramBuilder *b, guint buffer, gsize offset, gsize bytes)
{
  MorokProgramBuffer *pb = buffer_at (b, buffer);
  if (pb)
    *pb = (MorokProgramBuffer){ .place = MOROK_PLACE_ARENA, .bytes = bytes, .offset = offset };
}

void
morok_program_builder_set_arena (MorokProgramBuilder *b, gsize bytes)
{
  g_return_if_fail (b != NULL);
  b->program->arena_bytes = bytes;
}

void
morok_program_builder_buffer_context (MorokProgramBuilder *b, guint buffer, gsize bytes)
{
  MorokProgramBuffer *pb = buffer_at (b, buffer);
  if (pb)
    *pb = (MorokProgramBuffer){ .place = MOROK_PLACE_CONTEXT, .bytes = bytes };
}

void
morok_program_builder_buffer_scratch (MorokProgramBuilder *b, guint buffer, gsize bytes)
{
  MorokProgramBuffer *pb = buffer_at (b, buffer);
  g_return_if_fail (bytes >= 64);
  if (pb)
    *pb = (MorokProgramBuffer){ .place = MOROK_PLACE_SCRATCH, .bytes = bytes };
}

void
morok_program_builder_keep (MorokProgramBuilder *b, gpointer block)
{
  g_return_if_fail (b != NULL);
  g_ptr_array_add (b->program->owned, block);
}

void
morok_program_builder_add_packed_bytes (MorokProgramBuilder *b, gsize bytes)
{
  g_return_if_fail (b != NULL);
  b->program->packed_bytes += bytes;
}

void
morok_program_builder_add_input (MorokProgramBuilder *b, guint buffer, MorokDType dtype, guint rank,
                                 const gint64 *shape)
{
  g_return_if_fail (b != NULL && buffer < b->program->n_bufs && rank <= MOROK_MAX_RANK);
  MorokProgramIO io = { .buffer = buffer, .dtype = dtype, .rank = rank };
  memcpy (io.shape, shape, rank * sizeof *shape);
  g_array_append_val (b->program->inputs, io);
}

/* The stack depth @code reaches, or -1 if it pops an empty stack or
 * leaves other than @rank values. */
static gint
shape_code_depth (const MorokShapeInstr *code, guint n_code, guint rank)
{
  gint depth = 0, deepest = 0;
  for (guint i = 0; i < n_code; i++)
    {
      depth += code[i].op <= MOROK_SHAPE_VAR ? 1 : -1;
      if (depth < 1)
        return -1;
      deepest = MAX (deepest, depth);
    }
  return depth == (gint) rank ? deepest : -1;
}

gboolean
morok_program_builder_add_output (MorokProgramBuilder *b, guint buffer, MorokDType dtype,
                                  guint rank, const gint64 *max_shape, const MorokShapeInstr *code,
                                  guint n_code)
{
  g_return_val_if_fail (b != NULL && buffer < b->program->n_bufs && rank <= MOROK_MAX_RANK, FALSE);
  gint depth = shape_code_depth (code, n_code, rank);
  if (depth < 0 || depth > MOROK_SHAPE_STACK)
    return FALSE;
  MorokProgram *p = b->program;
  MorokProgramIO io = {
    .buffer = buffer, .dtype = dtype, .rank = rank, .code = p->shape_code->len, .n_code = n_code
  };
  memcpy (io.shape, max_shape, rank * sizeof *max_shape);
  g_array_append_vals (p->shape_code, code, n_code);
  g_array_append_val (p->outputs, io);
  for (guint i = 0; i < n_code; i++)
    p->dynamic_shapes = p->dynamic_shapes || code[i].op == MOROK_SHAPE_VAR;
  return TRUE;
}

void
morok_program_builder_add_step (MorokProgramBuilder *b, MorokKernelFn fn, const guint *bindings,
                                guint n_bindings, guint nthreads, gboolean shared_tasks,
                                const char *name, double flops, double bytes)
{
  g_return_if_fail (b != NULL && fn != NULL && name != NULL && (n_bindings == 0 || bindings));
  for (guint i = 0; i < n_bindings; i++)
    g_return_if_fail (bindings[i] < b->program->n_bufs);
  MorokStep s
      = { fn,   b->program->bindings->len, MAX (nthreads, 1), shared_tasks, g_strdup (name), flops,
          bytes };
  g_array_append_vals (b->program->bindings, bindings, n_bindings);
  g_array_append_val (b->program->steps, s);
}

void
morok_program_builder_add_object (MorokProgramBuilder *b, MorokObject *object)
{
  g_return_if_fail (b != NULL && object != NULL);
  g_ptr_array_add (b->program->objects, object);
}

MorokProgram *
morok_program_builder_finish (MorokProgramBuilder *b)
{
  g_return_val_if_fail (b != NULL, NULL);
  for (guint i = 0; i < b->program->n_bufs; i++)
    g_return_val_if_fail (b->program->buffers[i].place != MOROK_PLACE_NONE /* unplaced */, NULL);
  MorokProgram *p = b->program;
  g_autoptr (GHashTable) fns = g_hash_table_new (NULL, NULL);
  for (guint i = 0; i < p->steps->len; i++)
    g_hash_table_add (fns, g_array_index (p->steps, MorokStep, i).fn);
  p->n_functions = g_hash_table_size (fns);
  g_free (b);
  return p;
}

/* ---- the program ---- */

MorokProgram *
morok_program_ref (MorokProgram *program)
{
  g_return_val_if_fail (program != NULL, NULL);
  g_atomic_ref_count_inc (&program->ref);
  return program;
}

void
morok_program_unref (MorokProgram *program)
{
  if (!program || !g_atomic_ref_count_dec (&program->ref))
    return;
  for (guint i = 0; i < program->steps->len; i++)
    g_free (g_array_index (program->steps, MorokStep, i).name);
  g_array_unref (program->steps);
  g_array_unref (program->bindings);
  for (guint i = 0; i < program->n_vars; i++)
    g_free (program->vars[i].name);
  g_free (program->vars);
  g_free (program->buffers);
  g_array_unref (program->inputs);
  g_array_unref (program->outputs);
  g_array_unref (program->shape_code);
  g_ptr_array_unref (program->owned);
  g_array_unref (program->mapped);
  g_ptr_array_unref (program->objects);
  g_free (program);
}

guint
morok_program_n_inputs (const MorokProgram *program)
{
  return program->inputs->len;
}

guint
morok_program_n_outputs (const MorokProgram *program)
{
  return program->outputs->len;
}

guint
morok_program_n_steps (const MorokProgram *program)
{
  return program->steps->len;
}

guint
morok_program_n_functions (const MorokProgram *program)
{
  return program->n_functions;
}

gsize
morok_program_arena_bytes (const MorokProgram *program)
{
  return program->arena_bytes;
}

gsize
morok_program_context_bytes (const MorokProgram *program, gsize *out_scratch)
{
  g_return_val_if_fail (program != NULL, 0);
  gsize total = program->arena_bytes, scratch = 0;
  for (guint i = 0; i < program->n_bufs; i++)
    if (program->buffers[i].place == MOROK_PLACE_SCRATCH)
      scratch += program->buffers[i].bytes;
    else if (program->buffers[i].place == MOROK_PLACE_CONTEXT)
      total += program->buffers[i].bytes;
  if (out_scratch)
    *out_scratch = scratch;
  return total + scratch;
}

gsize
morok_program_packed_bytes (const MorokProgram *program)
{
  return program->packed_bytes;
}

guint
morok_program_n_vars (const MorokProgram *program)
{
  return program->n_vars;
}

gint
morok_program_var_slot (const MorokProgram *program, const char *name)
{
  g_return_val_if_fail (program != NULL, -1);
  for (guint s = 0; name && s < program->n_vars; s++)
    if (g_strcmp0 (program->vars[s].name, name) == 0)
      return (gint) s;
  return -1;
}

const char *
morok_program_var (const MorokProgram *program, guint slot, gint64 *out_min, gint64 *out_max)
{
  g_return_val_if_fail (program != NULL && slot < program->n_vars, NULL);
  if (out_min)
    *out_min = program->vars[slot].min;
  if (out_max)
    *out_max = program->vars[slot].max;
  return program->vars[slot].name;
}

/* ---- shape programs ---- */

static gint64
floor_div (gint64 a, gint64 b)
{
  gint64 q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

void
morok_program_eval_shape (const MorokProgram *program, const MorokProgramIO *io, const gint64 *vars,
                          gint64 *out)
{
  const MorokShapeInstr *code = &g_array_index (program->shape_code, MorokShapeInstr, io->code);
  gint64 stack[MOROK_SHAPE_STACK];
  guint top = 0;
  for (guint i = 0; i < io->n_code; i++)
    {
      gint64 a, b;
      switch (code[i].op)
        {
        case MOROK_SHAPE_CONST: stack[top++] = code[i].arg; continue;
        case MOROK_SHAPE_VAR: stack[top++] = vars[code[i].arg]; continue;
        default: b = stack[--top]; a = stack[top - 1];
        }
      switch (code[i].op)
        {
        case MOROK_SHAPE_ADD: a += b; break;
        case MOROK_SHAPE_MUL: a *= b; break;
        case MOROK_SHAPE_DIV: a = floor_div (a, b); break;
        case MOROK_SHAPE_MOD: a -= floor_div (a, b) * b; break;
        case MOROK_SHAPE_MIN: a = MIN (a, b); break;
        default: a = MAX (a, b);
        }
      stack[top - 1] = a;
    }
  memcpy (out, stack, io->rank * sizeof *out);
}
