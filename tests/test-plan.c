/* SPDX-License-Identifier: MIT */
/* Prepared plans: fusion, replay without rebuilding, the disk cache across
 * processes, and the errors a caller can cause. */
#include "op-harness.h"
#include "temp-dir.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

static GRand *rng;

static float *
rand_floats (gsize n)
{
  float *v = g_new (float, n);
  for (gsize i = 0; i < n; i++)
    v[i] = (float) g_rand_double_range (rng, -1, 1);
  return v;
}

static MorokPlan *
build1 (MorokGraph *g, MorokTensor *out, MorokTensor **inputs, guint n_inputs)
{
  GError *error = NULL;
  MorokPlan *plan = morok_plan_build (g, &out, 1, inputs, n_inputs, NULL, &error);
  g_assert_no_error (error);
  return plan;
}

/* build1 for one input, uncached, with the plan's C source in @src
 * (written to a dump folder, read back). */
static MorokPlan *
build1_source (MorokGraph *g, MorokTensor *out, MorokTensor *input, char **src)
{
  GError *error = NULL;
  g_autofree char *dir = temp_dir_new ();
  MorokPlanOptions opts;
  morok_plan_options_init (&opts);
  opts.compile.dump_dir = dir;
  opts.compile.use_cache = FALSE;
  MorokPlan *plan = morok_plan_build (g, &out, 1, &input, 1, &opts, &error);
  g_assert_no_error (error);
  GDir *d = g_dir_open (dir, 0, &error);
  g_assert_no_error (error);
  const char *name = g_dir_read_name (d);
  g_assert_nonnull (name);
  g_autofree char *path = g_build_filename (dir, name, NULL);
  g_assert_true (g_file_get_contents (path, src, NULL, &error));
  g_dir_close (d);
  temp_dir_remove (dir);
  return plan;
}

/* An element-wise chain with broadcasts and a shared subexpression is one kernel. */
static void
test_fusion_elementwise (void)
{
  GError *e = NULL;
  MorokGraph *g = morok_graph_new ();
  const MorokSym *sh[2];
  morok_tensor_syms (g, (gint64[]){ 5, 7 }, 2, sh);
  MorokTensor *x = morok_tensor_input (g, "x", MOROK_DTYPE_F32, sh, 2);
  MorokTensor *b = morok_tensor_input (g, "b", MOROK_DTYPE_F32, sh + 1, 1);
  MorokTensor *h = morok_tensor_add (morok_tensor_mul_scalar (x, 2, &e), b, &e);
  MorokTensor *y = morok_tensor_mul (morok_tensor_relu (h, &e), morok_tensor_neg (x, &e), &e);
  g_assert_no_error (e);
  MorokTensor *ins[] = { x, b };
  g_autoptr (MorokPlan) plan = build1 (g, y, ins, 2);
  g_assert_cmpuint (morok_plan_n_steps (plan), ==, 1);
  float *xv = morok_plan_input (plan, 0)->data, *bv = morok_plan_input (plan, 1)->data;
  for (int i = 0; i < 35; i++)
    xv[i] = (float) (i - 17) / 7;
  for (int i = 0; i < 7; i++)
    bv[i] = (float) i / 3 - 1;
  g_assert_true (morok_plan_execute (plan, NULL, 0, &e));
  const float *yv = morok_plan_output (plan, 0)->data;
  for (int i = 0; i < 35; i++)
    {
      float hv = xv[i] * 2 + bv[i % 7];
      g_assert_cmpfloat_with_epsilon (yv[i], (hv > 0 ? hv : 0) * -xv[i], 1e-6);
    }
}

/* relu (x @ w + bias) * 0.5 + x2: the bias, activation, scale and residual
 * are the matmul's epilogue, so the plan is one kernel. */
static void
test_fusion_matmul_epilogue (void)
{
  GError *e = NULL;
  const gint64 M = 9, K = 13, N = 11;
  g_autofree float *w = rand_floats (K * N), *bias = rand_floats (N);
  MorokGraph *g = morok_graph_new ();
  const MorokSym *sx[2], *sr[2];
  morok_tensor_syms (g, (gint64[]){ M, K }, 2, sx);
  morok_tensor_syms (g, (gint64[]){ M, N }, 2, sr);
  MorokTensor *x = morok_tensor_input (g, "x", MOROK_DTYPE_F32, sx, 2);
  MorokTensor *res = morok_tensor_input (g, "res", MOROK_DTYPE_F32, sr, 2);
  MorokTensor *wt = morok_tensor_weight (g, "w", MOROK_DTYPE_F32, w, (gint64[]){ K, N }, 2);
  MorokTensor *bt = morok_tensor_weight (g, "b", MOROK_DTYPE_F32, bias, (gint64[]){ N }, 1);
  MorokTensor *y
      = morok_tensor_relu (morok_tensor_add (morok_tensor_matmul (x, wt, &e), bt, &e), &e);
  y = morok_tensor_add (morok_tensor_mul_scalar (y, 0.5, &e), res, &e);
  g_assert_no_error (e);
  MorokTensor *ins[] = { x, res };
  g_autoptr (MorokPlan) plan = build1 (g, y, ins, 2);
  g_assert_cmpuint (morok_plan_n_steps (plan), ==, 1);
  float *xv = morok_plan_input (plan, 0)->data, *rv = morok_plan_input (plan, 1)->data;
  for (gint64 i = 0; i < M * K; i++)
    xv[i] = (float) g_rand_double_range (rng, -1, 1);
  for (gint64 i = 0; i < M * N; i++)
    rv[i] = (float) g_rand_double_range (rng, -1, 1);
  g_assert_true (morok_plan_execute (plan, NULL, 0, &e));
  const float *yv = morok_plan_output (plan, 0)->data;
  for (gint64 m = 0; m < M; m++)
    for (gint64 n = 0; n < N; n++)
      {
        double acc = bias[n];
        for (gint64 k = 0; k < K; k++)
          acc += (double) xv[m * K + k] * w[k * N + n];
        double want = (acc > 0 ? acc : 0) * 0.5 + rv[m * N + n];
        g_assert_cmpfloat_with_epsilon (yv[m * N + n], want, 1e-5 * fmax (1, fabs (want)));
      }
}

/* A one-column product is a dot product per row, a reduction loop: the
 * ReLU before it and the bias and sigmoid after are one kernel with it
 * (as a contraction, the ReLU was a kernel of its own). */
