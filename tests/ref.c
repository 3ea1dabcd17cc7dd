/* SPDX-License-Identifier: MIT */
#include "ref.h"
#include <math.h>
#include <string.h>

Ref *
ref_new (guint rank, const gint64 *shape)
{
  Ref *r = g_new0 (Ref, 1);
  r->rank = rank;
  r->n = 1;
  for (guint i = 0; i < rank; i++)
    r->n *= r->shape[i] = shape[i];
  r->v = g_new0 (double, MAX (r->n, 1));
  return r;
}

Ref *
ref_rand (GRand *rng, guint rank, const gint64 *shape, double lo, double hi)
{
  Ref *r = ref_new (rank, shape);
  for (gint64 i = 0; i < r->n; i++)
    r->v[i] = (float) g_rand_double_range (rng, lo, hi); /* representable in f32 */
  return r;
}

void
ref_free (Ref *r)
{
  if (!r)
    return;
  g_free (r->v);
  g_free (r);
}

void
ref_unravel (const Ref *r, gint64 flat, gint64 *idx)
{
  for (guint i = r->rank; i-- > 0;)
    {
      idx[i] = flat % r->shape[i];
      flat /= r->shape[i];
    }
}

gint64
ref_ravel (const Ref *r, const gint64 *idx)
{
  gint64 f = 0;
  for (guint i = 0; i < r->rank; i++)
    f = f * r->shape[i] + idx[i];
  return f;
}

Ref *
ref_map (const Ref *a, RefUnary f)
{
  Ref *r = ref_new (a->rank, a->shape);
  for (gint64 i = 0; i < a->n; i++)
    r->v[i] = f (a->v[i]);
  return r;
}

/* index into @a of output index @idx (rank @rank), numpy broadcasting */
static gint64
bcast (const Ref *a, guint rank, const gint64 *idx)
{
  gint64 ai[REF_MAX_RANK];
  for (guint i = 0; i < a->rank; i++)
    {
      gint64 o = idx[rank - a->rank + i];
      ai[i] = a->shape[i] == 1 ? 0 : o;
    }
  return ref_ravel (a, ai);
}

static Ref *
bcast_out (const Ref *const *ts, guint n)
{
  guint rank = 0;
  gint64 shape[REF_MAX_RANK];
  for (guint i = 0; i < n; i++)
    rank = MAX (rank, ts[i]->rank);
  for (guint d = 0; d < rank; d++)
    {
      shape[d] = 1;
      for (guint i = 0; i < n; i++)
        {
          gint k = (gint) d - (gint) (rank - ts[i]->rank);
          if (k >= 0 && ts[i]->shape[k] != 1)
            shape[d] = ts[i]->shape[k];
        }
    }
  return ref_new (rank, shape);
}

Ref *
ref_zip (const Ref *a, const Ref *b, RefBinary f)
{
  const Ref *ts[] = { a, b };
  Ref *r = bcast_out (ts, 2);
  gint64 idx[REF_MAX_RANK];
  for (gint64 i = 0; i < r->n; i++)
    {
      ref_unravel (r, i, idx);
      r->v[i] = f (a->v[bcast (a, r->rank, idx)], b->v[bcast (b, r->rank, idx)]);
    }
  return r;
}

Ref *
ref_where (const Ref *c, const Ref *a, const Ref *b)
{
  const Ref *ts[] = { c, a, b };
  Ref *r = bcast_out (ts, 3);
  gint64 idx[REF_MAX_RANK];
  for (gint64 i = 0; i < r->n; i++)
    {
      ref_unravel (r, i, idx);
      r->v[i] = c->v[bcast (c, r->rank, idx)] != 0 ? a->v[bcast (a, r->rank, idx)]
                                                   : b->v[bcast (b, r->rank, idx)];
    }
  return r;
}

Ref *
ref_reduce (const Ref *a, guint32 mask, gboolean is_max, gboolean keepdim)
{
  gint64 shape[REF_MAX_RANK], kshape[REF_MAX_RANK];
  guint k = 0;
  for (guint i = 0; i < a->rank; i++)
    {
      shape[i] = (mask >> i & 1) ? 1 : a->shape[i];
      if (!(mask >> i & 1))
        kshape[k++] = a->shape[i];
    }
  Ref *r = ref_new (a->rank, shape);
  for (gint64 i = 0; i < r->n; i++)
    r->v[i] = is_max ? -INFINITY : 0;
  gint64 idx[REF_MAX_RANK];
  for (gint64 i = 0; i < a->n; i++)
    {
      ref_unravel (a, i, idx);
      for (guint d = 0; d < a->rank; d++)
        if (mask >> d & 1)
          idx[d] = 0;
      double *o = &r->v[ref_ravel (r, idx)];
      *o = is_max ? fmax (*o, a->v[i]) : *o + a->v[i];
    }
  if (!keepdim)
    {
      r->rank = k;
      memcpy (r->shape, kshape, sizeof kshape);
    }
  return r;
}

