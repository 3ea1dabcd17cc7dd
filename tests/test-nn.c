/* SPDX-License-Identifier: MIT */
/* Composite layers (matmul, linear, convolutions, softmax, norms, GLU, LSTM
 * cell, attention) and dtypes against naive references (tests/ref.c). */
#include "op-harness.h"
#include "kernels/weight-pack.h"
#include <math.h>

#define TOL 1e-5

static GRand *rng;

#define SHAPE(...) G_N_ELEMENTS (((gint64[]){ __VA_ARGS__ })), ((gint64[]){ __VA_ARGS__ })

static Ref *
rnd (guint rank, const gint64 *shape)
{
  return ref_rand (rng, rank, shape, -1.0, 1.0);
}

/* Batched matmul with broadcast batch dims, odd sizes, both operands inputs,
 * and with a transposed weight; on every contraction path. */
static void
test_matmul (void)
{
  const struct
  {
    guint ra;
    gint64 a[4];
    guint rb;
    gint64 b[4];
  } cases[] = {
    { 2, { 1, 1 }, 2, { 1, 1 } },
    { 2, { 7, 13 }, 2, { 13, 5 } },
    { 2, { 70, 33 }, 2, { 33, 600 } },
    { 3, { 3, 5, 9 }, 2, { 9, 17 } },
    { 4, { 2, 1, 4, 6 }, 3, { 3, 6, 5 } },
    { 2, { 1, 129 }, 2, { 129, 31 } },
    /* narrow N, wide M: contracted transposed */
    { 2, { 130, 40 }, 2, { 40, 3 } },
    { 3, { 2, 70, 9 }, 2, { 9, 16 } },
  };
  for (MorokIsa isa = MOROK_ISA_PORTABLE; isa <= morok_isa_detect (); isa++)
    for (guint k = 0; k < G_N_ELEMENTS (cases); k++)
      {
        g_autoptr (Ref) a = rnd (cases[k].ra, cases[k].a);
        g_autoptr (Ref) b = rnd (cases[k].rb, cases[k].b);
        g_autoptr (Ref) want = ref_matmul (a, b);
        Case c;
        case_init (&c);
        c.isa = isa, c.isa_set = TRUE;
        GError *e = NULL;
        MorokTensor *y = morok_tensor_matmul (case_input (&c, a), case_input (&c, b), &e);
        g_assert_no_error (e);
        case_check (&c, y, want, TOL, morok_isa_name (isa));
        /* the same with b as a weight, transposed in the graph */
        const guint perm[] = { 1, 0 };
        if (cases[k].rb != 2)
          continue;
        g_autoptr (Ref) bt = ref_permute (b, perm);
        case_init (&c);
        c.isa = isa, c.isa_set = TRUE;
        y = morok_tensor_matmul (case_input (&c, a),
                                 morok_tensor_transpose (case_weight (&c, bt), 0, 1, &e), &e);
        g_assert_no_error (e);
        case_check (&c, y, want, TOL, "matmul transposed weight");
      }
}

/* Products with a weight as B and M, N past the small paths: B is packed at
 * prepare into panels of NR columns (64, 16, 4 by ISA), stored as given or
 * transposed, with batch broadcast, K over a KC block, and M symbolic (run
 * from 1 row to its bound); each packed once, and the result exact. */
static void
test_matmul_packed (void)
{
  const struct
  {
    gint64 batch, m, k, n;
  } cases[] = {
    { 1, 70, 33, 600 },
    { 3, 20, 300, 130 },
    { 1, 9, 257, 70 },
    { 2, 100, 200, 64 },
  };
  const guint nr[] = { [MOROK_ISA_PORTABLE] = 4, [MOROK_ISA_AVX2] = 16, [MOROK_ISA_AVX512] = 64 };
  for (MorokIsa isa = MOROK_ISA_PORTABLE; isa <= morok_isa_detect (); isa++)
    for (guint k = 0; k < G_N_ELEMENTS (cases); k++)
      for (int transposed = 0; transposed < 2; transposed++)
        for (gint64 rows = 1; rows <= cases[k].m; rows += cases[k].m / 2)
          {
            g_autoptr (Ref) a = rnd (SHAPE (cases[k].batch, rows, cases[k].k));
            g_autoptr (Ref) b = rnd (SHAPE (cases[k].k, cases[k].n));
            g_autoptr (Ref) want = ref_matmul (a, b);
            g_autoptr (Ref) bt = ref_permute (b, (guint[]){ 1, 0 });
            Case c;
            case_init (&c);
            c.isa = isa, c.isa_set = TRUE;
            GError *e = NULL;
            MorokSymPool *pool = morok_graph_sym_pool (c.g);
            MorokVariable *mv = morok_variable_new (pool, "m", 1, cases[k].m);
            const MorokSym *shape[] = { morok_sym_const (pool, cases[k].batch), morok_sym_var (mv),
                                        morok_sym_const (pool, cases[k].k) };
            MorokTensor *w = transposed ? morok_tensor_transpose (case_weight (&c, bt), 0, 1, &e)
                                        : case_weight (&c, b);
            MorokTensor *y = morok_tensor_matmul (case_input_sym (&c, a, shape), w, &e);
            g_assert_no_error (e);
            c.vars[0] = (MorokVarValue){ "m", rows };
            c.n_vars = 1;
            case_check (&c, y, want, TOL, "matmul packed weight");
            gint64 panels = (cases[k].n + nr[isa] - 1) / nr[isa];
            g_assert_cmpuint (c.packed_bytes, ==, panels * nr[isa] * cases[k].k * sizeof (float));
          }
}

/* TRUE, the test skipped saying which instruction is missing, where this
 * CPU does not run @precision's products */
static gboolean
skip_unless_runs (MorokPrecision precision)
{
  const char *missing = morok_weight_pack_missing (morok_isa_detect (), precision);
  if (!missing)
    return FALSE;
  g_test_skip_printf ("precision %s: %s missing", morok_precision_name (precision), missing);
  return TRUE;
}

typedef struct
{
  gint64 batch, m, k, n;
} PackedShape;