static void
test_fusion_single_column_matmul (void)
{
  GError *e = NULL;
  const gint64 M = 5, K = 37;
  g_autofree float *w = rand_floats (K), *bias = rand_floats (1);
  MorokGraph *g = morok_graph_new ();
  const MorokSym *sx[2];
  morok_tensor_syms (g, (gint64[]){ M, K }, 2, sx);
  MorokTensor *x = morok_tensor_input (g, "x", MOROK_DTYPE_F32, sx, 2);
  MorokTensor *wt = morok_tensor_weight (g, "w", MOROK_DTYPE_F32, w, (gint64[]){ K, 1 }, 2);
  MorokTensor *bt = morok_tensor_weight (g, "b", MOROK_DTYPE_F32, bias, (gint64[]){ 1 }, 1);
  MorokTensor *y = morok_tensor_sigmoid (
      morok_tensor_add (morok_tensor_matmul (morok_tensor_relu (x, &e), wt, &e), bt, &e), &e);
  g_assert_no_error (e);
  g_autoptr (MorokPlan) plan = build1 (g, y, &x, 1);
  g_assert_cmpuint (morok_plan_n_steps (plan), ==, 1);
  float *xv = morok_plan_input (plan, 0)->data;
  for (gint64 i = 0; i < M * K; i++)
    xv[i] = (float) g_rand_double_range (rng, -1, 1);
  g_assert_true (morok_plan_execute (plan, NULL, 0, &e));
  const float *yv = morok_plan_output (plan, 0)->data;
  for (gint64 m = 0; m < M; m++)
    {
      double acc = bias[0];
      for (gint64 k = 0; k < K; k++)
        acc += fmax (xv[m * K + k], 0) * w[k];
      g_assert_cmpfloat_with_epsilon (yv[m], 1 / (1 + exp (-acc)), 1e-6);
    }
}

/* A sum read through a view (a cat) stores the end of the element-wise
 * chain after it: bias and sigmoid run once per sum in the sum's kernel,
 * not once per element of the cat, which then copies (its kernel was the
 * sum's before, the sigmoid computed by the cat). */
static void
test_fusion_reduction_stores_its_chain (void)
{
  GError *e = NULL;
  const gint64 M = 3, K = 21, N = 17;
  MorokGraph *g = morok_graph_new ();
  const MorokSym *sx[2], *sz[2];
  morok_tensor_syms (g, (gint64[]){ M, K }, 2, sx);
  morok_tensor_syms (g, (gint64[]){ M, N }, 2, sz);
  MorokTensor *ins[] = { morok_tensor_input (g, "x", MOROK_DTYPE_F32, sx, 2),
                         morok_tensor_input (g, "z", MOROK_DTYPE_F32, sz, 2) };
  const gint axis = -1;
  MorokTensor *p = morok_tensor_sigmoid (
      morok_tensor_add_scalar (morok_tensor_sum (ins[0], &axis, 1, TRUE, &e), 0.5, &e), &e);
  MorokTensor *parts[] = { p, ins[1] };
  MorokTensor *y = morok_tensor_cat (parts, 2, 1, &e);
  g_assert_no_error (e);
  g_autoptr (MorokPlan) plan = build1 (g, y, ins, 2);
  float *xv = morok_plan_input (plan, 0)->data, *zv = morok_plan_input (plan, 1)->data;
  for (gint64 i = 0; i < M * K; i++)
    xv[i] = (float) g_rand_double_range (rng, -0.3, 0.3);
  for (gint64 i = 0; i < M * N; i++)
    zv[i] = (float) g_rand_double_range (rng, -1, 1);
  g_autoptr (GArray) prof = morok_plan_execute_profiled (plan, NULL, 0, &e);
  g_assert_no_error (e);
  g_assert_cmpuint (prof->len, ==, 2);
  const char *first = g_array_index (prof, MorokKernelProfile, 0).name;
  g_assert_true (g_str_has_prefix (first, "k0 sigmoid"));
  const float *yv = morok_plan_output (plan, 0)->data;
  for (gint64 m = 0; m < M; m++)
    {
      double acc = 0.5;
      for (gint64 k = 0; k < K; k++)
        acc += xv[m * K + k];
      g_assert_cmpfloat_with_epsilon (yv[m * (N + 1)], 1 / (1 + exp (-acc)), 1e-6);
      for (gint64 n = 0; n < N; n++)
        g_assert_cmpfloat (yv[m * (N + 1) + 1 + n], ==, zv[m * N + n]);
    }
}

/* ---- weights freed once packed ---- */

typedef struct
{
  gconstpointer data;
  gsize n;
  guint calls;
} Released;

/* What an owner does: it may free the data now; here it is overwritten
 * with NaN, which would show in the results if the plan still read it. */
static void
poison (gpointer user, gconstpointer data)
{
  Released *r = user;
  g_assert_true (data == r->data);
  r->calls++;
  for (gsize i = 0; i < r->n; i++)
    ((float *) data)[i] = NAN;
}

/* y = relu (x @ w + b) and z = x @ v + v[0, :]: prepare packs w and v (64
 * rows) and releases each weight once: w (packing alone reads it), b (the
 * epilogue reads it) and v (a kernel reads it too) once the program has
 * its copies of them; the results, computed after the release poisoned
 * every weight with NaN, match a loop in double over the original values. */
static void
test_weights_released_once_packed (void)
{
  GError *e = NULL;
  const gint64 M = 64, K = 48, N = 96;
  g_autofree float *w = rand_floats (K * N), *v = rand_floats (K * N), *b = rand_floats (N);
  g_autofree float *w0 = g_memdup2 (w, K * N * sizeof (float));
  g_autofree float *v1 = g_memdup2 (v, K * N * sizeof (float)),
                   *b1 = g_memdup2 (b, N * sizeof (float));
  Released rw = { w, K * N, 0 }, rv = { v, K * N, 0 }, rb = { b, N, 0 };
  MorokGraph *g = morok_graph_new ();
  const MorokSym *sx[2];
  morok_tensor_syms (g, (gint64[]){ M, K }, 2, sx);
  MorokTensor *x = morok_tensor_input (g, "x", MOROK_DTYPE_F32, sx, 2);
  MorokTensor *wt = morok_tensor_weight_with_release (g, "w", MOROK_DTYPE_F32, w,
                                                      (gint64[]){ K, N }, 2, poison, &rw);
  MorokTensor *vt = morok_tensor_weight_with_release (g, "v", MOROK_DTYPE_F32, v,
                                                      (gint64[]){ K, N }, 2, poison, &rv);
  MorokTensor *bt = morok_tensor_weight_with_release (g, "b", MOROK_DTYPE_F32, b, (gint64[]){ N },
                                                      1, poison, &rb);
  MorokTensor *y
      = morok_tensor_relu (morok_tensor_add (morok_tensor_matmul (x, wt, &e), bt, &e), &e);
  MorokTensor *v0 = morok_tensor_slice (vt, 0, morok_sym_const (morok_graph_sym_pool (g), 0),
                                        morok_sym_const (morok_graph_sym_pool (g), 1), &e);
  MorokTensor *z = morok_tensor_add (morok_tensor_matmul (x, vt, &e), v0, &e);
  g_assert_no_error (e);
  MorokTensor *outs[] = { y, z };
  g_autoptr (MorokPlan) plan = morok_plan_build (g, outs, 2, &x, 1, NULL, &e);
  g_assert_no_error (e);
  g_assert_cmpuint (morok_plan_packed_bytes (plan), >=, 2 * K * N * sizeof (float));
  g_assert_cmpuint (rw.calls, ==, 1);
  g_assert_cmpuint (rv.calls, ==, 1);
  g_assert_cmpuint (rb.calls, ==, 1);
  float *xv = morok_plan_input (plan, 0)->data;
  for (gint64 i = 0; i < M * K; i++)
    xv[i] = (float) g_rand_double_range (rng, -1, 1);
  g_assert_true (morok_plan_execute (plan, NULL, 0, &e));
  const float *yv = morok_plan_output (plan, 0)->data, *zv = morok_plan_output (plan, 1)->data;
  for (gint64 m = 0; m < M; m++)
    for (gint64 n = 0; n < N; n++)
      {
        double acc = b1[n], acc_v = v1[n];
        for (gint64 k = 0; k < K; k++)
          acc += (double) xv[m * K + k] * w0[k * N + n],
              acc_v += (double) xv[m * K + k] * v1[k * N + n];
        g_assert_cmpfloat_with_epsilon (yv[m * N + n], MAX (acc, 0), 1e-5 * fmax (1, fabs (acc)));
        g_assert_cmpfloat_with_epsilon (zv[m * N + n], acc_v, 1e-5 * fmax (1, fabs (acc_v)));
      }
}

