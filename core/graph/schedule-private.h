/* SPDX-License-Identifier: MIT */
#pragma once

#include "graph/morok-schedule.h"

/* Follows view ops down from @node while they stay strided; stops at a node
 * for which @realized says TRUE (or a leaf). On failure *stop is the node
 * that is not strided: a computed node or a PAD, CAT or merging reshape. */
gboolean morok_strided_walk (MorokNode *node, gboolean (*realized) (MorokNode *n, gpointer ctx),
                             gpointer ctx, MorokStrided *out, MorokNode **stop);