/* Packed weights in a reduced precision, plans for @isa: A [batch, m, k] . B
 * [k, n] (and B given as a transposed [n, k] weight) against @want_of (a,
 * b), within @tol_per_sqrt_k * sqrt (K) of max (1, |C|); the packed panels
 * of @nr columns take @bytes_of (k, n, nr) bytes. */
static void
check_packed (MorokPrecision precision, MorokIsa isa, const PackedShape *cases, guint n_cases,
              Ref *(*want_of) (const Ref *a, const Ref *b), double tol_per_sqrt_k,
              gsize (*bytes_of) (gint64 k, gint64 n, gint64 nr))
{
  gint64 nr = morok_weight_pack_nr (isa);
  g_autofree char *what
      = g_strdup_printf ("matmul packed weight, %s", morok_precision_name (precision));
  for (guint k = 0; k < n_cases; k++)
    for (int transposed = 0; transposed < 2; transposed++)
      {
        g_autoptr (Ref) a = rnd (SHAPE (cases[k].batch, cases[k].m, cases[k].k));
        g_autoptr (Ref) b = rnd (SHAPE (cases[k].k, cases[k].n));
        g_autoptr (Ref) want = want_of (a, b);
        g_autoptr (Ref) bt = ref_permute (b, (guint[]){ 1, 0 });
        Case c;
        case_init (&c);
        c.precision = precision;
        c.isa = isa, c.isa_set = TRUE;
        GError *e = NULL;
        MorokTensor *w = transposed ? morok_tensor_transpose (case_weight (&c, bt), 0, 1, &e)
                                    : case_weight (&c, b);
        MorokTensor *y = morok_tensor_matmul (case_input (&c, a), w, &e);
        g_assert_no_error (e);
        case_check (&c, y, want, tol_per_sqrt_k * sqrt ((double) cases[k].k), what);
        g_assert_cmpuint (c.packed_bytes, ==, bytes_of (cases[k].k, cases[k].n, nr));
      }
}

static double
round_f16 (double x)
{
  return (double) (_Float16) x;
}

/* the exact product of the operands rounded by @round */
static Ref *
product_of_rounded (const Ref *a, const Ref *b, double (*round) (double))
{
  g_autoptr (Ref) ar = ref_map (a, round);
  g_autoptr (Ref) br = ref_map (b, round);
  return ref_matmul (ar, br);
}

/* of the operands rounded to f16: what is left is the error of summing in f16 */
static Ref *
product_of_f16 (const Ref *a, const Ref *b)
{
  return product_of_rounded (a, b, round_f16);
}

static gsize
f16_bytes (gint64 k, gint64 n, gint64 nr)
{
  return (gsize) ((n + nr - 1) / nr * nr * ((k + 1) / 2) * 2 * 2);
}

/* f16 (AVX512-FP16 only): B packed in f16 pairs, A rounded to f16, at most
 * 32 products summed in f16, then in f32. Against the exact product of the
 * f16-rounded operands, so that what is measured is the summation: it grows
 * as sqrt (K), measured at most 1.5e-3 sqrt (K) relative to max (1, |C|) on
 * these uniform [-1, 1] operands (K = 768: 2.4e-2), held to 2.5e-3 sqrt (K);
 * a dropped or misplaced product is off by about |C|. */
static void
test_matmul_packed_f16 (void)
{
  if (skip_unless_runs (MOROK_PRECISION_F16))
    return;
  const PackedShape cases[] = {
    { 1, 70, 33, 600 },
    { 3, 20, 300, 130 },
    { 1, 9, 257, 70 },
    { 1, 250, 768, 768 },
  };
  check_packed (MOROK_PRECISION_F16, MOROK_ISA_AVX512, cases, G_N_ELEMENTS (cases), product_of_f16,
                2.5e-3, f16_bytes);
}

static double
d_add (double a, double b)
{
  return a + b;
}

static double
relu (double x)
{
  return x > 0 ? x : 0;
}

/* x rounded to bf16, to nearest even (as vcvtne2ps2bf16 and the packing) */
static double
round_bf16 (double x)
{
  float f = (float) x;
  guint32 u;
  memcpy (&u, &f, sizeof u);
  u = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
  memcpy (&f, &u, sizeof f);
  return f;
}

static Ref *
product_of_bf16 (const Ref *a, const Ref *b)
{
  return product_of_rounded (a, b, round_bf16);
}

static gsize
bf16_bytes (gint64 k, gint64 n, gint64 nr)
{
  return (gsize) (((n + nr - 1) / nr) * nr * ((k + 31) / 32 * 16) * 2 * 2);
}

/* hi and lo */
static gsize
bf16x3_bytes (gint64 k, gint64 n, gint64 nr)
{
  return 2 * bf16_bytes (k, n, nr);
}

/* relu (A . B + R) with B packed: the epilogue reads each block of C from
 * the thread's scratch; the blocks of 128 columns (the last one partial) go
 * to whichever thread asks first, several to each; M symbolic, run from 1
 * row to its bound; f32 products on every ISA, then each reduced precision
 * this CPU runs but int8 (its own test below; bf16 and bf16x3 on vdpbf16ps
 * also keep A rounded in the scratch, once per batch item, for all its
 * blocks). */