/* Builds y = op (x) with a [rows, cols] weight w (op: 0 x [2, K] @ w^T,
 * w [N, K]; 1 x @ w, w [K, N]; 2 w @ x, w [16, K], x [K, 3]), stored 64-byte
 * aligned or @skew floats past that, checks y against a loop in double, and
 * returns whether the plan reads w in place. */
static gboolean
small_matmul_reads_weight_in_place (int op, gint64 N, int skew)
{
  GError *e = NULL;
  const gint64 K = 40, R = op == 2 ? 16 : 2, C = op == 2 ? 3 : N;
  const gint64 wr = op == 0 ? N : op == 1 ? K : R, wc = op == 2 ? K : op == 0 ? K : N;
  g_autofree float *rw = rand_floats (wr * wc);
  /* C11: the size a multiple of the alignment */
  float *storage = aligned_alloc (64, ((wr * wc + 16) * sizeof (float) + 63) / 64 * 64);
  float *w = storage + skew;
  memcpy (w, rw, wr * wc * sizeof (float));
  MorokGraph *g = morok_graph_new ();
  const MorokSym *sx[2];
  morok_tensor_syms (g, op == 2 ? (gint64[]){ K, C } : (gint64[]){ R, K }, 2, sx);
  MorokTensor *x = morok_tensor_input (g, "x", MOROK_DTYPE_F32, sx, 2);
  MorokTensor *wt = morok_tensor_weight (g, "w", MOROK_DTYPE_F32, w, (gint64[]){ wr, wc }, 2);
  MorokTensor *y = op == 0   ? morok_tensor_matmul (x, morok_tensor_transpose (wt, 0, 1, &e), &e)
                   : op == 1 ? morok_tensor_matmul (x, wt, &e)
                             : morok_tensor_matmul (wt, x, &e);
  g_assert_no_error (e);
  g_autoptr (MorokPlan) plan = build1 (g, y, &x, 1);
  float *xv = morok_plan_input (plan, 0)->data;
  for (gint64 i = 0; i < (op == 2 ? K * C : R * K); i++)
    xv[i] = (float) g_rand_double_range (rng, -1, 1);
  g_assert_true (morok_plan_execute (plan, NULL, 0, &e));
  const float *yv = morok_plan_output (plan, 0)->data;
  for (gint64 m = 0; m < R; m++)
    for (gint64 n = 0; n < C; n++)
      {
        double acc = 0;
        for (gint64 k = 0; k < K; k++)
          acc += op == 0   ? (double) xv[m * K + k] * w[n * K + k]
                 : op == 1 ? (double) xv[m * K + k] * w[k * N + n]
                           : (double) w[m * K + k] * xv[k * C + n];
        g_assert_cmpfloat_with_epsilon (yv[m * C + n], acc, 1e-5 * fmax (1, fabs (acc)));
      }
  guint n_bufs;
  void *const *bufs = morok_plan_buffers (plan, &n_bufs);
  gboolean in_place = FALSE;
  for (guint i = 0; i < n_bufs; i++)
    in_place = in_place || bufs[i] == (void *) w;
  free (storage);
  return in_place;
}

/* Builds y = x + w · 0.5, the constant broadcast to x's [rows, 4] (the
 * shape of a scaled bias in an epilogue), checks y against a loop, and
 * returns whether the plan reads the [4] weight w in place, that is, does
 * not fold w · 0.5 into a [rows, 4] weight of its own. */
static gboolean
scaled_bias_reads_weight_in_place (gint64 rows)
{
  GError *e = NULL;
  const gint64 C = 4;
  g_autofree float *w = rand_floats (C);
  MorokGraph *g = morok_graph_new ();
  const MorokSym *sx[2];
  morok_tensor_syms (g, (gint64[]){ rows, C }, 2, sx);
  MorokTensor *x = morok_tensor_input (g, "x", MOROK_DTYPE_F32, sx, 2);
  MorokTensor *wt = morok_tensor_weight (g, "w", MOROK_DTYPE_F32, w, (gint64[]){ C }, 1);
  MorokTensor *half = morok_tensor_full (g, MOROK_DTYPE_F32, 0.5, sx, 2);
  MorokTensor *y = morok_tensor_add (x, morok_tensor_mul (wt, half, &e), &e);
  g_assert_no_error (e);
  g_autoptr (MorokPlan) plan = build1 (g, y, &x, 1);
  float *xv = morok_plan_input (plan, 0)->data;
  for (gint64 i = 0; i < rows * C; i++)
    xv[i] = (float) g_rand_double_range (rng, -1, 1);
  g_assert_true (morok_plan_execute (plan, NULL, 0, &e));
  const float *yv = morok_plan_output (plan, 0)->data;
  for (gint64 i = 0; i < rows * C; i++)
    g_assert_cmpfloat_with_epsilon (yv[i], xv[i] + 0.5 * w[i % C], 1e-6);
  guint n_bufs;
  void *const *bufs = morok_plan_buffers (plan, &n_bufs);
  gboolean in_place = FALSE;
  for (guint i = 0; i < n_bufs; i++)
    in_place = in_place || bufs[i] == (void *) w;
  return in_place;
}

/* A weight-only subexpression is folded into a weight at prepare unless its
 * result is over 1 MiB and over twice the weights it reads: w · 0.5 over
 * [16, 4] (256 bytes) is folded, over [131072, 4] (2 MiB from 16 bytes of
 * w) it is computed by the kernel that reads it, from w in place. */
static void
test_fold_skips_what_outgrows_its_weights (void)
{
  g_assert_false (scaled_bias_reads_weight_in_place (16));
  g_assert_true (scaled_bias_reads_weight_in_place (131072));
}

