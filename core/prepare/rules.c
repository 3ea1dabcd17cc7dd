/* SPDX-License-Identifier: MIT */
/* Rewrite rule sets. One rule per row with its algebra; a rewrite returns
 * NULL when, on a closer look, it does not apply. */
#define G_LOG_DOMAIN "morok-graph"
#include "prepare/morok-rules.h"
#include "tensor/morok-tensor.h"
#include <math.h>
#include <string.h>

/* the element-wise ops, NEG ..= WHERE */
#define EW_MASK (((MOROK_OPBIT (WHERE) << 1) - 1) & ~((MOROK_OPBIT (NEG)) - 1))
#define VIEW_MASK                                                                                  \
  (((MOROK_OPBIT (WINDOW) << 1) - 1) & ~((MOROK_OPBIT (RESHAPE)) - 1)) /* RESHAPE ..= WINDOW */

static MorokNode *
with_shape_const (MorokNode *like, double value)
{
  return morok_tensor_full (like->graph, like->dtype, value, like->shape, like->rank);
}

/* ---- constant folding ---- */

static double
eval_op (MorokOp op, MorokDType dtype, const double *v)
{
  switch (op)
    {
    case MOROK_OP_NEG: return -v[0];
    case MOROK_OP_ABS: return fabs (v[0]);
    case MOROK_OP_EXP: return exp (v[0]);
    case MOROK_OP_LOG: return log (v[0]);
    case MOROK_OP_SQRT: return sqrt (v[0]);
    case MOROK_OP_RSQRT: return 1.0 / sqrt (v[0]);
    case MOROK_OP_RECIP: return 1.0 / v[0];
    case MOROK_OP_SIGMOID: return 1.0 / (1.0 + exp (-v[0]));
    case MOROK_OP_TANH: return tanh (v[0]);
    case MOROK_OP_RELU: return v[0] > 0 ? v[0] : 0;
    case MOROK_OP_SILU: return v[0] / (1.0 + exp (-v[0]));
    case MOROK_OP_NOT: return v[0] == 0;
    case MOROK_OP_CAST:
      return dtype == MOROK_DTYPE_BOOL      ? v[0] != 0
             : morok_dtype_is_float (dtype) ? v[0]
                                            : trunc (v[0]);
    case MOROK_OP_ADD: return v[0] + v[1];
    case MOROK_OP_SUB: return v[0] - v[1];
    case MOROK_OP_MUL: return v[0] * v[1];
    case MOROK_OP_DIV: return morok_dtype_is_float (dtype) ? v[0] / v[1] : trunc (v[0] / v[1]);
    case MOROK_OP_MAX: return fmax (v[0], v[1]);
    case MOROK_OP_MIN: return fmin (v[0], v[1]);
    case MOROK_OP_POW: return pow (v[0], v[1]);
    case MOROK_OP_CMPLT: return v[0] < v[1];
    case MOROK_OP_CMPLE: return v[0] <= v[1];
    case MOROK_OP_CMPEQ: return v[0] == v[1];
    case MOROK_OP_CMPNE: return v[0] != v[1];
    case MOROK_OP_WHERE: return v[0] != 0 ? v[1] : v[2];
    default: return NAN;
    }
}

/* op (c1, c2, ...) -> c, for any element-wise op on constants */
static MorokNode *
fold_elementwise (MorokNode *n, const MorokCaptures *cap)
{
  double v[3];
  for (guint i = 0; i < n->n_src; i++)
    {
      if (n->src[i]->op != MOROK_OP_CONST)
        return NULL;
      v[i] = n->src[i]->value;
    }
  /* integer division by zero is the kernel's business, not the compiler's */
  if (n->op == MOROK_OP_DIV && !morok_dtype_is_float (n->dtype) && v[1] == 0)
    return NULL;
  return with_shape_const (n, eval_op (n->op, n->dtype, v));
}

