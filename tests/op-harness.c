/* SPDX-License-Identifier: MIT */
#include "op-harness.h"
#include <string.h>

void
case_init (Case *c)
{
  memset (c, 0, sizeof *c);
  c->g = morok_graph_new ();
}

MorokTensor *
case_input_sym (Case *c, const Ref *r, const MorokSym *const *shape)
{
  g_assert_cmpuint (c->n, <, G_N_ELEMENTS (c->in));
  char name[16];
  g_snprintf (name, sizeof name, "in%u", c->n);
  c->ref[c->n] = r;
  return c->in[c->n++] = morok_tensor_input (c->g, name, MOROK_DTYPE_F32, shape, r->rank);
}

MorokTensor *
case_input (Case *c, const Ref *r)
{
  const MorokSym *shape[MOROK_MAX_RANK];
  morok_tensor_syms (c->g, r->shape, r->rank, shape);
  return case_input_sym (c, r, shape);
}

static GPtrArray *weights;

MorokTensor *
case_weight (Case *c, const Ref *r)
{
  float *data = g_new (float, MAX (r->n, 1));
  for (gint64 i = 0; i < r->n; i++)
    data[i] = (float) r->v[i];
  if (!weights)
    weights = g_ptr_array_new_with_free_func (g_free);
  g_ptr_array_add (weights, data);
  return morok_tensor_weight (c->g, "w", MOROK_DTYPE_F32, data, r->shape, r->rank);
}

void
case_check (Case *c, MorokTensor *out, const Ref *want, double tol, const char *what)
{
  GError *error = NULL;
  g_assert_nonnull (out);
  MorokPlanOptions opts;
  morok_plan_options_init (&opts);
  if (c->isa_set)
    opts.isa = c->isa;
  opts.precision = c->precision;
  MorokPlan *plan = morok_plan_build (c->g, &out, 1, c->in, c->n, &opts, &error);
  g_assert_no_error (error);
  for (guint i = 0; i < c->n; i++)
    {
      MorokBuffer *b = morok_plan_input (plan, i);
      g_assert_cmpuint (b->bytes, >=, c->ref[i]->n * sizeof (float));
      float *d = b->data;
      for (gint64 k = 0; k < c->ref[i]->n; k++)
        d[k] = (float) c->ref[i]->v[k];
    }
  g_assert_true (morok_plan_execute (plan, c->vars, c->n_vars, &error));
  g_assert_no_error (error);
  const MorokBuffer *o = morok_plan_output (plan, 0);
  g_assert_cmpuint (o->rank, ==, want->rank);
  for (guint i = 0; i < want->rank; i++)
    g_assert_cmpint (o->shape[i], ==, want->shape[i]);
  double err = ref_max_rel_error (o->data, want);
  if (err > tol || g_getenv ("CASE_ERR"))
    g_test_message ("%s: max relative error %g > %g", what, err, tol);
  g_assert_cmpfloat (err, <=, tol);
  c->packed_bytes = morok_plan_packed_bytes (plan);
  morok_plan_free (plan);
}
