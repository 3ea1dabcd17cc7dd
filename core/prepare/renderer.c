/* SPDX-License-Identifier: MIT */
/* The C renderer. A kernel's value is rendered by walking its root's inline
 * region: each node is computed at a multi-index given as C expressions, view
 * ops only rewrite the index, realized nodes are loads, reductions become
 * loops. Values are memoised per (node, index) within a loop scope, so a
 * shared subexpression is computed once.
 *
 * Over 800 lines: it holds four topics (expressions and indices, the
 * contraction tiling, kernel skeletons and the translation unit) until it
 * is split by topic, a step of its own (issue 14, part 3). */
#define G_LOG_DOMAIN "morok-prepare"
#include "prepare/morok-renderer.h"
#include "kernels/weight-pack.h"
#include <math.h>
#include <string.h>

extern const char morok_kernel_prelude[];

typedef struct
{
  const MorokSchedule *sched;
  const MorokScheduleKernel *ker;
  GString *out;
  GPtrArray *scopes; /* GHashTable* "node@idx" -> temp name; innermost last */
  guint n_tmp;
  guint indent;
  gboolean vector;  /* in a loop clang vectorises: guarded loads (render_guarded) */
  gboolean mm_block; /* a matmul epilogue reads the contraction's block in scratch, not `out` */
  char *guard;       /* inside a padded or concatenated source: when its loads are in bounds */
  GError **error;
} Ctx;

/* ---- small helpers ---- */

static const char *
storage_type (MorokDType t)
{
  switch (t)
    {
    case MOROK_DTYPE_F32: return "float";
    case MOROK_DTYPE_F16:
    case MOROK_DTYPE_BF16: return "uint16_t";
    case MOROK_DTYPE_I32: return "int32_t";
    case MOROK_DTYPE_I64: return "int64_t";
    default: return "uint8_t";
    }
}

static const char *
compute_type (MorokDType t)
{
  return morok_dtype_is_float (t) ? "float" : storage_type (t);
}

static char *
sym_c (const MorokSym *s)
{
  GString *g = g_string_new (NULL);
  morok_sym_render (s, g, "v[%u]");
  return g_string_free (g, FALSE);
}

static void
line (Ctx *c, const char *fmt, ...) G_GNUC_PRINTF (2, 3);

static void
line (Ctx *c, const char *fmt, ...)
{
  va_list ap;
  for (guint i = 0; i < c->indent; i++)
    g_string_append (c->out, "  ");
  va_start (ap, fmt);
  g_string_append_vprintf (c->out, fmt, ap);
  va_end (ap);
  g_string_append_c (c->out, '\n');
}

static char *
tmp (Ctx *c, const char *prefix)
{
  return g_strdup_printf ("%s%u", prefix, c->n_tmp++);
}

static void
scope_push (Ctx *c)
{
  g_ptr_array_add (c->scopes, g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free));
}

static void
scope_pop (Ctx *c)
{
  g_ptr_array_remove_index (c->scopes, c->scopes->len - 1);
}

static char *
memo_key (const MorokNode *n, char **idx)
{
  GString *k = g_string_new (NULL);
  g_string_printf (k, "%p", (const void *) n);
  for (guint i = 0; i < n->rank; i++)
    g_string_append_printf (k, "@%s", idx[i]);
  return g_string_free (k, FALSE);
}

static const char *
memo_get (Ctx *c, const char *key)
{
  for (guint s = c->scopes->len; s-- > 0;)
    {
      const char *v = g_hash_table_lookup (g_ptr_array_index (c->scopes, s), key);
      if (v)
        return v;
    }
  return NULL;
}

/* Flat index of @idx in the contiguous layout of @n's shape. */
static char *
flat_index (const MorokNode *n, char **idx)
{
  if (n->rank == 0)
    return g_strdup ("0");
  GString *g = g_string_new (idx[0]);
  for (guint i = 1; i < n->rank; i++)
    {
      g_autofree char *d = sym_c (n->shape[i]);
      GString *w = g_string_new (NULL);
      g_string_printf (w, "(%s) * %s + %s", g->str, d, idx[i]);
      g_string_free (g, TRUE);
      g = w;
    }
  return g_string_free (g, FALSE);
}

static char *
literal (MorokDType t, double v)
{
  if (!morok_dtype_is_float (t))
    return g_strdup_printf ("(%s) %.0f", storage_type (t), v);
  if (isnan (v))
    return g_strdup ("__builtin_nanf (\"\")");
  if (isinf (v))
    return g_strdup (v > 0 ? "__builtin_inff ()" : "(-__builtin_inff ())");
  return g_strdup_printf ("%af", v); /* hex: exact, and always a float literal */
}

/* ---- values ---- */

static char *render (Ctx *c, MorokNode *n, char **idx);

static char *
load (Ctx *c, MorokNode *n, guint buf, char **idx)
{
  g_autofree char *flat = flat_index (n, idx);
  /* the kernel's own buffer is declared as `out` (a matmul epilogue reads it) */
  g_autofree char *name = buf == c->ker->out ? g_strdup ("out") : g_strdup_printf ("b%u", buf);
  char *t = tmp (c, "t");
  /* under a constant pad or a cat (render_guarded) */
  g_autofree char *at = c->guard ? g_strdup_printf ("(%s) ? %s[%s] : 0", c->guard, name, flat)
                                 : g_strdup_printf ("%s[%s]", name, flat);
  if (n->dtype == MOROK_DTYPE_F16)
    line (c, "const float %s = morok_f16_to_f32 (%s);", t, at);
  else if (n->dtype == MOROK_DTYPE_BF16)
    line (c, "const float %s = morok_bf16_to_f32 (%s);", t, at);
  else
    line (c, "const %s %s = %s;", compute_type (n->dtype), t, at);
  return t;
}