/* view (c) -> c with the view's shape (a pad only when it pads with c) */
static MorokNode *
fold_view (MorokNode *n, const MorokCaptures *cap)
{
  MorokNode *c = n->src[0];
  if (n->op == MOROK_OP_PAD && (n->pad_mode != MOROK_PAD_CONSTANT || n->value != c->value))
    return NULL;
  if (n->op == MOROK_OP_CAT && (n->src[1]->op != MOROK_OP_CONST || n->src[1]->value != c->value))
    return NULL;
  return with_shape_const (n, c->value);
}

static const MorokRule fold_rules[] = {
  { PAT_OPS (EW_MASK, NULL), fold_elementwise, "op (c1, c2) -> c" },
  { &(const MorokPattern){
        .ops = VIEW_MASK, .n_src = 1, .src = { PAT_OPS (MOROK_OPBIT (CONST), NULL) } },
    fold_view, "view (c) -> c" },
  { &(const MorokPattern){ .ops = MOROK_OPBIT (CAT),
                           .n_src = 2,
                           .src = { PAT_OPS (MOROK_OPBIT (CONST), NULL), PAT_ANY (NULL) } },
    fold_view, "cat (c, c) -> c" },
};
const MorokRuleSet morok_rules_fold = { "fold", fold_rules, G_N_ELEMENTS (fold_rules) };

/* ---- algebraic identities ---- */

static MorokNode *
take_x (MorokNode *n, const MorokCaptures *cap)
{
  MorokNode *x = morok_captures_get (cap, "x");
  /* the identity holds elementwise; the shapes agree since operands were broadcast */
  return x->rank == n->rank && x->dtype == n->dtype ? x : NULL;
}

static const MorokRule algebra_rules[] = {
  { PAT_OP2C (ADD, PAT_ANY ("x"), PAT_CONST (0)), take_x, "x + 0 -> x" },
  { PAT_OP2 (SUB, PAT_ANY ("x"), PAT_CONST (0)), take_x, "x - 0 -> x" },
  { PAT_OP2C (MUL, PAT_ANY ("x"), PAT_CONST (1)), take_x, "x * 1 -> x" },
  { PAT_OP2 (DIV, PAT_ANY ("x"), PAT_CONST (1)), take_x, "x / 1 -> x" },
  { PAT_OP1 (NEG, PAT_OP1 (NEG, PAT_ANY ("x"))), take_x, "-(-x) -> x" },
  { PAT_OP1 (NOT, PAT_OP1 (NOT, PAT_ANY ("x"))), take_x, "!!x -> x" },
};
const MorokRuleSet morok_rules_algebra = { "algebra", algebra_rules, G_N_ELEMENTS (algebra_rules) };

/* ---- views ---- */

static MorokNode *
merge_reshape (MorokNode *n, const MorokCaptures *cap)
{
  MorokNode *x = morok_captures_get (cap, "x");
  return morok_tensor_reshape (x, n->shape, n->rank, NULL);
}

static MorokNode *
merge_expand (MorokNode *n, const MorokCaptures *cap)
{
  return morok_tensor_expand (morok_captures_get (cap, "x"), n->shape, n->rank, NULL);
}

static MorokNode *
merge_permute (MorokNode *n, const MorokCaptures *cap)
{
  MorokNode *inner = n->src[0];
  guint composed[MOROK_MAX_RANK];
  for (guint i = 0; i < n->rank; i++)
    composed[i] = inner->perm[n->perm[i]];
  return morok_tensor_permute (inner->src[0], composed, n->rank, NULL);
}

static const MorokRule view_rules[] = {
  { PAT_OP1 (RESHAPE, PAT_NAMED (RESHAPE, NULL, .n_src = 1, .src = { PAT_ANY ("x") })),
    merge_reshape, "reshape (reshape (x)) -> reshape (x)" },
  { PAT_OP1 (EXPAND, PAT_NAMED (EXPAND, NULL, .n_src = 1, .src = { PAT_ANY ("x") })), merge_expand,
    "expand (expand (x)) -> expand (x)" },
  { PAT_OP1 (PERMUTE, PAT_OPS (MOROK_OPBIT (PERMUTE), NULL)), merge_permute,
    "permute (permute (x, p), q) -> permute (x, p . q)" },
};
const MorokRuleSet morok_rules_views = { "views", view_rules, G_N_ELEMENTS (view_rules) };

