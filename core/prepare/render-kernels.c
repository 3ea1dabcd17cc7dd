/* SPDX-License-Identifier: MIT */
/* Kernel bodies: the output's store, the buffer declarations, the row
 * loops of element-wise and reduction kernels, attention and the DFT. */
#define G_LOG_DOMAIN "morok-prepare"
#include "prepare/render-private.h"
#include "kernels/weight-pack.h"
#include <math.h>
#include <string.h>

/* ---- kernels ---- */

void
render_store (Ctx *c, const MorokNode *root, char **idx, const char *v)
{
  g_autofree char *flat = render_flat_index (root, idx);
  if (root->dtype == MOROK_DTYPE_F16)
    render_line (c, "out[%s] = morok_f32_to_f16 (%s);", flat, v);
  else if (root->dtype == MOROK_DTYPE_BF16)
    render_line (c, "out[%s] = morok_f32_to_bf16 (%s);", flat, v);
  else
    render_line (c, "out[%s] = %s;", flat, v);
}

guint
render_buffer_slot (const Ctx *c, guint buf)
{
  const GArray *reads = c->ker->reads;
  for (guint r = 0; r < reads->len; r++)
    if (g_array_index (reads, guint, r) == buf)
      return r + 1;
  g_return_val_if_reached (0);
}

void
morok_render_kernel_bindings (const MorokScheduleKernel *k, GArray *out)
{
  g_array_append_val (out, k->out);
  g_array_append_vals (out, k->reads->data, k->reads->len);
  if (k->scratch)
    {
      guint s = k->scratch - 1;
      g_array_append_val (out, s);
    }
}

gboolean
render_store_value (Ctx *c, const MorokNode *root, char **idx, MorokNode *value, char **vidx)
{
  render_scope_push (c);
  g_autofree char *v = render_value (c, value, vidx);
  if (v)
    render_store (c, root, idx, v);
  render_scope_pop (c);
  return v != NULL;
}

void
render_declare_buffers (Ctx *c)
{
  const MorokScheduleKernel *k = c->ker;
  const MorokScheduleBuffer *ob = &g_array_index (c->sched->buffers, MorokScheduleBuffer, k->out);
  render_line (c, "%s *restrict out = (%s *) bufs[0];", render_storage_type (ob->node->dtype),
               render_storage_type (ob->node->dtype));
  for (guint r = 0; r < k->reads->len; r++)
    {
      guint b = g_array_index (k->reads, guint, r);
      const MorokScheduleBuffer *rb = &g_array_index (c->sched->buffers, MorokScheduleBuffer, b);
      const char *t = rb->kind != MOROK_BUFFER_PACKED ? render_storage_type (rb->node->dtype)
                      : rb->pack.format == MOROK_PRECISION_F32  ? "float"
                      : rb->pack.format == MOROK_PRECISION_INT8 ? "int8_t"
                                                                : "uint16_t";
      render_line (c, "const %s *restrict b%u = (const %s *) bufs[%u];", t, r + 1, t, r + 1);
    }
  /* this thread's slice of the plan's scratch memory, in the last slot */
  guint scratch_slot = k->reads->len + 1;
  if (k->scratch)
    render_line (c,
                 "uint16_t *restrict scratch = (uint16_t *) ((uint8_t *) bufs[%u] + tid * (size_t) "
                 "%" G_GSIZE_FORMAT ");",
                 scratch_slot, k->scratch_stride);
  if (k->shared_tasks)
    {
      const MorokScheduleBuffer *sb
          = &g_array_index (c->sched->buffers, MorokScheduleBuffer, k->scratch - 1);
      render_line (c,
                   "int64_t *next_task = (int64_t *) ((uint8_t *) bufs[%u] + %" G_GSIZE_FORMAT ");",
                   scratch_slot, sb->bytes - 64);
    }
}