static void
test_matmul_packed_epilogue (void)
{
  const PackedShape cases[] = { { 2, 100, 200, 600 }, { 1, 40, 33, 1100 } };
  typedef struct
  {
    MorokPrecision precision;
    MorokIsa isa;
    Ref *(*want_of) (const Ref *a, const Ref *b);
    double tol_per_sqrt_k; /* 0: TOL */
  } Run;
  Run runs[8];
  guint n_runs = 0;
  for (int isa = MOROK_ISA_PORTABLE; isa <= (int) morok_isa_detect (); isa++)
    runs[n_runs++] = (Run){ MOROK_PRECISION_F32, (MorokIsa) isa, ref_matmul, 0 };
  const Run reduced[] = {
    { MOROK_PRECISION_F16, MOROK_ISA_AVX512, product_of_f16, 2.5e-3 },
    { MOROK_PRECISION_BF16, MOROK_ISA_AVX512, product_of_bf16, 1e-6 },
    { MOROK_PRECISION_BF16X3, MOROK_ISA_AVX512, ref_matmul, 1e-5 },
  };
  for (guint i = 0; i < G_N_ELEMENTS (reduced); i++)
    if (morok_weight_pack_missing (morok_isa_detect (), reduced[i].precision))
      g_test_message ("epilogue: no %s here (%s missing)",
                      morok_precision_name (reduced[i].precision),
                      morok_weight_pack_missing (morok_isa_detect (), reduced[i].precision));
    else
      runs[n_runs++] = reduced[i];
  for (guint run = 0; run < n_runs; run++)
    for (guint k = 0; k < G_N_ELEMENTS (cases); k++)
      for (gint64 rows = 1; rows <= cases[k].m; rows += cases[k].m / 2)
        {
          g_autoptr (Ref) a = rnd (SHAPE (cases[k].batch, rows, cases[k].k));
          g_autoptr (Ref) b = rnd (SHAPE (cases[k].k, cases[k].n));
          g_autoptr (Ref) r = rnd (SHAPE (cases[k].batch, rows, cases[k].n));
          g_autoptr (Ref) ab = runs[run].want_of (a, b);
          g_autoptr (Ref) sum = ref_zip (ab, r, d_add);
          g_autoptr (Ref) want = ref_map (sum, relu);
          Case c;
          case_init (&c);
          c.precision = runs[run].precision;
          c.isa = runs[run].isa, c.isa_set = TRUE;
          GError *e = NULL;
          MorokSymPool *pool = morok_graph_sym_pool (c.g);
          MorokVariable *mv = morok_variable_new (pool, "m", 1, cases[k].m);
          const MorokSym *sa[] = { morok_sym_const (pool, cases[k].batch), morok_sym_var (mv),
                                   morok_sym_const (pool, cases[k].k) };
          const MorokSym *sr[] = { sa[0], sa[1], morok_sym_const (pool, cases[k].n) };
          MorokTensor *y
              = morok_tensor_matmul (case_input_sym (&c, a, sa), case_weight (&c, b), &e);
          y = morok_tensor_relu (morok_tensor_add (y, case_input_sym (&c, r, sr), &e), &e);
          g_assert_no_error (e);
          c.vars[0] = (MorokVarValue){ "m", rows };
          c.n_vars = 1;
          double tol = runs[run].tol_per_sqrt_k
                           ? runs[run].tol_per_sqrt_k * sqrt ((double) cases[k].k)
                           : TOL;
          g_autofree char *what = g_strdup_printf ("matmul packed weight, epilogue, %s",
                                                   morok_precision_name (c.precision));
          case_check (&c, y, want, tol, what);
          g_assert_cmpuint (c.packed_bytes, >, 0);
        }
}

/* bf16x3 (AMX-BF16, else vdpbf16ps on AVX512-BF16): each product as hi.hi + hi.lo + lo.hi of the
 * operands split into two bf16 parts, f32 sums. Against the exact product
 * of the operands themselves: measured at most 6e-6 sqrt (K) relative to
 * max (1, |C|), held to 1e-5 sqrt (K) (K = 768: 2.8e-4; f16 is 100 times
 * further off); leaving out any one of the three products costs about 2^-9
 * of each product, 2e-3 sqrt (K). Odd sizes: partial 32 x 32 blocks of C,
 * k past the last tile, batches, column blocks over threads. */
static void
test_matmul_packed_bf16x3 (void)
{
  if (skip_unless_runs (MOROK_PRECISION_BF16X3))
    return;
  const PackedShape cases[] = {
    { 1, 70, 33, 600 },   { 3, 20, 300, 130 }, { 1, 9, 257, 70 },
    { 1, 250, 768, 768 }, { 2, 47, 1000, 33 },
  };
  check_packed (MOROK_PRECISION_BF16X3, MOROK_ISA_AVX512, cases, G_N_ELEMENTS (cases), ref_matmul,
                1e-5, bf16x3_bytes);
}

/* bf16 (AMX-BF16, else vdpbf16ps on AVX512-BF16): hi.hi alone. The products of bf16 operands are
 * exact in f32, so against the exact product of the bf16-rounded operands
 * what is left is summing in f32: measured at most 2e-7 sqrt (K) relative
 * to max (1, |C|), held to 1e-6 sqrt (K); against the operands themselves
 * it is about 1e-3 sqrt (K) off (the rounding), which this would catch, as
 * it would a product taken twice or a lo part left in. */
static void
test_matmul_packed_bf16 (void)
{
  if (skip_unless_runs (MOROK_PRECISION_BF16))
    return;
  const PackedShape cases[] = {
    { 1, 70, 33, 600 },
    { 3, 20, 300, 130 },
    { 1, 250, 768, 768 },
    { 2, 47, 1000, 33 },
  };
  check_packed (MOROK_PRECISION_BF16, MOROK_ISA_AVX512, cases, G_N_ELEMENTS (cases),
                product_of_bf16, 1e-6, bf16_bytes);
}

/* @r [..., rows, cols] as f32, each row (@by_row) or column quantised the
 * way precision int8 does (kernels/weight-pack.h, morok-gemm-i8.h): scale
 * s = max |x| / L in f32, x -> s * rint (x * (L / max)), to nearest even;
 * L = 127, or @amax for rows (the activations: 63 on AVX2 without VNNI) */
static Ref *
quantised (const Ref *r, gboolean by_row, int amax)
{
  gint64 rows = r->shape[r->rank - 2], cols = r->shape[r->rank - 1];
  gint64 lines = by_row ? r->n / cols : cols, len = by_row ? cols : rows;
  Ref *q = ref_new (r->rank, r->shape);
  for (gint64 batch = 0; batch < r->n / (rows * cols); batch++)
    for (gint64 l = 0; l < (by_row ? rows : lines); l++)
      {
        const gint64 base = batch * rows * cols, step = by_row ? 1 : cols;
        const gint64 first = base + (by_row ? l * cols : l);
        float m = 0.0f;
        for (gint64 t = 0; t < len; t++)
          m = MAX (m, fabsf ((float) r->v[first + t * step]));
        float levels = by_row ? (float) amax : 127.0f;
        float inv = m > 0.0f ? levels / m : 0.0f, s = m / levels;
        for (gint64 t = 0; t < len; t++)
          q->v[first + t * step] = (double) s * rintf ((float) r->v[first + t * step] * inv);
      }
  return q;
}

