/* SPDX-License-Identifier: MIT */
/* Every tensor operation against a naive reference (tests/ref.c) on random
 * data: odd sizes, broadcasting, and symbolic shapes at several values. */
#include "op-harness.h"
#include <math.h>

#define TOL 1e-5

static GRand *rng;

static Ref *
rnd (guint rank, const gint64 *shape)
{
  return ref_rand (rng, rank, shape, -2.0, 2.0);
}
#define SHAPE(...) G_N_ELEMENTS (((gint64[]){ __VA_ARGS__ })), ((gint64[]){ __VA_ARGS__ })
#define DIMS(...) ((gint64[]){ __VA_ARGS__ }), G_N_ELEMENTS (((gint64[]){ __VA_ARGS__ }))

/* ---- element-wise ---- */

static double
d_neg (double x)
{
  return -x;
}
static double
d_exp (double x)
{
  return exp (x);
}
static double
d_log (double x)
{
  return log (fabs (x) + 0.1);
}
static double
d_sqrt (double x)
{
  return sqrt (fabs (x));
}
static double
d_rsqrt (double x)
{
  return 1 / sqrt (fabs (x) + 0.1);
}
static double
d_recip (double x)
{
  return 1 / (x + 3);
}
static double
d_sigmoid (double x)
{
  return 1 / (1 + exp (-x));
}
static double
d_relu (double x)
{
  return x > 0 ? x : 0;
}
static double
d_silu (double x)
{
  return x / (1 + exp (-x));
}

/* Unary ops whose domain is restricted get their input shifted into it the
 * same way in the graph and in the reference. */
static MorokTensor *
m_log (MorokTensor *x, GError **e)
{
  return morok_tensor_log (morok_tensor_add_scalar (morok_tensor_abs (x, e), 0.1, e), e);
}
static MorokTensor *
m_sqrt (MorokTensor *x, GError **e)
{
  return morok_tensor_sqrt (morok_tensor_abs (x, e), e);
}
static MorokTensor *
m_rsqrt (MorokTensor *x, GError **e)
{
  return morok_tensor_rsqrt (morok_tensor_add_scalar (morok_tensor_abs (x, e), 0.1, e), e);
}
static MorokTensor *
m_recip (MorokTensor *x, GError **e)
{
  return morok_tensor_recip (morok_tensor_add_scalar (x, 3, e), e);
}

static const struct
{
  const char *name;
  MorokTensor *(*op) (MorokTensor *, GError **);
  RefUnary ref;
} unary_cases[] = {
  { "neg", morok_tensor_neg, d_neg },
  { "abs", morok_tensor_abs, fabs },
  { "exp", morok_tensor_exp, d_exp },
  { "log", m_log, d_log },
  { "sqrt", m_sqrt, d_sqrt },
  { "rsqrt", m_rsqrt, d_rsqrt },
  { "recip", m_recip, d_recip },
  { "sigmoid", morok_tensor_sigmoid, d_sigmoid },
  { "tanh", morok_tensor_tanh, tanh },
  { "relu", morok_tensor_relu, d_relu },
  { "silu", morok_tensor_silu, d_silu },
};

/* Each unary op matches libm in double on three shapes. */
static void
test_unary (void)
{
  const gint64 shapes[][3] = { { 7, 1, 1 }, { 3, 5, 1 }, { 2, 3, 17 } };
  for (guint k = 0; k < G_N_ELEMENTS (unary_cases); k++)
    for (guint s = 0; s < G_N_ELEMENTS (shapes); s++)
      {
        g_autoptr (Ref) a = rnd (s + 1, shapes[s]);
        g_autoptr (Ref) want = ref_map (a, unary_cases[k].ref);
        Case c;
        case_init (&c);
        GError *e = NULL;
        MorokTensor *y = unary_cases[k].op (case_input (&c, a), &e);
        g_assert_no_error (e);
        case_check (&c, y, want, TOL, unary_cases[k].name);
      }
}