/* Decomposes the flat row number @row into idx[0 .. n-1] over @n's dims. */
void
render_split_rows (Ctx *c, const MorokNode *n, guint count, const char *row, char **idx)
{
  if (count == 0)
    return;
  render_line (c, "int64_t rest = %s;", row);
  for (guint i = count; i-- > 0;)
    {
      g_autofree char *d = render_sym_c (n->shape[i]);
      idx[i] = g_strdup_printf ("i%u", i);
      if (i > 0)
        render_line (c, "const int64_t i%u = rest %% %s; rest /= %s;", i, d, d);
      else
        render_line (c, "const int64_t i0 = rest;");
    }
}

/* "1 * d0 * ... * d(count-1)" of @n's leading dims: the rows (or batch
 * items) a kernel shares out. (transfer full) */
char *
render_dims_product (const MorokNode *n, guint count)
{
  GString *p = g_string_new ("1");
  for (guint i = 0; i < count; i++)
    {
      g_autofree char *d = render_sym_c (n->shape[i]);
      g_string_append_printf (p, " * %s", d);
    }
  return g_string_free (p, FALSE);
}

/* The flat index of (idx[0], ..., idx[count-1]) over @n's leading dims.
 * (transfer full) */
char *
render_dims_flat (const MorokNode *n, guint count, char **idx)
{
  GString *f = g_string_new ("0");
  for (guint i = 0; i < count; i++)
    {
      g_autofree char *d = render_sym_c (n->shape[i]);
      g_autofree char *prev = g_strdup (f->str);
      g_string_printf (f, "(%s) * %s + %s", prev, d, idx[i]);
    }
  return g_string_free (f, FALSE);
}

/* A reflect pad of the last axis as the kernel's root: the row in three
 * loops, before, inside and after, each reading its source at one affine
 * index, instead of one loop choosing among three guarded reads for every
 * element, which clang turns into gathers (Silero's reflect-padded chunk,
 * [b, 640] of [b, 576]). FALSE (nothing rendered) for other roots. */
static gboolean
render_reflect_rows (Ctx *c, MorokNode *root, char **idx, gboolean *ok)
{
  guint r = root->rank, a = r - 1;
  gint64 lo, hi, d;
  if (r == 0 || root->op != MOROK_OP_PAD || root->pad_mode != MOROK_PAD_REFLECT
      || !morok_sym_is_const (root->lo[a], &lo) || !morok_sym_is_const (root->hi[a], &hi)
      || !morok_sym_is_const (root->src[0]->shape[a], &d))
    return FALSE;
  for (guint i = 0; i < a; i++)
    if (root->lo[i]->hi != 0 || root->hi[i]->hi != 0)
      return FALSE;
  /* region, first and end of the output index, source index of i */
  const struct
  {
    gint64 from, to;
    const char *at;
  } parts[] = {
    { 0, lo, "%" G_GINT64_FORMAT " - i%u" },
    { lo, lo + d, "i%2$u - %1$" G_GINT64_FORMAT },
    { lo + d, lo + d + hi, "%" G_GINT64_FORMAT " - i%u" },
  };
  const gint64 base[] = { lo, lo, 2 * (d - 1) + lo };
  char *sidx[MOROK_MAX_RANK];
  for (guint i = 0; i < a; i++)
    sidx[i] = idx[i];
  idx[a] = g_strdup_printf ("i%u", a);
  c->vector = root->shape[a]->hi >= VECTOR_MIN;
  *ok = TRUE;
  for (guint k = 0; k < G_N_ELEMENTS (parts) && *ok; k++)
    {
      if (parts[k].from >= parts[k].to)
        continue;
      render_line (c, render_no_unroll (parts[k].to - parts[k].from));
      render_line (c,
                   "for (int64_t i%u = %" G_GINT64_FORMAT "; i%u < %" G_GINT64_FORMAT "; i%u++) {",
                   a, parts[k].from, a, parts[k].to, a);
      c->indent++;
      sidx[a] = g_strdup_printf (parts[k].at, base[k], a);
      *ok = render_store_value (c, root, idx, root->src[0], sidx);
      g_free (sidx[a]);
      c->indent--;
      render_line (c, "}");
    }
  return TRUE;
}