/* A folded weight that is a copy of views of a weight (here a conv
 * weight [M, C, k]: taps 1 .. 2, transposed to [taps, C, M] and merged to
 * [taps * C, M], Silero's layout) is copied by prepare: no plan of its own
 * is built, and the product reads the right values. */
static void
test_fold_copies_views_without_a_plan (void)
{
  GError *e = NULL;
  const gint64 M = 5, C = 3, k = 3, taps = 2, R = 2;
  g_autofree float *w = rand_floats (M * C * k);
  MorokGraph *g = morok_graph_new ();
  const MorokSym *sx[2];
  morok_tensor_syms (g, (gint64[]){ R, taps * C }, 2, sx);
  MorokTensor *x = morok_tensor_input (g, "x", MOROK_DTYPE_F32, sx, 2);
  MorokTensor *wt = morok_tensor_weight (g, "w", MOROK_DTYPE_F32, w, (gint64[]){ M, C, k }, 3);
  MorokSymPool *pool = morok_graph_sym_pool (g);
  MorokTensor *live
      = morok_tensor_slice (wt, 2, morok_sym_const (pool, 1), morok_sym_const (pool, taps), &e);
  MorokTensor *b
      = morok_tensor_reshape_c (morok_tensor_permute (live, (const guint[]){ 2, 1, 0 }, 3, &e),
                                (gint64[]){ taps * C, M }, 2, &e);
  MorokTensor *y = morok_tensor_matmul (x, b, &e);
  g_assert_no_error (e);
  guint64 builds = morok_plan_build_count ();
  g_autoptr (MorokPlan) plan = build1 (g, y, &x, 1);
  g_assert_cmpuint (morok_plan_build_count () - builds, ==, 1);
  float *xv = morok_plan_input (plan, 0)->data;
  for (gint64 i = 0; i < R * taps * C; i++)
    xv[i] = (float) g_rand_double_range (rng, -1, 1);
  g_assert_true (morok_plan_execute (plan, NULL, 0, &e));
  const float *yv = morok_plan_output (plan, 0)->data;
  for (gint64 r = 0; r < R; r++)
    for (gint64 m = 0; m < M; m++)
      {
        double acc = 0;
        for (gint64 t = 0; t < taps; t++)
          for (gint64 c = 0; c < C; c++)
            acc += (double) xv[r * taps * C + t * C + c] * w[(m * C + c) * k + 1 + t];
        g_assert_cmpfloat_with_epsilon (yv[r * M + m], acc, 1e-5 * fmax (1, fabs (acc)));
      }
}

/* A contraction with at most 8 rows (or columns) reads its constant operand
 * contiguous along the wide side, each row 64-byte aligned: a weight stored
 * the other way, or not aligned, is copied in that layout at prepare (rows
 * padded to 16 floats), one stored that way is read in place, and so is a
 * single column, whatever its stride. */
static void
test_layout_small_matmul_weights (void)
{
  g_assert_false (small_matmul_reads_weight_in_place (0, 32, 0)); /* x [2, K] @ w^T */
  g_assert_true (small_matmul_reads_weight_in_place (1, 32, 0));  /* x [2, K] @ w [K, N] */
  g_assert_false (small_matmul_reads_weight_in_place (1, 32, 1)); /* the same, w not aligned */
  g_assert_false (small_matmul_reads_weight_in_place (1, 24, 0)); /* rows 96 bytes apart */
  g_assert_false (small_matmul_reads_weight_in_place (2, 32, 0)); /* w [16, K] @ x [K, 3] */
  g_assert_true (small_matmul_reads_weight_in_place (0, 1, 0));   /* one column: dot products */
}

/* conv -> bias -> ReLU -> padded conv: the bias and ReLU are the first
 * matmul's epilogue (its kernel writes the ReLU), not recomputed by the
 * padded im2col of the second conv for every tap; the values are right. */
static void
test_fusion_epilogue_before_view (void)
{
  GError *e = NULL;
  g_autofree float *w1 = rand_floats (8 * 4 * 3), *b1 = rand_floats (8),
                   *w2 = rand_floats (6 * 8 * 3);
  MorokGraph *g = morok_graph_new ();
  const MorokSym *sx[3];
  morok_tensor_syms (g, (gint64[]){ 1, 4, 20 }, 3, sx);
  MorokTensor *x = morok_tensor_input (g, "x", MOROK_DTYPE_F32, sx, 3);
  MorokTensor *wt1 = morok_tensor_weight (g, "w1", MOROK_DTYPE_F32, w1, (gint64[]){ 8, 4, 3 }, 3);
  MorokTensor *bt1 = morok_tensor_weight (g, "b1", MOROK_DTYPE_F32, b1, (gint64[]){ 8 }, 1);
  MorokTensor *wt2 = morok_tensor_weight (g, "w2", MOROK_DTYPE_F32, w2, (gint64[]){ 6, 8, 3 }, 3);
  MorokTensor *h = morok_tensor_relu (morok_tensor_conv1d (x, wt1, bt1, 1, 1, 1, 1, &e), &e);
  MorokTensor *y = morok_tensor_conv1d (h, wt2, NULL, 1, 1, 1, 1, &e);
  g_assert_no_error (e);
  g_autoptr (MorokPlan) plan = build1 (g, y, &x, 1);
  float *xv = morok_plan_input (plan, 0)->data;
  for (int i = 0; i < 80; i++)
    xv[i] = (float) g_rand_double_range (rng, -1, 1);
  g_autoptr (GArray) prof = morok_plan_execute_profiled (plan, NULL, 0, &e);
  g_assert_no_error (e);
  gboolean relu_epilogue = FALSE;
  for (guint i = 0; i < prof->len; i++)
    relu_epilogue
        = relu_epilogue || strstr (g_array_index (prof, MorokKernelProfile, i).name, "matmul relu");
  for (guint i = 0; !relu_epilogue && i < prof->len; i++)
    g_test_message ("step %s", g_array_index (prof, MorokKernelProfile, i).name);
  g_assert_true (relu_epilogue);
  /* reference: two direct convolutions */
  double hv[8][20], want;
  for (int o = 0; o < 8; o++)
    for (int t = 0; t < 20; t++)
      {
        double acc = b1[o];
        for (int c = 0; c < 4; c++)
          for (int k = 0; k < 3; k++)
            if (t + k - 1 >= 0 && t + k - 1 < 20)
              acc += (double) w1[(o * 4 + c) * 3 + k] * xv[c * 20 + t + k - 1];
        hv[o][t] = acc > 0 ? acc : 0;
      }
  const float *yv = morok_plan_output (plan, 0)->data;
  for (int o = 0; o < 6; o++)
    for (int t = 0; t < 20; t++)
      {
        want = 0;
        for (int c = 0; c < 8; c++)
          for (int k = 0; k < 3; k++)
            if (t + k - 1 >= 0 && t + k - 1 < 20)
              want += w2[(o * 8 + c) * 3 + k] * hv[c][t + k - 1];
        g_assert_cmpfloat_with_epsilon (yv[o * 20 + t], want, 1e-5 * fmax (1, fabs (want)));
      }
}

