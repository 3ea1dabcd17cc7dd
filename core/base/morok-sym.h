/* SPDX-License-Identifier: MIT */
/* Symbolic integers: tensor dimensions as small expressions over variables.
 *
 * A MorokVariable has a name and bounds [min, max]; a MorokSym is an
 * expression (+, *, floor division, modulo, min, max) over variables and
 * constants. Every sym knows its own bounds by interval arithmetic, is
 * simplified when it is made, and is hash-consed in its pool, so two equal
 * expressions built the same way are the same pointer. Buffers are sized at
 * the upper bounds; kernels receive the variables' values as arguments.
 *
 *   g_autoptr (MorokSymPool) pool = morok_sym_pool_new ();
 *   MorokVariable *t = morok_variable_new (pool, "t", 1, 3000);
 *   const MorokSym *frames = morok_sym_add_c (morok_sym_div_c (morok_sym_var (t), 2), 1);
 *   morok_sym_hi (frames);                        // 1501
 *   gint64 v[] = { 100 };
 *   morok_sym_eval (frames, v);                   // 51
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct _MorokSymPool MorokSymPool;
typedef struct _MorokSym MorokSym;
typedef struct _MorokVariable MorokVariable;

typedef enum
{
  MOROK_SYM_CONST,
  MOROK_SYM_VAR,
  MOROK_SYM_ADD,
  MOROK_SYM_MUL,
  MOROK_SYM_DIV, /* floor division by a positive divisor */
  MOROK_SYM_MOD, /* remainder of floor division by a positive divisor */
  MOROK_SYM_MIN,
  MOROK_SYM_MAX,
} MorokSymOp;

struct _MorokVariable
{
  char *name;
  gint64 min, max; /* inclusive bounds */
  guint slot;      /* index into the vars array kernels receive */
  MorokSymPool *pool;
};

struct _MorokSym
{
  MorokSymOp op;
  gint64 value;       /* MOROK_SYM_CONST */
  MorokVariable *var; /* MOROK_SYM_VAR */
  const MorokSym *a, *b;
  gint64 lo, hi; /* bounds over every value the variables may take */
  MorokSymPool *pool;
  guint id; /* creation order; orders commutative operands */
};

/* ---- pool ---- */
MorokSymPool *morok_sym_pool_new (void);
void morok_sym_pool_free (MorokSymPool *pool);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (MorokSymPool, morok_sym_pool_free)

/* A new variable with bounds [min, max]; (transfer none), owned by the pool.
 * Slots are given in creation order. Returns NULL if min > max or min < 0. */
MorokVariable *morok_variable_new (MorokSymPool *pool, const char *name, gint64 min, gint64 max);
guint morok_sym_pool_n_variables (const MorokSymPool *pool);
MorokVariable *morok_sym_pool_variable (const MorokSymPool *pool, guint slot);

/* ---- construction (all results owned by the pool of the operands) ---- */
const MorokSym *morok_sym_const (MorokSymPool *pool, gint64 value);
const MorokSym *morok_sym_var (MorokVariable *var);
const MorokSym *morok_sym_add (const MorokSym *a, const MorokSym *b);
const MorokSym *morok_sym_sub (const MorokSym *a, const MorokSym *b);
const MorokSym *morok_sym_mul (const MorokSym *a, const MorokSym *b);
/* floor (a / b); b must be >= 1 over its bounds, else NULL. */
const MorokSym *morok_sym_div (const MorokSym *a, const MorokSym *b);
const MorokSym *morok_sym_mod (const MorokSym *a, const MorokSym *b);
const MorokSym *morok_sym_min (const MorokSym *a, const MorokSym *b);
const MorokSym *morok_sym_max (const MorokSym *a, const MorokSym *b);
const MorokSym *morok_sym_add_c (const MorokSym *a, gint64 c);
const MorokSym *morok_sym_mul_c (const MorokSym *a, gint64 c);
const MorokSym *morok_sym_div_c (const MorokSym *a, gint64 c);

/* ---- queries ---- */
gboolean morok_sym_is_const (const MorokSym *s, gint64 *out_value);
static inline gint64
morok_sym_lo (const MorokSym *s)
{
  return s->lo;
}
static inline gint64
morok_sym_hi (const MorokSym *s)
{
  return s->hi;
}
/* Value for the variables' values @vars (indexed by slot). */
gint64 morok_sym_eval (const MorokSym *s, const gint64 *vars);
/* Appends C source for @s; variables are printed with @var_format, which takes
 * the slot (e.g. "v[%u]"), or by name when @var_format is NULL. */
void morok_sym_render (const MorokSym *s, GString *out, const char *var_format);
/* Human-readable form, for messages. (transfer full) */
char *morok_sym_to_string (const MorokSym *s);

G_END_DECLS