/* The parts of @n, a cat of @axis or a part, at @off along it: the cats
 * nested in it that are no buffer of their own are opened too. Up to
 * @max parts; FALSE where a part's length is not a constant. */
static gboolean
cat_parts (const Ctx *c, MorokNode *n, guint axis, gint64 off, MorokNode **parts, gint64 *at,
           guint *n_parts, guint max)
{
  gint64 len;
  if (n->op == MOROK_OP_CAT && (guint) n->axis == axis
      && (n == c->ker->root || morok_schedule_buffer_of (c->sched, n) == 0)
      && morok_sym_is_const (n->src[0]->shape[axis], &len))
    return cat_parts (c, n->src[0], axis, off, parts, at, n_parts, max)
           && cat_parts (c, n->src[1], axis, off + len, parts, at, n_parts, max);
  if (*n_parts == max || !morok_sym_is_const (n->shape[axis], &len))
    return FALSE;
  parts[*n_parts] = n;
  at[(*n_parts)++] = off;
  return TRUE;
}

/* A cat of the last axis as the kernel's root: the row in one loop per
 * part, each reading its part at an affine index, instead of one loop
 * whose every element chooses among the parts (Silero's batched im2col,
 * [b, 256] of two convolutions' rows).
 * FALSE (nothing rendered) for other roots. */
static gboolean
render_cat_rows (Ctx *c, MorokNode *root, char **idx, gboolean *ok)
{
  guint r = root->rank, a = r - 1, n_parts = 0;
  MorokNode *parts[16];
  gint64 at[16];
  if (r == 0 || root->op != MOROK_OP_CAT || (guint) root->axis != a
      || !cat_parts (c, root, a, 0, parts, at, &n_parts, G_N_ELEMENTS (parts)))
    return FALSE;
  char *sidx[MOROK_MAX_RANK];
  for (guint i = 0; i < a; i++)
    sidx[i] = idx[i];
  idx[a] = g_strdup_printf ("i%u", a);
  *ok = TRUE;
  for (guint p = 0; p < n_parts && *ok; p++)
    {
      gint64 len = parts[p]->shape[a]->hi;
      render_line (c, render_no_unroll (len));
      render_line (c,
                   "for (int64_t i%u = %" G_GINT64_FORMAT "; i%u < %" G_GINT64_FORMAT "; i%u++) {",
                   a, at[p], a, at[p] + len, a);
      c->indent++;
      c->vector = len >= VECTOR_MIN;
      sidx[a] = g_strdup_printf ("(i%u - %" G_GINT64_FORMAT ")", a, at[p]);
      *ok = render_store_value (c, root, idx, parts[p], sidx);
      g_free (sidx[a]);
      c->indent--;
      render_line (c, "}");
    }
  return TRUE;
}

/* Where the views under @n (its last-axis index i + @off) change their
 * choice along the root's last axis: the edges of pads and cats of that
 * axis, into @brk (up to @max, @nb so far); @choice is set where one is a
 * reflect pad or a cat, which choose among loads. Views that map the last
 * axis otherwise, reductions and buffers end the walk. A guess is
 * harmless: each region between the edges renders the same expression. */