static char *
unary_expr (MorokNode *n, const char *a)
{
  gboolean f = morok_dtype_is_float (n->src[0]->dtype);
  switch (n->op)
    {
    case MOROK_OP_NEG: return g_strdup_printf ("-%s", a);
    case MOROK_OP_ABS: return f ? g_strdup_printf ("__builtin_fabsf (%s)", a) : g_strdup_printf ("(%s < 0 ? -%s : %s)", a, a, a);
    case MOROK_OP_EXP: return g_strdup_printf ("morok_expf (%s)", a);
    case MOROK_OP_LOG: return g_strdup_printf ("morok_logf (%s)", a);
    case MOROK_OP_SQRT: return g_strdup_printf ("__builtin_sqrtf (%s)", a);
    case MOROK_OP_RSQRT: return g_strdup_printf ("1.0f / __builtin_sqrtf (%s)", a);
    case MOROK_OP_RECIP: return g_strdup_printf ("1.0f / %s", a);
    case MOROK_OP_SIGMOID: return g_strdup_printf ("morok_sigmoidf (%s)", a);
    case MOROK_OP_TANH: return g_strdup_printf ("morok_tanhf (%s)", a);
    case MOROK_OP_RELU: return g_strdup_printf ("(%s > 0 ? %s : 0)", a, a);
    case MOROK_OP_SILU: return g_strdup_printf ("%s * morok_sigmoidf (%s)", a, a);
    case MOROK_OP_NOT: return g_strdup_printf ("(uint8_t) !%s", a);
    case MOROK_OP_CAST:
      if (n->dtype == MOROK_DTYPE_BOOL)
        return g_strdup_printf ("(uint8_t) (%s != 0)", a);
      return g_strdup_printf ("(%s) %s", compute_type (n->dtype), a);
    default: return NULL;
    }
}

static char *
binary_expr (MorokNode *n, const char *a, const char *b)
{
  static const char *const infix[] = {
    [MOROK_OP_ADD] = "+", [MOROK_OP_SUB] = "-", [MOROK_OP_MUL] = "*", [MOROK_OP_DIV] = "/",
    [MOROK_OP_CMPLT] = "<", [MOROK_OP_CMPLE] = "<=", [MOROK_OP_CMPEQ] = "==", [MOROK_OP_CMPNE] = "!=",
  };
  switch (n->op)
    {
    case MOROK_OP_MAX: return g_strdup_printf ("(%s > %s ? %s : %s)", a, b, a, b);
    case MOROK_OP_MIN: return g_strdup_printf ("(%s < %s ? %s : %s)", a, b, a, b);
    case MOROK_OP_POW: return g_strdup_printf ("morok_powf (%s, %s)", a, b);
    case MOROK_OP_CMPLT:
    case MOROK_OP_CMPLE:
    case MOROK_OP_CMPEQ:
    case MOROK_OP_CMPNE: return g_strdup_printf ("(uint8_t) (%s %s %s)", a, infix[n->op], b);
    default: return g_strdup_printf ("%s %s %s", a, infix[n->op], b);
    }
}

#define VECTOR_MIN 8 /* iterations of an innermost loop for it to count as vectorised */

/* A reduction as a loop over its reduced axes, inside the current scope. */
static char *
render_reduce (Ctx *c, MorokNode *n, char **idx)
{
  MorokNode *src = n->src[0];
  char *acc = tmp (c, "acc");
  g_autofree char *init = literal (n->dtype, n->op == MOROK_OP_SUM ? 0.0 : -INFINITY);
  /* a float max runs on morok_f32_key's integers, so that it vectorises */
  gboolean keys = n->op == MOROK_OP_RMAX && morok_dtype_is_float (n->dtype);
  if (keys)
    line (c, "int32_t %s = morok_f32_key (%s);", acc, init);
  else
    line (c, "%s %s = %s;", compute_type (n->dtype), acc,
          n->op != MOROK_OP_RMAX          ? init
          : n->dtype == MOROK_DTYPE_I32 ? "(-2147483647 - 1)"
                                        : "(int64_t) ((uint64_t) 1 << 63)");
  char *sidx[MOROK_MAX_RANK];
  guint opened = 0;
  for (guint i = 0; i < src->rank; i++)
    {
      if (n->axes_mask >> i & 1)
        {
          g_autofree char *d = sym_c (src->shape[i]);
          sidx[i] = tmp (c, "r");
          line (c, "for (int64_t %s = 0; %s < %s; %s++) {", sidx[i], sidx[i], d, sidx[i]);
          c->indent++, opened++;
        }
      else
        sidx[i] = g_strdup (idx[i]);
    }
  /* the innermost reduced axis is the loop clang may vectorise now */
  gboolean vector = c->vector;
  for (guint i = 0; i < src->rank; i++)
    if (n->axes_mask >> i & 1)
      c->vector = src->shape[i]->hi >= VECTOR_MIN;
  scope_push (c);
  g_autofree char *v = render (c, src, sidx);
  c->vector = vector;
  if (v)
    {
      if (n->op == MOROK_OP_SUM)
        line (c, "%s += %s;", acc, v);
      else if (keys)
        line (c, "%s = morok_f32_key (%s) > %s ? morok_f32_key (%s) : %s;", acc, v, acc, v, acc);
      else
        line (c, "%s = %s > %s ? %s : %s;", acc, v, acc, v, acc);
    }
  scope_pop (c);
  while (opened--)
    {
      c->indent--;
      line (c, "}");
    }
  for (guint i = 0; i < src->rank; i++)
    g_free (sidx[i]);
  if (!v)
    {
      g_free (acc);
      return NULL;
    }
  if (keys)
    {
      char *f = tmp (c, "max");
      line (c, "const float %s = morok_f32_from_key (%s);", f, acc);
      g_free (acc);
      return f;
    }
  return acc;
}

/* The k >= 2 for which @dims[0] * ... * @dims[k - 1] is @target, the
 * dims after the first constant; 0 if there is none. */
static guint
product_run (const MorokSym *const *dims, guint n, const MorokSym *target)
{
  const MorokSym *p = dims[0];
  gint64 d;
  for (guint k = 1; k < n && morok_sym_is_const (dims[k], &d); k++)
    {
      p = morok_sym_mul (p, dims[k]);
      if (p == target)
        return k + 1;
    }
  return 0;
}

/* @flat over @k dims (the inner ones constant) into @out[0 .. k - 1]. */
static void
split_index (const char *flat, const MorokSym *const *dims, guint k, char **out)
{
  gint64 stride = 1, d;
  for (guint q = k; q-- > 0;)
    {
      if (q == 0)
        out[q] = stride == 1 ? g_strdup (flat)
                             : g_strdup_printf ("(%s / %" G_GINT64_FORMAT ")", flat, stride);
      else
        {
          morok_sym_is_const (dims[q], &d);
          out[q] = g_strdup_printf ("(%s / %" G_GINT64_FORMAT " %% %" G_GINT64_FORMAT ")", flat,
                                    stride, d);
          stride *= d;
        }
    }
}

