/* SPDX-License-Identifier: MIT */
/* The rounds of one batched plan: a mutex and a condition per rate. A seat
 * that brings a chunk marks itself ready and waits; whichever thread sees
 * every waited-for seat ready (or its own deadline pass) runs the round for
 * all ready seats under the lock and wakes the others. */
#include "vad-rounds.h"
#include "models/silero-vad-batch.h"

struct _MorokVadSeat
{
  MorokVadStream *stream;
  const float *chunk; /* while ready */
  float prob;
  gboolean ready;    /* brought a chunk that has not run */
  gboolean done;     /* its chunk ran (or failed: failed) */
  gboolean failed;
  gboolean idle;     /* not waited for until it brings a chunk */
  gboolean flushing;
};

struct _MorokVadRounds
{
  MorokSileroVad *model;
  guint rate, max_streams, chunk_len;
  gint64 max_wait_us;

  GMutex lock; /* guards everything below */
  GCond cond;  /* a round ran, a seat left, idled or flushes */
  MorokVadBatch *batch; /* prepared by the first join */
  GPtrArray *seats;     /* MorokVadSeat, owned */
  char *error;          /* of the last failed round */
  guint64 rounds, chunks;
  /* the round's scratch: [max_streams] each */
  MorokVadStream **run_streams;
  const float **run_chunks;
  float *run_probs;
};

MorokVadRounds *
morok_vad_rounds_new (MorokSileroVad *model, guint rate, guint max_streams, GstClockTime max_wait)
{
  MorokVadRounds *r = g_new0 (MorokVadRounds, 1);
  r->model = morok_silero_vad_ref (model);
  r->rate = rate;
  r->max_streams = max_streams;
  r->chunk_len = morok_silero_vad_chunk_len (model, rate);
  r->max_wait_us = (gint64) (max_wait / GST_USECOND);
  g_mutex_init (&r->lock);
  g_cond_init (&r->cond);
  r->seats = g_ptr_array_new ();
  r->run_streams = g_new (MorokVadStream *, max_streams);
  r->run_chunks = g_new (const float *, max_streams);
  r->run_probs = g_new (float, max_streams);
  return r;
}

void
morok_vad_rounds_free (MorokVadRounds *r)
{
  if (!r)
    return;
  g_warn_if_fail (r->seats->len == 0);
  g_ptr_array_unref (r->seats);
  morok_vad_batch_free (r->batch);
  morok_silero_vad_unref (r->model);
  g_free (r->error);
  g_free (r->run_streams);
  g_free (r->run_chunks);
  g_free (r->run_probs);
  g_mutex_clear (&r->lock);
  g_cond_clear (&r->cond);
  g_free (r);
}

guint
morok_vad_rounds_rate (const MorokVadRounds *r)
{
  return r->rate;
}

guint
morok_vad_rounds_chunk_len (const MorokVadRounds *r)
{
  return r->chunk_len;
}

MorokVadSeat *
morok_vad_rounds_join (MorokVadRounds *r, GError **error)
{
  g_mutex_lock (&r->lock);
  MorokVadSeat *seat = NULL;
  if (r->seats->len >= r->max_streams)
    g_set_error (error, MOROK_JIT_ERROR, MOROK_JIT_ERROR_RUNTIME,
                 "all %u streams of the %u Hz batch are taken", r->max_streams, r->rate);
  else if (r->batch
           || (r->batch = morok_vad_batch_new (r->model, r->rate, r->max_streams, NULL, error)))
    {
      seat = g_new0 (MorokVadSeat, 1);
      seat->stream = morok_vad_stream_new (r->batch);
      seat->idle = TRUE; /* waited for from its first chunk */
      g_ptr_array_add (r->seats, seat);
    }
  g_mutex_unlock (&r->lock);
  return seat;
}

void
morok_vad_rounds_leave (MorokVadRounds *r, MorokVadSeat *seat)
{
  if (!seat)
    return;
  g_mutex_lock (&r->lock);
  g_warn_if_fail (!seat->ready);
  g_ptr_array_remove (r->seats, seat);
  g_cond_broadcast (&r->cond);
  g_mutex_unlock (&r->lock);
  morok_vad_stream_free (seat->stream);
  g_free (seat);
}

