/* SPDX-License-Identifier: MIT */
/* A graph, its inputs made from reference arrays, and a check that the
 * prepared plan's output matches a reference array. */
#pragma once

#include "ref.h"
#include "tensor/morok-tensor.h"
#include "prepare/morok-prepare.h"

typedef struct
{
  MorokGraph *g;
  MorokTensor *in[8];
  const Ref *ref[8];
  guint n;
  MorokVarValue vars[4];
  guint n_vars;
  MorokIsa isa;
  gboolean isa_set;
  MorokPrecision precision; /* of products with weights: F32 (case_init), F16, BF16, BF16X3 */
  gsize packed_bytes;       /* set by case_check: the plan's morok_plan_packed_bytes */
} Case;

void case_init (Case *c);
/* An f32 input holding @r (shape fixed to r's). */
MorokTensor *case_input (Case *c, const Ref *r);
/* An f32 input of symbolic @shape, fed with @r (whose shape is the value at run time). */
MorokTensor *case_input_sym (Case *c, const Ref *r, const MorokSym *const *shape);
/* A weight holding @r (the data lives as long as the process's test). */
MorokTensor *case_weight (Case *c, const Ref *r);
/* Builds, runs and compares; frees the graph. */
void case_check (Case *c, MorokTensor *out, const Ref *want, double tol, const char *what);