static void
last_axis_edges (const Ctx *c, MorokNode *n, gint64 off, gint64 *brk, guint *nb, guint max,
                 gboolean *choice)
{
  if ((n != c->ker->root && morok_schedule_buffer_of (c->sched, n)) || n->rank == 0
      || *nb + 2 > max)
    return;
  const guint a = n->rank - 1;
  gint64 lo, d;
  if (morok_op_is_elementwise (n->op))
    {
      for (guint i = 0; i < n->n_src; i++)
        if (n->src[i]->rank == n->rank)
          last_axis_edges (c, n->src[i], off, brk, nb, max, choice);
      return;
    }
  if (!morok_op_is_view (n->op))
    return;
  MorokNode *src = n->src[0];
  const guint sa = src->rank - 1;
  switch (n->op)
    {
    case MOROK_OP_SHRINK:
      if (morok_sym_is_const (n->lo[a], &lo))
        last_axis_edges (c, src, off + lo, brk, nb, max, choice);
      return;
    case MOROK_OP_PAD:
      if (morok_sym_is_const (n->lo[a], &lo) && morok_sym_is_const (src->shape[a], &d))
        {
          brk[(*nb)++] = lo - off;
          brk[(*nb)++] = lo + d - off;
          *choice |= n->pad_mode == MOROK_PAD_REFLECT;
          last_axis_edges (c, src, off - lo, brk, nb, max, choice);
        }
      return;
    case MOROK_OP_CAT:
      d = 0;
      if ((guint) n->axis == a)
        {
          if (!morok_sym_is_const (src->shape[a], &d))
            return;
          brk[(*nb)++] = d - off;
          *choice = TRUE;
        }
      last_axis_edges (c, src, off, brk, nb, max, choice);
      last_axis_edges (c, n->src[1], off - d, brk, nb, max, choice);
      return;
    case MOROK_OP_PERMUTE:
      if (n->perm[a] == sa)
        last_axis_edges (c, src, off, brk, nb, max, choice);
      return;
    case MOROK_OP_EXPAND:
    case MOROK_OP_RESHAPE:
      if (src->shape[sa] == n->shape[a])
        last_axis_edges (c, src, off, brk, nb, max, choice);
      return;
    case MOROK_OP_WINDOW:
      if ((guint) n->axis + 1 < a) /* the last axis is not the window's */
        last_axis_edges (c, src, off, brk, nb, max, choice);
      return;
    default: return;
    }
}

static int
cmp_gint64 (gconstpointer a, gconstpointer b)
{
  gint64 x = *(const gint64 *) a, y = *(const gint64 *) b;
  return (x > y) - (x < y);
}

/* The row of an element-wise root that reads a reflect pad or a cat of
 * the last axis in one loop per region between the edges of the pads and
 * cats it reads along that axis (at most 4), so that clang sees which
 * choice each region takes and drops the others (several times faster
 * on reflect-padded frames, [b, 4, 129]). Constant pads alone stay one
 * loop: their masked loads vectorise, and a region of 127 leaves a scalar
 * remainder (slower so). FALSE (nothing rendered) where there is one
 * region. */
static gboolean
render_region_rows (Ctx *c, MorokNode *root, char **idx, gboolean *ok)
{
  guint r = root->rank, a = r - 1, nb = 0, n = 0;
  gint64 D, brk[16], cut[G_N_ELEMENTS (brk) + 2];
  gboolean choice = FALSE;
  if (r == 0 || !morok_op_is_elementwise (root->op) || !morok_sym_is_const (root->shape[a], &D))
    return FALSE;
  last_axis_edges (c, root, 0, brk, &nb, G_N_ELEMENTS (brk), &choice);
  qsort (brk, nb, sizeof *brk, cmp_gint64);
  cut[n++] = 0;
  for (guint i = 0; i < nb; i++)
    if (brk[i] > cut[n - 1] && brk[i] < D)
      cut[n++] = brk[i];
  cut[n++] = D;
  if (!choice || n < 3 || n > 5)
    return FALSE;
  idx[a] = g_strdup_printf ("i%u", a);
  c->vector = D >= VECTOR_MIN;
  *ok = TRUE;
  for (guint k = 0; k + 1 < n && *ok; k++)
    {
      render_line (c, render_no_unroll (cut[k + 1] - cut[k]));
      render_line (c,
                   "for (int64_t i%u = %" G_GINT64_FORMAT "; i%u < %" G_GINT64_FORMAT "; i%u++) {",
                   a, cut[k], a, cut[k + 1], a);
      c->indent++;
      *ok = render_store_value (c, root, idx, root, idx);
      c->indent--;
      render_line (c, "}");
    }
  return TRUE;
}

/* A constant pad of leading axes alone as the kernel's root: a row of the
 * padding stores the value, any other row its source, unguarded, at the
 * shifted index (the padded magnitude before Silero's conv 0, [6, 129] of
 * [4, 129]: the vectorised loop computed the two padding rows' square
 * roots to mask them). FALSE (nothing rendered) for other roots. */