/* the activations' levels of the int8 plan under test */
static int int8_amax = 127;

/* the exact product of A quantised per row and B per column */
static Ref *
product_of_int8 (const Ref *a, const Ref *b)
{
  g_autoptr (Ref) aq = quantised (a, TRUE, int8_amax);
  g_autoptr (Ref) bq = quantised (b, FALSE, 127);
  return ref_matmul (aq, bq);
}

/* quads (k rounded up to 64), then a scale and a correction per block of k
 * per column */
static gsize
int8_bytes (gint64 k, gint64 n, gint64 nr)
{
  return (gsize) ((n + nr - 1) / nr * nr
                  * ((k + 63) / 64 * 64 + 4
                     + 4 * ((k + MOROK_WEIGHT_PACK_INT8_KC - 1) / MOROK_WEIGHT_PACK_INT8_KC)));
}

/* int8 (AVX512-VNNI; on avx2 AVX-VNNI, or vpmaddubsw with A in 7 bits): B
 * quantised per column at prepare, A per row at run time, int32 sums of
 * uint8 x int8 quads with A's offset (128, or 64) taken back. Against the exact product of the
 * operands so quantised, what is left is the f32 rounding of the sums and scales: measured about
 * 2e-8 sqrt (K) relative to max (1, |C|), held to 1e-6 sqrt (K); one quantum of one operand off
 * moves C by about 1 / 127^2 of a product, a dropped or misplaced quad by |C|, a missing correction
 * by 128 / 127 of a column sum. Odd K (a partial quad) and K past a block (3072: three of 1024),
 * partial tiles, batches, columns over threads, products of one and of three rows (packed in int8
 * alone); on the avx512 ISA AMX tiles where the CPU has AMX-INT8, else zmm; ymm on avx2. */
static void
test_matmul_packed_int8 (gconstpointer data)
{
  MorokIsa isa = GPOINTER_TO_INT (data);
  const char *missing = morok_weight_pack_missing (isa, MOROK_PRECISION_INT8);
  if (isa > morok_isa_detect () || missing)
    {
      g_test_skip_printf ("precision int8, isa %s: %s missing", morok_isa_name (isa),
                          isa > morok_isa_detect () ? morok_isa_name (isa) : missing);
      return;
    }
  const PackedShape cases[] = {
    { 1, 70, 33, 600 },  { 3, 20, 300, 130 },  { 1, 9, 257, 70 },   { 1, 250, 768, 768 },
    { 2, 47, 1000, 33 }, { 1, 64, 3072, 128 }, { 1, 1, 320, 1280 }, { 2, 3, 70, 33 },
  };
  int8_amax = morok_weight_pack_int8_amax (isa);
  check_packed (MOROK_PRECISION_INT8, isa, cases, G_N_ELEMENTS (cases), product_of_int8, 1e-6,
                int8_bytes);
}

/* linear: x [2, 3, 10] · w[6, 10]ᵀ + b. */
static void
test_linear (void)
{
  g_autoptr (Ref) x = rnd (SHAPE (2, 3, 10));
  g_autoptr (Ref) w = rnd (SHAPE (6, 10));
  g_autoptr (Ref) b = rnd (SHAPE (6));
  const guint perm[] = { 1, 0 };
  g_autoptr (Ref) wt = ref_permute (w, perm);
  g_autoptr (Ref) xw = ref_matmul (x, wt);
  g_autoptr (Ref) want = ref_zip (xw, b, d_add);
  Case c;
  case_init (&c);
  GError *e = NULL;
  MorokTensor *y
      = morok_tensor_linear (case_input (&c, x), case_weight (&c, w), case_weight (&c, b), &e);
  g_assert_no_error (e);
  case_check (&c, y, want, TOL, "linear");
}

/* conv1d over stride, padding, dilation and groups (1, 2, depthwise), and
 * conv2d with groups 1 and 2. */
static void
test_conv (void)
{
  const struct
  {
    gint64 cin, cout, k, stride, pad, dil, groups, len;
  } c1[] = {
    { 3, 5, 3, 1, 1, 1, 1, 17 }, { 4, 6, 5, 2, 2, 1, 1, 20 }, { 4, 4, 3, 1, 2, 2, 2, 11 },
    { 6, 6, 5, 1, 2, 1, 6, 13 }, { 1, 8, 4, 3, 0, 1, 1, 30 },
  };
  for (guint k = 0; k < G_N_ELEMENTS (c1); k++)
    {
      g_autoptr (Ref) x = rnd (SHAPE (2, c1[k].cin, c1[k].len));
      g_autoptr (Ref) w = rnd (SHAPE (c1[k].cout, c1[k].cin / c1[k].groups, c1[k].k));
      g_autoptr (Ref) b = rnd (SHAPE (c1[k].cout));
      g_autoptr (Ref) want
          = ref_conv (x, w, b, 1, &c1[k].stride, &c1[k].pad, &c1[k].dil, c1[k].groups);
      Case c;
      case_init (&c);
      GError *e = NULL;
      MorokTensor *y
          = morok_tensor_conv1d (case_input (&c, x), case_weight (&c, w), case_weight (&c, b),
                                 c1[k].stride, c1[k].pad, c1[k].dil, c1[k].groups, &e);
      g_assert_no_error (e);
      case_check (&c, y, want, TOL, "conv1d");
    }
  for (gint64 groups = 1; groups <= 2; groups++)
    {
      const gint64 stride[] = { 2, 1 }, pad[] = { 1, 1 }, dil[] = { 1, 2 };
      g_autoptr (Ref) x = rnd (SHAPE (2, 4, 9, 8));
      g_autoptr (Ref) w = rnd (SHAPE (6, 4 / groups, 3, 3));
      g_autoptr (Ref) b = rnd (SHAPE (6));
      g_autoptr (Ref) want = ref_conv (x, w, b, 2, stride, pad, dil, groups);
      Case c;
      case_init (&c);
      GError *e = NULL;
      MorokTensor *y = morok_tensor_conv2d (case_input (&c, x), case_weight (&c, w),
                                            case_weight (&c, b), stride, pad, dil, groups, &e);
      g_assert_no_error (e);
      case_check (&c, y, want, TOL, "conv2d");
    }
}

