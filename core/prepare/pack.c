/* SPDX-License-Identifier: MIT */
/* Prepare's pack stage: constant operands packed for the GEMM.
 *
 * A matmul whose B is a weight (the same for every batch) reads B from
 * panels packed here, once, when its M and N are too large for the small
 * paths (packing it on every call cost a third of the GigaAM encoder's
 * time, docs/benchmarks.md), or, in int8, whatever its M: a product of a
 * few rows is bound by reading B, and int8 panels are a quarter of its f32
 * bytes (the RNN-T predictor and joint). Not in f16 and bf16: there they
 * would move Silero's probabilities several times further from
 * onnxruntime's for little time (docs/morokvad.md, "Precision"). Products
 * with N <= 16 run transposed (the renderer's narrow path) and keep their
 * B as it is. Kernels reading the same view of a weight share its panels. */
#define G_LOG_DOMAIN "morok-prepare"
#include "prepare/prepare-private.h"
#include "kernels/weight-pack.h"

static gboolean
packable_b (const MorokSchedule *sched, const MorokScheduleKernel *ker, MorokPrecision precision,
            MorokPacking *pk)
{
  MorokNode *m = ker->matmul;
  if (ker->kind != MOROK_KERNEL_MATMUL)
    return FALSE;
  guint r = m->rank;
  MorokStrided b;
  if (m->dtype != MOROK_DTYPE_F32 || m->src[1]->dtype != MOROK_DTYPE_F32
      || !morok_schedule_strided (sched, m->src[1], &b))
    return FALSE;
  guint src = morok_schedule_buffer_of (sched, b.base) - 1;
  if (g_array_index (sched->buffers, MorokScheduleBuffer, src).kind != MOROK_BUFFER_WEIGHT)
    return FALSE;
  for (guint i = 0; i + 2 < r; i++)
    {
      gint64 st;
      if (!morok_sym_is_const (b.stride[i], &st) || st != 0)
        return FALSE;
    }
  *pk = (MorokPacking){ .source = src };
  gboolean any_rows = precision == MOROK_PRECISION_INT8 && !m->exact;
  return (m->shape[r - 2]->hi > MOROK_GEMM_SMALL || any_rows)
         && morok_sym_is_const (m->src[1]->shape[r - 2], &pk->k)
         && morok_sym_is_const (m->shape[r - 1], &pk->n) && pk->n > 16
         && morok_sym_is_const (b.offset, &pk->offset)
         && morok_sym_is_const (b.stride[r - 2], &pk->sbk)
         && morok_sym_is_const (b.stride[r - 1], &pk->sbn);
}

