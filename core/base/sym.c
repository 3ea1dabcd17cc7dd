/* SPDX-License-Identifier: MIT */
/* Symbolic integers: construction with simplification, interval bounds,
 * hash-consing, evaluation and rendering to C. */
#define G_LOG_DOMAIN "morok-tensor"
#include "base/morok-sym.h"

struct _MorokSymPool
{
  GHashTable *syms;     /* MorokSym* -> itself, by structure */
  GPtrArray *variables; /* MorokVariable*, by slot */
  guint next_id;
};

static guint
sym_hash (gconstpointer p)
{
  const MorokSym *s = p;
  guint h = s->op * 2654435761u;
  h ^= (guint) s->value * 40503u ^ (guint) (s->value >> 32);
  h ^= GPOINTER_TO_UINT (s->var) * 31u ^ GPOINTER_TO_UINT (s->a) * 131u
       ^ GPOINTER_TO_UINT (s->b) * 8191u;
  return h;
}

static gboolean
sym_equal (gconstpointer pa, gconstpointer pb)
{
  const MorokSym *x = pa, *y = pb;
  return x->op == y->op && x->value == y->value && x->var == y->var && x->a == y->a && x->b == y->b;
}

static void
variable_free (gpointer p)
{
  MorokVariable *v = p;
  g_free (v->name);
  g_free (v);
}

MorokSymPool *
morok_sym_pool_new (void)
{
  MorokSymPool *pool = g_new0 (MorokSymPool, 1);
  pool->syms = g_hash_table_new_full (sym_hash, sym_equal, g_free, NULL);
  pool->variables = g_ptr_array_new_with_free_func (variable_free);
  return pool;
}

void
morok_sym_pool_free (MorokSymPool *pool)
{
  if (!pool)
    return;
  g_hash_table_unref (pool->syms);
  g_ptr_array_unref (pool->variables);
  g_free (pool);
}

MorokVariable *
morok_variable_new (MorokSymPool *pool, const char *name, gint64 min, gint64 max)
{
  g_return_val_if_fail (pool != NULL && name != NULL, NULL);
  g_return_val_if_fail (min >= 0 && min <= max, NULL);
  MorokVariable *v = g_new0 (MorokVariable, 1);
  v->name = g_strdup (name);
  v->min = min;
  v->max = max;
  v->slot = pool->variables->len;
  v->pool = pool;
  g_ptr_array_add (pool->variables, v);
  return v;
}

guint
morok_sym_pool_n_variables (const MorokSymPool *pool)
{
  return pool->variables->len;
}

MorokVariable *
morok_sym_pool_variable (const MorokSymPool *pool, guint slot)
{
  g_return_val_if_fail (slot < pool->variables->len, NULL);
  return g_ptr_array_index (pool->variables, slot);
}

/* Interns @key (filled on the stack) and returns the pool's copy. */
static const MorokSym *
intern (MorokSymPool *pool, MorokSym *key)
{
  MorokSym *found = g_hash_table_lookup (pool->syms, key);
  if (found)
    return found;
  MorokSym *s = g_memdup2 (key, sizeof *key);
  s->pool = pool;
  s->id = pool->next_id++;
  g_hash_table_add (pool->syms, s);
  return s;
}