/* The flat index of @idx[0 .. k - 1] over @k dims (the inner ones constant). */
static char *
merge_index (char **idx, const MorokSym *const *dims, guint k)
{
  GString *flat = g_string_new (idx[0]);
  gint64 d;
  for (guint q = 1; q < k; q++)
    {
      morok_sym_is_const (dims[q], &d);
      g_autofree char *prev = g_strdup (flat->str);
      g_string_printf (flat, "(%s) * %" G_GINT64_FORMAT " + %s", prev, d, idx[q]);
    }
  return g_string_free (flat, FALSE);
}

/* The source index of a reshape, group by group: runs of dims with equal
 * products (size-1 dims aside) map through the group's own flat index, so
 * that merging [C, K] into [C*K] reads (i / K, i % K) and a dim that stays
 * is passed through. FALSE (nothing allocated) when the dims do not pair up
 * that way (a symbolic dim that differs between the sides). */
static gboolean
reshape_index (Ctx *c, MorokNode *n, char **idx, char **sidx)
{
  MorokNode *src = n->src[0];
  guint i = 0, j = 0;
  gint64 one;
  GPtrArray *groups = g_ptr_array_new_with_free_func (g_free); /* lines to emit */
  char *out[MOROK_MAX_RANK] = { NULL };
  while (i < n->rank || j < src->rank)
    {
      if (i < n->rank && morok_sym_is_const (n->shape[i], &one) && one == 1)
        {
          i++;
          continue;
        }
      if (j < src->rank && morok_sym_is_const (src->shape[j], &one) && one == 1)
        {
          out[j++] = g_strdup ("0");
          continue;
        }
      if (i >= n->rank || j >= src->rank)
        goto fail;
      if (n->shape[i] == src->shape[j])
        {
          out[j++] = g_strdup (idx[i++]);
          continue;
        }
      /* one dim (of either side) that is the product of the other side's
       * next dims, all constant but the outermost (a batch merged with
       * time: [b, 4] <-> [(b * 4)]) */
      guint k;
      if ((k = product_run (src->shape + j, src->rank - j, n->shape[i])))
        {
          split_index (idx[i], src->shape + j, k, out + j);
          i++, j += k;
          continue;
        }
      if ((k = product_run (n->shape + i, n->rank - i, src->shape[j])))
        {
          out[j++] = merge_index (idx + i, n->shape + i, k);
          i += k;
          continue;
        }
      /* a group of constant dims: out [i, i1), src [j, j1) */
      gint64 pi, pj, d;
      guint i1 = i + 1, j1 = j + 1;
      if (!morok_sym_is_const (n->shape[i], &pi) || !morok_sym_is_const (src->shape[j], &pj))
        goto fail;
      while (pi != pj)
        {
          if (pi < pj && i1 < n->rank && morok_sym_is_const (n->shape[i1], &d))
            pi *= d, i1++;
          else if (pj < pi && j1 < src->rank && morok_sym_is_const (src->shape[j1], &d))
            pj *= d, j1++;
          else
            goto fail;
        }
      GString *flat = g_string_new (idx[i]);
      for (guint k = i + 1; k < i1; k++)
        {
          morok_sym_is_const (n->shape[k], &d);
          g_autofree char *prev = g_strdup (flat->str);
          g_string_printf (flat, "(%s) * %" G_GINT64_FORMAT " + %s", prev, d, idx[k]);
        }
      char *f = i1 - i == 1 ? g_strdup (idx[i]) : tmp (c, "f");
      if (i1 - i > 1)
        g_ptr_array_add (groups, g_strdup_printf ("const int64_t %s = %s;", f, flat->str));
      g_string_free (flat, TRUE);
      gint64 stride = 1;
      for (guint k = j1; k-- > j;)
        {
          morok_sym_is_const (src->shape[k], &d);
          out[k] = d == 1 ? g_strdup ("0")
                   : k == j ? g_strdup_printf ("(%s / %" G_GINT64_FORMAT ")", f, stride)
                            : g_strdup_printf ("(%s / %" G_GINT64_FORMAT " %% %" G_GINT64_FORMAT ")",
                                               f, stride, d);
          stride *= d;
        }
      g_free (f);
      i = i1, j = j1;
    }
  for (guint k = 0; k < groups->len; k++)
    line (c, "%s", (const char *) groups->pdata[k]);
  g_ptr_array_unref (groups);
  memcpy (sidx, out, src->rank * sizeof *sidx);
  return TRUE;
fail:
  for (guint k = 0; k < src->rank; k++)
    g_free (out[k]);
  g_ptr_array_unref (groups);
  return FALSE;
}

/* The source index of a view node at @idx, into @sidx (allocated strings);
 * a pad or cat may also need a condition, written to @cond. */
