/* SPDX-License-Identifier: MIT */
/* The rewrite rule sets prepare applies (prepare/rules.c), as data for the
 * pattern engine of graph/morok-pattern.h. They sit above graph/ and
 * tensor/ because their replacements are built with the tensor API.
 *
 *   const MorokRuleSet *sets[] = { &morok_rules_fold, &morok_rules_algebra };
 *   if (!morok_graph_rewrite (roots, n_roots, sets, G_N_ELEMENTS (sets), &error)) ...
 */
#pragma once

#include "graph/morok-pattern.h"

G_BEGIN_DECLS

extern const MorokRuleSet morok_rules_fold;    /* constant folding */
extern const MorokRuleSet morok_rules_algebra; /* identities: x + 0, x * 1, --x */
extern const MorokRuleSet morok_rules_views;   /* merge reshapes, permutes, expands */
extern const MorokRuleSet morok_rules_bn_fold; /* scale and shift into a contraction */
extern const MorokRuleSet morok_rules_column;  /* a one-column contraction as a sum */

G_END_DECLS