/* A time-major convolution, x [1, T, C] padded in time, windowed and
 * merged to [1, T, 3 C] (a strided view of the padded signal) times w
 * [3 C, M]: the padded signal is stored once and the contraction reads its
 * windows in place, so the plan is two kernels, the padding and the matmul
 * (not an im2col copy); the values are right. */
static void
test_fusion_padded_windows_read_in_place (void)
{
  GError *e = NULL;
  const gint64 T = 6, C = 5, M = 4;
  g_autofree float *w = rand_floats (3 * C * M);
  MorokGraph *g = morok_graph_new ();
  const MorokSym *sx[3];
  morok_tensor_syms (g, (gint64[]){ 1, T, C }, 3, sx);
  MorokTensor *x = morok_tensor_input (g, "x", MOROK_DTYPE_F32, sx, 3);
  MorokTensor *wt = morok_tensor_weight (g, "w", MOROK_DTYPE_F32, w, (gint64[]){ 3 * C, M }, 2);
  MorokTensor *xp = morok_tensor_pad (x, (gint64[]){ 0, 1, 0 }, (gint64[]){ 0, 1, 0 }, 0.0, &e);
  MorokTensor *cols = morok_tensor_reshape_c (morok_tensor_window (xp, 1, 3, 1, 1, &e),
                                              (gint64[]){ 1, T, 3 * C }, 3, &e);
  MorokTensor *y = morok_tensor_matmul (cols, wt, &e);
  g_assert_no_error (e);
  g_autoptr (MorokPlan) plan = build1 (g, y, &x, 1);
  float *xv = morok_plan_input (plan, 0)->data;
  for (gint64 i = 0; i < T * C; i++)
    xv[i] = (float) g_rand_double_range (rng, -1, 1);
  g_autoptr (GArray) prof = morok_plan_execute_profiled (plan, NULL, 0, &e);
  g_assert_no_error (e);
  for (guint i = 0; i < prof->len; i++)
    g_test_message ("step %s", g_array_index (prof, MorokKernelProfile, i).name);
  g_assert_cmpuint (prof->len, ==, 2);
  g_assert_nonnull (strstr (g_array_index (prof, MorokKernelProfile, 0).name, "pad"));
  g_assert_nonnull (strstr (g_array_index (prof, MorokKernelProfile, 1).name, "matmul"));
  const float *yv = morok_plan_output (plan, 0)->data;
  for (gint64 t = 0; t < T; t++)
    for (gint64 m = 0; m < M; m++)
      {
        double want = 0;
        for (gint64 k = 0; k < 3; k++)
          for (gint64 c = 0; c < C; c++)
            if (t + k - 1 >= 0 && t + k - 1 < T)
              want += (double) xv[(t + k - 1) * C + c] * w[(k * C + c) * M + m];
        g_assert_cmpfloat_with_epsilon (yv[t * M + m], want, 1e-5 * fmax (1, fabs (want)));
      }
}

/* A depthwise convolution over time as GigaAM writes it, x [1, T, C]
 * zero-padded in time and shifted once per tap, times w[:, j] of w [C, k]
 * (a view with stride k): the taps are copied contiguous at prepare (in
 * place they were a gather per vector), and the loop over channels, whose
 * loads are guarded by the padding, is marked for clang to vectorise. C and
 * T are not multiples of a vector, so the edges take the masked lanes. */
static void
test_layout_strided_elementwise_weight (void)
{
  GError *e = NULL;
  const gint64 T = 11, C = 37, k = 5, pad = 2;
  g_autofree float *w = rand_floats (C * k), *bias = rand_floats (C);
  MorokGraph *g = morok_graph_new ();
  MorokSymPool *pool = morok_graph_sym_pool (g);
  const MorokSym *sx[3];
  morok_tensor_syms (g, (gint64[]){ 1, T, C }, 3, sx);
  MorokTensor *x = morok_tensor_input (g, "x", MOROK_DTYPE_F32, sx, 3);
  MorokTensor *wt = morok_tensor_weight (g, "w", MOROK_DTYPE_F32, w, (gint64[]){ C, k }, 2);
  MorokTensor *y = morok_tensor_weight (g, "b", MOROK_DTYPE_F32, bias, (gint64[]){ C }, 1);
  for (gint64 j = 0; j < k; j++)
    {
      gint64 shift = j - pad, before = MAX (-shift, 0), after = MAX (shift, 0);
      MorokTensor *tap
          = morok_tensor_pad (x, (gint64[]){ 0, before, 0 }, (gint64[]){ 0, after, 0 }, 0.0, &e);
      tap = morok_tensor_slice (tap, 1, morok_sym_const (pool, after), morok_sym_const (pool, T),
                                &e);
      MorokTensor *wj = morok_tensor_reshape_c (
          morok_tensor_slice (wt, 1, morok_sym_const (pool, j), morok_sym_const (pool, 1), &e),
          (gint64[]){ C }, 1, &e);
      y = morok_tensor_add (y, morok_tensor_mul (tap, wj, &e), &e);
    }
  g_assert_no_error (e);
  g_autofree char *src = NULL;
  g_autoptr (MorokPlan) plan = build1_source (g, y, x, &src);
  float *xv = morok_plan_input (plan, 0)->data;
  for (gint64 i = 0; i < T * C; i++)
    xv[i] = (float) g_rand_double_range (rng, -1, 1);
  g_assert_true (morok_plan_execute (plan, NULL, 0, &e));
  const float *yv = morok_plan_output (plan, 0)->data;
  for (gint64 t = 0; t < T; t++)
    for (gint64 c = 0; c < C; c++)
      {
        double want = bias[c];
        for (gint64 j = 0; j < k; j++)
          if (t + j - pad >= 0 && t + j - pad < T)
            want += (double) xv[(t + j - pad) * C + c] * w[c * k + j];
        g_assert_cmpfloat_with_epsilon (yv[t * C + c], want, 1e-5 * fmax (1, fabs (want)));
      }
  /* the source: the loop marked, and no tap read k floats apart */
  const char *kernel = strstr (src, "morok_b0 (");
  g_assert_nonnull (kernel);
  g_assert_nonnull (strstr (kernel, "#pragma clang loop vectorize(assume_safety)"));
  g_assert_null (strstr (kernel, "* 5 + "));
}

/* Heads merged back for a product, [1, H, T, dh] -> permute -> [1, T,
 * H dh] @ w, as out of attention: the copy before the product loops in the
 * shape it reads, [1, T, H, dh], so its inner loop runs along dh with
 * affine reads (along H dh each read divided its index by dh, a gather per
 * vector); the values are right. */
