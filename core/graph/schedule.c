/* SPDX-License-Identifier: MIT */
/* The scheduler: realization decisions, kernels in order, buffers by liveness.
 * The fusion rules are listed in graph/morok-schedule.h. */
#define G_LOG_DOMAIN "morok-graph"
#include "graph/morok-schedule.h"
#include "graph/morok-pattern.h"
#include <math.h>
#include <string.h>

#define ARENA_ALIGN 64

typedef struct
{
  GPtrArray *nodes;      /* reachable nodes, ascending id (topological) */
  GHashTable *consumers; /* node -> GPtrArray of consumer nodes (with repeats) */
  GHashTable *realized;  /* set */
  GHashTable *outputs;   /* set */
} Planner;

static void
collect (Planner *p, MorokNode *n, GHashTable *seen)
{
  if (g_hash_table_contains (seen, n))
    return;
  g_hash_table_add (seen, n);
  for (guint i = 0; i < n->n_src; i++)
    {
      collect (p, n->src[i], seen);
      GPtrArray *c = g_hash_table_lookup (p->consumers, n->src[i]);
      if (!c)
        g_hash_table_insert (p->consumers, n->src[i], c = g_ptr_array_new ());
      g_ptr_array_add (c, n);
    }
  g_ptr_array_add (p->nodes, n);
}

static gint
by_id (gconstpointer a, gconstpointer b)
{
  const MorokNode *x = *(MorokNode *const *) a, *y = *(MorokNode *const *) b;
  return (gint) x->id - (gint) y->id;
}

static gboolean
is_realized (MorokNode *n, gpointer ctx)
{
  Planner *p = ctx;
  return g_hash_table_contains (p->realized, n);
}

static guint
n_consumers (Planner *p, MorokNode *n)
{
  GPtrArray *c = g_hash_table_lookup (p->consumers, n);
  return c ? c->len : 0;
}

/* TRUE if @n reaches a realized node through single-consumer element-wise
 * ops alone, so inlining it evaluates it once per element of that node. */
static gboolean
ew_path (Planner *p, MorokNode *n)
{
  while (!g_hash_table_contains (p->realized, n))
    {
      if (n_consumers (p, n) != 1)
        return FALSE;
      MorokNode *c = g_ptr_array_index ((GPtrArray *) g_hash_table_lookup (p->consumers, n), 0);
      if (!morok_op_is_elementwise (c->op))
        return FALSE;
      n = c;
    }
  return TRUE;
}

/* TRUE if another reflect pad reads @n through views that are inlined:
 * rendered inline, each of the outer pad's three guarded reads would
 * carry the inner pad's three, clang turns the nested index choices into
 * gathers, and the loop runs several times slower than with @n stored
 * (Silero's frame folds read the chunk's reflect padding through the
 * frames' own). */
static gboolean
reflect_above (Planner *p, MorokNode *n)
{
  GPtrArray *c = g_hash_table_lookup (p->consumers, n);
  for (guint i = 0; c && i < c->len; i++)
    {
      MorokNode *u = g_ptr_array_index (c, i);
      if (g_hash_table_contains (p->realized, u) || !morok_op_is_view (u->op))
        continue;
      if ((u->op == MOROK_OP_PAD && u->pad_mode == MOROK_PAD_REFLECT) || reflect_above (p, u))
        return TRUE;
    }
  return FALSE;
}

/* Realizes what a matmul's operand needs to be a strided view of a buffer:
 * the node the strided walk stops at, when the views above it are then
 * strided (a computed node, or a padding under a window: the padded signal
 * is stored once and the im2col stays a view of it); else the operand. */