static void
view_index (Ctx *c, MorokNode *n, guint which, char **idx, char **sidx, char **cond)
{
  MorokNode *src = n->src[which];
  *cond = NULL;
  switch (n->op)
    {
    case MOROK_OP_PERMUTE:
      for (guint i = 0; i < n->rank; i++)
        sidx[n->perm[i]] = g_strdup (idx[i]);
      return;
    case MOROK_OP_EXPAND:
      for (guint i = 0; i < n->rank; i++)
        sidx[i] = g_strdup (src->shape[i] == n->shape[i] ? idx[i] : "0");
      return;
    case MOROK_OP_SHRINK:
      for (guint i = 0; i < n->rank; i++)
        {
          g_autofree char *lo = sym_c (n->lo[i]);
          sidx[i] = strcmp (lo, "0") ? g_strdup_printf ("(%s + %s)", idx[i], lo) : g_strdup (idx[i]);
        }
      return;
    case MOROK_OP_WINDOW:
      for (guint i = 0, j = 0; i < src->rank; i++, j++)
        {
          if (i == (guint) n->axis)
            {
              sidx[i] = g_strdup_printf ("(%s * %" G_GINT64_FORMAT " + %s * %" G_GINT64_FORMAT ")",
                                         idx[j], n->stride, idx[j + 1], n->dilation);
              j++;
            }
          else
            sidx[i] = g_strdup (idx[j]);
        }
      return;
    case MOROK_OP_PAD:
      {
        GString *cnd = g_string_new (NULL);
        for (guint i = 0; i < n->rank; i++)
          {
            g_autofree char *lo = sym_c (n->lo[i]), *d = sym_c (src->shape[i]);
            if (!strcmp (lo, "0") && n->hi[i]->hi == 0)
              {
                sidx[i] = g_strdup (idx[i]);
                continue;
              }
            char *s = tmp (c, "p");
            line (c, "int64_t %s = %s - %s;", s, idx[i], lo);
            if (n->pad_mode == MOROK_PAD_REFLECT)
              {
                line (c, "%s = %s < 0 ? -%s : %s;", s, s, s, s);
                line (c, "%s = %s >= %s ? 2 * (%s - 1) - %s : %s;", s, s, d, d, s, s);
              }
            else
              {
                g_string_append_printf (cnd, "%s(%s >= 0 && %s < %s)", cnd->len ? " && " : "", s,
                                        s, d);
                if (!c->vector)
                  {
                    line (c, "const int64_t %sc = MOROK_CLAMP (%s, 0, %s - 1);", s, s, d);
                    char *clamped = g_strdup_printf ("%sc", s);
                    g_free (s);
                    s = clamped;
                  }
              }
            sidx[i] = s;
          }
        *cond = cnd->len ? g_string_free (cnd, FALSE) : (g_string_free (cnd, TRUE), NULL);
        return;
      }
    case MOROK_OP_CAT:
      {
        g_autofree char *la = sym_c (n->src[0]->shape[n->axis]);
        g_autofree char *lb = sym_c (n->src[1]->shape[n->axis]);
        for (guint i = 0; i < n->rank; i++)
          sidx[i] = i != (guint) n->axis ? g_strdup (idx[i])
                    : c->vector  ? (which == 0 ? g_strdup (idx[i])
                                               : g_strdup_printf ("(%s - %s)", idx[i], la))
                    : which == 0 ? g_strdup_printf ("MOROK_IMIN (%s, %s - 1)", idx[i], la)
                                 : g_strdup_printf ("MOROK_CLAMP (%s - %s, 0, %s - 1)", idx[i], la, lb);
        *cond = g_strdup_printf (which == 0 ? "%s < %s" : "%s >= %s", idx[n->axis], la);
        return;
      }
    case MOROK_OP_RESHAPE:
      if (reshape_index (c, n, idx, sidx))
        return;
      {
        /* general: the dims equal at both ends map one to one, and only the
         * middle goes through a flat index, so a split or merge of fixed
         * dims next to symbolic ones divides by constants only */
        guint pre = 0, suf = 0;
        while (pre < n->rank && pre < src->rank && n->shape[pre] == src->shape[pre])
          pre++;
        while (suf < n->rank - pre && suf < src->rank - pre
               && n->shape[n->rank - 1 - suf] == src->shape[src->rank - 1 - suf])
          suf++;
        for (guint k = 0; k < pre; k++)
          sidx[k] = g_strdup (idx[k]);
        for (guint k = 0; k < suf; k++)
          sidx[src->rank - 1 - k] = g_strdup (idx[n->rank - 1 - k]);
        GString *flat = g_string_new ("0");
        for (guint i = pre; i < n->rank - suf; i++)
          {
            g_autofree char *d = sym_c (n->shape[i]);
            g_autofree char *prev = g_strdup (flat->str);
            g_string_printf (flat, "(%s) * %s + %s", prev, d, idx[i]);
          }
        char *f = tmp (c, "f");
        line (c, "const int64_t %s = %s;", f, flat->str);
        g_string_free (flat, TRUE);
        g_autofree char *stride = g_strdup ("1");
        for (guint k = src->rank - suf; k-- > pre;)
          {
            g_autofree char *d = sym_c (src->shape[k]);
            sidx[k] = k == pre ? g_strdup_printf ("(%s / (%s))", f, stride)
                               : g_strdup_printf ("((%s / (%s)) %% %s)", f, stride, d);
            char *ns = g_strdup_printf ("%s * %s", stride, d);
            g_free (stride);
            stride = ns;
          }
        g_free (f);
        return;
      }
    default:
      g_assert_not_reached ();
    }
}

/* @n at @idx, its loads guarded by @cond (NULL: none) and the guards
 * around. In a loop clang vectorises, the padded or concatenated side of a
 * view is rendered this way, its index not clamped: a load is conditional
 * (a masked load once vectorised) and the view's select drops the value
 * where @cond is false; clamped indices inside the innermost loop are not
 * affine, and clang left such loops scalar. In scalar code the index is
 * clamped (view_index) and the loads are plain: conditional loads there
 * are branches, mispredicted (Silero v4's depthwise taps: 19 -> 51 us). */
static char *
render_guarded (Ctx *c, MorokNode *n, char **idx, const char *cond)
{
  char *outer = c->guard;
  if (cond && c->vector)
    c->guard = outer ? g_strdup_printf ("%s && %s", outer, cond) : g_strdup (cond);
  char *v = render (c, n, idx);
  if (c->guard != outer)
    g_free (c->guard);
  c->guard = outer;
  return v;
}

/* A reflect pad of one axis as three guarded reads of its source, before,
 * inside and after (pad < size: one reflection), each an affine index
 * that vectorises (the two mirrored ones as reversed loads); NULL when more
 * than one axis is padded. */
static char *
render_reflect (Ctx *c, MorokNode *n, char **idx)
{
  MorokNode *src = n->src[0];
  gint axis = -1;
  for (guint i = 0; i < n->rank; i++)
    if (n->lo[i]->hi != 0 || n->hi[i]->hi != 0)
      {
        if (axis >= 0)
          return NULL;
        axis = (gint) i;
      }
  if (axis < 0)
    return NULL;
  g_autofree char *lo = sym_c (n->lo[axis]), *d = sym_c (src->shape[axis]);
  char *p = tmp (c, "p");
  line (c, "const int64_t %s = %s - %s;", p, idx[axis], lo);
  char *sidx[MOROK_MAX_RANK];
  for (guint i = 0; i < n->rank; i++)
    sidx[i] = idx[i];
  g_autofree char *at_lo = g_strdup_printf ("(-%s)", p);
  g_autofree char *at_hi = g_strdup_printf ("(2 * (%s - 1) - %s)", d, p);
  g_autofree char *in_lo = g_strdup_printf ("%s < 0", p);
  g_autofree char *in_hi = g_strdup_printf ("%s >= %s", p, d);
  g_autofree char *in_mid = g_strdup_printf ("%s >= 0 && %s < %s", p, p, d);
  sidx[axis] = at_lo;
  g_autofree char *v_lo = render_guarded (c, src, sidx, in_lo);
  sidx[axis] = at_hi;
  g_autofree char *v_hi = render_guarded (c, src, sidx, in_hi);
  sidx[axis] = p;
  g_autofree char *v_mid = render_guarded (c, src, sidx, in_mid);
  char *t = NULL;
  if (v_lo && v_hi && v_mid)
    {
      t = tmp (c, "t");
      line (c, "const %s %s = %s ? %s : %s ? %s : %s;", compute_type (n->dtype), t, in_lo, v_lo,
            in_hi, v_hi, v_mid);
    }
  g_free (p);
  return t;
}

