/* SPDX-License-Identifier: MIT */
#include "live-output.h"

typedef struct
{
  GstBuffer *buffer; /* one of the three */
  GstEvent *event;
  GstClockTime gap;
} Item;

struct _MorokLiveOutput
{
  MorokLiveOutputCallbacks cb;
  gpointer user;
  GThread *thread;
  GMutex lock;
  GCond cond;
  GQueue items; /* Item */
  guint max_items;
  gboolean busy, stop, flushing;
  GstFlowReturn flow;
};

static void
item_free (gpointer data)
{
  Item *item = data;
  gst_clear_buffer (&item->buffer);
  gst_clear_event (&item->event);
  g_free (item);
}

static gpointer
output_loop (gpointer data)
{
  MorokLiveOutput *out = data;
  g_mutex_lock (&out->lock);
  while (!out->stop)
    {
      Item *item = g_queue_pop_head (&out->items);
      if (!item)
        {
          g_cond_wait (&out->cond, &out->lock);
          continue;
        }
      out->busy = TRUE;
      g_mutex_unlock (&out->lock);
      gboolean buffer = item->buffer != NULL;
      GstFlowReturn flow = GST_FLOW_OK;
      if (buffer)
        flow = out->cb.buffer (out->user, g_steal_pointer (&item->buffer));
      else if (item->event)
        out->cb.event (out->user, g_steal_pointer (&item->event));
      else
        out->cb.gap (out->user, item->gap);
      item_free (item);
      g_mutex_lock (&out->lock);
      if (buffer)
        out->flow = flow;
      out->busy = FALSE;
      g_cond_broadcast (&out->cond);
    }
  g_mutex_unlock (&out->lock);
  return NULL;
}

MorokLiveOutput *
morok_live_output_new (const MorokLiveOutputCallbacks *callbacks, gpointer user, guint max_items)
{
  MorokLiveOutput *out = g_new0 (MorokLiveOutput, 1);
  out->max_items = MAX (max_items, 1);
  out->cb = *callbacks;
  out->user = user;
  out->flow = GST_FLOW_OK;
  g_mutex_init (&out->lock);
  g_cond_init (&out->cond);
  g_queue_init (&out->items);
  out->thread = g_thread_new ("morok-live-out", output_loop, out);
  return out;
}

void
morok_live_output_free (MorokLiveOutput *out)
{
  if (!out)
    return;
  g_mutex_lock (&out->lock);
  out->stop = TRUE;
  g_cond_broadcast (&out->cond);
  g_mutex_unlock (&out->lock);
  g_thread_join (out->thread);
  g_queue_clear_full (&out->items, item_free);
  g_mutex_clear (&out->lock);
  g_cond_clear (&out->cond);
  g_free (out);
}

/* Queues @item (transfer full) unless flushing, once there is room; the
 * last flow. */
static GstFlowReturn
queue_item (MorokLiveOutput *out, Item *item)
{
  g_mutex_lock (&out->lock);
  while (!out->flushing && !out->stop && out->items.length >= out->max_items)
    g_cond_wait (&out->cond, &out->lock);
  GstFlowReturn flow = out->flushing ? GST_FLOW_FLUSHING : out->flow;
  if (out->flushing || out->stop)
    item_free (item);
  else
    g_queue_push_tail (&out->items, item);
  g_cond_broadcast (&out->cond);
  g_mutex_unlock (&out->lock);
  return flow;
}

GstFlowReturn
morok_live_output_buffer (MorokLiveOutput *out, GstBuffer *buf)
{
  Item *item = g_new0 (Item, 1);
  item->buffer = buf;
  return queue_item (out, item);
}

GstFlowReturn
morok_live_output_flow (MorokLiveOutput *out)
{
  g_mutex_lock (&out->lock);
  GstFlowReturn flow = out->flushing ? GST_FLOW_FLUSHING : out->flow;
  g_mutex_unlock (&out->lock);
  return flow;
}

void
morok_live_output_gap (MorokLiveOutput *out, GstClockTime until)
{
  Item *item = g_new0 (Item, 1);
  item->gap = until;
  queue_item (out, item);
}

void
morok_live_output_event (MorokLiveOutput *out, GstEvent *event)
{
  Item *item = g_new0 (Item, 1);
  item->event = event;
  queue_item (out, item);
}

void
morok_live_output_drain (MorokLiveOutput *out)
{
  g_mutex_lock (&out->lock);
  while (!out->flushing && !out->stop && (out->busy || !g_queue_is_empty (&out->items)))
    g_cond_wait (&out->cond, &out->lock);
  g_mutex_unlock (&out->lock);
}

void
morok_live_output_set_flushing (MorokLiveOutput *out, gboolean flushing)
{
  g_mutex_lock (&out->lock);
  /* a push that began before the flush returns first (the pad is still
   * flushing), or its FLUSHING would outlive the flush */
  while (!flushing && out->busy)
    g_cond_wait (&out->cond, &out->lock);
  out->flushing = flushing;
  if (flushing)
    g_queue_clear_full (&out->items, item_free);
  else
    out->flow = GST_FLOW_OK;
  g_cond_broadcast (&out->cond);
  g_mutex_unlock (&out->lock);
}
