/* SPDX-License-Identifier: MIT */
#include "utterance-gate.h"
#include "sample-clock.h"
#include <math.h>
#include <string.h>

struct _MorokUtteranceGate
{
  guint rate, batch;
  gint64 max_samples;
  float *samples;       /* [batch][max_samples] */
  MorokUtterance *utts; /* [batch]: 0 .. done - 1 finished, `done` being gathered */
  guint done;
  GstSegment segment;
  MorokSampleClock clock;
  gint64 seen;       /* samples since the segment started */
  gboolean told_any; /* a GAP or buffer went out since the segment started */
  GstClockTime told; /* downstream knows the output before this */
};

void
morok_utterance_gate_flush (MorokUtteranceGate *gate)
{
  for (guint i = 0; i < gate->batch; i++)
    gate->utts[i].n = 0;
  gate->done = 0;
  morok_sample_clock_init (&gate->clock, gate->rate);
  gate->seen = 0;
  gate->told_any = FALSE;
}

MorokUtteranceGate *
morok_utterance_gate_new (guint rate, gint64 max_samples, guint batch)
{
  MorokUtteranceGate *gate = g_new0 (MorokUtteranceGate, 1);
  gate->rate = rate;
  gate->batch = batch;
  gate->max_samples = max_samples;
  gate->samples = g_new0 (float, (gsize) batch *max_samples);
  gate->utts = g_new0 (MorokUtterance, batch);
  for (guint i = 0; i < batch; i++)
    gate->utts[i].samples = gate->samples + (gsize) i * max_samples;
  gst_segment_init (&gate->segment, GST_FORMAT_TIME);
  morok_utterance_gate_flush (gate);
  return gate;
}

void
morok_utterance_gate_free (MorokUtteranceGate *gate)
{
  if (!gate)
    return;
  g_free (gate->samples);
  g_free (gate->utts);
  g_free (gate);
}

void
morok_utterance_gate_set_segment (MorokUtteranceGate *gate, const GstSegment *segment)
{
  gst_segment_copy_into (segment, &gate->segment);
  morok_sample_clock_init (&gate->clock, gate->rate);
  gate->seen = 0;
  gate->told_any = FALSE;
}

void
morok_utterance_gate_sync (MorokUtteranceGate *gate, GstClockTime pts)
{
  morok_sample_clock_sync (&gate->clock, gate->seen, pts, &gate->segment);
}

gboolean
morok_utterance_gate_batch_full (const MorokUtteranceGate *gate)
{
  return gate->done == gate->batch;
}

void
morok_utterance_gate_end (MorokUtteranceGate *gate)
{
  if (gate->done < gate->batch && gate->utts[gate->done].n > 0)
    gate->done++;
}

gsize
morok_utterance_samples_to_f32 (const guint8 *data, gsize frames, gboolean s16, float *out)
{
  gsize bad = 0;
  for (gsize k = 0; k < frames; k++)
    {
      float v;
      if (s16)
        {
          gint16 s;
          memcpy (&s, data + 2 * k, 2);
          v = GINT16_FROM_LE (s) / 32768.0f;
        }
      else
        memcpy (&v, data + 4 * k, 4);
      bad += !isfinite (v);
      out[k] = isfinite (v) ? v : 0.0f;
    }
  return bad;
}

gsize
morok_utterance_gate_append (MorokUtteranceGate *gate, const guint8 *data, gsize frames,
                             gboolean s16, gsize *non_finite)
{
  gsize i = 0;
  while (i < frames && !morok_utterance_gate_batch_full (gate))
    {
      MorokUtterance *u = &gate->utts[gate->done];
      if (u->n == 0)
        u->pts = morok_sample_clock_time (&gate->clock, gate->seen);
      gsize take = MIN (frames - i, (gsize) (gate->max_samples - u->n));
      *non_finite += morok_utterance_samples_to_f32 (data + i * (s16 ? 2 : 4), take, s16,
                                                     u->samples + u->n);
      u->n += (gint64) take;
      i += take;
      gate->seen += (gint64) take;
      if (u->n == gate->max_samples)
        gate->done++;
    }
  return i;
}

void
morok_utterance_gate_gap (MorokUtteranceGate *gate, GstClockTime ts, GstClockTime duration)
{
  morok_utterance_gate_end (gate);
  morok_sample_clock_sync (&gate->clock, gate->seen,
                           ts + (GST_CLOCK_TIME_IS_VALID (duration) ? duration : 0),
                           &gate->segment);
}

MorokUtterance *
morok_utterance_gate_batch (MorokUtteranceGate *gate, guint *out_n)
{
  *out_n = gate->done;
  return gate->utts;
}

void
morok_utterance_gate_push_gap (MorokUtteranceGate *gate, GstPad *pad, GstClockTime until)
{
  if (!GST_CLOCK_TIME_IS_VALID (until))
    return;
  if (!gate->told_any)
    {
      gboolean time = gate->segment.format == GST_FORMAT_TIME
                      && GST_CLOCK_TIME_IS_VALID (gate->segment.start);
      gate->told = time ? MIN (gate->segment.start, until) : until;
    }
  else if (until <= gate->told)
    return;
  gst_pad_push_event (pad, gst_event_new_gap (gate->told, until - gate->told));
  gate->told_any = TRUE;
  gate->told = until;
}

GstFlowReturn
morok_utterance_gate_push (MorokUtteranceGate *gate, GstPad *pad, GstBuffer *buf)
{
  morok_utterance_gate_push_gap (gate, pad, GST_BUFFER_PTS (buf));
  /* buffers may overlap (words of one frame): told never goes back */
  GstClockTime end = GST_BUFFER_PTS (buf) + GST_BUFFER_DURATION (buf);
  gate->told = gate->told_any ? MAX (gate->told, end) : end;
  gate->told_any = TRUE;
  return gst_pad_push (pad, buf);
}

void
morok_utterance_gate_batch_done (MorokUtteranceGate *gate, GstPad *pad)
{
  /* the utterance being gathered (if the batch was not full) goes first */
  if (gate->done < gate->batch)
    {
      MorokUtterance open = gate->utts[gate->done];
      gate->utts[gate->done] = gate->utts[0];
      gate->utts[0] = open;
    }
  for (guint i = 1; i < gate->batch; i++)
    gate->utts[i].n = 0;
  if (gate->done == gate->batch)
    gate->utts[0].n = 0;
  gate->done = 0;
  morok_utterance_gate_push_gap_to_held (gate, pad);
}

void
morok_utterance_gate_push_gap_to_held (MorokUtteranceGate *gate, GstPad *pad)
{
  gboolean held = gate->done > 0 || (gate->done < gate->batch && gate->utts[gate->done].n > 0);
  GstClockTime known
      = held ? gate->utts[0].pts : morok_sample_clock_time (&gate->clock, gate->seen);
  morok_utterance_gate_push_gap (gate, pad, known);
}