static gboolean
render_pad_rows (Ctx *c, MorokNode *root, char **idx, gboolean *ok)
{
  guint r = root->rank, a = r - 1;
  if (r < 2 || root->op != MOROK_OP_PAD || root->pad_mode != MOROK_PAD_CONSTANT
      || root->lo[a]->hi != 0 || root->hi[a]->hi != 0)
    return FALSE;
  MorokNode *src = root->src[0];
  GString *cond = g_string_new (NULL);
  char *sidx[MOROK_MAX_RANK];
  for (guint i = 0; i < a; i++)
    {
      if (root->lo[i]->hi == 0 && root->hi[i]->hi == 0)
        {
          sidx[i] = g_strdup (idx[i]);
          continue;
        }
      g_autofree char *lo = render_sym_c (root->lo[i]), *d = render_sym_c (src->shape[i]);
      sidx[i] = g_strdup_printf ("(%s - %s)", idx[i], lo);
      g_string_append_printf (cond, "%s(%s >= 0 && %s < %s)", cond->len ? " && " : "", sidx[i],
                              sidx[i], d);
    }
  idx[a] = g_strdup_printf ("i%u", a);
  sidx[a] = g_strdup (idx[a]);
  g_autofree char *d = render_sym_c (root->shape[a]);
  g_autofree char *pv = render_literal (root->dtype, root->value);
  c->vector = root->shape[a]->hi >= VECTOR_MIN;
  render_line (c, "if (%s) {", cond->len ? cond->str : "1");
  c->indent++;
  render_line (c, render_no_unroll (render_const_len (root->shape[a])));
  render_line (c, "for (int64_t i%u = 0; i%u < %s; i%u++) {", a, a, d, a);
  c->indent++;
  *ok = render_store_value (c, root, idx, src, sidx);
  c->indent--;
  render_line (c, "}");
  c->indent--;
  render_line (c, "} else {");
  c->indent++;
  render_line (c, render_no_unroll (render_const_len (root->shape[a])));
  render_line (c, "for (int64_t i%u = 0; i%u < %s; i%u++)", a, a, d, a);
  c->indent++;
  render_store (c, root, idx, pv);
  c->indent -= 2;
  render_line (c, "}");
  for (guint i = 0; i < r; i++)
    g_free (sidx[i]);
  g_string_free (cond, TRUE);
  return TRUE;
}

/* A reshape that merges the last axes of what it reads ([b, T', H, dh] ->
 * [b, T', d]: GigaAM's heads, rotated or out of attention) is rendered in
 * the shape it reads: the same bytes in the same order, with an inner loop
 * along dh whose reads are affine, where the loop along d divided each
 * index by dh (a gather per vector). */
static MorokNode *
loop_root (MorokNode *root)
{
  gint64 outer, inner;
  while (root->op == MOROK_OP_RESHAPE && root->rank > 0 && root->src[0]->rank > 0
         && morok_sym_is_const (root->shape[root->rank - 1], &outer)
         && morok_sym_is_const (root->src[0]->shape[root->src[0]->rank - 1], &inner)
         && inner >= 2 * VECTOR_MIN && inner < outer && outer % inner == 0)
    root = root->src[0];
  return root;
}

