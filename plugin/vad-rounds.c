/* SPDX-License-Identifier: MIT */
/* The rounds of one batched plan: a mutex per rate and a condition per
 * seat. A thread brings all the full chunks of its buffer and waits on its
 * seat's condition; whichever thread sees every waited-for seat with a
 * chunk (or its own deadline pass) runs rounds under the lock, one chunk of
 * every seat that has one each, as long as they can run, and wakes the
 * seats whose chunks have all run. A thread's chunks may thus run in
 * another's rounds while it sleeps: one wake-up per buffer, not per chunk.
 * When the runner's own chunks are done and a round could still run, it
 * wakes one seat that has chunks left to take over. */
#include "vad-rounds.h"
#include "jit/morok-jit-registry.h"
#include "models/silero-vad-batch.h"
#include "models/silero-vad-jit.h"

struct _MorokVadSeat
{
  MorokVadStream *stream;
  GCond cond; /* its thread waits here */
  /* the run in progress: chunks[i] is the i-th chunk_len samples of chunks;
   * done of n have run, their probabilities in probs */
  const float *chunks;
  float *probs;
  guint n, done;
  gboolean failed;
  gboolean idle; /* not waited for until it brings a chunk */
  gboolean flushing;
};

struct _MorokVadRounds
{
  MorokSileroVad *model;
  guint rate, max_streams, chunk_len;
  gint64 max_wait_us;

  char *key; /* of the batched plan's prototype in the registry */

  GMutex lock;            /* guards everything below and the seats */
  MorokJitShared *shared; /* the prototype, acquired by the first join */
  MorokVadBatch *batch;   /* this element's context of it */
  GPtrArray *seats;       /* MorokVadSeat, owned */
  char *error;            /* of the last failed round */
  guint64 rounds, chunks;
  gint64 execute_us; /* in the rounds' executes */
  /* the round's scratch: [max_streams] each */
  MorokVadSeat **run_seats;
  MorokVadStream **run_streams;
  const float **run_chunks;
  float *run_probs;
};