/* softmax and log_softmax along the last and a middle axis. */
static void
test_softmax (void)
{
  for (int use_log = 0; use_log < 2; use_log++)
    for (gint axis = 1; axis <= 2; axis++)
      {
        g_autoptr (Ref) x = ref_rand (rng, SHAPE (2, 5, 7), -4, 4);
        g_autoptr (Ref) want = ref_new (x->rank, x->shape);
        gint64 idx[3];
        for (gint64 i = 0; i < x->n; i++)
          {
            ref_unravel (x, i, idx);
            double m = -INFINITY, s = 0;
            gint64 j[3] = { idx[0], idx[1], idx[2] };
            for (j[axis] = 0; j[axis] < x->shape[axis]; j[axis]++)
              m = fmax (m, x->v[ref_ravel (x, j)]);
            for (j[axis] = 0; j[axis] < x->shape[axis]; j[axis]++)
              s += exp (x->v[ref_ravel (x, j)] - m);
            want->v[i] = use_log ? x->v[i] - m - log (s) : exp (x->v[i] - m) / s;
          }
        Case c;
        case_init (&c);
        GError *e = NULL;
        MorokTensor *t = case_input (&c, x);
        MorokTensor *y
            = use_log ? morok_tensor_log_softmax (t, axis, &e) : morok_tensor_softmax (t, axis, &e);
        g_assert_no_error (e);
        case_check (&c, y, want, TOL, use_log ? "log_softmax" : "softmax");
      }
}

/* layer_norm over the last axis with weight and bias. */
static void
test_layer_norm (void)
{
  g_autoptr (Ref) x = ref_rand (rng, SHAPE (3, 4, 33), -3, 5);
  g_autoptr (Ref) w = rnd (SHAPE (33));
  g_autoptr (Ref) b = rnd (SHAPE (33));
  g_autoptr (Ref) want = ref_new (x->rank, x->shape);
  for (gint64 r = 0; r < 12; r++)
    {
      double mu = 0, var = 0;
      for (int i = 0; i < 33; i++)
        mu += x->v[r * 33 + i] / 33;
      for (int i = 0; i < 33; i++)
        var += pow (x->v[r * 33 + i] - mu, 2) / 33;
      for (int i = 0; i < 33; i++)
        want->v[r * 33 + i] = (x->v[r * 33 + i] - mu) / sqrt (var + 1e-5) * w->v[i] + b->v[i];
    }
  Case c;
  case_init (&c);
  GError *e = NULL;
  MorokTensor *y = morok_tensor_layer_norm (case_input (&c, x), case_weight (&c, w),
                                            case_weight (&c, b), 1e-5, &e);
  g_assert_no_error (e);
  case_check (&c, y, want, TOL, "layer_norm");
}

/* batch_norm alone, and after a conv1d, where bn-fold scales the weights. */
static void
test_batch_norm (void)
{
  for (int after_conv = 0; after_conv < 2; after_conv++)
    {
      g_autoptr (Ref) x = rnd (SHAPE (2, 4, 9));
      g_autoptr (Ref) cw = rnd (SHAPE (4, 4, 3));
      g_autoptr (Ref) cb = rnd (SHAPE (4));
      g_autoptr (Ref) mean = rnd (SHAPE (4));
      g_autoptr (Ref) var = ref_rand (rng, SHAPE (4), 0.5, 2);
      g_autoptr (Ref) w = rnd (SHAPE (4));
      g_autoptr (Ref) b = rnd (SHAPE (4));
      const gint64 one = 1;
      g_autoptr (Ref) in = after_conv ? ref_conv (x, cw, cb, 1, &one, &one, &one, 1)
                                      : ref_reshape (x, x->rank, x->shape);
      g_autoptr (Ref) want = ref_new (in->rank, in->shape);
      for (gint64 i = 0; i < in->n; i++)
        {
          gint64 ch = i / 9 % 4;
          want->v[i] = (in->v[i] - mean->v[ch]) / sqrt (var->v[ch] + 1e-5) * w->v[ch] + b->v[ch];
        }
      Case c;
      case_init (&c);
      GError *e = NULL;
      MorokTensor *t = case_input (&c, x);
      if (after_conv)
        t = morok_tensor_conv1d (t, case_weight (&c, cw), case_weight (&c, cb), 1, 1, 1, 1, &e);
      MorokTensor *y = morok_tensor_batch_norm (t, case_weight (&c, mean), case_weight (&c, var),
                                                case_weight (&c, w), case_weight (&c, b), 1e-5, &e);
      g_assert_no_error (e);
      case_check (&c, y, want, TOL, after_conv ? "conv1d + batch_norm" : "batch_norm");
    }
}

/* glu along the channel axis. */
static void
test_glu (void)
{
  g_autoptr (Ref) x = rnd (SHAPE (2, 6, 5));
  g_autoptr (Ref) want = ref_new (3, (gint64[]){ 2, 3, 5 });
  gint64 idx[3];
  for (gint64 i = 0; i < want->n; i++)
    {
      ref_unravel (want, i, idx);
      double a = x->v[(idx[0] * 6 + idx[1]) * 5 + idx[2]];
      double g = x->v[(idx[0] * 6 + idx[1] + 3) * 5 + idx[2]];
      want->v[i] = a / (1 + exp (-g));
    }
  Case c;
  case_init (&c);
  GError *e = NULL;
  MorokTensor *y = morok_tensor_glu (case_input (&c, x), 1, &e);
  g_assert_no_error (e);
  case_check (&c, y, want, TOL, "glu");
}

static double
sig (double v)
{
  return 1 / (1 + exp (-v));
}

/* One LSTM step in PyTorch's layout (gates i, f, g, o); output = [h' | c'].
 * @from_input: through morok_tensor_lstm_cell_from_input, its input term
 * x · w_ihᵀ + b_ih given. */