static char *
render_view (Ctx *c, MorokNode *n, char **idx)
{
  if (n->op == MOROK_OP_PAD && n->pad_mode == MOROK_PAD_REFLECT && c->vector)
    {
      char *t = render_reflect (c, n, idx);
      if (t || (c->error && *c->error))
        return t;
    }
  char *sidx[MOROK_MAX_RANK], *cond;
  view_index (c, n, 0, idx, sidx, &cond);
  char *v = render_guarded (c, n->src[0], sidx, cond);
  for (guint i = 0; i < n->src[0]->rank; i++)
    g_free (sidx[i]);
  if (!v || (!cond && n->op != MOROK_OP_CAT))
    return v;
  char *t = tmp (c, "t");
  if (n->op == MOROK_OP_PAD)
    {
      g_autofree char *pv = literal (n->dtype, n->value);
      line (c, "const %s %s = (%s) ? %s : %s;", compute_type (n->dtype), t, cond, v, pv);
    }
  else
    {
      char *sidx1[MOROK_MAX_RANK], *cond1;
      view_index (c, n, 1, idx, sidx1, &cond1);
      g_autofree char *v1 = render_guarded (c, n->src[1], sidx1, cond1);
      for (guint i = 0; i < n->rank; i++)
        g_free (sidx1[i]);
      g_free (cond1);
      if (v1)
        line (c, "const %s %s = (%s) ? %s : %s;", compute_type (n->dtype), t, cond, v, v1);
      else
        g_clear_pointer (&t, g_free);
    }
  g_free (cond);
  g_free (v);
  return t;
}

static char *
render_uncached (Ctx *c, MorokNode *n, char **idx)
{
  guint buf = morok_schedule_buffer_of (c->sched, n);
  if (n == c->ker->matmul && n != c->ker->root)
    {
      /* the epilogue reads the contraction in place, or the block of it the
       * GEMM just stored in scratch: rows from m0, nl columns from n0 */
      if (!c->mm_block)
        return load (c, n, c->ker->out, idx);
      char *t = tmp (c, "t");
      line (c, "const float %s = cs[(%s - m0) * nl + %s - n0];", t, idx[n->rank - 2],
            idx[n->rank - 1]);
      return t;
    }
  if (buf && n != c->ker->root)
    return load (c, n, buf - 1, idx);
  if (n->op == MOROK_OP_CONST)
    return literal (n->dtype, n->value);
  if (morok_op_is_view (n->op))
    return render_view (c, n, idx);
  if (morok_op_is_reduce (n->op))
    return render_reduce (c, n, idx);
  if (!morok_op_is_elementwise (n->op))
    {
      g_autofree char *d = morok_node_describe (n);
      g_set_error (c->error, MOROK_GRAPH_ERROR, MOROK_GRAPH_ERROR_SCHEDULE, "renderer: cannot inline %s", d);
      return NULL;
    }
  char *v[3] = { NULL, NULL, NULL };
  for (guint i = 0; i < n->n_src; i++)
    if (!(v[i] = render (c, n->src[i], idx)))
      {
        for (guint k = 0; k < i; k++)
          g_free (v[k]);
        return NULL;
      }
  g_autofree char *e = n->op == MOROK_OP_WHERE ? g_strdup_printf ("%s ? %s : %s", v[0], v[1], v[2])
                       : n->n_src == 1          ? unary_expr (n, v[0])
                                                : binary_expr (n, v[0], v[1]);
  for (guint i = 0; i < n->n_src; i++)
    g_free (v[i]);
  char *t = tmp (c, "t");
  line (c, "const %s %s = %s;", compute_type (n->dtype), t, e);
  return t;
}

static char *
render (Ctx *c, MorokNode *n, char **idx)
{
  g_autofree char *key = memo_key (n, idx);
  const char *hit = memo_get (c, key);
  if (hit)
    return g_strdup (hit);
  char *v = render_uncached (c, n, idx);
  if (v)
    g_hash_table_insert (g_ptr_array_index (c->scopes, c->scopes->len - 1), g_steal_pointer (&key),
                         g_strdup (v));
  return v;
}

/* ---- kernels ---- */

static void
store (Ctx *c, const MorokNode *root, char **idx, const char *v)
{
  g_autofree char *flat = flat_index (root, idx);
  if (root->dtype == MOROK_DTYPE_F16)
    line (c, "out[%s] = morok_f32_to_f16 (%s);", flat, v);
  else if (root->dtype == MOROK_DTYPE_BF16)
    line (c, "out[%s] = morok_f32_to_bf16 (%s);", flat, v);
  else
    line (c, "out[%s] = %s;", flat, v);
}

static void
declare_buffers (Ctx *c)
{
  const MorokScheduleKernel *k = c->ker;
  const MorokScheduleBuffer *ob = &g_array_index (c->sched->buffers, MorokScheduleBuffer, k->out);
  line (c, "%s *restrict out = (%s *) bufs[%u];", storage_type (ob->node->dtype),
        storage_type (ob->node->dtype), k->out);
  for (guint r = 0; r < k->reads->len; r++)
    {
      guint b = g_array_index (k->reads, guint, r);
      const MorokScheduleBuffer *rb = &g_array_index (c->sched->buffers, MorokScheduleBuffer, b);
      const char *t = rb->kind != MOROK_BUFFER_PACKED ? storage_type (rb->node->dtype)
                      : rb->pack.format == MOROK_PRECISION_F32 ? "float"
                                                               : "uint16_t";
      line (c, "const %s *restrict b%u = (const %s *) bufs[%u];", t, b, t, b);
    }
  /* this thread's slice of the plan's scratch memory */
  if (k->scratch)
    line (c, "uint16_t *restrict scratch = (uint16_t *) ((uint8_t *) bufs[%u] + tid * (size_t) %"
          G_GSIZE_FORMAT ");", k->scratch - 1, k->scratch_stride);
  if (k->shared_tasks)
    {
      const MorokScheduleBuffer *sb
          = &g_array_index (c->sched->buffers, MorokScheduleBuffer, k->scratch - 1);
      line (c, "int64_t *next_task = (int64_t *) ((uint8_t *) bufs[%u] + %" G_GSIZE_FORMAT ");",
            k->scratch - 1, sb->bytes - 64);
    }
}