static void
realize_operand (Planner *p, MorokNode *operand)
{
  MorokStrided s;
  MorokNode *stop;
  if (morok_strided_walk (operand, is_realized, p, &s, &stop))
    return;
  gboolean computed = !morok_op_is_view (stop->op) && stop->op != MOROK_OP_CONST;
  if ((computed || stop->op == MOROK_OP_PAD) && stop != operand)
    {
      g_hash_table_add (p->realized, stop);
      MorokNode *stop2;
      if (morok_strided_walk (operand, is_realized, p, &s, &stop2))
        return;
      if (!computed)
        g_hash_table_remove (p->realized, stop);
    }
  g_hash_table_add (p->realized, operand);
  /* The operand is a copy (an im2col that no strides express, e.g. with a
   * batch merged into its rows): a computed node under its window is then
   * stored once, so that the copy reads it instead of computing it again
   * for each of the window's overlapping taps. */
  gboolean windowed = FALSE;
  MorokNode *under = operand;
  while (morok_op_is_view (under->op) && under->op != MOROK_OP_CAT)
    windowed = windowed || under->op == MOROK_OP_WINDOW, under = under->src[0];
  if (windowed && under->op > MOROK_OP_CONST && morok_op_is_elementwise (under->op))
    g_hash_table_add (p->realized, under);
}

/* The element-wise chain that follows a matmul (bias, activation, scale)
 * or a reduction that is stored is worth storing instead of the raw
 * result: realized, its end becomes the kernel's root (the matmul's
 * epilogue; the reduction is then inlined into it), where a view consumer
 * (the padding before the next convolution, the cat of Silero's output
 * after its head's sum, bias and sigmoid) would otherwise recompute the
 * chain for every element it reads. */
static void
realize_chain_end (Planner *p, MorokNode *m)
{
  MorokNode *end = m;
  while (n_consumers (p, end) == 1)
    {
      MorokNode *c = g_ptr_array_index ((GPtrArray *) g_hash_table_lookup (p->consumers, end), 0);
      if (!morok_op_is_elementwise (c->op) || c->dtype != MOROK_DTYPE_F32)
        break;
      end = c;
      if (g_hash_table_contains (p->realized, end))
        return; /* already a kernel root: the epilogue fuses into it */
    }
  if (end != m)
    g_hash_table_add (p->realized, end);
}

static void
decide (Planner *p)
{
  /* consumers before producers: walk the topological order backwards */
  for (guint k = p->nodes->len; k-- > 0;)
    {
      MorokNode *n = g_ptr_array_index (p->nodes, k);
      if (g_hash_table_contains (p->realized, n) || n->op == MOROK_OP_CONST)
        ;
      else if (n->op == MOROK_OP_INPUT || n->op == MOROK_OP_WEIGHT || n->op == MOROK_OP_MATMUL
               || n->op == MOROK_OP_ATTENTION || n->op == MOROK_OP_DFT_MAG)
        g_hash_table_add (p->realized, n);
      else if (n->op == MOROK_OP_PAD && n->pad_mode == MOROK_PAD_REFLECT && reflect_above (p, n))
        g_hash_table_add (p->realized, n);
      else if (morok_op_is_reduce (n->op))
        {
          if (!ew_path (p, n))
            realize_chain_end (p, n);
          if (!ew_path (p, n))
            g_hash_table_add (p->realized, n);
        }
      else if (morok_op_is_elementwise (n->op) && n_consumers (p, n) > 1)
        {
          /* recomputing a cheap node beats a round trip through memory */
          gboolean cheap = TRUE;
          for (guint i = 0; i < n->n_src; i++)
            cheap = cheap && (morok_op_is_view (n->src[i]->op) || n->src[i]->op <= MOROK_OP_CONST);
          if (!cheap)
            g_hash_table_add (p->realized, n);
        }
      if (n->op == MOROK_OP_MATMUL)
        realize_chain_end (p, n);
      if (n->op == MOROK_OP_MATMUL || n->op == MOROK_OP_ATTENTION || n->op == MOROK_OP_DFT_MAG)
        for (guint i = 0; i < n->n_src; i++)
          realize_operand (p, n->src[i]);
    }
}

/* The stored node @n reads in place (itself, or the base of a strided view
 * of it), or NULL; @n itself for a constant. */
static MorokNode *
stored_base (Planner *p, MorokNode *n)
{
  MorokStrided s;
  MorokNode *stop;
  if (n->op == MOROK_OP_CONST || g_hash_table_contains (p->realized, n))
    return n;
  if (morok_op_is_view (n->op) && morok_strided_walk (n, is_realized, p, &s, &stop))
    return s.base;
  return NULL;
}

