/* SPDX-License-Identifier: MIT */
#include "silence-gate.h"
#include <gst/audio/audio.h>

struct _MorokSilenceGate
{
  gint bpf;
  guint rate;
  GQueue held;       /* GstBuffer*, in stream order */
  gint64 held_start; /* sample of the first held buffer */
  GArray *segments;  /* closed segments not yet passed: start, end pairs (gint64) */
  gboolean in_speech;
  gint64 open_start;            /* the open segment's start, when in_speech */
  const MorokSampleClock *clock; /* times of unstamped buffers */
};

MorokSilenceGate *
morok_silence_gate_new (void)
{
  MorokSilenceGate *gate = g_new0 (MorokSilenceGate, 1);
  g_queue_init (&gate->held);
  gate->segments = g_array_new (FALSE, FALSE, sizeof (gint64));
  return gate;
}

void
morok_silence_gate_reset (MorokSilenceGate *gate)
{
  while (!g_queue_is_empty (&gate->held))
    gst_buffer_unref (g_queue_pop_head (&gate->held));
  g_array_set_size (gate->segments, 0);
  gate->in_speech = FALSE;
}

void
morok_silence_gate_free (MorokSilenceGate *gate)
{
  if (!gate)
    return;
  morok_silence_gate_reset (gate);
  g_array_unref (gate->segments);
  g_free (gate);
}

void
morok_silence_gate_configure (MorokSilenceGate *gate, gint bpf, guint rate,
                              const MorokSampleClock *clock)
{
  morok_silence_gate_reset (gate);
  gate->bpf = bpf;
  gate->rate = rate;
  gate->clock = clock;
}

void
morok_silence_gate_hold (MorokSilenceGate *gate, GstBuffer *buf, gint64 start)
{
  if (g_queue_is_empty (&gate->held))
    gate->held_start = start;
  g_queue_push_tail (&gate->held, buf);
}

void
morok_silence_gate_speech_start (MorokSilenceGate *gate, gint64 sample)
{
  gate->open_start = sample;
  gate->in_speech = TRUE;
}

void
morok_silence_gate_speech_end (MorokSilenceGate *gate, gint64 sample)
{
  gint64 seg[2] = { gate->open_start, sample };
  g_array_append_vals (gate->segments, seg, 2);
  gate->in_speech = FALSE;
}

/* The time of sample @a of @buf, which starts at sample @b0: from its PTS,
 * or for a buffer without one from the stream's sample clock. */
static GstClockTime
sample_time (MorokSilenceGate *gate, GstBuffer *buf, gint64 b0, gint64 a)
{
  if (!GST_BUFFER_PTS_IS_VALID (buf))
    return morok_sample_clock_time (gate->clock, a);
  return GST_BUFFER_PTS (buf) + gst_util_uint64_scale_int (a - b0, GST_SECOND, gate->rate);
}

/* A GAP for frames [a, b) of @buf, which starts at sample @b0. */
static void
push_gap (MorokSilenceGate *gate, GstPad *pad, GstBuffer *buf, gint64 b0, gint64 a, gint64 b)
{
  GstClockTime t = sample_time (gate, buf, b0, a);
  if (b <= a || !GST_CLOCK_TIME_IS_VALID (t))
    return;
  gst_pad_push_event (pad, gst_event_new_gap (t, gst_util_uint64_scale_int (b - a, GST_SECOND,
                                                                            gate->rate)));
}

/* Frames [a, b) of @buf as a buffer of their own, stamped with their time. */
static GstFlowReturn
push_piece (MorokSilenceGate *gate, GstPad *pad, GstBuffer *buf, gint64 b0, gint64 a, gint64 b)
{
  gint64 len = (gint64) (gst_buffer_get_size (buf) / gate->bpf);
  GstBuffer *piece = gst_buffer_ref (buf);
  if (a > b0 || b < b0 + len)
    {
      /* truncate keeps no timestamp when it trims the front: it has no rate */
      piece = gst_audio_buffer_truncate (piece, gate->bpf, a - b0, b - a);
      GST_BUFFER_DURATION (piece) = gst_util_uint64_scale_int (b - a, GST_SECOND, gate->rate);
    }
  GstClockTime t = sample_time (gate, buf, b0, a);
  if (GST_BUFFER_PTS (piece) != t)
    {
      piece = gst_buffer_make_writable (piece);
      GST_BUFFER_PTS (piece) = t;
    }
  return gst_pad_push (pad, piece);
}

GstFlowReturn
morok_silence_gate_release (MorokSilenceGate *gate, GstPad *pad, gint64 decided)
{
  GstFlowReturn ret = GST_FLOW_OK;
  while (ret == GST_FLOW_OK && !g_queue_is_empty (&gate->held))
    {
      GstBuffer *buf = g_queue_peek_head (&gate->held);
      gint64 b0 = gate->held_start, b1 = b0 + (gint64) (gst_buffer_get_size (buf) / gate->bpf);
      if (b1 > decided)
        break;
      g_queue_pop_head (&gate->held);
      gate->held_start = b1;
      /* walk the buffer through the closed segments, then the open one */
      gint64 at = b0;
      for (guint i = 0; ret == GST_FLOW_OK && i < gate->segments->len; i += 2)
        {
          gint64 k0 = MAX (g_array_index (gate->segments, gint64, i), at);
          gint64 k1 = MIN (g_array_index (gate->segments, gint64, i + 1), b1);
          if (k0 >= k1)
            continue;
          push_gap (gate, pad, buf, b0, at, k0);
          ret = push_piece (gate, pad, buf, b0, k0, k1);
          at = k1;
        }
      if (ret == GST_FLOW_OK && gate->in_speech && gate->open_start < b1)
        {
          gint64 k0 = MAX (gate->open_start, at);
          push_gap (gate, pad, buf, b0, at, k0);
          ret = push_piece (gate, pad, buf, b0, k0, b1);
          at = b1;
        }
      if (ret == GST_FLOW_OK)
        push_gap (gate, pad, buf, b0, at, b1);
      /* segments that end in this buffer are done with */
      while (gate->segments->len && g_array_index (gate->segments, gint64, 1) <= b1)
        g_array_remove_range (gate->segments, 0, 2);
      gst_buffer_unref (buf);
    }
  return ret;
}