/* Decomposes the flat row number @row into idx[0 .. n-1] over @n's dims. */
static void
split_rows (Ctx *c, const MorokNode *n, guint count, const char *row, char **idx)
{
  if (count == 0)
    return;
  line (c, "int64_t rest = %s;", row);
  for (guint i = count; i-- > 0;)
    {
      g_autofree char *d = sym_c (n->shape[i]);
      idx[i] = g_strdup_printf ("i%u", i);
      if (i > 0)
        line (c, "const int64_t i%u = rest %% %s; rest /= %s;", i, d, d);
      else
        line (c, "const int64_t i0 = rest;");
    }
}

/* "1 * d0 * ... * d(count-1)" of @n's leading dims: the rows (or batch
 * items) a kernel shares out. (transfer full) */
static char *
dims_product (const MorokNode *n, guint count)
{
  GString *p = g_string_new ("1");
  for (guint i = 0; i < count; i++)
    {
      g_autofree char *d = sym_c (n->shape[i]);
      g_string_append_printf (p, " * %s", d);
    }
  return g_string_free (p, FALSE);
}

/* The flat index of (idx[0], ..., idx[count-1]) over @n's leading dims.
 * (transfer full) */
static char *
dims_flat (const MorokNode *n, guint count, char **idx)
{
  GString *f = g_string_new ("0");
  for (guint i = 0; i < count; i++)
    {
      g_autofree char *d = sym_c (n->shape[i]);
      g_autofree char *prev = g_strdup (f->str);
      g_string_printf (f, "(%s) * %s + %s", prev, d, idx[i]);
    }
  return g_string_free (f, FALSE);
}

static gboolean
render_loop_kernel (Ctx *c)
{
  MorokNode *root = c->ker->root;
  guint r = root->rank;
  char *idx[MOROK_MAX_RANK] = { NULL };
  g_autofree char *rows = dims_product (root, r > 0 ? r - 1 : 0);
  line (c, "const int64_t rows = %s;", rows);
  line (c, "const int64_t r0 = rows * tid / nthreads, r1 = rows * (tid + 1) / nthreads;");
  line (c, "for (int64_t row = r0; row < r1; row++) {");
  c->indent++;
  if (r > 0)
    split_rows (c, root, r - 1, "row", idx);
  if (r > 0)
    {
      g_autofree char *d = sym_c (root->shape[r - 1]);
      idx[r - 1] = g_strdup_printf ("i%u", r - 1);
      line (c, "for (int64_t i%u = 0; i%u < %s; i%u++) {", r - 1, r - 1, d, r - 1);
      c->vector = root->shape[r - 1]->hi >= VECTOR_MIN;
      c->indent++;
    }
  scope_push (c);
  g_autofree char *v = render (c, root, idx);
  if (v)
    store (c, root, idx, v);
  scope_pop (c);
  if (r > 0)
    {
      c->indent--;
      line (c, "}");
    }
  c->indent--;
  line (c, "}");
  for (guint i = 0; i < r; i++)
    g_free (idx[i]);
  return v != NULL;
}

#define MM_ROWS 64  /* rows of C per task, when rows must be shared out too */
#define MM_COLS 512 /* columns of C per task, when N is wide */
#define MM_NARROW 16 /* N at most this, M at least twice: contract transposed */
#define MM_SHARED_COLS 128 /* columns per task of a product with packed weights (f32, f16) */