gboolean
render_loop_kernel (Ctx *c)
{
  MorokNode *root = loop_root (c->ker->root);
  guint r = root->rank;
  char *idx[MOROK_MAX_RANK] = { NULL };
  g_autofree char *rows = render_dims_product (root, r > 0 ? r - 1 : 0);
  render_line (c, "const int64_t rows = %s;", rows);
  render_line (c, "const int64_t r0 = rows * tid / nthreads, r1 = rows * (tid + 1) / nthreads;");
  render_line (c, NO_UNROLL);
  render_line (c, "for (int64_t row = r0; row < r1; row++) {");
  c->indent++;
  if (r > 0)
    render_split_rows (c, root, r - 1, "row", idx);
  gboolean ok;
  if (!render_reflect_rows (c, root, idx, &ok) && !render_cat_rows (c, root, idx, &ok)
      && !render_pad_rows (c, root, idx, &ok) && !render_region_rows (c, root, idx, &ok))
    {
      gsize mark = 0;
      if (r > 0)
        {
          g_autofree char *d = render_sym_c (root->shape[r - 1]);
          idx[r - 1] = g_strdup_printf ("i%u", r - 1);
          mark = render_loop_mark (c);
          render_line (c, render_no_unroll (render_const_len (root->shape[r - 1])));
          render_line (c, "for (int64_t i%u = 0; i%u < %s; i%u++) {", r - 1, r - 1, d, r - 1);
          c->vector = root->shape[r - 1]->hi >= VECTOR_MIN;
          c->indent++;
        }
      ok = render_store_value (c, root, idx, root, idx);
      if (r > 0)
        {
          c->indent--;
          render_line (c, "}");
          render_loop_vectorise (c, mark);
        }
    }
  c->indent--;
  render_line (c, "}");
  for (guint i = 0; i < r; i++)
    g_free (idx[i]);
  return ok;
}

/* ATTENTION: one call of morok_attention_f32 per batch item and block of
 * MOROK_ATT_QB query rows. */
gboolean
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
      buf[i] = render_buffer_slot (c, morok_schedule_buffer_of (c->sched, s[i].base) - 1);
    }
  g_autofree char *tq = render_sym_c (n->shape[r - 2]), *dv = render_sym_c (n->shape[r - 1]);
  g_autofree char *tk = render_sym_c (n->src[1]->shape[r - 2]),
                  *d = render_sym_c (n->src[0]->shape[r - 1]);
  g_autofree char *scale = render_literal (MOROK_DTYPE_F32, n->value);
  g_autofree char *batches = render_dims_product (n, r - 2);
  render_line (c, "const int64_t TQ = %s, TK = %s, D = %s, DV = %s;", tq, tk, d, dv);
  render_line (c, "const int64_t qt = (TQ + MOROK_ATT_QB - 1) / MOROK_ATT_QB, tasks = %s * qt;",
               batches);
  render_line (c, "const int64_t t0 = tasks * tid / nthreads, t1 = tasks * (tid + 1) / nthreads;");
  render_line (c, "for (int64_t task = t0; task < t1; task++) {");
  c->indent++;
  render_line (
      c, "const int64_t m0 = task %% qt * MOROK_ATT_QB, ml = MOROK_IMIN (MOROK_ATT_QB, TQ - m0);");
  char *idx[MOROK_MAX_RANK] = { NULL };
  render_split_rows (c, n, r - 2, "task / qt", idx);
  /* each operand: base + offset + batch index . strides, and its row and element strides */
  char *arg[MOROK_MAX_SRC];
  for (guint i = 0; i < n->n_src; i++)
    {
      g_autofree char *off = render_sym_c (s[i].offset);
      GString *o = g_string_new (off);
      for (guint b = 0; b + 2 < r; b++)
        {
          g_autofree char *st = render_sym_c (s[i].stride[b]);
          g_string_append_printf (o, " + %s * %s", idx[b], st);
        }
      g_autofree char *sr = render_sym_c (s[i].stride[r - 2]),
                      *se = render_sym_c (s[i].stride[r - 1]);
      if (i == 0) /* q starts at row m0 */
        g_string_append_printf (o, " + m0 * (%s)", sr);
      arg[i] = i == 3 ? g_strdup_printf ("b%u + (%s), %s", buf[i], o->str, se)
                      : g_strdup_printf ("b%u + (%s), %s, %s", buf[i], o->str, sr, se);
      g_string_free (o, TRUE);
    }
  g_autofree char *flat = render_dims_flat (n, r - 2, idx);
  render_line (
      c,
      "morok_attention_f32 (ml, TK, D, DV, %s, %s, %s, %s, %s, out + ((%s) * TQ + m0) * DV, DV);",
      arg[0], arg[1], arg[2], n->n_src > 3 ? arg[3] : "(const uint8_t *) 0, 0", scale, flat);
  for (guint i = 0; i < n->n_src; i++)
    g_free (arg[i]);
  for (guint i = 0; i < r; i++)
    g_free (idx[i]);
  c->indent--;
  render_line (c, "}");
  return TRUE;
}