static double
d_add (double a, double b)
{
  return a + b;
}
static double
d_sub (double a, double b)
{
  return a - b;
}
static double
d_mul (double a, double b)
{
  return a * b;
}
static double
d_div (double a, double b)
{
  return a / (fabs (b) + 0.5);
}
static double
d_max (double a, double b)
{
  return fmax (a, b);
}
static double
d_min (double a, double b)
{
  return fmin (a, b);
}
static double
d_pow (double a, double b)
{
  return pow (fabs (a) + 0.5, b);
}
static double
d_lt (double a, double b)
{
  return a < b;
}
static double
d_ge (double a, double b)
{
  return a >= b;
}
static double
d_eq (double a, double b)
{
  return a == b;
}

static MorokTensor *
m_div (MorokTensor *a, MorokTensor *b, GError **e)
{
  return morok_tensor_div (a, morok_tensor_add_scalar (morok_tensor_abs (b, e), 0.5, e), e);
}
static MorokTensor *
m_pow (MorokTensor *a, MorokTensor *b, GError **e)
{
  return morok_tensor_pow (morok_tensor_add_scalar (morok_tensor_abs (a, e), 0.5, e), b, e);
}
#define M_CMP(fn)                                                                                  \
  static MorokTensor *m_##fn (MorokTensor *a, MorokTensor *b, GError **e)                          \
  {                                                                                                \
    return morok_tensor_cast (morok_tensor_##fn (a, b, e), MOROK_DTYPE_F32, e);                    \
  }
M_CMP (lt)
M_CMP (ge)
M_CMP (eq)

static const struct
{
  const char *name;
  MorokTensor *(*op) (MorokTensor *, MorokTensor *, GError **);
  RefBinary ref;
} binary_cases[] = {
  { "add", morok_tensor_add, d_add },
  { "sub", morok_tensor_sub, d_sub },
  { "mul", morok_tensor_mul, d_mul },
  { "div", m_div, d_div },
  { "max", morok_tensor_maximum, d_max },
  { "min", morok_tensor_minimum, d_min },
  { "pow", m_pow, d_pow },
  { "lt", m_lt, d_lt },
  { "ge", m_ge, d_ge },
  { "eq", m_eq, d_eq },
};

/* Each binary op matches the reference with numpy broadcasting. */
static void
test_binary (void)
{
  const gint64 sa[][3] = { { 5, 3, 1 }, { 3, 1, 7 }, { 1, 1, 1 } };
  const gint64 sb[][3] = { { 5, 3, 1 }, { 1, 4, 7 }, { 2, 9, 1 } };
  const guint ra[] = { 2, 3, 1 }, rb[] = { 2, 3, 2 };
  for (guint k = 0; k < G_N_ELEMENTS (binary_cases); k++)
    for (guint s = 0; s < G_N_ELEMENTS (sa); s++)
      {
        g_autoptr (Ref) a = rnd (ra[s], sa[s]);
        g_autoptr (Ref) b = rnd (rb[s], sb[s]);
        if (s == 0 && k == 9) /* equal elements for eq */
          for (gint64 i = 0; i < b->n; i += 2)
            b->v[i] = a->v[i];
        g_autoptr (Ref) want = ref_zip (a, b, binary_cases[k].ref);
        Case c;
        case_init (&c);
        GError *e = NULL;
        MorokTensor *y = binary_cases[k].op (case_input (&c, a), case_input (&c, b), &e);
        g_assert_no_error (e);
        case_check (&c, y, want, TOL, binary_cases[k].name);
      }
}

/* Every unary and binary op computed on f16 and bf16 tensors (inputs cast
 * down, result cast back) stays within that type's precision: its inputs
 * and its result are each rounded once, to 11 (8) significant bits, and the
 * error stays within two units of 2^-11 (2^-8), relative to max (1, |value|)
 * (measured: within one). */
static void
test_half_precision (void)
{
  const struct
  {
    MorokDType t;
    double tol;
  } types[] = {
    { MOROK_DTYPE_F16, 2.0 / 2048 },
    { MOROK_DTYPE_BF16, 2.0 / 256 },
  };
  for (guint ti = 0; ti < G_N_ELEMENTS (types); ti++)
    {
      MorokDType t = types[ti].t;
      for (guint k = 0; k < G_N_ELEMENTS (unary_cases); k++)
        {
          g_autoptr (Ref) a = rnd (SHAPE (5, 13));
          g_autoptr (Ref) want = ref_map (a, unary_cases[k].ref);
          Case c;
          case_init (&c);
          GError *e = NULL;
          MorokTensor *x = morok_tensor_cast (case_input (&c, a), t, &e);
          MorokTensor *y = morok_tensor_cast (unary_cases[k].op (x, &e), MOROK_DTYPE_F32, &e);
          g_assert_no_error (e);
          case_check (&c, y, want, types[ti].tol, unary_cases[k].name);
        }
      for (guint k = 0; k < G_N_ELEMENTS (binary_cases); k++)
        {
          if (k >= 7) /* comparisons of rounded inputs flip near ties: not a precision matter */
            continue;
          g_autoptr (Ref) a = rnd (SHAPE (3, 1, 7));
          g_autoptr (Ref) b = rnd (SHAPE (1, 4, 7));
          g_autoptr (Ref) want = ref_zip (a, b, binary_cases[k].ref);
          Case c;
          case_init (&c);
          GError *e = NULL;
          MorokTensor *x = morok_tensor_cast (case_input (&c, a), t, &e);
          MorokTensor *z = morok_tensor_cast (case_input (&c, b), t, &e);
          MorokTensor *y = morok_tensor_cast (binary_cases[k].op (x, z, &e), MOROK_DTYPE_F32, &e);
          g_assert_no_error (e);
          case_check (&c, y, want, types[ti].tol, binary_cases[k].name);
        }
    }
}

/* where (a < b, a, b * 2) matches the reference. */
static void
test_where (void)
{
  g_autoptr (Ref) a = rnd (SHAPE (4, 9));
  g_autoptr (Ref) b = rnd (SHAPE (9));
  g_autoptr (Ref) cond = ref_zip (a, b, d_lt);
  g_autoptr (Ref) two = ref_new (0, NULL);
  two->v[0] = 2;
  g_autoptr (Ref) b2 = ref_zip (b, two, d_mul);
  g_autoptr (Ref) want = ref_where (cond, a, b2);
  Case c;
  case_init (&c);
  GError *e = NULL;
  MorokTensor *ta = case_input (&c, a), *tb = case_input (&c, b);
  MorokTensor *y = morok_tensor_where (morok_tensor_lt (ta, tb, &e), ta,
                                       morok_tensor_mul_scalar (tb, 2, &e), &e);
  g_assert_no_error (e);
  case_check (&c, y, want, TOL, "where");
}

/* ---- reductions ---- */

/* sum, max and mean over one or two axes, with and without keepdim. */
static void
test_reduce (void)
{
  const gint axes[][2] = { { 0, -1 }, { 1, -1 }, { 2, -1 }, { 0, 2 } };
  const guint n_axes[] = { 1, 1, 1, 2 };
  for (guint k = 0; k < G_N_ELEMENTS (axes); k++)
    for (int kind = 0; kind < 3; kind++)
      for (int keep = 0; keep < 2; keep++)
        {
          g_autoptr (Ref) a = rnd (SHAPE (3, 5, 13));
          guint32 mask = 0;
          double count = 1;
          for (guint i = 0; i < n_axes[k]; i++)
            mask |= 1u << axes[k][i], count *= a->shape[axes[k][i]];
          g_autoptr (Ref) want = ref_reduce (a, mask, kind == 1, keep);
          if (kind == 2)
            for (gint64 i = 0; i < want->n; i++)
              want->v[i] /= count;
          Case c;
          case_init (&c);
          GError *e = NULL;
          MorokTensor *x = case_input (&c, a);
          MorokTensor *y = kind == 0   ? morok_tensor_sum (x, axes[k], n_axes[k], keep, &e)
                           : kind == 1 ? morok_tensor_max (x, axes[k], n_axes[k], keep, &e)
                                       : morok_tensor_mean (x, axes[k], n_axes[k], keep, &e);
          g_assert_no_error (e);
          case_check (&c, y, want, TOL, "reduce");
        }
}

/* ---- movement ---- */

/* reshape, permute, expand, pad (constant and reflect), slice, cat and
 * window, each followed by an element-wise op so the view is fused. */
static void
test_views (void)
{
  GError *e = NULL;
  g_autoptr (Ref) a = rnd (SHAPE (2, 3, 5));
  {
    Case c;
    case_init (&c);
    g_autoptr (Ref) want = ref_reshape (a, SHAPE (6, 5));
    case_check (&c, morok_tensor_reshape_c (case_input (&c, a), DIMS (6, 5), &e), want, 0,
                "reshape merge");
  }
  {
    Case c;
    case_init (&c);
    g_autoptr (Ref) want = ref_reshape (a, SHAPE (3, 10));
    MorokTensor *x = morok_tensor_neg (case_input (&c, a), &e);
    g_autoptr (Ref) neg = ref_map (want, d_neg);
    case_check (&c, morok_tensor_reshape_c (x, DIMS (3, 10), &e), neg, 0, "reshape split");
  }
  {
    Case c;
    case_init (&c);
    const guint perm[] = { 2, 0, 1 };
    g_autoptr (Ref) want = ref_permute (a, perm);
    case_check (&c, morok_tensor_permute (case_input (&c, a), perm, 3, &e), want, 0, "permute");
  }
  {
    Case c;
    case_init (&c);
    /* permute then reshape: one group of dims ([3, 2, 5] -> [5, 6]) */
    const guint perm[] = { 1, 0, 2 };
    g_autoptr (Ref) p = ref_permute (a, perm);
    g_autoptr (Ref) want = ref_reshape (p, SHAPE (5, 6));
    MorokTensor *x = morok_tensor_permute (case_input (&c, a), perm, 3, &e);
    case_check (&c, morok_tensor_reshape_c (x, DIMS (5, 6), &e), want, 0, "permute+reshape");
  }
  for (int merge_last = 0; merge_last < 2; merge_last++)
    {
      /* the im2col pattern: a permuted view whose dims merge group by group,
       * [2, 5, 3] -> [2, 15] (2 stays, 5 x 3 merge) or [10, 3] */
      Case c;
      case_init (&c);
      const guint perm[] = { 0, 2, 1 };
      g_autoptr (Ref) p = ref_permute (a, perm);
      static const gint64 to[2][2] = { { 10, 3 }, { 2, 15 } };
      g_autoptr (Ref) want = ref_reshape (p, 2, to[merge_last]);
      MorokTensor *x
          = morok_tensor_permute (morok_tensor_neg (case_input (&c, a), &e), perm, 3, &e);
      g_autoptr (Ref) neg = ref_map (want, d_neg);
      case_check (&c, morok_tensor_reshape_c (x, to[merge_last], 2, &e), neg, 0,
                  "permute+reshape by groups");
    }
  {
    Case c;
    case_init (&c);
    g_autoptr (Ref) b = rnd (SHAPE (3, 1));
    g_autoptr (Ref) z = ref_new (3, (gint64[]){ 2, 3, 4 });
    g_autoptr (Ref) want = ref_zip (z, b, d_add);
    MorokSymPool *pool = morok_graph_sym_pool (c.g);
    const MorokSym *to[]
        = { morok_sym_const (pool, 2), morok_sym_const (pool, 3), morok_sym_const (pool, 4) };
    case_check (&c, morok_tensor_expand (case_input (&c, b), to, 3, &e), want, 0, "expand");
  }
  for (int reflect = 0; reflect < 2; reflect++)
    {
      Case c;
      case_init (&c);
      const gint64 before[] = { 0, 2, 1 }, after[] = { 1, 1, 3 };
      g_autoptr (Ref) want = ref_pad (a, before, after, reflect ? 0 : 0.5, reflect);
      MorokTensor *x = case_input (&c, a);
      MorokTensor *y = reflect ? morok_tensor_pad_reflect (x, before, after, &e)
                               : morok_tensor_pad (x, before, after, 0.5, &e);
      if (reflect) /* reflect pads must be smaller than the axis: axis 0 has 2 */
        g_assert_no_error (e);
      case_check (&c, y, want, 0, reflect ? "pad reflect" : "pad constant");
    }
  {
    Case c;
    case_init (&c);
    MorokSymPool *pool = morok_graph_sym_pool (c.g);
    g_autoptr (Ref) want = ref_slice (a, 2, 1, 3);
    case_check (&c,
                morok_tensor_slice (case_input (&c, a), 2, morok_sym_const (pool, 1),
                                    morok_sym_const (pool, 3), &e),
                want, 0, "slice");
  }
  {
    Case c;
    case_init (&c);
    g_autoptr (Ref) b = rnd (SHAPE (2, 4, 5));
    g_autoptr (Ref) want = ref_cat (a, b, 1);
    MorokTensor *ts[] = { case_input (&c, a), case_input (&c, b) };
    case_check (&c, morok_tensor_cat (ts, 2, 1, &e), want, 0, "cat");
  }
  /* along a last axis of 8 or more, the loop vectorises and pads and cats
   * read their sources through guarded loads (a reflect pad of one axis
   * as three reads): the same values */
  for (int reflect = 0; reflect < 2; reflect++)
    {
      Case c;
      case_init (&c);
      g_autoptr (Ref) x = rnd (SHAPE (2, 3, 20));
      const gint64 before[] = { 0, 0, 5 }, after[] = { 0, 0, 7 };
      g_autoptr (Ref) want = ref_pad (x, before, after, reflect ? 0 : -1.5, reflect);
      MorokTensor *in = morok_tensor_neg (morok_tensor_neg (case_input (&c, x), &e), &e);
      MorokTensor *y = reflect ? morok_tensor_pad_reflect (in, before, after, &e)
                               : morok_tensor_pad (in, before, after, -1.5, &e);
      case_check (&c, y, want, 0, reflect ? "wide pad reflect" : "wide pad constant");
    }
  /* a constant pad of the leading axes alone, stored by rows (a padding
   * row the value, any other its source): the same values, wide and
   * narrow */
  for (gint64 w = 5; w <= 20; w += 15)
    {
      Case c;
      case_init (&c);
      g_autoptr (Ref) x = rnd (SHAPE (2, 3, w));
      const gint64 before[] = { 1, 2, 0 }, after[] = { 0, 1, 0 };
      g_autoptr (Ref) want = ref_pad (x, before, after, -1.5, FALSE);
      MorokTensor *in = morok_tensor_neg (morok_tensor_neg (case_input (&c, x), &e), &e);
      case_check (&c, morok_tensor_pad (in, before, after, -1.5, &e), want, 0, "pad of rows");
    }
  /* a slice of a wide reflect pad renders only the reads its range can
   * reach (Silero's fold keeps the mirrored side alone): the same values
   * for a slice of the left side, of the left side and the middle, of the
   * middle, of the middle and the right side and of the right side */
  static const gint64 cuts[][2] = { { 0, 9 }, { 4, 16 }, { 12, 13 }, { 20, 15 }, { 29, 9 } };
  for (guint k = 0; k < G_N_ELEMENTS (cuts); k++)
    {
      Case c;
      case_init (&c);
      MorokSymPool *pool = morok_graph_sym_pool (c.g);
      g_autoptr (Ref) x = rnd (SHAPE (2, 3, 20));
      const gint64 before[] = { 0, 0, 9 }, after[] = { 0, 0, 9 };
      g_autoptr (Ref) xp = ref_pad (x, before, after, 0, TRUE);
      g_autoptr (Ref) want = ref_slice (xp, 2, cuts[k][0], cuts[k][1]);
      MorokTensor *in = morok_tensor_neg (morok_tensor_neg (case_input (&c, x), &e), &e);
      MorokTensor *y = morok_tensor_slice (morok_tensor_pad_reflect (in, before, after, &e), 2,
                                           morok_sym_const (pool, cuts[k][0]),
                                           morok_sym_const (pool, cuts[k][1]), &e);
      case_check (&c, y, want, 0, "slice of a wide pad reflect");
    }
  {
    /* the sum of a reflect pad and a constant pad of the last axis (the
     * row in a loop per region between their edges, as Silero's frame
     * folds): the same values */
    Case c;
    case_init (&c);
    g_autoptr (Ref) x = rnd (SHAPE (2, 3, 20));
    const gint64 before[] = { 0, 0, 5 }, after[] = { 0, 0, 7 };
    g_autoptr (Ref) r = ref_pad (x, before, after, 0, TRUE);
    g_autoptr (Ref) z = ref_pad (x, before, after, -1.5, FALSE);
    g_autoptr (Ref) want = ref_zip (r, z, d_add);
    MorokTensor *in = case_input (&c, x);
    MorokTensor *y = morok_tensor_add (morok_tensor_pad_reflect (in, before, after, &e),
                                       morok_tensor_pad (in, before, after, -1.5, &e), &e);
    case_check (&c, y, want, TOL, "reflect pad plus constant pad");
  }
  {
    /* a reflect pad read through another's, as Silero's frame folds read
     * the chunk's (the inner one is stored, the outer read in three
     * affine loops): the same values */
    Case c;
    case_init (&c);
    g_autoptr (Ref) x = rnd (SHAPE (2, 20));
    const gint64 b1[] = { 0, 0 }, a1[] = { 0, 6 }, b2[] = { 0, 0, 5 }, a2[] = { 0, 0, 2 };
    g_autoptr (Ref) xp = ref_pad (x, b1, a1, 0, TRUE);
    g_autoptr (Ref) w = ref_window (xp, 1, 8, 4, 1);
    g_autoptr (Ref) want = ref_pad (w, b2, a2, 0, TRUE);
    MorokTensor *in = case_input (&c, x);
    MorokTensor *y = morok_tensor_pad_reflect (
        morok_tensor_window (morok_tensor_pad_reflect (in, b1, a1, &e), 1, 8, 4, 1, &e), b2, a2,
        &e);
    case_check (&c, y, want, 0, "reflect pad of a reflect pad");
  }
  {
    Case c;
    case_init (&c);
    g_autoptr (Ref) x = rnd (SHAPE (2, 3, 20)), y = rnd (SHAPE (2, 3, 12));
    g_autoptr (Ref) want = ref_cat (x, y, 2);
    MorokTensor *ny = morok_tensor_neg (morok_tensor_neg (case_input (&c, y), &e), &e);
    MorokTensor *ts[] = { case_input (&c, x), ny };
    case_check (&c, morok_tensor_cat (ts, 2, 2, &e), want, 0, "wide cat");
  }
  {
    /* a cat of three parts along the last axis, one a slice of a wider
     * tensor and one too short to vectorise (each part its own loop, as
     * Silero's batched im2col): the same values */
    Case c;
    case_init (&c);
    g_autoptr (Ref) x = rnd (SHAPE (2, 3, 20)), y = rnd (SHAPE (2, 5, 9));
    g_autoptr (Ref) z = rnd (SHAPE (2, 3, 3));
    g_autoptr (Ref) ys = ref_slice (y, 1, 1, 3);
    g_autoptr (Ref) xy = ref_cat (x, ys, 2);
    g_autoptr (Ref) want = ref_cat (xy, z, 2);
    MorokSymPool *pool = morok_graph_sym_pool (c.g);
    MorokTensor *ts[] = { case_input (&c, x),
                          morok_tensor_slice (case_input (&c, y), 1, morok_sym_const (pool, 1),
                                              morok_sym_const (pool, 3), &e),
                          morok_tensor_neg (morok_tensor_neg (case_input (&c, z), &e), &e) };
    case_check (&c, morok_tensor_cat (ts, 3, 2, &e), want, 0, "cat of three along the last axis");
  }
  {
    Case c;
    case_init (&c);
    g_autoptr (Ref) x = rnd (SHAPE (2, 3, 17));
    g_autoptr (Ref) want = ref_window (x, 2, 4, 3, 2);
    case_check (&c, morok_tensor_window (case_input (&c, x), 2, 4, 3, 2, &e), want, 0, "window");
  }
  g_assert_no_error (e);
}

/* A symbolic length t in [1, 12]: the same ops at t = 1, 5 and 12, with the
 * input fed at its actual shape and a slice of symbolic length. */
static void
test_symbolic (void)
{
  const gint64 values[] = { 1, 5, 12 };
  for (guint k = 0; k < G_N_ELEMENTS (values); k++)
    {
      gint64 t = values[k];
      g_autoptr (Ref) a = rnd (SHAPE (3, t, 4));
      g_autoptr (Ref) w = rnd (SHAPE (4));
      g_autoptr (Ref) aw = ref_zip (a, w, d_mul);
      g_autoptr (Ref) s = ref_reduce (aw, 1u << 2, FALSE, FALSE); /* [3, t] */
      g_autoptr (Ref) p = ref_pad (s, (gint64[]){ 0, 1 }, (gint64[]){ 0, 0 }, 0, FALSE);
      g_autoptr (Ref) want = ref_slice (p, 1, 0, t); /* shift right by one along t */
      Case c;
      case_init (&c);
      GError *e = NULL;
      MorokSymPool *pool = morok_graph_sym_pool (c.g);
      MorokVariable *tv = morok_variable_new (pool, "t", 1, 12);
      const MorokSym *shape[]
          = { morok_sym_const (pool, 3), morok_sym_var (tv), morok_sym_const (pool, 4) };
      MorokTensor *x = case_input_sym (&c, a, shape);
      MorokTensor *y = morok_tensor_sum (morok_tensor_mul (x, case_weight (&c, w), &e),
                                         (gint[]){ 2 }, 1, FALSE, &e);
      y = morok_tensor_pad (y, (gint64[]){ 0, 1 }, (gint64[]){ 0, 0 }, 0, &e);
      y = morok_tensor_slice (y, 1, morok_sym_const (pool, 0), morok_sym_var (tv), &e);
      g_assert_no_error (e);
      c.vars[0] = (MorokVarValue){ "t", t };
      c.n_vars = 1;
      case_check (&c, y, want, TOL, "symbolic");
    }
}

/* Reshapes next to a symbolic dim, at t = 1, 5 and 12: splitting and
 * merging fixed dims behind [2, t] (a common prefix) and in front of
 * [t, 4] (a common suffix), after a permute so neither is a plain view. */
static void
test_symbolic_reshape (void)
{
  const gint64 values[] = { 1, 5, 12 };
  for (guint k = 0; k < G_N_ELEMENTS (values); k++)
    {
      gint64 t = values[k];
      g_autoptr (Ref) a = rnd (SHAPE (2, t, 12));
      g_autoptr (Ref) a4 = ref_reshape (a, SHAPE (2, t, 3, 4));
      const guint swap_last[] = { 0, 1, 3, 2 }, swap_mid[] = { 0, 2, 1, 3 };
      g_autoptr (Ref) p1 = ref_permute (a4, swap_last); /* [2, t, 4, 3] */
      g_autoptr (Ref) want1 = ref_reshape (p1, SHAPE (2, t, 12));
      g_autoptr (Ref) p2 = ref_permute (a4, swap_mid); /* [2, 3, t, 4] */
      g_autoptr (Ref) want2 = ref_reshape (p2, SHAPE (6, t, 4));
      for (int which = 0; which < 2; which++)
        {
          Case c;
          case_init (&c);
          GError *e = NULL;
          MorokSymPool *pool = morok_graph_sym_pool (c.g);
          MorokVariable *tv = morok_variable_new (pool, "t", 1, 12);
          const MorokSym *T = morok_sym_var (tv);
          const MorokSym *in[] = { morok_sym_const (pool, 2), T, morok_sym_const (pool, 12) };
          const MorokSym *split[]
              = { in[0], T, morok_sym_const (pool, 3), morok_sym_const (pool, 4) };
          MorokTensor *x = morok_tensor_reshape (case_input_sym (&c, a, in), split, 4, &e);
          MorokTensor *y;
          if (which == 0)
            y = morok_tensor_reshape (morok_tensor_permute (x, swap_last, 4, &e), in, 3, &e);
          else
            {
              const MorokSym *out[] = { morok_sym_const (pool, 6), T, morok_sym_const (pool, 4) };
              y = morok_tensor_reshape (morok_tensor_permute (x, swap_mid, 4, &e), out, 3, &e);
            }
          g_assert_no_error (e);
          c.vars[0] = (MorokVarValue){ "t", t };
          c.n_vars = 1;
          case_check (&c, y, which == 0 ? want1 : want2, 0, which == 0 ? "prefix" : "suffix");
        }
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  rng = g_rand_new_with_seed (1234);
  g_test_add_func ("/ops/elementwise/unary", test_unary);
  g_test_add_func ("/ops/elementwise/binary-broadcast", test_binary);
  g_test_add_func ("/ops/elementwise/where", test_where);
  g_test_add_func ("/ops/elementwise/f16-and-bf16-precision", test_half_precision);
  g_test_add_func ("/ops/reduce/sum-max-mean", test_reduce);
  g_test_add_func ("/ops/views/all", test_views);
  g_test_add_func ("/ops/symbolic/bound-values", test_symbolic);
  g_test_add_func ("/ops/symbolic/reshape-beside-variables", test_symbolic_reshape);
  int r = g_test_run ();
  g_rand_free (rng);
  return r;
}