static gboolean
render_matmul_kernel (Ctx *c)
{
  MorokNode *root = c->ker->root, *m = c->ker->matmul;
  guint r = m->rank;
  MorokStrided a, b;
  if (!morok_schedule_strided (c->sched, m->src[0], &a)
      || !morok_schedule_strided (c->sched, m->src[1], &b))
    {
      g_set_error (c->error, MOROK_GRAPH_ERROR, MOROK_GRAPH_ERROR_SCHEDULE, "renderer: matmul operand is not strided");
      return FALSE;
    }
  guint ba = morok_schedule_buffer_of (c->sched, a.base) - 1;
  guint bb = morok_schedule_buffer_of (c->sched, b.base) - 1;
  g_autofree char *M = sym_c (m->shape[r - 2]), *N = sym_c (m->shape[r - 1]);
  g_autofree char *K = sym_c (m->src[0]->shape[r - 1]);
  g_autofree char *oa = sym_c (a.offset), *ob = sym_c (b.offset);
  g_autofree char *sam = sym_c (a.stride[r - 2]), *sak = sym_c (a.stride[r - 1]);
  g_autofree char *sbk = sym_c (b.stride[r - 2]), *sbn = sym_c (b.stride[r - 1]);
  g_autofree char *batches = dims_product (m, r - 2);
  gboolean narrow = m->shape[r - 1]->hi <= MM_NARROW && m->shape[r - 2]->hi >= 2 * MM_NARROW;
  line (c, "const int64_t M = %s, N = %s, K = %s;", M, N, K);
  line (c, "const int64_t batches = %s;", batches);
  /* A task is a block of C. When the column blocks give every thread two or
   * more (or there is one thread), a task takes all the rows of its
   * columns, so each slice of B is packed once per call, not once per row
   * block; the column blocks are then evened out over the threads. */
  const MorokScheduleBuffer *pb
      = c->ker->packed_b ? &g_array_index (c->sched->buffers, MorokScheduleBuffer, c->ker->packed_b - 1)
                         : NULL;
  line (c, "int64_t nt = (N + %d - 1) / %d, mb = %d;", MM_COLS, MM_COLS, MM_ROWS);
  if (c->ker->shared_tasks)
    /* B is packed already: blocks of MM_SHARED_COLS columns with all the
     * rows (64-row tasks measured slower), which the threads take in turn,
     * so that one the host holds up leaves its blocks to the other */
    line (c, "nt = (N + %d - 1) / %d, mb = M;", MM_SHARED_COLS, MM_SHARED_COLS);
  else if (pb)
    /* AMX: one column block per thread (the kernel converts all of its A
     * once per call) */
    line (c, "nt = nthreads, mb = M;");
  else if (!narrow)
    {
      line (c, "if (nthreads == 1 || batches * nt >= 2 * (int64_t) nthreads) {");
      line (c, "  if (batches == 1) nt = (nt + nthreads - 1) / nthreads * nthreads;");
      line (c, "  mb = M;");
      line (c, "}");
    }
  /* column blocks of packed B start at a panel */
  const char *align = c->ker->packed_b ? "MOROK_GEMM_NR" : "16";
  line (c, "const int64_t nb = MOROK_IMIN (N, ((N + nt - 1) / nt + %s - 1) / %s * %s);", align, align,
        align);
  line (c, "nt = (N + nb - 1) / nb;");
  line (c, "const int64_t mt = (M + mb - 1) / mb, tasks = batches * mt * nt;");
  if (c->ker->shared_tasks)
    line (c, "for (int64_t task = __atomic_fetch_add (next_task, 1, __ATOMIC_RELAXED); task < tasks;"
          " task = __atomic_fetch_add (next_task, 1, __ATOMIC_RELAXED)) {");
  else
    {
      line (c, "const int64_t t0 = tasks * tid / nthreads, t1 = tasks * (tid + 1) / nthreads;");
      line (c, "for (int64_t task = t0; task < t1; task++) {");
    }
  c->indent++;
  line (c, "const int64_t m0 = (task / nt %% mt) * mb, c0 = task %% nt * nb;");
  line (c, "const int64_t ml = MOROK_IMIN (mb, M - m0), c1 = MOROK_IMIN (c0 + nb, N);");
  char *idx[MOROK_MAX_RANK] = { NULL };
  split_rows (c, m, r - 2, "task / (nt * mt)", idx);
  GString *offa = g_string_new (oa), *offb = g_string_new (ob);
  for (guint i = 0; i + 2 < r; i++)
    {
      g_autofree char *sa = sym_c (a.stride[i]), *sb = sym_c (b.stride[i]);
      g_string_append_printf (offa, " + %s * %s", idx[i], sa);
      g_string_append_printf (offb, " + %s * %s", idx[i], sb);
    }
  /* the batch's C block: flat index of (idx..., 0, 0) */
  g_autofree char *batch = dims_flat (m, r - 2, idx);
  line (c, "float *restrict cb = out + (%s) * M * N;", batch);
  /* An epilogue runs over the columns the GEMM has just stored, MOROK_GEMM_NC
   * at a time, so that it reads them from L2 (FF1 + SiLU, 250 x 3072: the
   * pass over the whole block read 3 MB back from L3). The AMX kernel
   * converts all of A per call: one call. */
  gboolean amx = pb && morok_weight_pack_amx_parts (pb->pack.format);
  /* f32 and f16 with packed weights store each block into scratch, the
   * epilogue moves it into the output (weight-pack.h) */
  c->mm_block = pb && !amx && root != m;
  g_autofree char *step = c->mm_block ? g_strdup_printf ("%d", MOROK_WEIGHT_PACK_EPILOGUE_COLS)
                          : root != m && !narrow && !amx ? g_strdup ("MOROK_GEMM_NC")
                                                         : g_strdup ("nb");
  if (c->mm_block)
    line (c, "float *restrict cs = (float *) scratch;");
  line (c, "for (int64_t n0 = c0; n0 < c1; n0 += %s) {", step);
  c->indent++;
  line (c, "const int64_t nl = MOROK_IMIN (%s, c1 - n0);", step);
  if (narrow)
    {
      /* N is too narrow for the micro-kernel's vectors: compute the transpose
       * C^T = B^T A^T, which vectorises along M, into a tile on the stack.
       * morok_gemm_f32's unpacked paths cover N <= MOROK_GEMM_SMALL (8) by
       * themselves; this one still pays for 8 < N <= 16: [128, 387] x
       * [387, 12] runs 13 us this way and 42 us through the packed path. */
      line (c, "float ct[%d * %d];", MM_NARROW, MM_ROWS);
      line (c, "morok_gemm_f32 (nl, ml, K, b%u + (%s) + n0 * (%s), %s, %s, b%u + (%s) + m0 * (%s), %s, %s,"
            " ct, ml, 0);", bb, offb->str, sbn, sbn, sbk, ba, offa->str, sam, sak, sam);
      line (c, "for (int64_t i = 0; i < ml; i++)");
      line (c, "  for (int64_t j = 0; j < nl; j++)");
      line (c, "    cb[(m0 + i) * N + n0 + j] = ct[j * ml + i];");
    }
  else if (pb)
    {
      /* a panel of B is K x NR (f32) or K2 x NR pairs (f16, bf16, bf16x3):
       * column n0 starts n0 / NR panels in, n0 times a column's elements */
      guint bp = c->ker->packed_b - 1, parts = morok_weight_pack_amx_parts (pb->pack.format);
      gint64 k2 = morok_weight_pack_pairs (pb->pack.k, pb->pack.format);
      gint64 col = pb->pack.format == MOROK_PRECISION_F32 ? pb->pack.k : k2 * 2;
      g_autofree char *bhi = g_strdup_printf ("b%u + n0 * %" G_GINT64_FORMAT, bp, col);
      if (parts)
        {
          /* bf16x3: the lo copy in the buffer's second half */
          g_autofree char *blo
              = parts == 2 ? g_strdup_printf ("b%u + %" G_GSIZE_FORMAT " + n0 * %" G_GINT64_FORMAT,
                                              bp, pb->bytes / 4, col)
                           : g_strdup ("(const uint16_t *) 0");
          line (c, "morok_gemm_amx_packed (ml, nl, K, b%u + (%s) + m0 * (%s), %s, %s, %s, %s, %"
                G_GINT64_FORMAT ", cb + m0 * N + n0, N, 0, scratch);", ba, offa->str, sam, sam,
                sak, bhi, blo, k2);
        }
      else
        line (c, "morok_gemm_%s_packed (ml, nl, K, b%u + (%s) + m0 * (%s), %s, %s, %s, %s, 0);",
              pb->pack.format == MOROK_PRECISION_F16 ? "f16" : "f32",
              ba, offa->str, sam, sam, sak, bhi, c->mm_block ? "cs, nl" : "cb + m0 * N + n0, N");
    }
  else
    line (c, "morok_gemm_f32 (ml, nl, K, b%u + (%s) + m0 * (%s), %s, %s, b%u + (%s) + n0 * (%s), %s, %s,"
          " cb + m0 * N + n0, N, 0);", ba, offa->str, sam, sam, sak, bb, offb->str, sbn, sbk, sbn);
  g_string_free (offa, TRUE), g_string_free (offb, TRUE);
  gboolean ok = TRUE;
  if (root != m)
    {
      idx[r - 2] = g_strdup_printf ("i%u", r - 2);
      idx[r - 1] = g_strdup_printf ("i%u", r - 1);
      line (c, "for (int64_t i%u = m0; i%u < m0 + ml; i%u++)", r - 2, r - 2, r - 2);
      line (c, "for (int64_t i%u = n0; i%u < n0 + nl; i%u++) {", r - 1, r - 1, r - 1);
      c->indent++;
      scope_push (c);
      g_autofree char *v = render (c, root, idx);
      if (v)
        store (c, root, idx, v);
      ok = v != NULL;
      scope_pop (c);
      c->indent--;
      line (c, "}");
    }
  c->indent--;
  line (c, "}");
  c->indent--;
  line (c, "}");
  for (guint i = 0; i < r; i++)
    g_free (idx[i]);
  return ok;
}

