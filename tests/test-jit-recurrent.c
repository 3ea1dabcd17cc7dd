/* SPDX-License-Identifier: MIT */
/* Recurrent execution: MorokJitRecurrent driving a one-step wrapper whose
 * output is [head | h | c]. An LSTM cell with a sigmoid head runs 200 steps
 * against a naive C reference; a toy element-wise cell (no vector math)
 * checks the mechanics: layout contract, state updates, reset, failures. */
#include "jit-fixtures.h"
#include <math.h>
#include <string.h>

/* ---- the LSTM cell: x [1, IN], h, c [1, H] -> [head (HEAD) | h' | c'] ---- */

enum
{
  IN = 3,
  H = 8,
  HEAD = 2,
  STEPS = 200
};

typedef struct
{
  float w_ih[4 * H * IN], w_hh[4 * H * H], b_ih[4 * H], b_hh[4 * H];
  float w_head[HEAD * H], b_head[HEAD];
} Cell;

#define CELL_JIT_INPUTS(X) X (x) X (h) X (c)
#define CELL_JIT_VARS(X)
MOROK_JIT_DECLARE (CellJit, cell_jit, Cell, CELL_JIT_INPUTS, CELL_JIT_VARS)

#define WEIGHT(g, m, field, ...)                                                                   \
  morok_tensor_weight (g, #field, MOROK_DTYPE_F32, m->field, (gint64[]){ __VA_ARGS__ },            \
                       G_N_ELEMENTS (((gint64[]){ __VA_ARGS__ })))

static MorokTensor *
cell_build (Cell *m, MorokTensor *x, MorokTensor *h, MorokTensor *c, GError **error)
{
  MorokGraph *g = x->graph;
  MorokTensor *h2, *c2;
  if (!morok_tensor_lstm_cell (x, h, c, WEIGHT (g, m, w_ih, 4 * H, IN),
                               WEIGHT (g, m, w_hh, 4 * H, H), WEIGHT (g, m, b_ih, 4 * H),
                               WEIGHT (g, m, b_hh, 4 * H), &h2, &c2, error))
    return NULL;
  MorokTensor *head = morok_tensor_sigmoid (
      morok_tensor_linear (h2, WEIGHT (g, m, w_head, HEAD, H), WEIGHT (g, m, b_head, HEAD), error),
      error);
  MorokTensor *parts[] = { head, h2, c2 };
  return morok_tensor_cat (parts, 3, 1, error);
}

MOROK_JIT_DEFINE (CellJit, cell_jit, Cell, CELL_JIT_INPUTS, CELL_JIT_VARS, cell_build, NULL)

/* Step t's input: x[i] = sin (0.3 t + i). */
static void
write_x (CellJit *jit, int t)
{
  float *x = cell_jit_x_mut (jit, NULL)->data;
  for (int i = 0; i < IN; i++)
    x[i] = sinf (0.3f * t + i);
}

static double
sigmoid (double v)
{
  return 1 / (1 + exp (-v));
}

/* One step of the reference, in double, PyTorch's gate order (i, f, g, o). */
static void
reference_step (const Cell *m, const double *x, double *h, double *c, double *head)
{
  double gates[4 * H], h2[H];
  for (int r = 0; r < 4 * H; r++)
    {
      double acc = m->b_ih[r] + m->b_hh[r];
      for (int i = 0; i < IN; i++)
        acc += m->w_ih[r * IN + i] * x[i];
      for (int j = 0; j < H; j++)
        acc += m->w_hh[r * H + j] * h[j];
      gates[r] = acc;
    }
  for (int j = 0; j < H; j++)
    {
      double ig = sigmoid (gates[j]), fg = sigmoid (gates[H + j]);
      double gg = tanh (gates[2 * H + j]), og = sigmoid (gates[3 * H + j]);
      c[j] = fg * c[j] + ig * gg;
      h2[j] = og * tanh (c[j]);
    }
  memcpy (h, h2, sizeof h2);
  for (int k = 0; k < HEAD; k++)
    {
      double acc = m->b_head[k];
      for (int j = 0; j < H; j++)
        acc += m->w_head[k * H + j] * h[j];
      head[k] = sigmoid (acc);
    }
}

static void
fill (GRand *rng, float *v, int n, double scale)
{
  for (int i = 0; i < n; i++)
    v[i] = (float) g_rand_double_range (rng, -scale, scale);
}

/* 200 steps of the LSTM cell through MorokJitRecurrent: the head, h and c
 * agree with the double-precision reference at every step within 2e-5
 * (f32 arithmetic and vector-math approximations, on values in (-1, 1)). */
