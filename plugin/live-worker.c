/* SPDX-License-Identifier: MIT */
#include "live-worker.h"
#include <string.h>

typedef struct
{
  float *samples; /* [max_samples] */
  gint64 n;
  GstClockTime pts;
  gboolean ended;
  guint64 serial;
} Slot;

struct _MorokLiveWorker
{
  guint rate;
  gint64 max_samples, interval;
  gboolean paced;
  MorokLiveCallbacks cb;
  gpointer user;
  GThread *thread;

  GMutex lock;
  GCond cond; /* any change of the fields below */
  Slot slots[MOROK_LIVE_SLOTS];
  guint first, count; /* slots[first] is the oldest held; count held */
  gint64 decoded;     /* samples of slots[first] decoded so far */
  gboolean busy;      /* a decode or gap runs (without the lock) */
  gboolean stop, flushing;
  guint64 serials;
  GstClockTime gap;   /* a GAP up to there once idle; NONE: none */
  GstFlowReturn flow; /* of the last decode */
};

/* With the lock: the work there is, or FALSE. */
static gboolean
has_work (MorokLiveWorker *w)
{
  if (w->flushing)
    return FALSE;
  if (w->count > 0)
    {
      Slot *s = &w->slots[w->first];
      return s->ended || s->n - w->decoded >= w->interval;
    }
  return GST_CLOCK_TIME_IS_VALID (w->gap);
}

static gpointer
worker_loop (gpointer data)
{
  MorokLiveWorker *w = data;
  g_mutex_lock (&w->lock);
  while (!w->stop)
    {
      if (!has_work (w))
        {
          g_cond_wait (&w->cond, &w->lock);
          continue;
        }
      w->busy = TRUE;
      if (w->count == 0)
        {
          GstClockTime until = w->gap;
          w->gap = GST_CLOCK_TIME_NONE;
          g_mutex_unlock (&w->lock);
          w->cb.gap (w->user, until);
          g_mutex_lock (&w->lock);
        }
      else
        {
          Slot *s = &w->slots[w->first];
          MorokLiveUtterance utt = { s->samples, s->pts, s->serial };
          gint64 n = s->n;
          gboolean final = s->ended;
          g_mutex_unlock (&w->lock);
          GstFlowReturn flow = w->cb.decode (w->user, &utt, n, final);
          g_mutex_lock (&w->lock);
          /* unless a flush dropped it meanwhile */
          if (w->count > 0 && w->slots[w->first].serial == utt.serial && !w->flushing)
            {
              w->flow = flow;
              w->decoded = n;
              if (final)
                {
                  w->first = (w->first + 1) % MOROK_LIVE_SLOTS;
                  w->count--;
                  w->decoded = 0;
                }
            }
        }
      w->busy = FALSE;
      g_cond_broadcast (&w->cond);
    }
  g_mutex_unlock (&w->lock);
  return NULL;
}

MorokLiveWorker *
morok_live_worker_new (guint rate, gint64 max_samples, gint64 interval, gboolean paced,
                       const MorokLiveCallbacks *callbacks, gpointer user)
{
  MorokLiveWorker *w = g_new0 (MorokLiveWorker, 1);
  w->paced = paced;
  w->rate = rate;
  w->max_samples = max_samples;
  w->interval = MAX (interval, 1);
  w->cb = *callbacks;
  w->user = user;
  for (guint i = 0; i < MOROK_LIVE_SLOTS; i++)
    w->slots[i].samples = g_new (float, max_samples);
  w->gap = GST_CLOCK_TIME_NONE;
  w->flow = GST_FLOW_OK;
  g_mutex_init (&w->lock);
  g_cond_init (&w->cond);
  w->thread = g_thread_new ("morok-live", worker_loop, w);
  return w;
}

void
morok_live_worker_free (MorokLiveWorker *w)
{
  if (!w)
    return;
  g_mutex_lock (&w->lock);
  w->stop = TRUE;
  g_cond_broadcast (&w->cond);
  g_mutex_unlock (&w->lock);
  g_thread_join (w->thread);
  for (guint i = 0; i < MOROK_LIVE_SLOTS; i++)
    g_free (w->slots[i].samples);
  g_mutex_clear (&w->lock);
  g_cond_clear (&w->cond);
  g_free (w);
}

