/* SPDX-License-Identifier: MIT */
/* Values and indices. A kernel's value is rendered by walking its root's
 * inline region: each node is computed at a multi-index given as C
 * expressions, view ops only rewrite the index, realized nodes are loads,
 * reductions become loops. Values are memoised per (node, index) within a
 * loop scope, so a shared subexpression is computed once. */
#define G_LOG_DOMAIN "morok-prepare"
#include "prepare/render-private.h"
#include <math.h>
#include <string.h>

/* ---- small helpers ---- */

const char *
render_storage_type (MorokDType t)
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
  return morok_dtype_is_float (t) ? "float" : render_storage_type (t);
}

char *
render_sym_c (const MorokSym *s)
{
  GString *g = g_string_new (NULL);
  morok_sym_render (s, g, "v[%u]");
  return g_string_free (g, FALSE);
}

void
render_line (Ctx *c, const char *fmt, ...)
{
  va_list ap;
  for (guint i = 0; i < c->indent; i++)
    g_string_append (c->out, "  ");
  va_start (ap, fmt);
  g_string_append_vprintf (c->out, fmt, ap);
  va_end (ap);
  g_string_append_c (c->out, '\n');
}

/* clang vectorises a loop over several buffers behind run-time checks
 * that they do not overlap, which it cannot make for a conditional load:
 * a loop with guarded loads stayed scalar (GigaAM's depthwise convolution,
 * five taps of a zero-padded input). A kernel's
 * buffers never overlap (they are declared restrict, which clang does not
 * carry from locals into the loops), so such a loop is marked as safe. */
gsize
render_loop_mark (Ctx *c)
{
  c->guarded = FALSE;
  return c->out->len;
}

void
render_loop_vectorise (Ctx *c, gsize mark)
{
  if (c->guarded && c->vector)
    g_string_insert (c->out, mark, "#pragma clang loop vectorize(assume_safety)\n");
  c->guarded = FALSE;
}

static char *
tmp (Ctx *c, const char *prefix)
{
  return g_strdup_printf ("%s%u", prefix, c->n_tmp++);
}

void
render_scope_push (Ctx *c)
{
  g_ptr_array_add (c->scopes, g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free));
}

void
render_scope_pop (Ctx *c)
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
char *
render_flat_index (const MorokNode *n, char **idx)
{
  if (n->rank == 0)
    return g_strdup ("0");
  GString *g = g_string_new (idx[0]);
  for (guint i = 1; i < n->rank; i++)
    {
      g_autofree char *d = render_sym_c (n->shape[i]);
      GString *w = g_string_new (NULL);
      g_string_printf (w, "(%s) * %s + %s", g->str, d, idx[i]);
      g_string_free (g, TRUE);
      g = w;
    }
  return g_string_free (g, FALSE);
}

char *
render_literal (MorokDType t, double v)
{
  if (!morok_dtype_is_float (t))
    return g_strdup_printf ("(%s) %.0f", render_storage_type (t), v);
  if (isnan (v))
    return g_strdup ("__builtin_nanf (\"\")");
  if (isinf (v))
    return g_strdup (v > 0 ? "__builtin_inff ()" : "(-__builtin_inff ())");
  return g_strdup_printf ("%af", v); /* hex: exact, and always a float literal */
}

/* ---- values ---- */

static char *
load (Ctx *c, MorokNode *n, guint buf, char **idx)
{
  g_autofree char *flat = render_flat_index (n, idx);
  /* the kernel's own buffer is declared as `out` (a matmul epilogue reads it) */
  g_autofree char *name = buf == c->ker->out ? g_strdup ("out")
                                             : g_strdup_printf ("b%u", render_buffer_slot (c, buf));
  char *t = tmp (c, "t");
  /* under a constant pad or a cat (render_guarded) */
  c->guarded = c->guarded || c->guard;
  g_autofree char *at = c->guard ? g_strdup_printf ("(%s) ? %s[%s] : 0", c->guard, name, flat)
                                 : g_strdup_printf ("%s[%s]", name, flat);
  if (n->dtype == MOROK_DTYPE_F16)
    render_line (c, "const float %s = morok_f16_to_f32 (%s);", t, at);
  else if (n->dtype == MOROK_DTYPE_BF16)
    render_line (c, "const float %s = morok_bf16_to_f32 (%s);", t, at);
  else
    render_line (c, "const %s %s = %s;", compute_type (n->dtype), t, at);
  return t;
}