void
prepare_pack_weights (MorokSchedule *sched, const MorokPlanOptions *opts)
{
  gsize scratch_stride = 0;
  gboolean any = FALSE;
  g_autoptr (GHashTable) made = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  for (guint k = 0; k < sched->kernels->len; k++)
    {
      MorokScheduleKernel *ker = &g_array_index (sched->kernels, MorokScheduleKernel, k);
      MorokPacking pk;
      if (!packable_b (sched, ker, opts->precision, &pk))
        continue;
      pk.nr = morok_weight_pack_nr (opts->isa);
      pk.format = ker->matmul->exact ? MOROK_PRECISION_F32 : opts->precision;
      char *key = g_strdup_printf ("%u %" G_GINT64_FORMAT " %" G_GINT64_FORMAT " %" G_GINT64_FORMAT
                                   " %" G_GINT64_FORMAT " %" G_GINT64_FORMAT " %d",
                                   pk.source, pk.offset, pk.k, pk.n, pk.sbk, pk.sbn, pk.format);
      guint idx = GPOINTER_TO_UINT (g_hash_table_lookup (made, key));
      if (!idx)
        {
          const MorokScheduleBuffer *src
              = &g_array_index (sched->buffers, MorokScheduleBuffer, pk.source);
          MorokScheduleBuffer b = {
            .kind = MOROK_BUFFER_PACKED, .node = src->node, .pack = pk, .first = -1, .last = -1
          };
          b.bytes = morok_weight_pack_bytes (pk.k, pk.n, pk.nr, pk.format);
          g_array_append_val (sched->buffers, b);
          idx = sched->buffers->len;
          g_hash_table_insert (made, key, GUINT_TO_POINTER (idx));
        }
      else
        g_free (key);
      ker->packed_b = idx;
      guint bi = idx - 1;
      g_array_append_val (ker->reads, bi);
      ker->scratch_stride
          = morok_weight_pack_scratch_bytes (ker->matmul->shape[ker->matmul->rank - 2]->hi, pk.k,
                                             pk.n, pk.format, ker->root != ker->matmul);
      scratch_stride = MAX (scratch_stride, ker->scratch_stride);
      /* the AMX kernel converts all of its A per call: one column block per thread */
      ker->shared_tasks = !morok_weight_pack_amx_parts (pk.format);
      any = TRUE;
    }
  if (!any)
    return;
  /* the slices, then one cache line for the task counter */
  MorokScheduleBuffer s
      = { .kind = MOROK_BUFFER_SCRATCH,
          .first = -1,
          .last = -1,
          .bytes = morok_round_64 (scratch_stride * prepare_plan_threads (opts)) + 64 };
  g_array_append_val (sched->buffers, s);
  for (guint k = 0; k < sched->kernels->len; k++)
    {
      MorokScheduleKernel *ker = &g_array_index (sched->kernels, MorokScheduleKernel, k);
      if (ker->packed_b)
        ker->scratch = sched->buffers->len;
    }
}

/* After packed buffer @i: its weight's owner may free the data once the
 * last panel made from it is done and no kernel reads it. */
static void
release_packed_source (const MorokSchedule *sched, guint i, GHashTable *read, GHashTable *packs)
{
  const MorokScheduleBuffer *sb = &g_array_index (sched->buffers, MorokScheduleBuffer, i);
  const MorokNode *w = g_array_index (sched->buffers, MorokScheduleBuffer, sb->pack.source).node;
  guint left = GPOINTER_TO_UINT (g_hash_table_lookup (packs, w->data)) - 1;
  g_hash_table_insert (packs, (gpointer) w->data, GUINT_TO_POINTER (left));
  if (left == 0 && w->release && !g_hash_table_contains (read, w->data))
    w->release (w->release_data, w->data);
}

static gpointer
pack_run (gpointer data)
{
  Packing *pk = data;
  for (guint j; (j = (guint) g_atomic_int_add (&pk->next, 1)) < pk->jobs->len;)
    {
      const PackJob *job = &g_array_index (pk->jobs, PackJob, j);
      const MorokScheduleBuffer *sb
          = &g_array_index (pk->sched->buffers, MorokScheduleBuffer, job->buffer);
      const MorokScheduleBuffer *src
          = &g_array_index (pk->sched->buffers, MorokScheduleBuffer, sb->pack.source);
      morok_weight_pack ((const float *) src->node->data + sb->pack.offset, sb->pack.k, sb->pack.n,
                         sb->pack.sbk, sb->pack.sbn, sb->pack.nr, sb->pack.format, job->dst);
      if (pk->read)
        {
          g_mutex_lock (&pk->lock);
          release_packed_source (pk->sched, job->buffer, pk->read, pk->packs);
          g_mutex_unlock (&pk->lock);
        }
    }
  return NULL;
}

void
prepare_pack_panels (Packing *pk)
{
  g_mutex_init (&pk->lock);
  GThread *helper = pk->jobs->len > 1 && g_get_num_processors () > 1
                        ? g_thread_try_new ("morok-pack", pack_run, pk, NULL)
                        : NULL;
  pack_run (pk);
  if (helper)
    g_thread_join (helper);
  g_mutex_clear (&pk->lock);
}