/* ---- BatchNorm (and any per-row scale and shift) into a contraction ---- */

/* (m + t) * s -> m * s + t * s, when s and t are fixed at prepare */
static MorokNode *
distribute_scale (MorokNode *n, const MorokCaptures *cap)
{
  MorokNode *m = morok_captures_get (cap, "m"), *t = morok_captures_get (cap, "t");
  MorokNode *s = morok_captures_get (cap, "s");
  if (!t->weight_only || !s->weight_only || m->weight_only)
    return NULL;
  return morok_tensor_add (morok_tensor_mul (m, s, NULL), morok_tensor_mul (t, s, NULL), NULL);
}

/* (a @ b) * s -> (a * s) @ b, when a and s are fixed at prepare and s is the
 * same along the last axis (one factor per output row, as BatchNorm is) */
static MorokNode *
scale_into_weights (MorokNode *n, const MorokCaptures *cap)
{
  MorokNode *m = morok_captures_get (cap, "m"), *s = morok_captures_get (cap, "s");
  MorokNode *a = m->src[0], *b = m->src[1];
  if (!a->weight_only || !s->weight_only || b->weight_only)
    return NULL;
  MorokNode *row;
  if (s->op == MOROK_OP_CONST)
    row = morok_tensor_scalar_like (s, s->value);
  else if (s->op == MOROK_OP_EXPAND && s->src[0]->rank == s->rank)
    row = s->src[0];
  else
    return NULL;
  gint64 last;
  if (row->rank && (!morok_sym_is_const (row->shape[row->rank - 1], &last) || last != 1))
    return NULL;
  MorokNode *a2 = morok_tensor_mul (a, row, NULL);
  if (!a2 || a2->rank != a->rank || memcmp (a2->shape, a->shape, a->rank * sizeof a->shape[0]))
    return NULL;
  return morok_tensor_matmul (a2, b, NULL);
}

static const MorokRule bn_fold_rules[] = {
  { PAT_OP2C (MUL, PAT_OP2C (ADD, PAT_NAMED (MATMUL, "m"), PAT_ANY ("t")), PAT_ANY ("s")),
    distribute_scale, "(m + t) * s -> m * s + t * s" },
  { PAT_OP2C (MUL, PAT_NAMED (MATMUL, "m"), PAT_ANY ("s")), scale_into_weights,
    "(a @ b) * s -> (a * s) @ b" },
};
const MorokRuleSet morok_rules_bn_fold = { "bn-fold", bn_fold_rules, G_N_ELEMENTS (bn_fold_rules) };

/* ---- single-column contractions ---- */

/* a [.., M, K] @ b [.., K, 1] -> sum (a * b^T, last axis): a dot product
 * per row, as a reduction loop, which reads a's element-wise producers
 * inline (a contraction needs its operands in buffers: the ReLU before
 * Silero's head was a kernel of its own) and costs no call of the GEMM */
static MorokNode *
column_as_sum (MorokNode *n, const MorokCaptures *cap)
{
  gint64 cols;
  if (!morok_dtype_is_float (n->dtype) || !morok_sym_is_const (n->shape[n->rank - 1], &cols)
      || cols != 1)
    return NULL;
  MorokNode *bt = morok_tensor_transpose (n->src[1], -1, -2, NULL);
  const gint axis = -1;
  return morok_tensor_sum (morok_tensor_mul (n->src[0], bt, NULL), &axis, 1, TRUE, NULL);
}

static const MorokRule column_rules[] = {
  { PAT_NAMED (MATMUL, NULL), column_as_sum, "a @ b [K, 1] -> sum (a * b^T, k)" },
};
const MorokRuleSet morok_rules_column = { "column", column_rules, G_N_ELEMENTS (column_rules) };