static void
test_layout_merged_heads_loop_along_dh (void)
{
  GError *e = NULL;
  const gint64 H = 3, T = 5, dh = 32, N = 4;
  g_autofree float *w = rand_floats (H * dh * N);
  MorokGraph *g = morok_graph_new ();
  const MorokSym *sx[4];
  morok_tensor_syms (g, (gint64[]){ 1, H, T, dh }, 4, sx);
  MorokTensor *x = morok_tensor_input (g, "x", MOROK_DTYPE_F32, sx, 4);
  MorokTensor *wt = morok_tensor_weight (g, "w", MOROK_DTYPE_F32, w, (gint64[]){ H * dh, N }, 2);
  MorokTensor *heads
      = morok_tensor_reshape_c (morok_tensor_permute (morok_tensor_mul_scalar (x, 2.0, &e),
                                                      (const guint[]){ 0, 2, 1, 3 }, 4, &e),
                                (gint64[]){ 1, T, H * dh }, 3, &e);
  MorokTensor *y = morok_tensor_matmul (heads, wt, &e);
  g_assert_no_error (e);
  g_autofree char *src = NULL;
  g_autoptr (MorokPlan) plan = build1_source (g, y, x, &src);
  float *xv = morok_plan_input (plan, 0)->data;
  for (gint64 i = 0; i < H * T * dh; i++)
    xv[i] = (float) g_rand_double_range (rng, -1, 1);
  g_assert_true (morok_plan_execute (plan, NULL, 0, &e));
  const float *yv = morok_plan_output (plan, 0)->data;
  for (gint64 t = 0; t < T; t++)
    for (gint64 n = 0; n < N; n++)
      {
        double want = 0;
        for (gint64 h = 0; h < H; h++)
          for (gint64 j = 0; j < dh; j++)
            want += 2.0 * xv[(h * T + t) * dh + j] * w[(h * dh + j) * N + n];
        g_assert_cmpfloat_with_epsilon (yv[t * N + n], want, 1e-5 * fmax (1, fabs (want)));
      }
  const char *kernel = strstr (src, "/* reshape f32[1, 5, 96] */");
  g_assert_nonnull (kernel);
  g_assert_nonnull (strstr (kernel, "i3 < 32"));
  g_assert_null (g_strstr_len (kernel, strstr (kernel, "\n}\n") - kernel, "/ 32"));
}

/* A layer norm over the rows of x = a · m + 3 [R, C] (x stored by its
 * product): x - mean has two readers (the variance and the output) and all
 * but one of its sources broadcast, so each reader computes it again and no
 * kernel stores it: the plan is the product, the mean, the variance and the
 * output (it was five kernels); the values are right. */
static void
test_fusion_layer_norm_recomputes_centred (void)
{
  GError *e = NULL;
  const gint64 R = 5, K = 3, C = 40;
  g_autofree float *m = rand_floats (K * C), *w = rand_floats (C), *bias = rand_floats (C);
  MorokGraph *g = morok_graph_new ();
  const MorokSym *sa[2];
  morok_tensor_syms (g, (gint64[]){ R, K }, 2, sa);
  MorokTensor *a = morok_tensor_input (g, "a", MOROK_DTYPE_F32, sa, 2);
  MorokTensor *mt = morok_tensor_weight (g, "m", MOROK_DTYPE_F32, m, (gint64[]){ K, C }, 2);
  MorokTensor *wt = morok_tensor_weight (g, "w", MOROK_DTYPE_F32, w, (gint64[]){ C }, 1);
  MorokTensor *bt = morok_tensor_weight (g, "b", MOROK_DTYPE_F32, bias, (gint64[]){ C }, 1);
  MorokTensor *y = morok_tensor_layer_norm (
      morok_tensor_add_scalar (morok_tensor_matmul (a, mt, &e), 3.0, &e), wt, bt, 1e-5, &e);
  g_assert_no_error (e);
  g_autoptr (MorokPlan) plan = build1 (g, y, &a, 1);
  float *av = morok_plan_input (plan, 0)->data;
  for (gint64 i = 0; i < R * K; i++)
    av[i] = (float) g_rand_double_range (rng, -1, 1);
  g_autofree double *xv = g_new (double, R *C);
  for (gint64 r = 0; r < R; r++)
    for (gint64 c = 0; c < C; c++)
      {
        xv[r * C + c] = 3.0;
        for (gint64 k = 0; k < K; k++)
          xv[r * C + c] += (double) av[r * K + k] * m[k * C + c];
      }
  g_autoptr (GArray) prof = morok_plan_execute_profiled (plan, NULL, 0, &e);
  g_assert_no_error (e);
  for (guint i = 0; i < prof->len; i++)
    {
      const char *name = g_array_index (prof, MorokKernelProfile, i).name;
      g_test_message ("step %s", name);
      g_assert_null (strstr (name, "sub"));
    }
  g_assert_cmpuint (prof->len, ==, 4);
  const float *yv = morok_plan_output (plan, 0)->data;
  for (gint64 r = 0; r < R; r++)
    {
      double mean = 0, var = 0;
      for (gint64 c = 0; c < C; c++)
        mean += xv[r * C + c] / (double) C;
      for (gint64 c = 0; c < C; c++)
        var += (xv[r * C + c] - mean) * (xv[r * C + c] - mean) / (double) C;
      for (gint64 c = 0; c < C; c++)
        {
          double want = (xv[r * C + c] - mean) / sqrt (var + 1e-5) * w[c] + bias[c];
          g_assert_cmpfloat_with_epsilon (yv[r * C + c], want, 1e-5 * fmax (1, fabs (want)));
        }
    }
}

/* A linear layer on [t, 16] with t in [1, 50]: prepared once, executed 1000
 * times with new data and new values of t; every output is checked, and no
 * plan is built nor kernel compiled after prepare. */