static void
check_lstm_cell (gboolean from_input)
{
  enum
  {
    B = 2,
    IN = 5,
    H = 4
  };
  g_autoptr (Ref) x = rnd (SHAPE (B, IN));
  g_autoptr (Ref) h = rnd (SHAPE (B, H));
  g_autoptr (Ref) cs = rnd (SHAPE (B, H));
  g_autoptr (Ref) wih = rnd (SHAPE (4 * H, IN));
  g_autoptr (Ref) whh = rnd (SHAPE (4 * H, H));
  g_autoptr (Ref) bih = rnd (SHAPE (4 * H));
  g_autoptr (Ref) bhh = rnd (SHAPE (4 * H));
  g_autoptr (Ref) xg = ref_new (2, (gint64[]){ B, 4 * H });
  g_autoptr (Ref) want = ref_new (2, (gint64[]){ B, 2 * H });
  for (int n = 0; n < B; n++)
    {
      double gate[4 * H];
      for (int r = 0; r < 4 * H; r++)
        {
          xg->v[n * 4 * H + r] = bih->v[r];
          for (int i = 0; i < IN; i++)
            xg->v[n * 4 * H + r] += wih->v[r * IN + i] * x->v[n * IN + i];
          gate[r] = xg->v[n * 4 * H + r] + bhh->v[r];
          for (int i = 0; i < H; i++)
            gate[r] += whh->v[r * H + i] * h->v[n * H + i];
        }
      for (int j = 0; j < H; j++)
        {
          double c2 = sig (gate[H + j]) * cs->v[n * H + j] + sig (gate[j]) * tanh (gate[2 * H + j]);
          want->v[n * 2 * H + j] = sig (gate[3 * H + j]) * tanh (c2);
          want->v[n * 2 * H + H + j] = c2;
        }
    }
  Case c;
  case_init (&c);
  GError *e = NULL;
  MorokTensor *h2, *c2;
  if (from_input)
    g_assert_true (morok_tensor_lstm_cell_from_input (case_input (&c, xg), case_input (&c, h),
                                                      case_input (&c, cs), case_weight (&c, whh),
                                                      case_weight (&c, bhh), &h2, &c2, &e));
  else
    g_assert_true (morok_tensor_lstm_cell (
        case_input (&c, x), case_input (&c, h), case_input (&c, cs), case_weight (&c, wih),
        case_weight (&c, whh), case_weight (&c, bih), case_weight (&c, bhh), &h2, &c2, &e));
  MorokTensor *both[] = { h2, c2 };
  case_check (&c, morok_tensor_cat (both, 2, 1, &e), want, TOL,
              from_input ? "lstm_cell_from_input" : "lstm_cell");
  g_assert_no_error (e);
}

static void
test_lstm_cell (void)
{
  check_lstm_cell (FALSE);
}

/* The step from its input term computed already is the same step. */
static void
test_lstm_cell_from_input (void)
{
  check_lstm_cell (TRUE);
}

/* softmax (q k^T / sqrt (D), masked) v in double; @mask [B, Tq or 1, Tk]
 * (0: ignored), per item, broadcast over the heads. */
static Ref *
ref_attention (const Ref *q, const Ref *k, const Ref *v, const Ref *mask)
{
  gint64 B = q->shape[0], H = q->shape[1], TQ = q->shape[2], D = q->shape[3];
  gint64 TK = k->shape[2], DV = v->shape[3], mq = mask->shape[1];
  Ref *want = ref_new (4, (gint64[]){ B, H, TQ, DV });
  g_autofree double *s = g_new (double, TK);
  for (gint64 b = 0; b < B; b++)
    for (gint64 h = 0; h < H; h++)
      for (gint64 i = 0; i < TQ; i++)
        {
          double m = -INFINITY, sum = 0;
          const double *qi = &q->v[((b * H + h) * TQ + i) * D];
          const double *mrow = &mask->v[(b * mq + (mq == 1 ? 0 : i)) * TK];
          for (gint64 j = 0; j < TK; j++)
            {
              s[j] = 0;
              for (gint64 x = 0; x < D; x++)
                s[j] += qi[x] * k->v[((b * H + h) * TK + j) * D + x] / sqrt (D);
              s[j] = mrow[j] == 0 ? -INFINITY : s[j];
              m = fmax (m, s[j]);
            }
          for (gint64 j = 0; j < TK; j++)
            sum += s[j] = exp (s[j] - m);
          for (gint64 x = 0; x < DV; x++)
            {
              double acc = 0;
              for (gint64 j = 0; j < TK; j++)
                acc += s[j] / sum * v->v[((b * H + h) * TK + j) * DV + x];
              want->v[((b * H + h) * TQ + i) * DV + x] = acc;
            }
        }
  return want;
}

/* Scaled dot-product attention over [B, H, T, D] with a key padding mask. */
static void
test_attention (void)
{
  enum
  {
    B = 2,
    NH = 3,
    T = 6,
    D = 8
  };
  g_autoptr (Ref) q = rnd (SHAPE (B, NH, T, D));
  g_autoptr (Ref) k = rnd (SHAPE (B, NH, T, D));
  g_autoptr (Ref) v = rnd (SHAPE (B, NH, T, D));
  g_autoptr (Ref) mask
      = ref_new (4, (gint64[]){ B, 1, 1, T }); /* batch 1 ignores its last 2 keys */
  for (int i = 0; i < T; i++)
    mask->v[i] = 1, mask->v[T + i] = i < T - 2;
  g_autoptr (Ref) mask3 = ref_reshape (mask, 3, (gint64[]){ B, 1, T });
  g_autoptr (Ref) want = ref_attention (q, k, v, mask3);
  Case c;
  case_init (&c);
  GError *e = NULL;
  MorokTensor *m = case_input (&c, mask);
  MorokTensor *mt = morok_tensor_gt (m, morok_tensor_scalar_like (m, 0.5), &e);
  MorokTensor *y = morok_tensor_attention (case_input (&c, q), case_input (&c, k),
                                           case_input (&c, v), mt, 0, &e);
  g_assert_no_error (e);
  case_check (&c, y, want, TOL, "attention");
}

/* Attention as one fused kernel (a key mask [B, 1, 1, Tk]) on every ISA:
 * more query rows and keys than one block of each, D != Dv, the keys of
 * item 0's first block all masked and item 1's tail masked, and the keys
 * symbolic, run below their bound; and the composite (a mask that depends
 * on the query). D = 12 takes the AVX-512 kernel's direct tiles, D = 136
 * (more than one k block of the GEMM) its general products. */