/* With the lock: the open utterance, opened at @pts if none is; NULL
 * while every slot is held (or flushing). */
static Slot *
open_slot (MorokLiveWorker *w, GstClockTime pts)
{
  if (w->count > 0)
    {
      Slot *last = &w->slots[(w->first + w->count - 1) % MOROK_LIVE_SLOTS];
      if (!last->ended)
        return last;
    }
  if (w->count == MOROK_LIVE_SLOTS || w->flushing)
    return NULL;
  Slot *s = &w->slots[(w->first + w->count) % MOROK_LIVE_SLOTS];
  s->n = 0;
  s->pts = pts;
  s->ended = FALSE;
  s->serial = ++w->serials;
  w->count++;
  return s;
}

GstFlowReturn
morok_live_worker_append (MorokLiveWorker *w, const float *samples, gsize n, GstClockTime pts)
{
  g_mutex_lock (&w->lock);
  for (gsize at = 0; at < n && !w->flushing;)
    {
      GstClockTime t = GST_CLOCK_TIME_IS_VALID (pts)
                           ? pts + gst_util_uint64_scale_int (at, GST_SECOND, w->rate)
                           : pts;
      Slot *s = open_slot (w, t);
      /* paced, the open utterance gets one interval of audio past what
       * the worker decoded (or is decoding) */
      gint64 room = w->max_samples - (s ? s->n : 0);
      if (s && w->paced)
        {
          gint64 done = s == &w->slots[w->first] ? w->decoded : 0;
          room = MIN (room, done + w->interval - s->n);
          if (s != &w->slots[w->first])
            room = 0; /* the utterances before it first */
        }
      if (!s || room <= 0)
        {
          /* behind: MOROK_LIVE_SLOTS utterances, or paced (the worker
           * learns of the samples just added first) */
          g_cond_broadcast (&w->cond);
          g_cond_wait (&w->cond, &w->lock);
          continue;
        }
      gsize take = MIN (n - at, (gsize) room);
      /* the worker reads [0, n) only: these samples are past it */
      memcpy (s->samples + s->n, samples + at, take * sizeof (float));
      s->n += (gint64) take;
      at += take;
      if (s->n == w->max_samples)
        s->ended = TRUE;
    }
  GstFlowReturn flow = w->flushing ? GST_FLOW_FLUSHING : w->flow;
  g_cond_broadcast (&w->cond);
  g_mutex_unlock (&w->lock);
  return flow;
}

void
morok_live_worker_end (MorokLiveWorker *w)
{
  g_mutex_lock (&w->lock);
  if (w->count > 0)
    {
      Slot *last = &w->slots[(w->first + w->count - 1) % MOROK_LIVE_SLOTS];
      if (!last->ended)
        {
          last->ended = TRUE;
          g_cond_broadcast (&w->cond);
        }
    }
  g_mutex_unlock (&w->lock);
}

void
morok_live_worker_gap (MorokLiveWorker *w, GstClockTime until)
{
  g_mutex_lock (&w->lock);
  if (!GST_CLOCK_TIME_IS_VALID (w->gap) || until > w->gap)
    w->gap = until;
  g_cond_broadcast (&w->cond);
  g_mutex_unlock (&w->lock);
}

void
morok_live_worker_drain (MorokLiveWorker *w)
{
  g_mutex_lock (&w->lock);
  while (!w->flushing && !w->stop && (w->count > 0 || w->busy || GST_CLOCK_TIME_IS_VALID (w->gap)))
    g_cond_wait (&w->cond, &w->lock);
  g_mutex_unlock (&w->lock);
}

void
morok_live_worker_set_flushing (MorokLiveWorker *w, gboolean flushing)
{
  g_mutex_lock (&w->lock);
  /* a decode that began before the flush must end first: it reads the
   * slot the next utterance reuses, and its pushes would take up again
   * once downstream stops flushing */
  while (!flushing && w->busy)
    g_cond_wait (&w->cond, &w->lock);
  w->flushing = flushing;
  if (!flushing)
    {
      w->count = 0;
      w->decoded = 0;
      w->gap = GST_CLOCK_TIME_NONE;
      w->flow = GST_FLOW_OK;
    }
  g_cond_broadcast (&w->cond);
  g_mutex_unlock (&w->lock);
}