void
morok_vad_rounds_reset (MorokVadRounds *r, MorokVadSeat *seat)
{
  g_mutex_lock (&r->lock);
  morok_vad_stream_reset (seat->stream);
  g_mutex_unlock (&r->lock);
}

void
morok_vad_rounds_idle (MorokVadRounds *r, MorokVadSeat *seat)
{
  g_mutex_lock (&r->lock);
  seat->idle = TRUE;
  g_cond_broadcast (&r->cond);
  g_mutex_unlock (&r->lock);
}

void
morok_vad_rounds_set_flushing (MorokVadRounds *r, MorokVadSeat *seat, gboolean flushing)
{
  g_mutex_lock (&r->lock);
  seat->flushing = flushing;
  seat->idle = TRUE;
  g_cond_broadcast (&r->cond);
  g_mutex_unlock (&r->lock);
}

/* TRUE when no seat that is waited for still has to bring its chunk.
 * Called with the lock. */
static gboolean
all_ready (MorokVadRounds *r)
{
  for (guint i = 0; i < r->seats->len; i++)
    {
      MorokVadSeat *s = g_ptr_array_index (r->seats, i);
      if (!s->ready && !s->idle && !s->flushing)
        return FALSE;
    }
  return TRUE;
}

/* Runs the chunks of every ready seat in one execute; the seats it runs
 * without are not waited for again until they bring a chunk. Called with
 * the lock. */
static void
run_round (MorokVadRounds *r)
{
  guint n = 0;
  for (guint i = 0; i < r->seats->len; i++)
    {
      MorokVadSeat *s = g_ptr_array_index (r->seats, i);
      if (s->ready)
        {
          r->run_streams[n] = s->stream;
          r->run_chunks[n++] = s->chunk;
        }
      else
        s->idle = TRUE;
    }
  g_autoptr (GError) error = NULL;
  gboolean ok = morok_vad_batch_run (r->batch, n, r->run_streams, r->run_chunks, r->run_probs,
                                     &error);
  if (!ok)
    {
      g_free (r->error);
      r->error = g_strdup (error->message);
    }
  for (guint i = 0, k = 0; i < r->seats->len; i++)
    {
      MorokVadSeat *s = g_ptr_array_index (r->seats, i);
      if (!s->ready)
        continue;
      s->prob = ok ? r->run_probs[k++] : 0.0f;
      s->failed = !ok;
      s->ready = FALSE;
      s->done = TRUE;
    }
  r->rounds++;
  r->chunks += n;
  g_cond_broadcast (&r->cond);
}

GstFlowReturn
morok_vad_rounds_run (MorokVadRounds *r, MorokVadSeat *seat, const float *chunk, float *out_prob,
                      GError **error)
{
  g_mutex_lock (&r->lock);
  GstFlowReturn ret = GST_FLOW_OK;
  if (seat->flushing)
    ret = GST_FLOW_FLUSHING;
  seat->chunk = chunk;
  seat->ready = ret == GST_FLOW_OK;
  seat->done = FALSE;
  seat->idle = FALSE;
  gint64 deadline = g_get_monotonic_time () + r->max_wait_us;
  while (ret == GST_FLOW_OK && !seat->done)
    {
      if (seat->flushing)
        {
          seat->ready = FALSE; /* the round will not read its chunk */
          ret = GST_FLOW_FLUSHING;
        }
      else if (all_ready (r) || g_get_monotonic_time () >= deadline)
        run_round (r);
      else
        g_cond_wait_until (&r->cond, &r->lock, deadline);
    }
  if (ret == GST_FLOW_OK && seat->failed)
    {
      g_set_error (error, MOROK_JIT_ERROR, MOROK_JIT_ERROR_RUNTIME, "%u Hz batch: %s", r->rate,
                   r->error);
      ret = GST_FLOW_ERROR;
    }
  *out_prob = seat->prob;
  g_mutex_unlock (&r->lock);
  return ret;
}

void
morok_vad_rounds_counts (MorokVadRounds *r, guint64 *out_rounds, guint64 *out_chunks)
{
  g_mutex_lock (&r->lock);
  *out_rounds = r->rounds;
  *out_chunks = r->chunks;
  g_mutex_unlock (&r->lock);
}