static void
attention_fused (gint64 D)
{
  enum
  {
    B = 2,
    NH = 2,
    TQ = 70,
    TK = 300,
    DV = 20,
    TK_RUN = 290
  };
  g_autoptr (Ref) q = rnd (SHAPE (B, NH, TQ, D));
  g_autoptr (Ref) k = rnd (SHAPE (B, NH, TK_RUN, D));
  g_autoptr (Ref) v = rnd (SHAPE (B, NH, TK_RUN, DV));
  g_autoptr (Ref) keys = ref_new (4, (gint64[]){ B, 1, 1, TK_RUN });
  g_autoptr (Ref) causal = ref_new (3, (gint64[]){ B, TQ, TK_RUN });
  for (gint64 j = 0; j < TK_RUN; j++)
    {
      keys->v[j] = j >= 256 + 3;     /* item 0: only keys past the first block */
      keys->v[TK_RUN + j] = j < 280; /* item 1: a padded tail, keys in both blocks */
      for (gint64 i = 0; i < TQ; i++)
        causal->v[i * TK_RUN + j] = causal->v[(TQ + i) * TK_RUN + j] = j <= i;
    }
  g_autoptr (Ref) keys3 = ref_reshape (keys, 3, (gint64[]){ B, 1, TK_RUN });
  g_autoptr (Ref) want = ref_attention (q, k, v, keys3);
  g_autoptr (Ref) want_causal = ref_attention (q, k, v, causal);
  for (MorokIsa isa = MOROK_ISA_PORTABLE; isa <= morok_isa_detect (); isa++)
    for (int fused = 1; fused >= 0; fused--)
      {
        Case c;
        case_init (&c);
        c.isa = isa, c.isa_set = TRUE;
        GError *e = NULL;
        MorokSymPool *pool = morok_graph_sym_pool (c.g);
        const MorokSym *tk = morok_sym_var (morok_variable_new (pool, "tk", 1, TK));
        const MorokSym *kshape[] = { morok_sym_const (pool, B), morok_sym_const (pool, NH), tk,
                                     morok_sym_const (pool, D) };
        const MorokSym *vshape[] = { kshape[0], kshape[1], tk, morok_sym_const (pool, DV) };
        const Ref *mref = fused ? keys : causal;
        const MorokSym *mshape4[]
            = { kshape[0], morok_sym_const (pool, 1), morok_sym_const (pool, 1), tk };
        const MorokSym *mshape3[] = { kshape[0], morok_sym_const (pool, TQ), tk };
        MorokTensor *m = case_input_sym (&c, mref, fused ? mshape4 : mshape3);
        MorokTensor *mt = morok_tensor_gt (m, morok_tensor_scalar_like (m, 0.5), &e);
        if (!fused) /* [B, TQ, TK] -> [B, 1, TQ, TK] */
          mt = morok_tensor_unsqueeze (mt, 1, &e);
        MorokTensor *y = morok_tensor_attention (case_input (&c, q), case_input_sym (&c, k, kshape),
                                                 case_input_sym (&c, v, vshape), mt, 0, &e);
        g_assert_no_error (e);
        g_assert_cmpint (y->op == MOROK_OP_ATTENTION, ==, fused);
        c.vars[0] = (MorokVarValue){ "tk", TK_RUN };
        c.n_vars = 1;
        case_check (&c, y, fused ? want : want_causal, TOL,
                    fused ? "attention, fused" : "attention, composite");
      }
}

static void
test_attention_fused (void)
{
  attention_fused (12);
  attention_fused (136);
}

/* |DFT| of frames [..., T, L] against the sum in double. */
static Ref *
ref_dft_magnitude (const Ref *frames, const Ref *window)
{
  const gint64 L = frames->shape[frames->rank - 1], F = L / 2 + 1, rows = frames->n / L;
  gint64 shape[8];
  memcpy (shape, frames->shape, frames->rank * sizeof (gint64));
  shape[frames->rank - 1] = F;
  Ref *out = ref_new (frames->rank, shape);
  for (gint64 r = 0; r < rows; r++)
    for (gint64 k = 0; k < F; k++)
      {
        double re = 0, im = 0;
        for (gint64 n = 0; n < L; n++)
          {
            double v = window->v[n] * frames->v[r * L + n], a = 2 * G_PI * k * n / L;
            re += v * cos (a), im -= v * sin (a);
          }
        out->v[r * F + k] = hypot (re, im);
      }
  return out;
}

/* The DFT magnitude as one kernel on every ISA: frames that are a window
 * view of a reflect-padded signal with a batch variable run below its
 * bound (rows that fill one group of 16 frames and part of the next), and
 * frames whose samples are a column of a transposed input (element stride
 * T); the FFT's error against the double sum is within 1e-5 of the bins. */