/* An element-wise node stored only because several kernels read it, whose
 * sources are stored and all but one of them broadcasts (a layer norm's
 * x - mean): each reader computes it again, for the reads of x it makes in
 * place of those of the node, and the kernel that wrote it and its buffer's
 * round trip go (GigaAM: 96 of its 637 kernels). Not where a reader needs it stored (a
 * product's operand) or it is an output. */
static void
recompute_cheap (Planner *p)
{
  /* readers first; what a recomputed node reads stays stored */
  g_autoptr (GHashTable) pinned = g_hash_table_new (NULL, NULL);
  for (guint k = p->nodes->len; k-- > 0;)
    {
      MorokNode *n = g_ptr_array_index (p->nodes, k), *base[MOROK_MAX_SRC];
      if (!g_hash_table_contains (p->realized, n) || g_hash_table_contains (p->outputs, n)
          || g_hash_table_contains (pinned, n) || !morok_op_is_elementwise (n->op)
          || n_consumers (p, n) < 2)
        continue;
      guint full = 0;
      gboolean ok = TRUE;
      for (guint i = 0; i < n->n_src && ok; i++)
        {
          ok = (base[i] = stored_base (p, n->src[i])) != NULL;
          full += ok && base[i]->op != MOROK_OP_CONST
                  && morok_node_numel_max (base[i]) >= morok_node_numel_max (n);
        }
      GPtrArray *c = g_hash_table_lookup (p->consumers, n);
      for (guint i = 0; ok && i < c->len; i++)
        {
          MorokNode *u = g_ptr_array_index (c, i);
          ok = morok_op_is_elementwise (u->op) || morok_op_is_reduce (u->op);
        }
      if (!ok || full > 1)
        continue;
      g_hash_table_remove (p->realized, n);
      for (guint i = 0; i < n->n_src; i++)
        g_hash_table_add (pinned, base[i]);
    }
}

/* Anchors (inline reductions, matmuls) inside the inline region of @root,
 * not counting @skip. */
static guint
count_anchors (Planner *p, MorokNode *n, MorokNode *root, MorokNode *skip, GHashTable *seen)
{
  if ((n != root && g_hash_table_contains (p->realized, n)) || n == skip
      || g_hash_table_contains (seen, n))
    return 0;
  g_hash_table_add (seen, n);
  guint c = morok_op_is_reduce (n->op) || n->op == MOROK_OP_MATMUL || n->op == MOROK_OP_ATTENTION
            || n->op == MOROK_OP_DFT_MAG;
  for (guint i = 0; i < n->n_src; i++)
    c += count_anchors (p, n->src[i], root, skip, seen);
  return c;
}

/* The realized node a single-consumer element-wise chain from @m ends in. */
static MorokNode *
chain_root (Planner *p, MorokNode *m)
{
  MorokNode *n = m;
  do
    n = g_ptr_array_index ((GPtrArray *) g_hash_table_lookup (p->consumers, n), 0);
  while (!g_hash_table_contains (p->realized, n));
  return n;
}

static double
estimate_flops (Planner *p, MorokNode *n, MorokNode *root, GHashTable *seen)
{
  if ((n != root && g_hash_table_contains (p->realized, n)) || g_hash_table_contains (seen, n))
    return 0;
  g_hash_table_add (seen, n);
  double f = 0;
  if (n->op == MOROK_OP_MATMUL)
    f = 2.0 * (double) morok_node_numel_max (n) * (double) n->src[0]->shape[n->rank - 1]->hi;
  else if (n->op == MOROK_OP_ATTENTION) /* q.k, exp, p.v */
    f = 2.0 * (double) morok_node_numel_max (n->src[0]) / (double) n->src[0]->shape[n->rank - 1]->hi
        * (double) n->src[1]->shape[n->rank - 2]->hi
        * (double) (n->src[0]->shape[n->rank - 1]->hi + n->shape[n->rank - 1]->hi + 4);
  else if (n->op == MOROK_OP_DFT_MAG) /* the FFT of L/2 points, then a bin from two */
    {
      double L = (double) n->src[0]->shape[n->rank - 1]->hi;
      f = (double) morok_node_numel_max (n->src[0]) / L * (2.5 * L * log2 (L / 2) + 7 * L);
    }
  else if (morok_op_is_reduce (n->op))
    f = (double) morok_node_numel_max (n->src[0]);
  else if (morok_op_is_elementwise (n->op))
    f = (double) morok_node_numel_max (n);
  for (guint i = 0; i < n->n_src; i++)
    f += estimate_flops (p, n->src[i], root, seen);
  return f;
}