MorokVadRounds *
morok_vad_rounds_new (MorokSileroVad *model, guint rate, guint max_streams, GstClockTime max_wait,
                      const char *plan_key)
{
  MorokVadRounds *r = g_new0 (MorokVadRounds, 1);
  r->key = g_strdup_printf ("silero-vad-batch streams=%u %s", max_streams, plan_key);
  r->model = morok_silero_vad_ref (model);
  r->rate = rate;
  r->max_streams = max_streams;
  r->chunk_len = morok_silero_vad_chunk_len (model, rate);
  r->max_wait_us = (gint64) (max_wait / GST_USECOND);
  g_mutex_init (&r->lock);
  r->seats = g_ptr_array_new ();
  r->run_seats = g_new (MorokVadSeat *, max_streams);
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
  morok_jit_registry_release (r->shared); /* after its context */
  morok_silero_vad_unref (r->model);
  g_free (r->key);
  g_free (r->error);
  g_free (r->run_seats);
  g_free (r->run_streams);
  g_free (r->run_chunks);
  g_free (r->run_probs);
  g_mutex_clear (&r->lock);
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

/* The batched plan's steps run on the thread that runs the round unless
 * MOROK_THREADS asks for more: its kernels are sized for max-streams, so
 * with the default (every core) most would be split over the pool even
 * for one stream's chunk, and a round would then wait for a worker that
 * the pipeline's streaming threads keep busy (milliseconds a round instead
 * of microseconds); the pipeline's parallelism is its streams. */
static gpointer
make_batch (gpointer data, GError **error)
{
  MorokVadRounds *r = data;
  g_autoptr (MorokPrepareConfig) config = silero_vad_jit_config_from_env ();
  const char *threads = g_getenv ("MOROK_THREADS");
  if (!threads || !*threads)
    morok_prepare_config_set_threads (config, 1);
  return morok_vad_batch_new (r->model, r->rate, r->max_streams, config, error);
}

/* Acquires the batched plan's prototype (shared by every element of the
 * same model, rate, bound and settings) and opens a context of it. Called
 * with the lock. */
static gboolean
open_batch (MorokVadRounds *r, GError **error)
{
  if (!r->shared
      && !(r->shared = morok_jit_registry_acquire_value (
               r->key, make_batch, (GDestroyNotify) morok_vad_batch_free, r, error)))
    return FALSE;
  r->batch = morok_vad_batch_new_context (morok_jit_shared_value (r->shared), error);
  return r->batch != NULL;
}

MorokVadSeat *
morok_vad_rounds_join (MorokVadRounds *r, GError **error)
{
  g_mutex_lock (&r->lock);
  MorokVadSeat *seat = NULL;
  if (r->seats->len >= r->max_streams)
    g_set_error (error, MOROK_JIT_ERROR, MOROK_JIT_ERROR_RUNTIME,
                 "all %u streams of the %u Hz batch are taken", r->max_streams, r->rate);
  else if (r->batch || open_batch (r, error))
    {
      seat = g_new0 (MorokVadSeat, 1);
      seat->stream = morok_vad_stream_new (r->batch);
      g_cond_init (&seat->cond);
      seat->idle = TRUE; /* waited for from its first chunk */
      g_ptr_array_add (r->seats, seat);
    }
  g_mutex_unlock (&r->lock);
  return seat;
}

static gboolean
seat_ready (const MorokVadSeat *s)
{
  return s->done < s->n && !s->flushing;
}

/* TRUE when a round can run: some seat has a chunk, and every seat that
 * is waited for has one. Called with the lock. */
static gboolean
all_ready (MorokVadRounds *r)
{
  gboolean any = FALSE;
  for (guint i = 0; i < r->seats->len; i++)
    {
      MorokVadSeat *s = g_ptr_array_index (r->seats, i);
      if (seat_ready (s))
        any = TRUE;
      else if (!s->idle && !s->flushing)
        return FALSE;
    }
  return any;
}

/* Wakes every seat with chunks left, to look again (a seat left, idles or
 * flushes: a round may now run, or a flushing one must return). Called
 * with the lock. */
static void
wake_waiting (MorokVadRounds *r)
{
  for (guint i = 0; i < r->seats->len; i++)
    {
      MorokVadSeat *s = g_ptr_array_index (r->seats, i);
      if (s->done < s->n)
        g_cond_signal (&s->cond);
    }
}

void
morok_vad_rounds_leave (MorokVadRounds *r, MorokVadSeat *seat)
{
  if (!seat)
    return;
  g_mutex_lock (&r->lock);
  g_warn_if_fail (seat->done == seat->n);
  g_ptr_array_remove (r->seats, seat);
  wake_waiting (r);
  g_mutex_unlock (&r->lock);
  g_cond_clear (&seat->cond);
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
  wake_waiting (r);
  g_mutex_unlock (&r->lock);
}

void
morok_vad_rounds_set_flushing (MorokVadRounds *r, MorokVadSeat *seat, gboolean flushing)
{
  g_mutex_lock (&r->lock);
  seat->flushing = flushing;
  seat->idle = TRUE;
  wake_waiting (r);
  g_mutex_unlock (&r->lock);
}

/* Runs the next chunk of every ready seat in one execute; the seats it
 * runs without are not waited for again until they bring a chunk; wakes
 * the seats whose chunks have all run. Called with the lock. */
static void
run_round (MorokVadRounds *r)
{
  guint n = 0;
  for (guint i = 0; i < r->seats->len; i++)
    {
      MorokVadSeat *s = g_ptr_array_index (r->seats, i);
      if (seat_ready (s))
        {
          r->run_seats[n] = s;
          r->run_streams[n] = s->stream;
          r->run_chunks[n++] = s->chunks + (gsize) s->done * r->chunk_len;
        }
      else
        s->idle = TRUE;
    }
  g_autoptr (GError) error = NULL;
  gint64 t0 = g_get_monotonic_time ();
  gboolean ok
      = morok_vad_batch_run (r->batch, n, r->run_streams, r->run_chunks, r->run_probs, &error);
  r->execute_us += g_get_monotonic_time () - t0;
  if (!ok)
    {
      g_free (r->error);
      r->error = g_strdup (error->message);
    }
  for (guint k = 0; k < n; k++)
    {
      MorokVadSeat *s = r->run_seats[k];
      if (ok)
        s->probs[s->done++] = r->run_probs[k];
      else
        s->failed = TRUE, s->n = s->done; /* the rest is not run */
      if (s->done == s->n)
        g_cond_signal (&s->cond);
    }
  r->rounds++;
  r->chunks += n;
}

GstFlowReturn
morok_vad_rounds_run (MorokVadRounds *r, MorokVadSeat *seat, const float *chunks, guint n,
                      float *out_probs, GstClockTime late, GError **error)
{
  g_mutex_lock (&r->lock);
  if (seat->flushing)
    {
      g_mutex_unlock (&r->lock);
      return GST_FLOW_FLUSHING;
    }
  seat->chunks = chunks;
  seat->probs = out_probs;
  seat->n = n;
  seat->done = 0;
  seat->failed = FALSE;
  seat->idle = FALSE;
  GstFlowReturn ret = GST_FLOW_OK;
  gint64 wait_us = r->max_wait_us - (gint64) MIN (late / GST_USECOND, (guint64) r->max_wait_us);
  gint64 deadline = g_get_monotonic_time () + wait_us;
  while (seat->done < seat->n)
    {
      if (seat->flushing)
        {
          seat->n = seat->done; /* no round reads the rest */
          ret = GST_FLOW_FLUSHING;
        }
      else if (all_ready (r) || g_get_monotonic_time () >= deadline)
        run_round (r); /* past the deadline, the rest runs without waiting */
      else
        g_cond_wait_until (&seat->cond, &r->lock, deadline);
    }
  /* done here: if a round can still run, one of the seats in it runs it */
  for (guint i = 0; i < r->seats->len && all_ready (r); i++)
    {
      MorokVadSeat *s = g_ptr_array_index (r->seats, i);
      if (seat_ready (s))
        {
          g_cond_signal (&s->cond);
          break;
        }
    }
  if (ret == GST_FLOW_OK && seat->failed)
    {
      g_set_error (error, MOROK_JIT_ERROR, MOROK_JIT_ERROR_RUNTIME, "%u Hz batch: %s", r->rate,
                   r->error);
      ret = GST_FLOW_ERROR;
    }
  g_mutex_unlock (&r->lock);
  return ret;
}

void
morok_vad_rounds_counts (MorokVadRounds *r, guint64 *out_rounds, guint64 *out_chunks,
                         gdouble *out_execute_us)
{
  g_mutex_lock (&r->lock);
  *out_rounds = r->rounds;
  *out_chunks = r->chunks;
  if (out_execute_us)
    *out_execute_us = (gdouble) r->execute_us;
  g_mutex_unlock (&r->lock);
}
