/* SPDX-License-Identifier: MIT */
/* Naive reference arrays for the op tests: row-major, double precision,
 * written as the plainest loops, independent of everything Morok does. */
#pragma once

#include <glib.h>

#define REF_MAX_RANK 8

typedef struct
{
  guint rank;
  gint64 shape[REF_MAX_RANK];
  gint64 n;
  double *v;
} Ref;

Ref *ref_new (guint rank, const gint64 *shape);
Ref *ref_rand (GRand *rng, guint rank, const gint64 *shape, double lo, double hi);
void ref_free (Ref *r);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (Ref, ref_free)

/* flat <-> multi-index */
void ref_unravel (const Ref *r, gint64 flat, gint64 *idx);
gint64 ref_ravel (const Ref *r, const gint64 *idx);

typedef double (*RefUnary) (double);
typedef double (*RefBinary) (double, double);
Ref *ref_map (const Ref *a, RefUnary f);
Ref *ref_zip (const Ref *a, const Ref *b, RefBinary f); /* numpy broadcasting */
Ref *ref_where (const Ref *c, const Ref *a, const Ref *b);
Ref *ref_reduce (const Ref *a, guint32 axes_mask, gboolean is_max, gboolean keepdim);
Ref *ref_permute (const Ref *a, const guint *perm);
Ref *ref_reshape (const Ref *a, guint rank, const gint64 *shape);
Ref *ref_pad (const Ref *a, const gint64 *before, const gint64 *after, double value,
              gboolean reflect);
Ref *ref_slice (const Ref *a, guint axis, gint64 start, gint64 length);
Ref *ref_cat (const Ref *a, const Ref *b, guint axis);
Ref *ref_window (const Ref *a, guint axis, gint64 size, gint64 stride, gint64 dilation);
Ref *ref_matmul (const Ref *a, const Ref *b); /* [..., M, K] x [..., K, N], batch broadcast */
Ref *ref_conv (const Ref *x, const Ref *w, const Ref *b, guint n_spatial, const gint64 *stride,
               const gint64 *padding, const gint64 *dilation, gint64 groups);

/* max |a - b| / max (1, |b|) over all elements; shapes must be equal */
double ref_max_rel_error (const float *got, const Ref *want);