static gint64
floor_div (gint64 a, gint64 b)
{
  gint64 q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

static gint64
floor_mod (gint64 a, gint64 b)
{
  return a - floor_div (a, b) * b;
}

const MorokSym *
morok_sym_const (MorokSymPool *pool, gint64 value)
{
  g_return_val_if_fail (pool != NULL, NULL);
  MorokSym key = { .op = MOROK_SYM_CONST, .value = value, .lo = value, .hi = value };
  return intern (pool, &key);
}

const MorokSym *
morok_sym_var (MorokVariable *var)
{
  g_return_val_if_fail (var != NULL, NULL);
  MorokSym key = { .op = MOROK_SYM_VAR, .var = var, .lo = var->min, .hi = var->max };
  return intern (var->pool, &key);
}

gboolean
morok_sym_is_const (const MorokSym *s, gint64 *out_value)
{
  if (s->op != MOROK_SYM_CONST)
    return FALSE;
  if (out_value)
    *out_value = s->value;
  return TRUE;
}

static gboolean
is_c (const MorokSym *s, gint64 c)
{
  return s->op == MOROK_SYM_CONST && s->value == c;
}

static const MorokSym *
make (MorokSymOp op, const MorokSym *a, const MorokSym *b, gint64 lo, gint64 hi)
{
  MorokSym key = { .op = op, .a = a, .b = b, .lo = lo, .hi = hi };
  return intern (a->pool, &key);
}

/* Commutative operations keep the constant on the right and otherwise order
 * operands by creation, so a + b and b + a intern to the same node. */
static void
order (const MorokSym **a, const MorokSym **b)
{
  if ((*a)->op == MOROK_SYM_CONST || ((*b)->op != MOROK_SYM_CONST && (*a)->id > (*b)->id))
    {
      const MorokSym *t = *a;
      *a = *b;
      *b = t;
    }
}

/* A sum as c + Σ coef·atom, where atoms are neither sums nor constant
 * multiples: building every sum from this form makes sums canonical, so
 * (t + 1) - t is 1 and a + (b + c) is (a + b) + c. */
#define LINEAR_MAX_TERMS 8
typedef struct
{
  const MorokSym *atom[LINEAR_MAX_TERMS];
  gint64 coef[LINEAR_MAX_TERMS];
  guint n;
  gint64 c;
} Linear;

static gboolean
linear_add (Linear *l, const MorokSym *s, gint64 k)
{
  if (s->op == MOROK_SYM_CONST)
    {
      l->c += k * s->value;
      return TRUE;
    }
  if (s->op == MOROK_SYM_ADD)
    return linear_add (l, s->a, k) && linear_add (l, s->b, k);
  if (s->op == MOROK_SYM_MUL && s->b->op == MOROK_SYM_CONST)
    return linear_add (l, s->a, k * s->b->value);
  for (guint i = 0; i < l->n; i++)
    if (l->atom[i] == s)
      {
        l->coef[i] += k;
        return TRUE;
      }
  if (l->n == LINEAR_MAX_TERMS)
    return FALSE;
  l->atom[l->n] = s;
  l->coef[l->n++] = k;
  return TRUE;
}

static const MorokSym *
linear_build (MorokSymPool *pool, Linear *l)
{
  /* terms by creation order, constant last */
  for (guint i = 1; i < l->n; i++)
    for (guint j = i; j > 0 && l->atom[j - 1]->id > l->atom[j]->id; j--)
      {
        const MorokSym *ta = l->atom[j];
        gint64 tc = l->coef[j];
        l->atom[j] = l->atom[j - 1], l->coef[j] = l->coef[j - 1];
        l->atom[j - 1] = ta, l->coef[j - 1] = tc;
      }
  const MorokSym *acc = NULL;
  for (guint i = 0; i < l->n; i++)
    {
      if (l->coef[i] == 0)
        continue;
      const MorokSym *t = l->coef[i] == 1 ? l->atom[i] : morok_sym_mul_c (l->atom[i], l->coef[i]);
      acc = acc ? make (MOROK_SYM_ADD, acc, t, acc->lo + t->lo, acc->hi + t->hi) : t;
    }
  if (!acc)
    return morok_sym_const (pool, l->c);
  if (l->c == 0)
    return acc;
  return make (MOROK_SYM_ADD, acc, morok_sym_const (pool, l->c), acc->lo + l->c, acc->hi + l->c);
}

const MorokSym *
morok_sym_add (const MorokSym *a, const MorokSym *b)
{
  g_return_val_if_fail (a && b && a->pool == b->pool, NULL);
  Linear l = { .n = 0 };
  if (linear_add (&l, a, 1) && linear_add (&l, b, 1))
    return linear_build (a->pool, &l);
  order (&a, &b);
  return make (MOROK_SYM_ADD, a, b, a->lo + b->lo, a->hi + b->hi);
}

const MorokSym *
morok_sym_sub (const MorokSym *a, const MorokSym *b)
{
  g_return_val_if_fail (a && b, NULL);
  return morok_sym_add (a, morok_sym_mul_c (b, -1));
}

const MorokSym *
morok_sym_mul (const MorokSym *a, const MorokSym *b)
{
  g_return_val_if_fail (a && b && a->pool == b->pool, NULL);
  order (&a, &b);
  if (a->op == MOROK_SYM_CONST) /* c1 * c2 -> c */
    return morok_sym_const (a->pool, a->value * b->value);
  if (is_c (b, 1)) /* x * 1 -> x */
    return a;
  if (is_c (b, 0)) /* x * 0 -> 0 */
    return b;
  if (b->op == MOROK_SYM_CONST && a->op == MOROK_SYM_MUL && a->b->op == MOROK_SYM_CONST)
    return morok_sym_mul_c (a->a, a->b->value * b->value); /* (x * c1) * c2 -> x * (c1 c2) */
  if (b->op == MOROK_SYM_CONST && a->op == MOROK_SYM_ADD && a->b->op == MOROK_SYM_CONST)
    return morok_sym_add (morok_sym_mul (a->a, b), /* (x + c1) * c2 -> x c2 + c1 c2 */
                          morok_sym_const (a->pool, a->b->value * b->value));
  gint64 c[4] = { a->lo * b->lo, a->lo * b->hi, a->hi * b->lo, a->hi * b->hi };
  gint64 lo = c[0], hi = c[0];
  for (int i = 1; i < 4; i++)
    lo = MIN (lo, c[i]), hi = MAX (hi, c[i]);
  return make (MOROK_SYM_MUL, a, b, lo, hi);
}

const MorokSym *
morok_sym_div (const MorokSym *a, const MorokSym *b)
{
  g_return_val_if_fail (a && b && a->pool == b->pool, NULL);
  g_return_val_if_fail (b->lo >= 1, NULL);
  if (is_c (b, 1)) /* x / 1 -> x */
    return a;
  if (a->op == MOROK_SYM_CONST && b->op == MOROK_SYM_CONST)
    return morok_sym_const (a->pool, floor_div (a->value, b->value));
  if (b->op == MOROK_SYM_CONST)
    {
      gint64 c = b->value;
      if (a->op == MOROK_SYM_MUL && a->b->op == MOROK_SYM_CONST && a->b->value % c == 0)
        return morok_sym_mul_c (a->a, a->b->value / c); /* (x * kc) / c -> x * k */
      if (a->op == MOROK_SYM_DIV && a->b->op == MOROK_SYM_CONST)
        return morok_sym_div_c (a->a, a->b->value * c); /* (x / c1) / c2 -> x / (c1 c2) */
      if (a->lo >= 0 && a->hi < c)                      /* 0 <= x < c: x / c -> 0 */
        return morok_sym_const (a->pool, 0);
      return make (MOROK_SYM_DIV, a, b, floor_div (a->lo, c), floor_div (a->hi, c));
    }
  gint64 q[4] = { floor_div (a->lo, b->lo), floor_div (a->lo, b->hi), floor_div (a->hi, b->lo),
                  floor_div (a->hi, b->hi) };
  gint64 lo = q[0], hi = q[0];
  for (int i = 1; i < 4; i++)
    lo = MIN (lo, q[i]), hi = MAX (hi, q[i]);
  return make (MOROK_SYM_DIV, a, b, lo, hi);
}

const MorokSym *
morok_sym_mod (const MorokSym *a, const MorokSym *b)
{
  g_return_val_if_fail (a && b && a->pool == b->pool, NULL);
  g_return_val_if_fail (b->lo >= 1, NULL);
  if (is_c (b, 1))
    return morok_sym_const (a->pool, 0);
  if (a->op == MOROK_SYM_CONST && b->op == MOROK_SYM_CONST)
    return morok_sym_const (a->pool, floor_mod (a->value, b->value));
  if (a->lo >= 0 && a->hi < b->lo) /* 0 <= x < b: x % b -> x */
    return a;
  return make (MOROK_SYM_MOD, a, b, 0, b->hi - 1);
}

const MorokSym *
morok_sym_min (const MorokSym *a, const MorokSym *b)
{
  g_return_val_if_fail (a && b && a->pool == b->pool, NULL);
  if (a->hi <= b->lo)
    return a;
  if (b->hi <= a->lo)
    return b;
  order (&a, &b);
  return make (MOROK_SYM_MIN, a, b, MIN (a->lo, b->lo), MIN (a->hi, b->hi));
}

const MorokSym *
morok_sym_max (const MorokSym *a, const MorokSym *b)
{
  g_return_val_if_fail (a && b && a->pool == b->pool, NULL);
  if (a->lo >= b->hi)
    return a;
  if (b->lo >= a->hi)
    return b;
  order (&a, &b);
  return make (MOROK_SYM_MAX, a, b, MAX (a->lo, b->lo), MAX (a->hi, b->hi));
}

const MorokSym *
morok_sym_add_c (const MorokSym *a, gint64 c)
{
  return morok_sym_add (a, morok_sym_const (a->pool, c));
}

const MorokSym *
morok_sym_mul_c (const MorokSym *a, gint64 c)
{
  return morok_sym_mul (a, morok_sym_const (a->pool, c));
}

const MorokSym *
morok_sym_div_c (const MorokSym *a, gint64 c)
{
  return morok_sym_div (a, morok_sym_const (a->pool, c));
}

gint64
morok_sym_eval (const MorokSym *s, const gint64 *vars)
{
  switch (s->op)
    {
    case MOROK_SYM_CONST: return s->value;
    case MOROK_SYM_VAR: return vars[s->var->slot];
    case MOROK_SYM_ADD: return morok_sym_eval (s->a, vars) + morok_sym_eval (s->b, vars);
    case MOROK_SYM_MUL: return morok_sym_eval (s->a, vars) * morok_sym_eval (s->b, vars);
    case MOROK_SYM_DIV: return floor_div (morok_sym_eval (s->a, vars), morok_sym_eval (s->b, vars));
    case MOROK_SYM_MOD: return floor_mod (morok_sym_eval (s->a, vars), morok_sym_eval (s->b, vars));
    case MOROK_SYM_MIN: return MIN (morok_sym_eval (s->a, vars), morok_sym_eval (s->b, vars));
    case MOROK_SYM_MAX: return MAX (morok_sym_eval (s->a, vars), morok_sym_eval (s->b, vars));
    }
  return 0;
}

void
morok_sym_render (const MorokSym *s, GString *out, const char *var_format)
{
  static const char *const infix[] = { [MOROK_SYM_ADD] = " + ", [MOROK_SYM_MUL] = " * " };
  switch (s->op)
    {
    case MOROK_SYM_CONST: g_string_append_printf (out, "%" G_GINT64_FORMAT, s->value); return;
    case MOROK_SYM_VAR:
      if (var_format)
        g_string_append_printf (out, var_format, s->var->slot);
      else
        g_string_append (out, s->var->name);
      return;
    case MOROK_SYM_ADD:
    case MOROK_SYM_MUL:
      g_string_append_c (out, '(');
      morok_sym_render (s->a, out, var_format);
      g_string_append (out, infix[s->op]);
      morok_sym_render (s->b, out, var_format);
      g_string_append_c (out, ')');
      return;
    case MOROK_SYM_DIV:
    case MOROK_SYM_MOD:
      /* Operands of DIV/MOD are non-negative wherever Morok makes them
       * (shapes and indices), so C's truncating / and % agree with floor. */
    case MOROK_SYM_MIN:
    case MOROK_SYM_MAX:
      {
        static const char *const c_fn[] = { [MOROK_SYM_DIV] = "MOROK_IDIV",
                                            [MOROK_SYM_MOD] = "MOROK_IMOD",
                                            [MOROK_SYM_MIN] = "MOROK_IMIN",
                                            [MOROK_SYM_MAX] = "MOROK_IMAX" };
        static const char *const text_fn[] = { [MOROK_SYM_DIV] = "floordiv",
                                               [MOROK_SYM_MOD] = "mod",
                                               [MOROK_SYM_MIN] = "min",
                                               [MOROK_SYM_MAX] = "max" };
        g_string_append_printf (out, "%s(", (var_format ? c_fn : text_fn)[s->op]);
        morok_sym_render (s->a, out, var_format);
        g_string_append (out, ", ");
        morok_sym_render (s->b, out, var_format);
        g_string_append_c (out, ')');
        return;
      }
    }
}

char *
morok_sym_to_string (const MorokSym *s)
{
  GString *out = g_string_new (NULL);
  morok_sym_render (s, out, NULL);
  return g_string_free (out, FALSE);
}