/* ATTENTION: one call of morok_attention_f32 per batch item and block of
 * MOROK_ATT_QB query rows. */
static gboolean
render_attention_kernel (Ctx *c)
{
  MorokNode *n = c->ker->root;
  guint r = n->rank;
  MorokStrided s[MOROK_MAX_SRC];
  guint buf[MOROK_MAX_SRC];
  for (guint i = 0; i < n->n_src; i++)
    {
      if (!morok_schedule_strided (c->sched, n->src[i], &s[i]))
        {
          g_set_error (c->error, MOROK_GRAPH_ERROR, MOROK_GRAPH_ERROR_SCHEDULE,
                       "renderer: attention operand is not strided");
          return FALSE;
        }
      buf[i] = morok_schedule_buffer_of (c->sched, s[i].base) - 1;
    }
  g_autofree char *tq = sym_c (n->shape[r - 2]), *dv = sym_c (n->shape[r - 1]);
  g_autofree char *tk = sym_c (n->src[1]->shape[r - 2]), *d = sym_c (n->src[0]->shape[r - 1]);
  g_autofree char *scale = literal (MOROK_DTYPE_F32, n->value);
  g_autofree char *batches = dims_product (n, r - 2);
  line (c, "const int64_t TQ = %s, TK = %s, D = %s, DV = %s;", tq, tk, d, dv);
  line (c, "const int64_t qt = (TQ + MOROK_ATT_QB - 1) / MOROK_ATT_QB, tasks = %s * qt;",
        batches);
  line (c, "const int64_t t0 = tasks * tid / nthreads, t1 = tasks * (tid + 1) / nthreads;");
  line (c, "for (int64_t task = t0; task < t1; task++) {");
  c->indent++;
  line (c, "const int64_t m0 = task %% qt * MOROK_ATT_QB, ml = MOROK_IMIN (MOROK_ATT_QB, TQ - m0);");
  char *idx[MOROK_MAX_RANK] = { NULL };
  split_rows (c, n, r - 2, "task / qt", idx);
  /* each operand: base + offset + batch index . strides, and its row and element strides */
  char *arg[MOROK_MAX_SRC];
  for (guint i = 0; i < n->n_src; i++)
    {
      g_autofree char *off = sym_c (s[i].offset);
      GString *o = g_string_new (off);
      for (guint b = 0; b + 2 < r; b++)
        {
          g_autofree char *st = sym_c (s[i].stride[b]);
          g_string_append_printf (o, " + %s * %s", idx[b], st);
        }
      g_autofree char *sr = sym_c (s[i].stride[r - 2]), *se = sym_c (s[i].stride[r - 1]);
      if (i == 0) /* q starts at row m0 */
        g_string_append_printf (o, " + m0 * (%s)", sr);
      arg[i] = i == 3 ? g_strdup_printf ("b%u + (%s), %s", buf[i], o->str, se)
                      : g_strdup_printf ("b%u + (%s), %s, %s", buf[i], o->str, sr, se);
      g_string_free (o, TRUE);
    }
  g_autofree char *flat = dims_flat (n, r - 2, idx);
  line (c, "morok_attention_f32 (ml, TK, D, DV, %s, %s, %s, %s, %s, out + ((%s) * TQ + m0) * DV, DV);",
        arg[0], arg[1], arg[2], n->n_src > 3 ? arg[3] : "(const uint8_t *) 0, 0", scale, flat);
  for (guint i = 0; i < n->n_src; i++)
    g_free (arg[i]);
  for (guint i = 0; i < r; i++)
    g_free (idx[i]);
  c->indent--;
  line (c, "}");
  return TRUE;
}

/* ---- the translation unit ---- */

const char *
morok_render_prelude (void)
{
  return morok_kernel_prelude;
}

char *
morok_render_schedule (const MorokSchedule *sched, MorokIsa isa, GError **error)
{
  g_return_val_if_fail (sched != NULL, NULL);
  static const char *const isa_macro[] = { "MOROK_ISA_PORTABLE", "MOROK_ISA_AVX2", "MOROK_ISA_AVX512" };
  GString *out = g_string_new (NULL);
  g_string_append_printf (out, "#define %s 1\n#define MOROK_GEMM_SMALL %d\n%s\n", isa_macro[isa],
                          MOROK_GEMM_SMALL, morok_kernel_prelude);
  g_string_append (out, "#define MOROK_IMIN(a, b) ((a) < (b) ? (a) : (b))\n"
                        "#define MOROK_IMAX(a, b) ((a) > (b) ? (a) : (b))\n"
                        "#define MOROK_IDIV(a, b) ((a) / (b))\n"
                        "#define MOROK_IMOD(a, b) ((a) % (b))\n"
                        "#define MOROK_CLAMP(x, lo, hi) MOROK_IMIN (MOROK_IMAX (x, lo), hi)\n");
  for (guint k = 0; k < sched->kernels->len; k++)
    {
      Ctx c = { .sched = sched, .out = out, .error = error, .indent = 1,
                .ker = &g_array_index (sched->kernels, MorokScheduleKernel, k),
                .scopes = g_ptr_array_new_with_free_func ((GDestroyNotify) g_hash_table_unref) };
      g_autofree char *what = morok_node_describe (c.ker->root);
      g_string_append_printf (out, "\n/* kernel %u: %s%s */\n", k, what,
                              c.ker->kind == MOROK_KERNEL_MATMUL ? " (matmul)" : "");
      g_string_append_printf (out, "void morok_k%u (void *const *bufs, const int64_t *restrict v, "
                                   "uint32_t tid, uint32_t nthreads)\n{\n", k);
      g_string_append (out, "  (void) v;\n");
      declare_buffers (&c);
      gboolean ok = c.ker->kind == MOROK_KERNEL_MATMUL      ? render_matmul_kernel (&c)
                    : c.ker->kind == MOROK_KERNEL_ATTENTION ? render_attention_kernel (&c)
                                                             : render_loop_kernel (&c);
      g_string_append (out, "}\n");
      g_ptr_array_unref (c.scopes);
      if (!ok)
        {
          g_string_free (out, TRUE);
          return NULL;
        }
    }
  return g_string_free (out, FALSE);
}