static void
test_lstm_matches_reference (void)
{
  GError *e = NULL;
  g_autoptr (GRand) rng = g_rand_new_with_seed (2024);
  g_autofree Cell *m = g_new0 (Cell, 1);
  fill (rng, m->w_ih, 4 * H * IN, 0.6), fill (rng, m->w_hh, 4 * H * H, 0.4);
  fill (rng, m->b_ih, 4 * H, 0.2), fill (rng, m->b_hh, 4 * H, 0.2);
  fill (rng, m->w_head, HEAD * H, 0.8), fill (rng, m->b_head, HEAD, 0.1);
  g_autoptr (CellJit) jit = cell_jit_new (m);
  g_autoptr (MorokInputSpec) sx = morok_input_spec_f32 (MOROK_SHAPE (1, IN));
  g_autoptr (MorokInputSpec) sh = morok_input_spec_f32 (MOROK_SHAPE (1, H));
  gboolean prepared = cell_jit_prepare (jit, sx, sh, sh, &e);
  g_assert_no_error (e); /* needs the vector math and GEMM kernel headers */
  g_assert_true (prepared);
  g_autoptr (MorokJitRecurrent) rec = morok_jit_recurrent_new (jit, 1, H, HEAD, &e);
  g_assert_no_error (e);
  const MorokLstmState *state = morok_jit_recurrent_state (rec);

  double h[H] = { 0 }, c[H] = { 0 }, head[HEAD];
  for (int t = 0; t < STEPS; t++)
    {
      write_x (jit, t);
      const float *got = morok_jit_recurrent_step (rec, &e);
      g_assert_no_error (e);
      double x[IN];
      for (int i = 0; i < IN; i++)
        x[i] = sinf (0.3f * t + i);
      reference_step (m, x, h, c, head);
      for (int k = 0; k < HEAD; k++)
        g_assert_cmpfloat_with_epsilon (got[k], head[k], 2e-5);
      for (int j = 0; j < H; j++)
        {
          g_assert_cmpfloat_with_epsilon (state->h[j], h[j], 2e-5);
          g_assert_cmpfloat_with_epsilon (state->c[j], c[j], 2e-5);
        }
    }
}

/* ---- the toy cell (jit-fixtures.h) ---- */

/* Each step returns the head and moves h and c along the recurrence:
 * h: 0 -> 1 -> 1.5 -> 1.75, c: 0 -> 1 -> 2.5 -> 4.25. The state the host
 * reads is the plan's own h and c inputs: nothing is copied out and back. */
static void
test_step_updates_state (void)
{
  GError *e = NULL;
  g_autoptr (ToyJit) jit = toy_jit_new_prepared ();
  g_autoptr (MorokJitRecurrent) rec = morok_jit_recurrent_new (jit, 1, 3, 2, &e);
  const MorokLstmState *s = morok_jit_recurrent_state (rec);
  g_assert_true (s->h == toy_jit_h_mut (jit, &e)->data);
  g_assert_true (s->c == toy_jit_c_mut (jit, &e)->data);
  static const float want_h[] = { 1, 1.5f, 1.75f }, want_c[] = { 1, 2.5f, 4.25f };
  for (int step = 0; step < 3; step++)
    {
      toy_write_x (jit, step + 1);
      const float *head = morok_jit_recurrent_step (rec, &e);
      g_assert_no_error (e);
      g_assert_cmpfloat (head[0], ==, 2 * (step + 1));
      g_assert_cmpfloat (head[1], ==, -2 * (step + 1));
      for (int j = 0; j < 3; j++)
        {
          g_assert_cmpfloat (s->h[j], ==, want_h[step]);
          g_assert_cmpfloat (s->c[j], ==, want_c[step]);
        }
    }
}

/* An output that is not head_len + 2 * len f32 values is OUTPUT_LAYOUT_MISMATCH. */
static void
test_new_checks_layout (void)
{
  GError *e = NULL;
  g_autoptr (ToyJit) jit = toy_jit_new_prepared ();
  g_assert_null (morok_jit_recurrent_new (jit, 1, 3, 3, &e));
  g_assert_error (e, MOROK_JIT_ERROR, MOROK_JIT_ERROR_OUTPUT_LAYOUT_MISMATCH);
  g_assert_nonnull (strstr (e->message, "holds 8 f32 values"));
  g_clear_error (&e);
}

/* State inputs of another size than the state are OUTPUT_LAYOUT_MISMATCH,
 * naming the input. */
