/* SPDX-License-Identifier: MIT */
#include "silence-gate.h"
#include "latency-query.h"
#include <gst/audio/audio.h>

struct _MorokSilenceGate
{
  gint bpf;
  guint rate;
  gboolean live;
  GQueue held;       /* GstBuffer*, in stream order */
  gint64 held_start; /* sample of the first held buffer */
  gint64 released;   /* samples before this are out; past held_start in live mode only */
  GArray *segments;  /* closed segments not yet passed: start, end pairs (gint64) */
  gboolean in_speech;
  gint64 open_start;             /* the open segment's start, when in_speech */
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

gint64
morok_silence_gate_choose_mode (MorokSilenceGate *gate, GstPad *sinkpad,
                                const MorokVadParams *params)
{
  g_return_val_if_fail (g_queue_is_empty (&gate->held), 0);
  gate->live = morok_latency_query_upstream_live (sinkpad, FALSE, NULL);
  return morok_silence_gate_hold_len (params, gate->live);
}

gboolean
morok_silence_gate_is_live (const MorokSilenceGate *gate)
{
  return gate->live;
}

gint64
morok_silence_gate_hold_len (const MorokVadParams *params, gboolean live)
{
  if (live)
    return morok_vad_params_tentative_delay (params);
  /* whole buffers leave, so a chunk still filling counts against the delay */
  return morok_vad_params_delay_max (params) + morok_vad_params_window (params);
}

void
morok_silence_gate_hold (MorokSilenceGate *gate, GstBuffer *buf, gint64 start)
{
  if (g_queue_is_empty (&gate->held))
    gate->held_start = gate->released = start;
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

void
morok_silence_gate_follow (MorokSilenceGate *gate, const MorokVadSegmenter *seg)
{
  gint64 start, end;
  morok_vad_segmenter_tentative (seg, &start, &end);
  /* A split moves an open span's start on: what was open stays open. */
  if (end == G_MAXINT64 && !gate->in_speech)
    morok_silence_gate_speech_start (gate, start);
  else if (end != G_MAXINT64 && gate->in_speech)
    morok_silence_gate_speech_end (gate, end);
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
  gst_pad_push_event (
      pad, gst_event_new_gap (t, gst_util_uint64_scale_int (b - a, GST_SECOND, gate->rate)));
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
  if (gate->live && a > b0 && GST_BUFFER_IS_DISCONT (piece))
    {
      /* the discontinuity is at the buffer's start; live mode passes a
       * buffer in pieces, and downstream ends an utterance at a DISCONT */
      piece = gst_buffer_make_writable (piece);
      GST_BUFFER_FLAG_UNSET (piece, GST_BUFFER_FLAG_DISCONT);
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
      /* exact: whole buffers; live: up to what is decided */
      gint64 upto = b1;
      if (b1 > decided && !(gate->live && decided > gate->released))
        break;
      if (b1 > decided)
        upto = decided;
      /* walk [released, upto) of the buffer through the closed segments,
       * then the open one */
      gint64 at = gate->released;
      for (guint i = 0; ret == GST_FLOW_OK && i < gate->segments->len; i += 2)
        {
          gint64 k0 = MAX (g_array_index (gate->segments, gint64, i), at);
          gint64 k1 = MIN (g_array_index (gate->segments, gint64, i + 1), upto);
          if (k0 >= k1)
            continue;
          push_gap (gate, pad, buf, b0, at, k0);
          ret = push_piece (gate, pad, buf, b0, k0, k1);
          at = k1;
        }
      if (ret == GST_FLOW_OK && gate->in_speech && gate->open_start < upto)
        {
          gint64 k0 = MAX (gate->open_start, at);
          push_gap (gate, pad, buf, b0, at, k0);
          ret = push_piece (gate, pad, buf, b0, k0, upto);
          at = upto;
        }
      if (ret == GST_FLOW_OK)
        push_gap (gate, pad, buf, b0, at, upto);
      /* segments that end in what went out are done with */
      while (gate->segments->len && g_array_index (gate->segments, gint64, 1) <= upto)
        g_array_remove_range (gate->segments, 0, 2);
      gate->released = upto;
      if (upto < b1)
        break;
      g_queue_pop_head (&gate->held);
      gate->held_start = b1;
      gst_buffer_unref (buf);
    }
  return ret;
}