static void
collect_reads (MorokSchedule *s, MorokNode *n, MorokNode *root, GHashTable *seen, GArray *reads)
{
  if (g_hash_table_contains (seen, n))
    return;
  g_hash_table_add (seen, n);
  guint b = morok_schedule_buffer_of (s, n);
  if (b && n != root)
    {
      guint idx = b - 1;
      g_array_append_val (reads, idx);
      return;
    }
  for (guint i = 0; i < n->n_src; i++)
    collect_reads (s, n->src[i], root, seen, reads);
}

static guint
add_buffer (MorokSchedule *s, MorokBufferKind kind, MorokNode *node)
{
  MorokScheduleBuffer b = { .kind = kind, .node = node, .first = -1, .last = -1 };
  b.bytes = (gsize) morok_node_numel_max (node) * morok_dtype_size (node->dtype);
  g_array_append_val (s->buffers, b);
  g_hash_table_insert (s->buffer_of, node, GUINT_TO_POINTER (s->buffers->len));
  return s->buffers->len - 1;
}

/* Places TEMP buffers in the arena: first fit among the buffers still live. */
static void
place_temps (MorokSchedule *s)
{
  GArray *live = g_array_new (FALSE, FALSE, sizeof (guint));
  for (guint k = 0; k < s->kernels->len; k++)
    {
      MorokScheduleKernel *ker = &g_array_index (s->kernels, MorokScheduleKernel, k);
      MorokScheduleBuffer *out = &g_array_index (s->buffers, MorokScheduleBuffer, ker->out);
      if (out->kind == MOROK_BUFFER_TEMP)
        {
          gsize size = (out->bytes + ARENA_ALIGN - 1) / ARENA_ALIGN * ARENA_ALIGN, at = 0;
          gboolean moved = TRUE;
          while (moved)
            {
              moved = FALSE;
              for (guint i = 0; i < live->len; i++)
                {
                  MorokScheduleBuffer *o = &g_array_index (s->buffers, MorokScheduleBuffer,
                                                           g_array_index (live, guint, i));
                  gsize osize = (o->bytes + ARENA_ALIGN - 1) / ARENA_ALIGN * ARENA_ALIGN;
                  if (at < o->offset + osize && o->offset < at + size)
                    at = o->offset + osize, moved = TRUE;
                }
            }
          out->offset = at;
          s->arena_bytes = MAX (s->arena_bytes, at + size);
          g_array_append_val (live, ker->out);
        }
      /* buffers whose last reader is this kernel are free for the next one */
      for (guint i = live->len; i-- > 0;)
        {
          MorokScheduleBuffer *o
              = &g_array_index (s->buffers, MorokScheduleBuffer, g_array_index (live, guint, i));
          if (o->last <= (gint) k && o != out)
            g_array_remove_index_fast (live, i);
        }
    }
  g_array_unref (live);
}

gboolean
morok_schedule_kernel_splits (const MorokScheduleKernel *ker)
{
  return ker->flops >= 4e6 || ker->bytes >= (double) (1 << 20);
}

guint
morok_schedule_buffer_of (const MorokSchedule *sched, const MorokNode *node)
{
  return GPOINTER_TO_UINT (g_hash_table_lookup (sched->buffer_of, node));
}

static gboolean
sched_realized (MorokNode *n, gpointer ctx)
{
  return morok_schedule_buffer_of (ctx, n) != 0;
}

gboolean
morok_schedule_strided (const MorokSchedule *sched, MorokNode *node, MorokStrided *out)
{
  MorokNode *stop;
  return morok_strided_walk (node, sched_realized, (gpointer) sched, out, &stop);
}