static void
test_replay_never_rebuilds (void)
{
  GError *e = NULL;
  const gint64 K = 16, N = 24, TMAX = 50;
  g_autofree float *w = rand_floats (N * K), *bias = rand_floats (N);
  MorokGraph *g = morok_graph_new ();
  MorokSymPool *pool = morok_graph_sym_pool (g);
  MorokVariable *t = morok_variable_new (pool, "t", 1, TMAX);
  const MorokSym *sx[] = { morok_sym_var (t), morok_sym_const (pool, K) };
  MorokTensor *x = morok_tensor_input (g, "x", MOROK_DTYPE_F32, sx, 2);
  MorokTensor *wt = morok_tensor_weight (g, "w", MOROK_DTYPE_F32, w, (gint64[]){ N, K }, 2);
  MorokTensor *bt = morok_tensor_weight (g, "b", MOROK_DTYPE_F32, bias, (gint64[]){ N }, 1);
  MorokTensor *y = morok_tensor_tanh (morok_tensor_linear (x, wt, bt, &e), &e);
  g_assert_no_error (e);
  g_autoptr (MorokPlan) plan = build1 (g, y, &x, 1);
  guint64 builds = morok_plan_build_count (), compiles = morok_compile_count_invocations ();
  guint64 hits = morok_compile_count_cache_hits ();
  float *xv = morok_plan_input (plan, 0)->data;
  for (int call = 0; call < 1000; call++)
    {
      gint64 tv = 1 + (call * 7) % TMAX;
      for (gint64 i = 0; i < tv * K; i++)
        xv[i] = (float) g_rand_double_range (rng, -1, 1);
      MorokVarValue vars[] = { { "t", tv } };
      g_assert_true (morok_plan_execute (plan, vars, 1, &e));
      const MorokBuffer *out = morok_plan_output (plan, 0);
      g_assert_cmpint (out->shape[0], ==, tv);
      g_assert_cmpint (out->shape[1], ==, N);
      const float *yv = out->data;
      for (gint64 r = 0; r < tv; r++)
        for (gint64 n = 0; n < N; n++)
          {
            double acc = bias[n];
            for (gint64 k = 0; k < K; k++)
              acc += (double) xv[r * K + k] * w[n * K + k];
            g_assert_cmpfloat_with_epsilon (yv[r * N + n], tanh (acc), 2e-6);
          }
    }
  g_assert_cmpuint (morok_plan_build_count (), ==, builds);
  g_assert_cmpuint (morok_compile_count_invocations (), ==, compiles);
  g_assert_cmpuint (morok_compile_count_cache_hits (), ==, hits);
}

/* Steps large enough for the thread pool give the same results: a 130 x 300
 * x 257 matmul with an epilogue and a row reduction, on every thread count. */
static void
test_threads_parallel_steps (void)
{
  GError *e = NULL;
  const gint64 M = 130, K = 300, N = 257;
  g_autofree float *w = rand_floats (K * N), *xv0 = rand_floats (M * K);
  g_autofree double *want = g_new0 (double, M);
  for (gint64 m = 0; m < M; m++)
    for (gint64 n = 0; n < N; n++)
      {
        double acc = 0;
        for (gint64 k = 0; k < K; k++)
          acc += (double) xv0[m * K + k] * w[k * N + n];
        want[m] += tanh (acc);
      }
  for (guint threads = 1; threads <= morok_thread_pool_size (); threads++)
    {
      MorokGraph *g = morok_graph_new ();
      const MorokSym *sx[2];
      morok_tensor_syms (g, (gint64[]){ M, K }, 2, sx);
      MorokTensor *x = morok_tensor_input (g, "x", MOROK_DTYPE_F32, sx, 2);
      MorokTensor *wt = morok_tensor_weight (g, "w", MOROK_DTYPE_F32, w, (gint64[]){ K, N }, 2);
      MorokTensor *y = morok_tensor_sum (morok_tensor_tanh (morok_tensor_matmul (x, wt, &e), &e),
                                         (gint[]){ 1 }, 1, FALSE, &e);
      g_assert_no_error (e);
      MorokPlanOptions opts;
      morok_plan_options_init (&opts);
      opts.threads = threads;
      g_autoptr (MorokPlan) plan = morok_plan_build (g, &y, 1, &x, 1, &opts, &e);
      g_assert_no_error (e);
      memcpy (morok_plan_input (plan, 0)->data, xv0, M * K * sizeof (float));
      for (int rep = 0; rep < 20; rep++)
        {
          g_assert_true (morok_plan_execute (plan, NULL, 0, &e));
          const float *yv = morok_plan_output (plan, 0)->data;
          for (gint64 m = 0; m < M; m++)
            g_assert_cmpfloat_with_epsilon (yv[m], want[m], 1e-4 * fmax (1, fabs (want[m])));
        }
    }
}

/* ---- the disk cache across processes ---- */

static MorokPlan *
cache_plan (void)
{
  GError *e = NULL;
  MorokGraph *g = morok_graph_new ();
  const MorokSym *sh[1];
  morok_tensor_syms (g, (gint64[]){ 33 }, 1, sh);
  MorokTensor *x = morok_tensor_input (g, "x", MOROK_DTYPE_F32, sh, 1);
  MorokTensor *y = morok_tensor_mul_scalar (morok_tensor_add_scalar (x, 0.25, &e), 3, &e);
  return build1 (g, y, &x, 1);
}

static void
cache_child (void)
{
  guint64 runs = morok_compile_count_invocations (), hits = morok_compile_count_cache_hits ();
  g_autoptr (MorokPlan) plan = cache_plan ();
  g_print ("compiles=%" G_GUINT64_FORMAT " hits=%" G_GUINT64_FORMAT "\n",
           morok_compile_count_invocations () - runs, morok_compile_count_cache_hits () - hits);
}

/* The first process compiles; a second process's prepare of the same graph
 * is served from the disk cache without running the compiler. */
static void
test_cache_second_process (void)
{
  if (g_test_subprocess ())
    {
      cache_child ();
      return;
    }
  g_autofree char *dir = g_dir_make_tmp ("morok-cache-XXXXXX", NULL);
  g_setenv ("MOROK_CACHE_DIR", dir, TRUE);
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_INHERIT_STDERR);
  g_test_trap_assert_passed ();
  g_test_trap_assert_stdout ("*compiles=1 hits=0*");
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_INHERIT_STDERR);
  g_test_trap_assert_passed ();
  g_test_trap_assert_stdout ("*compiles=0 hits=1*");
  g_unsetenv ("MOROK_CACHE_DIR");
}

/* ---- errors ---- */

/* A variable outside its bounds is an error, and the call changes nothing. */
static void
test_error_variable_out_of_bounds (void)
{
  GError *e = NULL;
  MorokGraph *g = morok_graph_new ();
  MorokSymPool *pool = morok_graph_sym_pool (g);
  MorokVariable *t = morok_variable_new (pool, "t", 2, 8);
  const MorokSym *sh[] = { morok_sym_var (t) };
  MorokTensor *x = morok_tensor_input (g, "x", MOROK_DTYPE_F32, sh, 1);
  g_autoptr (MorokPlan) plan = build1 (g, morok_tensor_neg (x, &e), &x, 1);
  MorokVarValue ok[] = { { "t", 3 } }, low[] = { { "t", 1 } }, high[] = { { "t", 9 } };
  MorokVarValue unknown[] = { { "u", 3 } };
  g_assert_true (morok_plan_execute (plan, ok, 1, &e));
  g_assert_false (morok_plan_execute (plan, low, 1, &e));
  g_assert_error (e, MOROK_RUNTIME_ERROR, MOROK_RUNTIME_ERROR_VARIABLE);
  g_assert_nonnull (strstr (e->message, "[2, 8]"));
  g_clear_error (&e);
  g_assert_false (morok_plan_execute (plan, high, 1, &e));
  g_assert_error (e, MOROK_RUNTIME_ERROR, MOROK_RUNTIME_ERROR_VARIABLE);
  g_clear_error (&e);
  g_assert_false (morok_plan_execute (plan, unknown, 1, &e));
  g_assert_error (e, MOROK_RUNTIME_ERROR, MOROK_RUNTIME_ERROR_VARIABLE);
  g_clear_error (&e);
  g_assert_cmpint (morok_plan_output (plan, 0)->shape[0], ==, 3);
}