static char *
unary_expr (MorokNode *n, const char *a)
{
  gboolean f = morok_dtype_is_float (n->src[0]->dtype);
  switch (n->op)
    {
    case MOROK_OP_NEG: return g_strdup_printf ("-%s", a);
    case MOROK_OP_ABS:
      return f ? g_strdup_printf ("__builtin_fabsf (%s)", a)
               : g_strdup_printf ("(%s < 0 ? -%s : %s)", a, a, a);
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
    [MOROK_OP_ADD] = "+",    [MOROK_OP_SUB] = "-",    [MOROK_OP_MUL] = "*",
    [MOROK_OP_DIV] = "/",    [MOROK_OP_CMPLT] = "<",  [MOROK_OP_CMPLE] = "<=",
    [MOROK_OP_CMPEQ] = "==", [MOROK_OP_CMPNE] = "!=",
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

/* A reduction as a loop over its reduced axes, inside the current scope. */
static char *
render_reduce (Ctx *c, MorokNode *n, char **idx)
{
  MorokNode *src = n->src[0];
  char *acc = tmp (c, "acc");
  g_autofree char *init = render_literal (n->dtype, n->op == MOROK_OP_SUM ? 0.0 : -INFINITY);
  /* a float max runs on morok_f32_key's integers, so that it vectorises */
  gboolean keys = n->op == MOROK_OP_RMAX && morok_dtype_is_float (n->dtype);
  if (keys)
    render_line (c, "int32_t %s = morok_f32_key (%s);", acc, init);
  else
    render_line (c, "%s %s = %s;", compute_type (n->dtype), acc,
                 n->op != MOROK_OP_RMAX        ? init
                 : n->dtype == MOROK_DTYPE_I32 ? "(-2147483647 - 1)"
                                               : "(int64_t) ((uint64_t) 1 << 63)");
  char *sidx[MOROK_MAX_RANK];
  guint opened = 0;
  for (guint i = 0; i < src->rank; i++)
    {
      if (n->axes_mask >> i & 1)
        {
          g_autofree char *d = render_sym_c (src->shape[i]);
          sidx[i] = tmp (c, "r");
          render_line (c, "for (int64_t %s = 0; %s < %s; %s++) {", sidx[i], sidx[i], d, sidx[i]);
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
  render_scope_push (c);
  g_autofree char *v = render_value (c, src, sidx);
  c->vector = vector;
  if (v)
    {
      if (n->op == MOROK_OP_SUM)
        render_line (c, "%s += %s;", acc, v);
      else if (keys)
        render_line (c, "%s = morok_f32_key (%s) > %s ? morok_f32_key (%s) : %s;", acc, v, acc, v,
                     acc);
      else
        render_line (c, "%s = %s > %s ? %s : %s;", acc, v, acc, v, acc);
    }
  render_scope_pop (c);
  while (opened--)
    {
      c->indent--;
      render_line (c, "}");
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
      render_line (c, "const float %s = morok_f32_from_key (%s);", f, acc);
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
                   : k == j
                       ? g_strdup_printf ("(%s / %" G_GINT64_FORMAT ")", f, stride)
                       : g_strdup_printf ("(%s / %" G_GINT64_FORMAT " %% %" G_GINT64_FORMAT ")", f,
                                          stride, d);
          stride *= d;
        }
      g_free (f);
      i = i1, j = j1;
    }
  for (guint k = 0; k < groups->len; k++)
    render_line (c, "%s", (const char *) groups->pdata[k]);
  g_ptr_array_unref (groups);
  memcpy (sidx, out, src->rank * sizeof *sidx);
  return TRUE;
fail:
  for (guint k = 0; k < src->rank; k++)
    g_free (out[k]);
  g_ptr_array_unref (groups);
  return FALSE;
}

static gboolean
is_zero (const MorokSym *s)
{
  gint64 v;
  return morok_sym_is_const (s, &v) && v == 0;
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
          g_autofree char *lo = render_sym_c (n->lo[i]);
          sidx[i]
              = is_zero (n->lo[i]) ? g_strdup (idx[i]) : g_strdup_printf ("(%s + %s)", idx[i], lo);
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
            g_autofree char *lo = render_sym_c (n->lo[i]), *d = render_sym_c (src->shape[i]);
            if (is_zero (n->lo[i]) && n->hi[i]->hi == 0)
              {
                sidx[i] = g_strdup (idx[i]);
                continue;
              }
            char *s = tmp (c, "p");
            render_line (c, "int64_t %s = %s - %s;", s, idx[i], lo);
            if (n->pad_mode == MOROK_PAD_REFLECT)
              {
                render_line (c, "%s = %s < 0 ? -%s : %s;", s, s, s, s);
                render_line (c, "%s = %s >= %s ? 2 * (%s - 1) - %s : %s;", s, s, d, d, s, s);
              }
            else
              {
                g_string_append_printf (cnd, "%s(%s >= 0 && %s < %s)", cnd->len ? " && " : "", s, s,
                                        d);
                if (!c->vector)
                  {
                    render_line (c, "const int64_t %sc = MOROK_CLAMP (%s, 0, %s - 1);", s, s, d);
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
        g_autofree char *la = render_sym_c (n->src[0]->shape[n->axis]);
        g_autofree char *lb = render_sym_c (n->src[1]->shape[n->axis]);
        for (guint i = 0; i < n->rank; i++)
          sidx[i]
              = i != (guint) n->axis ? g_strdup (idx[i])
                : c->vector
                    ? (which == 0 ? g_strdup (idx[i]) : g_strdup_printf ("(%s - %s)", idx[i], la))
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
            g_autofree char *d = render_sym_c (n->shape[i]);
            g_autofree char *prev = g_strdup (flat->str);
            g_string_printf (flat, "(%s) * %s + %s", prev, d, idx[i]);
          }
        char *f = tmp (c, "f");
        render_line (c, "const int64_t %s = %s;", f, flat->str);
        g_string_free (flat, TRUE);
        g_autofree char *stride = g_strdup ("1");
        for (guint k = src->rank - suf; k-- > pre;)
          {
            g_autofree char *d = render_sym_c (src->shape[k]);
            sidx[k] = k == pre ? g_strdup_printf ("(%s / (%s))", f, stride)
                               : g_strdup_printf ("((%s / (%s)) %% %s)", f, stride, d);
            char *ns = g_strdup_printf ("%s * %s", stride, d);
            g_free (stride);
            stride = ns;
          }
        g_free (f);
        return;
      }
    default: g_assert_not_reached ();
    }
}

/* @n at @idx, its loads guarded by @cond (NULL: none) and the guards
 * around. In a loop clang vectorises, the padded or concatenated side of a
 * view is rendered this way, its index not clamped: a load is conditional
 * (a masked load once vectorised) and the view's select drops the value
 * where @cond is false; clamped indices inside the innermost loop are not
 * affine, and clang left such loops scalar. In scalar code the index is
 * clamped (view_index) and the loads are plain: conditional loads there
 * are branches, mispredicted (Silero v4's depthwise taps ran slower). */
static char *
render_guarded (Ctx *c, MorokNode *n, char **idx, const char *cond)
{
  char *outer = c->guard;
  if (cond && c->vector)
    c->guard = outer ? g_strdup_printf ("%s && %s", outer, cond) : g_strdup (cond);
  char *v = render_value (c, n, idx);
  if (c->guard != outer)
    g_free (c->guard);
  c->guard = outer;
  return v;
}

/* A reflect pad of one axis as three guarded reads of its source, before,
 * inside and after (pad < size: one reflection), each an affine index
 * that vectorises (the two mirrored ones as reversed loads); NULL when more
 * than one axis is padded. @range (NULL: the pad's length) bounds the
 * index along the padded axis wherever the value is used: a read that
 * cannot happen there is not rendered, nor its select, and one that always
 * happens needs no guard of its own (Silero's frame folds, before its STFT
 * was an FFT, kept the mirrored side alone: one reversed load in place of
 * three guarded ones and two selects). */
static char *
render_reflect (Ctx *c, MorokNode *n, char **idx, const gint64 *range)
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
  g_autofree char *lo = render_sym_c (n->lo[axis]), *d = render_sym_c (src->shape[axis]);
  char *p = tmp (c, "p");
  render_line (c, "const int64_t %s = %s - %s;", p, idx[axis], lo);
  /* p's bounds against the source's length: which reads may, and which
   * must, happen */
  const gint64 from = range ? range[0] : 0, to = range ? range[1] : n->shape[axis]->hi - 1;
  const gint64 p0 = from - n->lo[axis]->hi, p1 = to - n->lo[axis]->lo;
  const gint64 d0 = src->shape[axis]->lo, d1 = src->shape[axis]->hi;
  const gboolean may[3] = { p0 < 0, p1 >= d0, p1 >= 0 && p0 < d1 };
  const gboolean must[3] = { p1 < 0, p0 >= d1, p0 >= 0 && p1 < d0 };
  char *sidx[MOROK_MAX_RANK];
  for (guint i = 0; i < n->rank; i++)
    sidx[i] = idx[i];
  g_autofree char *at_lo = g_strdup_printf ("(-%s)", p);
  g_autofree char *at_hi = g_strdup_printf ("(2 * (%s - 1) - %s)", d, p);
  char *at[3] = { at_lo, at_hi, p };
  char *in[3] = { g_strdup_printf ("%s < 0", p), g_strdup_printf ("%s >= %s", p, d),
                  g_strdup_printf ("%s >= 0 && %s < %s", p, p, d) };
  char *v[3] = { NULL, NULL, NULL };
  gboolean ok = TRUE;
  for (guint b = 0; b < 3; b++)
    if (may[b])
      {
        sidx[axis] = at[b];
        v[b] = render_guarded (c, src, sidx, must[b] ? NULL : in[b]);
        ok = ok && v[b];
      }
  char *t = NULL;
  const guint last = may[2] ? 2 : may[1] ? 1 : 0;
  if (ok && may[0] + may[1] + may[2] == 1)
    t = g_strdup (v[last]);
  else if (ok)
    {
      /* a select among the reads that may happen, the last one the default */
      GString *e = g_string_new (NULL);
      for (guint b = 0; b < last; b++)
        if (may[b])
          g_string_append_printf (e, "%s ? %s : ", in[b], v[b]);
      g_string_append (e, v[last]);
      t = tmp (c, "t");
      render_line (c, "const %s %s = %s;", compute_type (n->dtype), t, e->str);
      g_string_free (e, TRUE);
    }
  for (guint b = 0; b < 3; b++)
    g_free (in[b]), g_free (v[b]);
  g_free (p);
  return t;
}

/* A one-axis reflect pad computed inline, read through a shrink @n of it:
 * the pad rendered for the range the shrink keeps (render_reflect); NULL
 * when @n is not that. */
static char *
render_shrunk_reflect (Ctx *c, MorokNode *n, char **idx)
{
  MorokNode *src = n->src[0];
  if (n->op != MOROK_OP_SHRINK || src->op != MOROK_OP_PAD || src->pad_mode != MOROK_PAD_REFLECT
      || morok_schedule_buffer_of (c->sched, src))
    return NULL;
  gint axis = -1;
  for (guint i = 0; i < src->rank; i++)
    if (src->lo[i]->hi != 0 || src->hi[i]->hi != 0)
      axis = axis < 0 ? (gint) i : G_MAXINT;
  if (axis < 0 || axis == G_MAXINT)
    return NULL;
  char *sidx[MOROK_MAX_RANK], *cond;
  view_index (c, n, 0, idx, sidx, &cond);
  const gint64 range[2] = { n->lo[axis]->lo, n->lo[axis]->hi + n->shape[axis]->hi - 1 };
  char *t = render_reflect (c, src, sidx, range);
  for (guint i = 0; i < src->rank; i++)
    g_free (sidx[i]);
  g_free (cond);
  return t;
}

static char *
render_view (Ctx *c, MorokNode *n, char **idx)
{
  if (n->op == MOROK_OP_PAD && n->pad_mode == MOROK_PAD_REFLECT && c->vector)
    {
      char *t = render_reflect (c, n, idx, NULL);
      if (t || (c->error && *c->error))
        return t;
    }
  if (c->vector)
    {
      char *t = render_shrunk_reflect (c, n, idx);
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
      g_autofree char *pv = render_literal (n->dtype, n->value);
      render_line (c, "const %s %s = (%s) ? %s : %s;", compute_type (n->dtype), t, cond, v, pv);
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
        render_line (c, "const %s %s = (%s) ? %s : %s;", compute_type (n->dtype), t, cond, v, v1);
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
      render_line (c, "const float %s = cs[(%s - m0) * nl + %s - n0];", t, idx[n->rank - 2],
                   idx[n->rank - 1]);
      return t;
    }
  if (buf && n != c->ker->root)
    return load (c, n, buf - 1, idx);
  if (n->op == MOROK_OP_CONST)
    return render_literal (n->dtype, n->value);
  if (morok_op_is_view (n->op))
    return render_view (c, n, idx);
  if (morok_op_is_reduce (n->op))
    return render_reduce (c, n, idx);
  if (!morok_op_is_elementwise (n->op))
    {
      g_autofree char *d = morok_node_describe (n);
      g_set_error (c->error, MOROK_GRAPH_ERROR, MOROK_GRAPH_ERROR_SCHEDULE,
                   "renderer: cannot inline %s", d);
      return NULL;
    }
  char *v[3] = { NULL, NULL, NULL };
  for (guint i = 0; i < n->n_src; i++)
    if (!(v[i] = render_value (c, n->src[i], idx)))
      {
        for (guint k = 0; k < i; k++)
          g_free (v[k]);
        return NULL;
      }
  g_autofree char *e = n->op == MOROK_OP_WHERE ? g_strdup_printf ("%s ? %s : %s", v[0], v[1], v[2])
                       : n->n_src == 1         ? unary_expr (n, v[0])
                                               : binary_expr (n, v[0], v[1]);
  for (guint i = 0; i < n->n_src; i++)
    g_free (v[i]);
  char *t = tmp (c, "t");
  render_line (c, "const %s %s = %s;", compute_type (n->dtype), t, e);
  return t;
}

char *
render_value (Ctx *c, MorokNode *n, char **idx)
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