static void
test_dft_magnitude (void)
{
  enum
  {
    B = 9,
    B_RUN = 7,
    N = 576,
    L = 256,
    HOP = 128,
    L2 = 64,
    T2 = 5
  };
  g_autoptr (Ref) audio = ref_rand (rng, SHAPE (B_RUN, N), -1, 1);
  g_autoptr (Ref) hann = ref_new (1, (gint64[]){ L });
  for (gint64 n = 0; n < L; n++)
    hann->v[n] = 0.5 - 0.5 * cos (2 * G_PI * n / L);
  g_autoptr (Ref) padded = ref_pad (audio, (gint64[]){ 0, 0 }, (gint64[]){ 0, 64 }, 0, TRUE);
  g_autoptr (Ref) frames = ref_window (padded, 1, L, HOP, 1);
  g_autoptr (Ref) want = ref_dft_magnitude (frames, hann);
  g_autoptr (Ref) cols = rnd (SHAPE (2, L2, T2)); /* frames [2, T2, L2] as its transpose */
  g_autoptr (Ref) win2 = ref_rand (rng, SHAPE (L2), 0, 1);
  g_autoptr (Ref) frames2 = ref_permute (cols, (guint[]){ 0, 2, 1 });
  g_autoptr (Ref) want2 = ref_dft_magnitude (frames2, win2);
  for (MorokIsa isa = MOROK_ISA_PORTABLE; isa <= morok_isa_detect (); isa++)
    {
      Case c;
      case_init (&c);
      c.isa = isa, c.isa_set = TRUE;
      GError *e = NULL;
      MorokSymPool *pool = morok_graph_sym_pool (c.g);
      const MorokSym *b = morok_sym_var (morok_variable_new (pool, "b", 1, B));
      MorokTensor *x
          = case_input_sym (&c, audio, (const MorokSym *[]){ b, morok_sym_const (pool, N) });
      x = morok_tensor_pad_reflect (x, (gint64[]){ 0, 0 }, (gint64[]){ 0, 64 }, &e);
      MorokTensor *y = morok_tensor_dft_magnitude (morok_tensor_window (x, 1, L, HOP, 1, &e),
                                                   case_weight (&c, hann), &e);
      g_assert_no_error (e);
      g_assert_cmpint (y->op, ==, MOROK_OP_DFT_MAG);
      c.vars[0] = (MorokVarValue){ "b", B_RUN };
      c.n_vars = 1;
      case_check (&c, y, want, TOL, "dft magnitude of windows");

      case_init (&c);
      c.isa = isa, c.isa_set = TRUE;
      MorokTensor *t = morok_tensor_transpose (case_input (&c, cols), 1, 2, &e);
      y = morok_tensor_dft_magnitude (t, case_input (&c, win2), &e);
      g_assert_no_error (e);
      case_check (&c, y, want2, TOL, "dft magnitude of columns");
    }
  /* what it cannot take is an error, not a wrong result */
  Case c;
  case_init (&c);
  GError *e = NULL;
  g_autoptr (Ref) odd = rnd (SHAPE (3, 48));
  g_autoptr (Ref) w48 = rnd (SHAPE (48));
  g_assert_null (morok_tensor_dft_magnitude (case_input (&c, odd), case_input (&c, w48), &e));
  g_assert_error (e, MOROK_TENSOR_ERROR, MOROK_TENSOR_ERROR_SHAPE);
  g_clear_error (&e);
  morok_graph_free (c.g);
}

/* f16 and bf16 round trips keep their precision; i32 arithmetic, compare
 * and where are exact. */
static void
test_dtypes (void)
{
  g_autoptr (Ref) x = ref_rand (rng, SHAPE (37), -100, 100);
  const struct
  {
    MorokDType t;
    double tol;
  } half[] = { { MOROK_DTYPE_F16, 1.0 / 1024 }, { MOROK_DTYPE_BF16, 1.0 / 128 } };
  for (guint k = 0; k < G_N_ELEMENTS (half); k++)
    {
      Case c;
      case_init (&c);
      GError *e = NULL;
      /* relative to max (1, |x|): the half's 10 (7) mantissa bits */
      MorokTensor *h = morok_tensor_cast (case_input (&c, x), half[k].t, &e);
      MorokTensor *y = morok_tensor_cast (morok_tensor_mul_scalar (h, 2, &e), MOROK_DTYPE_F32, &e);
      g_autoptr (Ref) want = ref_new (x->rank, x->shape);
      for (gint64 i = 0; i < x->n; i++)
        want->v[i] = 2 * x->v[i];
      g_assert_no_error (e);
      case_check (&c, y, want, half[k].tol, morok_dtype_name (half[k].t));
    }
  {
    g_autoptr (Ref) a = ref_rand (rng, SHAPE (4, 9), -50, 50);
    for (gint64 i = 0; i < a->n; i++)
      a->v[i] = trunc (a->v[i]);
    Case c;
    case_init (&c);
    GError *e = NULL;
    MorokTensor *ai = morok_tensor_cast (case_input (&c, a), MOROK_DTYPE_I32, &e);
    MorokTensor *sq = morok_tensor_mul (ai, ai, &e);
    MorokTensor *pos = morok_tensor_gt (ai, morok_tensor_scalar_like (ai, 0), &e);
    MorokTensor *y = morok_tensor_where (pos, sq, morok_tensor_neg (ai, &e), &e);
    y = morok_tensor_cast (morok_tensor_sum (y, (gint[]){ 1 }, 1, FALSE, &e), MOROK_DTYPE_F32, &e);
    g_autoptr (Ref) want = ref_new (1, (gint64[]){ 4 });
    for (gint64 i = 0; i < a->n; i++)
      want->v[i / 9] += a->v[i] > 0 ? a->v[i] * a->v[i] : -a->v[i];
    g_assert_no_error (e);
    case_check (&c, y, want, 0, "i32");
  }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  rng = g_rand_new_with_seed (99);
  g_test_add_func ("/nn/matmul/every-isa", test_matmul);
  g_test_add_func ("/nn/matmul/packed-weight", test_matmul_packed);
  g_test_add_func ("/nn/matmul/packed-weight-epilogue", test_matmul_packed_epilogue);
  g_test_add_func ("/nn/matmul/packed-weight-f16", test_matmul_packed_f16);
  g_test_add_func ("/nn/matmul/packed-weight-bf16", test_matmul_packed_bf16);
  g_test_add_func ("/nn/matmul/packed-weight-bf16x3", test_matmul_packed_bf16x3);
  g_test_add_data_func ("/nn/matmul/packed-weight-int8", GINT_TO_POINTER (MOROK_ISA_AVX512),
                        test_matmul_packed_int8);
  g_test_add_data_func ("/nn/matmul/packed-weight-int8-avx2", GINT_TO_POINTER (MOROK_ISA_AVX2),
                        test_matmul_packed_int8);
  g_test_add_func ("/nn/linear", test_linear);
  g_test_add_func ("/nn/conv/1d-and-2d", test_conv);
  g_test_add_func ("/nn/softmax", test_softmax);
  g_test_add_func ("/nn/layer-norm", test_layer_norm);
  g_test_add_func ("/nn/batch-norm/alone-and-folded", test_batch_norm);
  g_test_add_func ("/nn/glu", test_glu);
  g_test_add_func ("/nn/lstm-cell", test_lstm_cell);
  g_test_add_func ("/nn/lstm-cell/from-input", test_lstm_cell_from_input);
  g_test_add_func ("/nn/attention/masked", test_attention);
  g_test_add_func ("/nn/attention/fused", test_attention_fused);
  g_test_add_func ("/nn/dft-magnitude", test_dft_magnitude);
  g_test_add_func ("/nn/dtypes/half-and-int", test_dtypes);
  int r = g_test_run ();
  g_rand_free (rng);
  return r;
}
