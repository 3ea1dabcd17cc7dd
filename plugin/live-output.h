/* SPDX-License-Identifier: MIT */
/* What live decoding outputs, pushed from a thread of its own: a sink that
 * syncs blocks each push until the buffer's running time plus the
 * latency, and the decoding thread must not wait for that (the next words
 * would be decoded late). The decoding thread queues buffers, GAPs and
 * events in order; this thread pushes them through the callbacks.
 *
 *   out = morok_live_output_new (&callbacks, self, 1024);
 *   ret = morok_live_output_buffer (out, buf);   // the last push's flow
 *   morok_live_output_gap (out, until);
 *   morok_live_output_drain (out);               // before EOS goes on
 *   morok_live_output_free (out);
 */
#pragma once

#include <gst/gst.h>

G_BEGIN_DECLS

typedef struct
{
  GstFlowReturn (*buffer) (gpointer user, GstBuffer *buf); /* transfer full */
  void (*gap) (gpointer user, GstClockTime until);
  void (*event) (gpointer user, GstEvent *event); /* transfer full */
} MorokLiveOutputCallbacks;

typedef struct _MorokLiveOutput MorokLiveOutput;

/* Holds at most @max_items queued: the queueing thread waits for room
 * (downstream slows it down; memory stays bounded). */
MorokLiveOutput *morok_live_output_new (const MorokLiveOutputCallbacks *callbacks, gpointer user,
                                        guint max_items);
/* Stops the thread; what is still queued is dropped. */
void morok_live_output_free (MorokLiveOutput *out);

/* Queue @buf (transfer full), once there is room; returns the flow of
 * the last push done (FLUSHING while flushing). gap () and event () wait
 * for room as well. */
GstFlowReturn morok_live_output_buffer (MorokLiveOutput *out, GstBuffer *buf);
void morok_live_output_gap (MorokLiveOutput *out, GstClockTime until);
/* What morok_live_output_buffer would return, queueing nothing. */
GstFlowReturn morok_live_output_flow (MorokLiveOutput *out);
/* Queue @event (transfer full). */
void morok_live_output_event (MorokLiveOutput *out, GstEvent *event);
/* Waits until everything queued went out (or flushing). */
void morok_live_output_drain (MorokLiveOutput *out);
/* FLUSH_START drops what is queued and refuses more; FLUSH_STOP (@flushing
 * FALSE) takes items again. */
void morok_live_output_set_flushing (MorokLiveOutput *out, gboolean flushing);

G_END_DECLS