/* Shapes that do not fit give a tensor error whose message shows them, and
 * later operations keep that first error. */
static void
test_error_mismatched_shapes (void)
{
  GError *e = NULL;
  g_autoptr (MorokGraph) g = morok_graph_new ();
  const MorokSym *sa[2], *sb[2];
  morok_tensor_syms (g, (gint64[]){ 3, 4 }, 2, sa);
  morok_tensor_syms (g, (gint64[]){ 5, 4 }, 2, sb);
  MorokTensor *a = morok_tensor_input (g, "a", MOROK_DTYPE_F32, sa, 2);
  MorokTensor *b = morok_tensor_input (g, "b", MOROK_DTYPE_F32, sb, 2);
  MorokTensor *y = morok_tensor_relu (morok_tensor_add (a, b, &e), &e);
  g_assert_null (y);
  g_assert_error (e, MOROK_TENSOR_ERROR, MOROK_TENSOR_ERROR_SHAPE);
  g_assert_nonnull (strstr (e->message, "[3, 4]"));
  g_assert_nonnull (strstr (e->message, "[5, 4]"));
  g_clear_error (&e);
  g_assert_null (morok_tensor_matmul (a, b, &e));
  g_assert_error (e, MOROK_TENSOR_ERROR, MOROK_TENSOR_ERROR_SHAPE);
  g_clear_error (&e);
  g_assert_null (morok_tensor_add (a, morok_tensor_cast (b, MOROK_DTYPE_I32, &e), &e));
  g_assert_error (e, MOROK_TENSOR_ERROR, MOROK_TENSOR_ERROR_DTYPE);
  g_clear_error (&e);
}

/* Without a compiler, prepare fails with an error naming what is missing. */
static void
test_error_missing_compiler (void)
{
  GError *e = NULL;
  MorokGraph *g = morok_graph_new ();
  const MorokSym *sh[1];
  morok_tensor_syms (g, (gint64[]){ 4 }, 1, sh);
  MorokTensor *x = morok_tensor_input (g, "x", MOROK_DTYPE_F32, sh, 1);
  MorokTensor *y = morok_tensor_exp (morok_tensor_mul_scalar (x, 1.5, &e), &e);
  g_setenv ("MOROK_CC", "/nonexistent", TRUE);
  MorokPlanOptions opts;
  morok_plan_options_init (&opts);
  opts.compile.use_cache = FALSE;
  MorokPlan *plan = morok_plan_build (g, &y, 1, &x, 1, &opts, &e);
  g_unsetenv ("MOROK_CC");
  g_assert_null (plan);
  g_assert_error (e, MOROK_COMPILE_ERROR, MOROK_COMPILE_ERROR_NO_COMPILER);
  g_assert_nonnull (strstr (e->message, "/nonexistent"));
  g_clear_error (&e);
}

/* A precision the plan's ISA cannot run, or one that is not a precision,
 * fails the build with MOROK_GRAPH_ERROR_PRECISION naming it: bf16 needs
 * the avx512 ISA, which the portable one is not, whatever the CPU. */
static void
test_error_precision_not_run (void)
{
  const struct
  {
    MorokPrecision precision;
    const char *named;
  } cases[] = { { MOROK_PRECISION_BF16, "bf16" }, { (MorokPrecision) 99, "precision 99" } };
  for (guint c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      GError *e = NULL;
      MorokGraph *g = morok_graph_new ();
      const MorokSym *sh[1];
      morok_tensor_syms (g, (gint64[]){ 4 }, 1, sh);
      MorokTensor *x = morok_tensor_input (g, "x", MOROK_DTYPE_F32, sh, 1);
      MorokTensor *y = morok_tensor_exp (x, &e);
      MorokPlanOptions opts;
      morok_plan_options_init (&opts);
      opts.isa = MOROK_ISA_PORTABLE;
      opts.precision = cases[c].precision;
      g_assert_null (morok_plan_build (g, &y, 1, &x, 1, &opts, &e));
      g_assert_error (e, MOROK_GRAPH_ERROR, MOROK_GRAPH_ERROR_PRECISION);
      g_assert_nonnull (strstr (e->message, cases[c].named));
      g_clear_error (&e);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  rng = g_rand_new_with_seed (42);
  g_test_add_func ("/plan/fusion/elementwise-chain-is-one-kernel", test_fusion_elementwise);
  g_test_add_func ("/plan/fusion/matmul-epilogue-is-one-kernel", test_fusion_matmul_epilogue);
  g_test_add_func ("/plan/fusion/single-column-matmul-is-one-kernel-with-its-operand",
                   test_fusion_single_column_matmul);
  g_test_add_func ("/plan/fusion/reduction-stores-its-chain",
                   test_fusion_reduction_stores_its_chain);
  g_test_add_func ("/plan/layout/small-matmul-weights-laid-out-at-prepare",
                   test_layout_small_matmul_weights);
  g_test_add_func ("/plan/layout/strided-elementwise-weight-copied-and-vectorised",
                   test_layout_strided_elementwise_weight);
  g_test_add_func ("/plan/layout/merged-heads-loop-along-dh",
                   test_layout_merged_heads_loop_along_dh);
  g_test_add_func ("/plan/fusion/layer-norm-recomputes-its-centred-input",
                   test_fusion_layer_norm_recomputes_centred);
  g_test_add_func ("/plan/fold/skips-what-outgrows-its-weights",
                   test_fold_skips_what_outgrows_its_weights);
  g_test_add_func ("/plan/fold/copies-views-without-a-plan", test_fold_copies_views_without_a_plan);
  g_test_add_func ("/plan/fusion/epilogue-before-a-view", test_fusion_epilogue_before_view);
  g_test_add_func ("/plan/fusion/padded-windows-read-in-place",
                   test_fusion_padded_windows_read_in_place);
  g_test_add_func ("/plan/execute/never-rebuilds", test_replay_never_rebuilds);
  g_test_add_func ("/plan/weights/released-once-packed", test_weights_released_once_packed);
  g_test_add_func ("/plan/threads/parallel-steps-match-reference", test_threads_parallel_steps);
  g_test_add_func ("/plan/cache/second-process-hits", test_cache_second_process);
  g_test_add_func ("/plan/errors/variable-out-of-bounds", test_error_variable_out_of_bounds);
  g_test_add_func ("/plan/errors/mismatched-shapes", test_error_mismatched_shapes);
  g_test_add_func ("/plan/errors/missing-compiler", test_error_missing_compiler);
  g_test_add_func ("/plan/errors/precision-not-run-here", test_error_precision_not_run);
  int r = g_test_run ();
  g_rand_free (rng);
  return r;
}