MorokSchedule *
morok_schedule_new (MorokNode *const *outputs, guint n_outputs, MorokNode *const *inputs,
                    guint n_inputs, GError **error)
{
  g_return_val_if_fail (outputs != NULL && n_outputs > 0, NULL);
  Planner p = {
    .nodes = g_ptr_array_new (),
    .consumers = g_hash_table_new_full (NULL, NULL, NULL, (GDestroyNotify) g_ptr_array_unref),
    .realized = g_hash_table_new (NULL, NULL),
    .outputs = g_hash_table_new (NULL, NULL),
  };
  MorokSchedule *s = g_new0 (MorokSchedule, 1);
  s->buffers = g_array_new (FALSE, FALSE, sizeof (MorokScheduleBuffer));
  s->kernels = g_array_new (FALSE, FALSE, sizeof (MorokScheduleKernel));
  s->buffer_of = g_hash_table_new (NULL, NULL);
  s->outputs = g_new0 (guint, n_outputs);
  s->output_nodes = g_new0 (MorokNode *, n_outputs);
  s->n_outputs = n_outputs;

  /* An output that is a leaf, or that is listed twice, gets a copy of its own
   * (an identity cast, which no rule removes) so each output has a buffer. */
  g_autofree MorokNode **outs = g_new (MorokNode *, n_outputs);
  for (guint i = 0; i < n_outputs; i++)
    {
      MorokNode *o = outputs[i];
      if (o->op == MOROK_OP_INPUT || o->op == MOROK_OP_WEIGHT
          || g_hash_table_contains (p.outputs, o))
        {
          MorokNode c = { .op = MOROK_OP_CAST, .dtype = o->dtype, .rank = o->rank, .n_src = 1 };
          memcpy (c.shape, o->shape, sizeof c.shape);
          c.src[0] = o;
          o = morok_graph_intern (o->graph, &c);
        }
      /* a reshaped output shares its source's layout: compute the source
       * straight into the output buffer instead of copying */
      s->output_nodes[i] = o;
      while (o->op == MOROK_OP_RESHAPE && o->src[0]->op != MOROK_OP_INPUT
             && o->src[0]->op != MOROK_OP_WEIGHT && o->src[0]->op != MOROK_OP_CONST
             && !g_hash_table_contains (p.outputs, o->src[0]))
        o = o->src[0];
      outs[i] = o;
      g_hash_table_add (p.outputs, o);
      g_hash_table_add (p.realized, o);
    }

  g_autoptr (GHashTable) seen = g_hash_table_new (NULL, NULL);
  for (guint i = 0; i < n_outputs; i++)
    collect (&p, outs[i], seen);
  g_ptr_array_sort (p.nodes, by_id);
  decide (&p);
  recompute_cheap (&p);

  /* buffers: inputs in the caller's order, then outputs, then the rest */
  for (guint i = 0; i < n_inputs; i++)
    add_buffer (s, MOROK_BUFFER_INPUT, inputs[i]);
  for (guint i = 0; i < n_outputs; i++)
    s->outputs[i] = add_buffer (s, MOROK_BUFFER_OUTPUT, outs[i]);

  /* matmul epilogues: fuse when the chain to the root holds no other anchor */
  g_autoptr (GHashTable) fused = g_hash_table_new (NULL, NULL); /* root -> matmul */
  for (guint k = 0; k < p.nodes->len; k++)
    {
      MorokNode *m = g_ptr_array_index (p.nodes, k);
      if (m->op != MOROK_OP_MATMUL || g_hash_table_contains (p.outputs, m))
        continue;
      g_hash_table_remove (p.realized, m);
      gboolean ok = ew_path (&p, m);
      MorokNode *root = ok ? chain_root (&p, m) : NULL;
      if (ok)
        {
          g_autoptr (GHashTable) s2 = g_hash_table_new (NULL, NULL);
          ok = root->dtype == MOROK_DTYPE_F32 && m->dtype == MOROK_DTYPE_F32
               && !g_hash_table_contains (fused, root)
               && count_anchors (&p, root, root, m, s2) == 0;
        }
      if (ok)
        g_hash_table_insert (fused, root, m);
      else
        g_hash_table_add (p.realized, m);
    }

  for (guint k = 0; k < p.nodes->len; k++)
    {
      MorokNode *n = g_ptr_array_index (p.nodes, k);
      if (!g_hash_table_contains (p.realized, n) || morok_schedule_buffer_of (s, n))
        continue;
      add_buffer (s,
                  n->op == MOROK_OP_WEIGHT  ? MOROK_BUFFER_WEIGHT
                  : n->op == MOROK_OP_INPUT ? MOROK_BUFFER_INPUT
                                            : MOROK_BUFFER_TEMP,
                  n);
    }
  for (guint k = 0; k < p.nodes->len; k++)
    {
      MorokNode *n = g_ptr_array_index (p.nodes, k);
      if (!g_hash_table_contains (p.realized, n) || n->op == MOROK_OP_INPUT
          || n->op == MOROK_OP_WEIGHT)
        continue;
      if (n->op == MOROK_OP_INPUT && !morok_schedule_buffer_of (s, n))
        {
          g_set_error (error, MOROK_GRAPH_ERROR, MOROK_GRAPH_ERROR_SCHEDULE,
                       "input '%s' is used but was not declared", n->name);
          goto fail;
        }
      MorokScheduleKernel ker = { .root = n, .out = morok_schedule_buffer_of (s, n) - 1 };
      ker.matmul = n->op == MOROK_OP_MATMUL ? n : g_hash_table_lookup (fused, n);
      ker.kind = n->op == MOROK_OP_ATTENTION ? MOROK_KERNEL_ATTENTION
                 : n->op == MOROK_OP_DFT_MAG ? MOROK_KERNEL_DFT
                 : ker.matmul                ? MOROK_KERNEL_MATMUL
                                             : MOROK_KERNEL_LOOP;
      ker.reads = g_array_new (FALSE, FALSE, sizeof (guint));
      g_autoptr (GHashTable) s1 = g_hash_table_new (NULL, NULL);
      collect_reads (s, n, n, s1, ker.reads);
      g_autoptr (GHashTable) s3 = g_hash_table_new (NULL, NULL);
      ker.flops = estimate_flops (&p, n, n, s3);
      MorokScheduleBuffer *out = &g_array_index (s->buffers, MorokScheduleBuffer, ker.out);
      ker.bytes = (double) out->bytes;
      gint idx = (gint) s->kernels->len;
      out->first = idx;
      for (guint r = 0; r < ker.reads->len; r++)
        {
          MorokScheduleBuffer *b = &g_array_index (s->buffers, MorokScheduleBuffer,
                                                   g_array_index (ker.reads, guint, r));
          b->last = idx;
          ker.bytes += (double) b->bytes;
        }
      g_array_append_val (s->kernels, ker);
    }
  /* an undeclared input would be read from nowhere */
  for (guint i = 0; i < s->buffers->len; i++)
    {
      MorokScheduleBuffer *b = &g_array_index (s->buffers, MorokScheduleBuffer, i);
      if (b->kind == MOROK_BUFFER_INPUT && i >= n_inputs)
        {
          g_set_error (error, MOROK_GRAPH_ERROR, MOROK_GRAPH_ERROR_SCHEDULE,
                       "input '%s' is used but was not declared", b->node->name);
          goto fail;
        }
    }
  place_temps (s);
  g_debug ("schedule: %u nodes, %u kernels, %u buffers, arena %" G_GSIZE_FORMAT " bytes",
           p.nodes->len, s->kernels->len, s->buffers->len, s->arena_bytes);
  goto done;
fail:
  morok_schedule_free (s);
  s = NULL;
done:
  g_ptr_array_unref (p.nodes);
  g_hash_table_unref (p.consumers);
  g_hash_table_unref (p.realized);
  g_hash_table_unref (p.outputs);
  return s;
}

void
morok_schedule_free (MorokSchedule *sched)
{
  if (!sched)
    return;
  for (guint k = 0; k < sched->kernels->len; k++)
    g_array_unref (g_array_index (sched->kernels, MorokScheduleKernel, k).reads);
  g_array_unref (sched->kernels);
  g_array_unref (sched->buffers);
  g_hash_table_unref (sched->buffer_of);
  g_free (sched->outputs);
  g_free (sched->output_nodes);
  g_free (sched);
}
