/* SPDX-License-Identifier: MIT */
/* The pattern engine: rewrite rules are data.
 *
 * A rule is a pattern (op set, dtype set, source patterns, commutativity,
 * named captures, an optional constant value) and a callback that returns the
 * replacement node, or NULL when it does not apply after all. Rule sets are
 * indexed by op, so a node is only tried against rules that can match it.
 * morok_graph_rewrite applies the sets bottom-up until nothing changes, with
 * a cap on the number of rewrites that turns endless rewriting into an error.
 *
 *   static const MorokRule rules[] = {
 *     { PAT_OP2 (ADD, PAT_ANY ("x"), PAT_CONST (0)), take_x, "x + 0 -> x" },
 *   };
 *   static const MorokRuleSet set = { "algebra", rules, G_N_ELEMENTS (rules) };
 */
#pragma once

#include "graph/morok-graph.h"

G_BEGIN_DECLS

typedef struct _MorokPattern MorokPattern;
struct _MorokPattern
{
  guint64 ops;      /* one bit per MorokOp that matches; 0 = any op */
  guint32 dtypes;   /* one bit per MorokDType; 0 = any dtype */
  const char *name; /* capture the matched node under this name */
  guint n_src;      /* 0 = sources not examined */
  const MorokPattern *src[3];
  gboolean commutative; /* binary: also try the sources swapped */
  gboolean match_value; /* CONST with exactly this value */
  double value;
};

#define MOROK_PATTERN_MAX_CAPTURES 8
typedef struct
{
  const char *name[MOROK_PATTERN_MAX_CAPTURES];
  MorokNode *node[MOROK_PATTERN_MAX_CAPTURES];
  guint n;
} MorokCaptures;

/* Returns the replacement of @root, or NULL to leave it. */
typedef MorokNode *(*MorokRewriteFn) (MorokNode *root, const MorokCaptures *cap);

typedef struct
{
  const MorokPattern *pattern;
  MorokRewriteFn rewrite;
  const char *doc; /* the algebra, for debug logs */
} MorokRule;

typedef struct
{
  const char *name;
  const MorokRule *rules;
  guint n_rules;
} MorokRuleSet;

#define MOROK_OPBIT(op) (G_GUINT64_CONSTANT (1) << MOROK_OP_##op)
#define PAT_ANY(n) (&(const MorokPattern){ .name = (n) })
#define PAT_OPS(mask, n) (&(const MorokPattern){ .ops = (mask), .name = (n) })
#define PAT_CONST(v)                                                                               \
  (&(const MorokPattern){ .ops = MOROK_OPBIT (CONST), .match_value = TRUE, .value = (v) })
#define PAT_OP1(op, a) (&(const MorokPattern){ .ops = MOROK_OPBIT (op), .n_src = 1, .src = { a } })
#define PAT_OP2(op, a, b)                                                                          \
  (&(const MorokPattern){ .ops = MOROK_OPBIT (op), .n_src = 2, .src = { a, b } })
#define PAT_OP2C(op, a, b)                                                                         \
  (&(const MorokPattern){                                                                          \
      .ops = MOROK_OPBIT (op), .n_src = 2, .src = { a, b }, .commutative = TRUE })
#define PAT_NAMED(op, n, ...)                                                                      \
  (&(const MorokPattern){ .ops = MOROK_OPBIT (op), .name = (n), __VA_ARGS__ })

/* Matches @pat at @node, filling @cap; FALSE if it does not match. */
gboolean morok_pattern_match (const MorokPattern *pat, MorokNode *node, MorokCaptures *cap);
/* The node captured as @name, or NULL. */
MorokNode *morok_captures_get (const MorokCaptures *cap, const char *name);

/* Rewrites the @n_roots nodes of @roots in place with @sets until no rule
 * applies. Fails (MOROK_GRAPH_ERROR_REWRITE) if rewriting does not settle. */
gboolean morok_graph_rewrite (MorokNode **roots, guint n_roots, const MorokRuleSet *const *sets,
                              guint n_sets, GError **error);

G_END_DECLS