/* DFT_MAG: one call of morok_dft_mag_f32 per 16 frames (its lanes), the
 * groups shared out over the threads, with the table of cosines and sines
 * of 2 pi j / L (j = 0 .. L/2) as constants of the function. */
gboolean
render_dft_kernel (Ctx *c)
{
  MorokNode *n = c->ker->root;
  guint r = n->rank;
  MorokStrided s[2];
  guint buf[2];
  for (guint i = 0; i < 2; i++)
    {
      if (!morok_schedule_strided (c->sched, n->src[i], &s[i]))
        {
          g_set_error (c->error, MOROK_GRAPH_ERROR, MOROK_GRAPH_ERROR_SCHEDULE,
                       "renderer: DFT operand is not strided");
          return FALSE;
        }
      buf[i] = render_buffer_slot (c, morok_schedule_buffer_of (c->sched, s[i].base) - 1);
    }
  const gint64 L = n->src[0]->shape[r - 1]->hi, F = L / 2 + 1;
  GString *tw = g_string_new (NULL);
  for (gint64 j = 0; j < 2 * F; j++)
    {
      double a = 2 * G_PI * (double) (j % F) / (double) L;
      g_string_append_printf (tw, "%s%af", j ? ", " : "", (float) (j < F ? cos (a) : sin (a)));
    }
  render_line (c, "static const float tws[%" G_GINT64_FORMAT "] = { %s };", 2 * F, tw->str);
  g_string_free (tw, TRUE);
  /* the table and L as values clang cannot see through: a unit that compiles
   * the function's body (no kernel library) must not specialise it to them,
   * or its products fold and contract otherwise than the library's */
  render_line (c, "const float *tw = tws;");
  render_line (c, "int64_t L = %" G_GINT64_FORMAT ";", L);
  render_line (c, "__asm__ (\"\" : \"+r\" (tw), \"+r\" (L));");
  g_autofree char *rows = render_dims_product (n, r - 1);
  render_line (c, "const int64_t R = %s, groups = (R + 15) / 16;", rows);
  render_line (c,
               "const int64_t g0 = groups * tid / nthreads, g1 = groups * (tid + 1) / nthreads;");
  render_line (c, "for (int64_t g = g0; g < g1; g++) {");
  c->indent++;
  render_line (c, "const int64_t r0 = g * 16, nr = MOROK_IMIN (16, R - r0);");
  render_line (c, "const float *fr[16];");
  render_line (c, "for (int64_t row = r0; row < r0 + nr; row++) {");
  c->indent++;
  char *idx[MOROK_MAX_RANK] = { NULL };
  render_split_rows (c, n, r - 1, "row", idx);
  g_autofree char *off = render_sym_c (s[0].offset);
  GString *o = g_string_new (off);
  for (guint b = 0; b + 1 < r; b++)
    {
      g_autofree char *st = render_sym_c (s[0].stride[b]);
      g_string_append_printf (o, " + %s * %s", idx[b], st);
    }
  render_line (c, "fr[row - r0] = b%u + (%s);", buf[0], o->str);
  g_string_free (o, TRUE);
  for (guint i = 0; i < r; i++)
    g_free (idx[i]);
  c->indent--;
  render_line (c, "}");
  g_autofree char *se = render_sym_c (s[0].stride[r - 1]);
  g_autofree char *woff = render_sym_c (s[1].offset), *sw = render_sym_c (s[1].stride[0]);
  render_line (
      c, "morok_dft_mag_f32 (nr, L, fr, %s, b%u + (%s), %s, tw, out + r0 * %" G_GINT64_FORMAT ");",
      se, buf[1], woff, sw, F);
  c->indent--;
  render_line (c, "}");
  return TRUE;
}