Ref *
ref_permute (const Ref *a, const guint *perm)
{
  gint64 shape[REF_MAX_RANK], idx[REF_MAX_RANK], src[REF_MAX_RANK];
  for (guint i = 0; i < a->rank; i++)
    shape[i] = a->shape[perm[i]];
  Ref *r = ref_new (a->rank, shape);
  for (gint64 i = 0; i < r->n; i++)
    {
      ref_unravel (r, i, idx);
      for (guint d = 0; d < a->rank; d++)
        src[perm[d]] = idx[d];
      r->v[i] = a->v[ref_ravel (a, src)];
    }
  return r;
}

Ref *
ref_reshape (const Ref *a, guint rank, const gint64 *shape)
{
  Ref *r = ref_new (rank, shape);
  g_assert_cmpint (r->n, ==, a->n);
  memcpy (r->v, a->v, a->n * sizeof (double));
  return r;
}

Ref *
ref_pad (const Ref *a, const gint64 *before, const gint64 *after, double value, gboolean reflect)
{
  gint64 shape[REF_MAX_RANK], idx[REF_MAX_RANK];
  for (guint i = 0; i < a->rank; i++)
    shape[i] = a->shape[i] + before[i] + after[i];
  Ref *r = ref_new (a->rank, shape);
  for (gint64 i = 0; i < r->n; i++)
    {
      ref_unravel (r, i, idx);
      gboolean inside = TRUE;
      for (guint d = 0; d < a->rank; d++)
        {
          gint64 s = idx[d] - before[d];
          if (reflect)
            s = s < 0 ? -s : s >= a->shape[d] ? 2 * (a->shape[d] - 1) - s : s;
          inside = inside && s >= 0 && s < a->shape[d];
          idx[d] = s;
        }
      r->v[i] = inside ? a->v[ref_ravel (a, idx)] : value;
    }
  return r;
}

Ref *
ref_slice (const Ref *a, guint axis, gint64 start, gint64 length)
{
  gint64 shape[REF_MAX_RANK], idx[REF_MAX_RANK];
  memcpy (shape, a->shape, sizeof shape);
  shape[axis] = length;
  Ref *r = ref_new (a->rank, shape);
  for (gint64 i = 0; i < r->n; i++)
    {
      ref_unravel (r, i, idx);
      idx[axis] += start;
      r->v[i] = a->v[ref_ravel (a, idx)];
    }
  return r;
}

Ref *
ref_cat (const Ref *a, const Ref *b, guint axis)
{
  gint64 shape[REF_MAX_RANK], idx[REF_MAX_RANK];
  memcpy (shape, a->shape, sizeof shape);
  shape[axis] += b->shape[axis];
  Ref *r = ref_new (a->rank, shape);
  for (gint64 i = 0; i < r->n; i++)
    {
      ref_unravel (r, i, idx);
      if (idx[axis] < a->shape[axis])
        r->v[i] = a->v[ref_ravel (a, idx)];
      else
        {
          idx[axis] -= a->shape[axis];
          r->v[i] = b->v[ref_ravel (b, idx)];
        }
    }
  return r;
}

Ref *
ref_window (const Ref *a, guint axis, gint64 size, gint64 stride, gint64 dilation)
{
  gint64 shape[REF_MAX_RANK], idx[REF_MAX_RANK], src[REF_MAX_RANK];
  for (guint i = 0, j = 0; i < a->rank; i++)
    {
      if (i == axis)
        {
          shape[j++] = (a->shape[i] - dilation * (size - 1) - 1) / stride + 1;
          shape[j++] = size;
        }
      else
        shape[j++] = a->shape[i];
    }
  Ref *r = ref_new (a->rank + 1, shape);
  for (gint64 i = 0; i < r->n; i++)
    {
      ref_unravel (r, i, idx);
      for (guint d = 0, j = 0; d < a->rank; d++, j++)
        {
          if (d == axis)
            {
              src[d] = idx[j] * stride + idx[j + 1] * dilation;
              j++;
            }
          else
            src[d] = idx[j];
        }
      r->v[i] = a->v[ref_ravel (a, src)];
    }
  return r;
}

