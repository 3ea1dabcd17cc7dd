/* SPDX-License-Identifier: MIT */
/* A program's insides, shared by the runtime's own files (program.c,
 * context.c); nothing outside core/runtime includes it. */
#pragma once

#include "runtime/morok-program-builder.h"
#include "base/cache-line.h"

typedef struct
{
  MorokKernelFn fn;
  guint binding; /* its table: program->bindings from here, one per slot */
  guint nthreads;
  gboolean shared_tasks; /* the task counter is zeroed before it runs */
  char *name;
  double flops, bytes;
} MorokStep;

typedef enum
{
  MOROK_PLACE_NONE,     /* not placed yet */
  MOROK_PLACE_CONSTANT, /* program memory (data) */
  MOROK_PLACE_ARENA,    /* offset into each context's arena */
  MOROK_PLACE_CONTEXT,  /* each context's own block of bytes */
  MOROK_PLACE_SCRATCH,  /* as CONTEXT, with the task counter in its last 64 bytes */
} MorokPlace;

typedef struct
{
  MorokPlace place;
  gsize bytes, offset;
  gpointer data; /* CONSTANT */
} MorokProgramBuffer;

typedef struct
{
  char *name;
  gint64 min, max;
} MorokProgramVar;

typedef struct
{
  guint buffer;
  MorokDType dtype;
  guint rank;
  gint64 shape[MOROK_MAX_RANK]; /* upper bounds */
  guint code, n_code;           /* outputs: the shape program in shape_code */
} MorokProgramIO;

struct _MorokProgram
{
  gatomicrefcount ref;
  GPtrArray *objects; /* MorokObject: own the kernels' code */
  GArray *steps;      /* MorokStep */
  GArray *bindings;   /* guint: the steps' tables of buffer indices, back to back */
  guint n_functions;  /* distinct functions of the steps */
  MorokProgramBuffer *buffers;
  guint n_bufs;
  gsize arena_bytes;
  gsize packed_bytes;
  MorokProgramVar *vars;
  guint n_vars;
  GArray *inputs, *outputs; /* MorokProgramIO */
  GArray *shape_code;       /* MorokShapeInstr */
  gboolean dynamic_shapes;  /* some output's shape reads a variable */
  GPtrArray *owned;         /* constant memory, freed with the program */
  GArray *mapped;           /* large constant memory: morok_mapped_blocks */
};

/* Memory blocks from MOROK_MAP_MIN bytes on are mapped: zero pages the
 * kernel provides on first touch, so nobody spends time zeroing them (a
 * context costs no time for its size when made, packed panels are
 * written once) and they are resident only where touched. */
#define MOROK_MAP_MIN ((gsize) 1 << 20)
/* A set of mapped blocks, unmapped when it is unreffed. (transfer full) */
GArray *morok_mapped_blocks_new (void);
/* A new zeroed, page-aligned block of @bytes in @blocks; NULL when out of
 * memory. @filled: the caller writes all of it at once (a program's packed
 * panels and copied weights): the block is asked for huge pages and
 * populated in one call: faulted in page by page, first touches were most
 * of a warm GigaAM prepare (docs/benchmarks.md). */
gpointer morok_mapped_block (GArray *blocks, gsize bytes, gboolean filled);

/* Evaluates output @io's shape program over @vars into @out. */
void morok_program_eval_shape (const MorokProgram *program, const MorokProgramIO *io,
                               const gint64 *vars, gint64 *out);