static void
test_new_checks_state_inputs (void)
{
  GError *e = NULL;
  g_autoptr (ToyJit) jit = toy_jit_new_prepared ();
  g_assert_null (morok_jit_recurrent_new (jit, 1, 2, 4, &e));
  g_assert_error (e, MOROK_JIT_ERROR, MOROK_JIT_ERROR_OUTPUT_LAYOUT_MISMATCH);
  g_assert_nonnull (strstr (e->message, "ToyJit: state input 'h' is f32 of 12 bytes"));
  g_clear_error (&e);
}

/* On a wrapper that is not prepared, _new passes on NOT_PREPARED. */
static void
test_new_before_prepare (void)
{
  GError *e = NULL;
  g_autoptr (ToyJit) jit = toy_jit_new (g_new0 (Toy, 1));
  g_assert_null (morok_jit_recurrent_new (jit, 1, 3, 2, &e));
  g_assert_error (e, MOROK_JIT_ERROR, MOROK_JIT_ERROR_NOT_PREPARED);
  g_clear_error (&e);
}

/* The state lives in inputs named h and c, or in one named state: a
 * wrapper with neither is INPUT_BUFFER_NOT_FOUND, naming it. */
static void
test_needs_state_inputs (void)
{
  GError *e = NULL;
  g_autoptr (GainJit) jit = gain_jit_new_prepared (2.0f, 4, 1);
  g_assert_null (morok_jit_recurrent_new (jit, 1, 1, 1, &e));
  g_assert_error (e, MOROK_JIT_ERROR, MOROK_JIT_ERROR_INPUT_BUFFER_NOT_FOUND);
  g_assert_nonnull (strstr (e->message, "GainJit"));
  g_clear_error (&e);
}

/* _new starts from h = c = 0 whatever the state inputs held; reset zeroes
 * them again (they are the state) and the head. */
static void
test_reset (void)
{
  GError *e = NULL;
  g_autoptr (ToyJit) jit = toy_jit_new_prepared ();
  ((float *) toy_jit_h_mut (jit, &e)->data)[0] = 7;
  g_autoptr (MorokJitRecurrent) rec = morok_jit_recurrent_new (jit, 1, 3, 2, &e);
  const MorokLstmState *s = morok_jit_recurrent_state (rec);
  g_assert_cmpfloat (s->h[0], ==, 0);
  for (int step = 1; step <= 2; step++)
    {
      toy_write_x (jit, step);
      morok_jit_recurrent_step (rec, &e);
    }
  g_assert_no_error (e);
  morok_jit_recurrent_reset (rec);
  for (int j = 0; j < 3; j++)
    g_assert_cmpfloat (s->h[j] + s->c[j], ==, 0);
  g_assert_cmpfloat (((float *) toy_jit_h_mut (jit, &e)->data)[0], ==, 0);
  g_assert_cmpfloat (morok_jit_recurrent_head (rec)[0], ==, 0);
  toy_write_x (jit, 1);
  const float *head = morok_jit_recurrent_step (rec, &e);
  g_assert_cmpfloat (head[0], ==, 2);
  g_assert_cmpfloat (s->h[0], ==, 1); /* as the first step from zeros */
}

/* The last step's timing has its two phases, the execute one non-zero. */
static void
test_timing (void)
{
  GError *e = NULL;
  g_autoptr (ToyJit) jit = toy_jit_new_prepared ();
  g_autoptr (MorokJitRecurrent) rec = morok_jit_recurrent_new (jit, 1, 3, 2, &e);
  MorokJitStepTiming t = morok_jit_recurrent_last_timing (rec);
  g_assert_cmpint (t.execute_ns + t.read_ns, ==, 0);
  toy_write_x (jit, 1);
  morok_jit_recurrent_step (rec, &e);
  t = morok_jit_recurrent_last_timing (rec);
  g_assert_cmpint (t.execute_ns, >, 0);
  g_assert_cmpint (t.read_ns, >=, 0);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/jit/recurrent/lstm-matches-reference-for-200-steps",
                   test_lstm_matches_reference);
  g_test_add_func ("/jit/recurrent/step-updates-state-and-returns-head", test_step_updates_state);
  g_test_add_func ("/jit/recurrent/new-checks-output-layout", test_new_checks_layout);
  g_test_add_func ("/jit/recurrent/new-checks-state-inputs", test_new_checks_state_inputs);
  g_test_add_func ("/jit/recurrent/new-before-prepare-fails", test_new_before_prepare);
  g_test_add_func ("/jit/recurrent/new-and-reset-zero-the-state", test_reset);
  g_test_add_func ("/jit/recurrent/needs-state-inputs", test_needs_state_inputs);
  g_test_add_func ("/jit/recurrent/timing-has-two-phases", test_timing);
  return g_test_run ();
}