Ref *
ref_matmul (const Ref *a, const Ref *b)
{
  guint rank = MAX (a->rank, b->rank);
  gint64 shape[REF_MAX_RANK], idx[REF_MAX_RANK], ai[REF_MAX_RANK], bi[REF_MAX_RANK];
  gint64 M = a->shape[a->rank - 2], K = a->shape[a->rank - 1], N = b->shape[b->rank - 1];
  for (guint d = 0; d + 2 < rank; d++)
    {
      gint ka = (gint) d - (gint) (rank - a->rank), kb = (gint) d - (gint) (rank - b->rank);
      gint64 da = ka >= 0 ? a->shape[ka] : 1, db = kb >= 0 ? b->shape[kb] : 1;
      shape[d] = da == 1 ? db : da;
    }
  shape[rank - 2] = M, shape[rank - 1] = N;
  Ref *r = ref_new (rank, shape);
  for (gint64 i = 0; i < r->n; i++)
    {
      ref_unravel (r, i, idx);
      double acc = 0;
      for (gint64 k = 0; k < K; k++)
        {
          for (guint d = 0; d < a->rank; d++)
            {
              gint64 o = d + 2 < a->rank ? idx[rank - a->rank + d] : 0;
              ai[d] = a->shape[d] == 1 && d + 2 < a->rank ? 0 : o;
            }
          for (guint d = 0; d < b->rank; d++)
            {
              gint64 o = d + 2 < b->rank ? idx[rank - b->rank + d] : 0;
              bi[d] = b->shape[d] == 1 && d + 2 < b->rank ? 0 : o;
            }
          ai[a->rank - 2] = idx[rank - 2], ai[a->rank - 1] = k;
          bi[b->rank - 2] = k, bi[b->rank - 1] = idx[rank - 1];
          acc += a->v[ref_ravel (a, ai)] * b->v[ref_ravel (b, bi)];
        }
      r->v[i] = acc;
    }
  return r;
}

Ref *
ref_conv (const Ref *x, const Ref *w, const Ref *b, guint ns, const gint64 *stride,
          const gint64 *padding, const gint64 *dilation, gint64 groups)
{
  gint64 B = x->shape[0], Cin = x->shape[1], Cout = w->shape[0], cig = Cin / groups;
  gint64 cog = Cout / groups, shape[4] = { B, Cout, 1, 1 }, S[2] = { 1, 1 }, Kk[2] = { 1, 1 };
  gint64 L[2] = { 1, 1 };
  for (guint s = 0; s < ns; s++)
    {
      L[s] = x->shape[2 + s];
      Kk[s] = w->shape[2 + s];
      S[s] = shape[2 + s] = (L[s] + 2 * padding[s] - dilation[s] * (Kk[s] - 1) - 1) / stride[s] + 1;
    }
  Ref *r = ref_new (2 + ns, shape);
  for (gint64 n = 0; n < B; n++)
    for (gint64 o = 0; o < Cout; o++)
      for (gint64 p = 0; p < S[0]; p++)
        for (gint64 q = 0; q < S[1]; q++)
          {
            gint64 g = o / cog;
            double acc = b ? b->v[o] : 0;
            for (gint64 c = 0; c < cig; c++)
              for (gint64 k0 = 0; k0 < Kk[0]; k0++)
                for (gint64 k1 = 0; k1 < Kk[1]; k1++)
                  {
                    gint64 y0 = p * stride[0] + k0 * dilation[0] - padding[0];
                    gint64 y1 = ns > 1 ? q * stride[1] + k1 * dilation[1] - padding[1] : 0;
                    if (y0 < 0 || y0 >= L[0] || y1 < 0 || y1 >= L[1])
                      continue;
                    gint64 xi = ((n * Cin + g * cig + c) * L[0] + y0) * L[1] + y1;
                    gint64 wi = ((o * cig + c) * Kk[0] + k0) * Kk[1] + k1;
                    acc += x->v[xi] * w->v[wi];
                  }
            r->v[((n * Cout + o) * S[0] + p) * S[1] + q] = acc;
          }
  return r;
}

double
ref_max_rel_error (const float *got, const Ref *want)
{
  double worst = 0;
  for (gint64 i = 0; i < want->n; i++)
    {
      double w = want->v[i], g = got[i];
      if (isnan (w) && isnan (g))
        continue;
      if (isinf (w) && g == w)
        continue;
      double e = fabs (g - w) / fmax (1.0, fabs (w));
      if (isnan (e))
        e = INFINITY;
      worst = fmax (worst, e);
    }
  return worst;
}
