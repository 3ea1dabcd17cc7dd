/* SPDX-License-Identifier: MIT */
/* One stream of morokvad's request pads. The chain function mixes the
 * buffer after the samples left over from the last one and waits in the
 * rounds of its rate (vad-rounds.h) until its full chunks ran, each with
 * those of the other streams; then it feeds the segmenter, posts the
 * boundaries, sets the buffer's meta and pushes it on src_%u (or holds it
 * in the silence gate), exactly as the element does on its always pads. */
#include "morokvad-pad.h"
#include "audio-mix.h"
#include "latency-query.h"
#include "morokvad.h"
#include "non-finite.h"
#include "sample-clock.h"
#include "silence-gate.h"
#include "vad-report.h"
#include <gst/audio/audio.h>
#include <stdio.h>
#include <string.h>

GST_DEBUG_CATEGORY_STATIC (morok_vad_pad_debug);
#define GST_CAT_DEFAULT morok_vad_pad_debug

enum
{
  PROP_0,
  PROP_PROBABILITY,
  PROP_CHUNKS_PROCESSED,
};

struct _MorokVadPad
{
  GstPad parent;
  GstPad *srcpad; /* src_%u; its element_private is this pad */

  /* the rounds and seat of the negotiated rate: set by the streaming
   * thread under the object lock (read by unblock () from any thread) */
  MorokVadRounds *rounds;
  MorokVadSeat *seat;

  /* streaming state, streaming thread only (and stop (), pads inactive) */
  GstAudioInfo info;
  GstSegment segment;
  guint chunk;      /* samples per chunk */
  float *audio;     /* the buffer's samples, mixed, after those left over */
  gsize audio_size; /* its room, at least chunk: grows to the largest buffer */
  gsize filled;     /* samples in audio, less than a chunk between buffers */
  float *probs;     /* the probabilities of a buffer's chunks */
  gsize probs_size;
  MorokVadSegmenter *seg;
  gint64 samples; /* analysed since the last reset */
  MorokSampleClock clock;
  MorokSilenceGate *gate;
  gboolean remove_silence;
  MorokVadParams params;
  gboolean mode_chosen;     /* remove-silence: the gate's mode is set for this stream */
  gboolean non_finite_told; /* non-finite.h: this stream's warning posted */
  gint64 delay;             /* remove-silence: samples held back */
  /* upstream's LATENCY answer for this stream: how late a buffer comes
   * counts from its running time plus that minimum (lateness ()) */
  gboolean upstream_known, upstream_live;
  GstClockTime upstream_min;

  /* statistics, guarded by the object lock */
  gdouble probability;
  guint64 chunks;
  guint rate; /* negotiated, 0 before caps */
};

G_DEFINE_TYPE (MorokVadPad, morok_vad_pad, GST_TYPE_PAD);

/* ---- stream state ---- */

static void
reset_stream (MorokVadPad *self)
{
  if (self->seat)
    morok_vad_rounds_reset (self->rounds, self->seat);
  if (self->seg)
    morok_vad_segmenter_reset (self->seg);
  self->filled = 0;
  self->samples = 0;
  morok_sample_clock_init (&self->clock, GST_AUDIO_INFO_RATE (&self->info));
  morok_silence_gate_reset (self->gate);
  self->mode_chosen = FALSE;
  self->upstream_known = FALSE;
}

/* Leaves the seat (called with the object lock). */
static void
leave_rounds (MorokVadPad *self)
{
  if (self->seat)
    morok_vad_rounds_leave (self->rounds, self->seat);
  self->seat = NULL;
  self->rounds = NULL;
}

void
morok_vad_pad_stop (MorokVadPad *self)
{
  GST_OBJECT_LOCK (self);
  leave_rounds (self);
  GST_OBJECT_UNLOCK (self);
  g_clear_pointer (&self->seg, morok_vad_segmenter_free);
  morok_silence_gate_reset (self->gate);
  self->filled = 0;
  self->samples = 0;
  self->non_finite_told = FALSE;
}

void
morok_vad_pad_unblock (MorokVadPad *self)
{
  GST_OBJECT_LOCK (self);
  if (self->seat)
    morok_vad_rounds_set_flushing (self->rounds, self->seat, TRUE);
  GST_OBJECT_UNLOCK (self);
}

/* Takes a seat in the rounds of @info's rate and the element's settings;
 * an error names the pad. */
static gboolean
set_caps (MorokVadPad *self, GstCaps *caps)
{
  GstElement *element = GST_ELEMENT (GST_PAD_PARENT (self));
  GstAudioInfo info;
  if (!gst_audio_info_from_caps (&info, caps))
    return FALSE;
  guint rate = GST_AUDIO_INFO_RATE (&info);
  g_autoptr (GError) error = NULL;
  MorokVadParams params;
  gboolean remove_silence;
  MorokVadRounds *rounds = morok_vad_rounds_of (MOROK_VAD (element), rate, &error);
  if (rounds && !morok_vad_settings (MOROK_VAD (element), rate, &params, &remove_silence, &error))
    rounds = NULL;
  MorokVadSeat *seat = NULL; /* a new rate: the first join prepares its plan */
  if (rounds && rounds != self->rounds && !(seat = morok_vad_rounds_join (rounds, &error)))
    rounds = NULL;
  if (seat)
    {
      GST_OBJECT_LOCK (self);
      leave_rounds (self);
      self->seat = seat;
      self->rounds = rounds;
      GST_OBJECT_UNLOCK (self);
    }
  if (!rounds)
    {
      GST_ELEMENT_ERROR (element, STREAM, FORMAT,
                         ("%s: could not run the VAD on %d Hz audio", GST_PAD_NAME (self), rate),
                         ("%s: %s", GST_PAD_NAME (self), error->message));
      return FALSE;
    }
  self->info = info;
  self->chunk = morok_vad_rounds_chunk_len (rounds);
  self->audio_size = MAX (self->audio_size, self->chunk);
  self->audio = g_renew (float, self->audio, self->audio_size);
  g_clear_pointer (&self->seg, morok_vad_segmenter_free);
  self->seg = morok_vad_segmenter_new (&params);
  self->remove_silence = remove_silence;
  self->params = params;
  morok_silence_gate_configure (self->gate, GST_AUDIO_INFO_BPF (&info), rate, &self->clock);
  GST_OBJECT_LOCK (self);
  self->rate = rate;
  GST_OBJECT_UNLOCK (self);
  reset_stream (self);
  GST_DEBUG_OBJECT (self, "%u Hz, %d channels: chunks of %u samples", rate,
                    GST_AUDIO_INFO_CHANNELS (&info), self->chunk);
  return TRUE;
}

/* ---- analysis ---- */

/* Tells the gate (remove-silence) of the @n events @ev and posts them. */
static void
report_events (MorokVadPad *self, const MorokVadEvent *ev, guint n)
{
  gboolean exact = self->remove_silence && !morok_silence_gate_is_live (self->gate);
  MorokVadReportTo to = { GST_ELEMENT (GST_PAD_PARENT (self)), GST_PAD (self),
                          exact ? self->gate : NULL, &self->clock, &self->segment };
  morok_vad_report_events (&to, ev, n);
}

/* Runs the first @n full chunks of audio in the rounds, @late after their
 * buffer's time (the rounds wait that much less), then feeds the segmenter
 * their probabilities and keeps what is left of audio. */
static GstFlowReturn
run_chunks (MorokVadPad *self, guint n, GstClockTime late)
{
  if (n > self->probs_size)
    self->probs = g_renew (float, self->probs, self->probs_size = n);
  g_autoptr (GError) error = NULL;
  GstFlowReturn ret
      = morok_vad_rounds_run (self->rounds, self->seat, self->audio, n, self->probs, late, &error);
  if (ret == GST_FLOW_ERROR)
    GST_ELEMENT_ERROR (GST_PAD_PARENT (self), STREAM, FAILED, (NULL),
                       ("%s: VAD step failed: %s", GST_PAD_NAME (self), error->message));
  if (ret != GST_FLOW_OK)
    return ret;
  GST_OBJECT_LOCK (self);
  self->chunks += n;
  self->probability = self->probs[n - 1];
  GST_OBJECT_UNLOCK (self);
  for (guint i = 0; i < n; i++)
    {
      GST_LOG_OBJECT (self, "chunk at %" G_GINT64_FORMAT ": p = %.4f", self->samples,
                      self->probs[i]);
      MorokVadEvent ev[MOROK_VAD_EVENTS_MAX];
      guint k = morok_vad_segmenter_push (self->seg, self->probs[i], ev, G_N_ELEMENTS (ev));
      self->samples += self->chunk;
      report_events (self, ev, k);
      if (self->remove_silence && morok_silence_gate_is_live (self->gate))
        morok_silence_gate_follow (self->gate, self->seg);
    }
  self->filled -= (gsize) n * self->chunk;
  memmove (self->audio, self->audio + (gsize) n * self->chunk, self->filled * sizeof (float));
  return GST_FLOW_OK;
}

/* How long after its time @buf (@frames) comes, behind a live upstream:
 * a thread that downstream held up (a sink that syncs on it) brings it
 * late, and the latency the pad answers counts from its time. */
static GstClockTime
lateness (MorokVadPad *self, GstBuffer *buf, gint64 frames)
{
  if (!self->upstream_known)
    {
      self->upstream_live
          = morok_latency_query_upstream_live (GST_PAD (self), FALSE, &self->upstream_min);
      self->upstream_known = TRUE;
    }
  GstElement *element = GST_ELEMENT (GST_PAD_PARENT (self));
  if (!self->upstream_live || !GST_BUFFER_PTS_IS_VALID (buf))
    return 0;
  GstClock *clock = gst_element_get_clock (element);
  if (!clock)
    return 0;
  GstClockTimeDiff now = GST_CLOCK_DIFF (gst_element_get_base_time (element),
                                         gst_clock_get_time (clock)); /* running time */
  gst_object_unref (clock);
  GstClockTime end
      = GST_BUFFER_PTS (buf)
        + gst_util_uint64_scale_int (frames, GST_SECOND, GST_AUDIO_INFO_RATE (&self->info));
  GstClockTime due = gst_segment_to_running_time (&self->segment, GST_FORMAT_TIME, end);
  if (!GST_CLOCK_TIME_IS_VALID (due) || !GST_CLOCK_TIME_IS_VALID (self->upstream_min))
    return 0;
  due += self->upstream_min;
  return now > 0 && (GstClockTime) now > due ? (GstClockTime) now - due : 0;
}

/* Mixes @frames interleaved frames to mono after the samples left over
 * (the mixes that were not finite counted into *@non_finite) and runs the
 * full chunks, @late after their buffer's time. */
static GstFlowReturn
analyse (MorokVadPad *self, const guint8 *data, gsize frames, GstClockTime late, gsize *non_finite)
{
  guint ch = GST_AUDIO_INFO_CHANNELS (&self->info);
  if (self->filled + frames > self->audio_size)
    self->audio = g_renew (float, self->audio, self->audio_size = self->filled + frames);
  if (GST_AUDIO_INFO_FORMAT (&self->info) == GST_AUDIO_FORMAT_S16LE)
    morok_audio_mix_s16 (self->audio + self->filled, data, frames, ch);
  else
    *non_finite = morok_audio_mix_f32 (self->audio + self->filled, data, frames, ch);
  self->filled += frames;
  guint n = self->filled / self->chunk;
  return n > 0 ? run_chunks (self, n, late) : GST_FLOW_OK;
}

/* EOS, a DISCONT or a new segment: the last partial chunk, zero-padded;
 * close what is open; output everything held. */
static void
finish_stream (MorokVadPad *self)
{
  gint64 total = self->samples + self->filled;
  if (self->filled > 0)
    {
      memset (self->audio + self->filled, 0, (self->chunk - self->filled) * sizeof (float));
      self->filled = self->chunk;
      run_chunks (self, 1, 0);
    }
  MorokVadEvent ev[MOROK_VAD_EVENTS_MAX];
  report_events (self, ev, morok_vad_segmenter_finish (self->seg, total, ev, G_N_ELEMENTS (ev)));
  morok_silence_gate_release (self->gate, self->srcpad, G_MAXINT64);
  self->samples = 0;
  self->filled = 0;
}

static GstFlowReturn
morok_vad_pad_chain (GstPad *pad, GstObject *parent, GstBuffer *buf)
{
  MorokVadPad *self = MOROK_VAD_PAD (pad);
  if (!self->seat)
    {
      gst_buffer_unref (buf);
      return GST_FLOW_NOT_NEGOTIATED;
    }
  if (GST_BUFFER_IS_DISCONT (buf) && self->samples + self->filled > 0)
    {
      GST_DEBUG_OBJECT (self, "discont: resetting the model state");
      finish_stream (self);
      reset_stream (self);
    }
  if (self->remove_silence && !self->mode_chosen)
    {
      /* live or exact mode for the stream now starting */
      self->delay = morok_silence_gate_choose_mode (self->gate, GST_PAD (self), &self->params);
      self->mode_chosen = TRUE;
      GST_DEBUG_OBJECT (self, "%s mode: holding %" G_GINT64_FORMAT " samples back",
                        morok_silence_gate_is_live (self->gate) ? "live" : "exact", self->delay);
    }
  morok_sample_clock_sync (&self->clock, self->samples + self->filled, GST_BUFFER_PTS (buf),
                           &self->segment);
  gint64 frames = (gint64) (gst_buffer_get_size (buf) / GST_AUDIO_INFO_BPF (&self->info));
  GstMapInfo map;
  if (!gst_buffer_map (buf, &map, GST_MAP_READ))
    {
      gst_buffer_unref (buf);
      return GST_FLOW_ERROR;
    }
  gsize bad = 0;
  GstFlowReturn ret = analyse (self, map.data, frames, lateness (self, buf, frames), &bad);
  gst_buffer_unmap (buf, &map);
  morok_non_finite_warn (GST_PAD_PARENT (self), GST_PAD_NAME (self), bad, frames,
                         GST_BUFFER_PTS (buf), &self->non_finite_told);
  if (ret != GST_FLOW_OK)
    {
      gst_buffer_unref (buf);
      return ret;
    }
  buf = gst_buffer_make_writable (buf);
  morok_vad_report_meta (buf, morok_vad_segmenter_speaking (self->seg));
  if (!self->remove_silence)
    return gst_pad_push (self->srcpad, buf);
  morok_silence_gate_hold (self->gate, buf, self->samples + self->filled - frames);
  /* what lies further back than the gate's hold is decided */
  return morok_silence_gate_release (self->gate, self->srcpad,
                                     self->samples + self->filled - self->delay);
}

static gboolean
morok_vad_pad_event (GstPad *pad, GstObject *parent, GstEvent *event)
{
  MorokVadPad *self = MOROK_VAD_PAD (pad);
  switch (GST_EVENT_TYPE (event))
    {
    case GST_EVENT_CAPS:
      {
        GstCaps *caps;
        gst_event_parse_caps (event, &caps);
        /* new caps mid-stream: the stream so far ends first, in its own
         * format and seat */
        g_autoptr (GstCaps) current = gst_pad_get_current_caps (pad);
        if (self->seat && self->samples + self->filled > 0
            && !(current && gst_caps_is_equal (current, caps)))
          {
            finish_stream (self);
            reset_stream (self);
          }
        if (!set_caps (self, caps))
          {
            gst_event_unref (event);
            return FALSE;
          }
        break;
      }
    case GST_EVENT_GAP: /* no audio for a while: as a DISCONT, before the GAP goes on */
    case GST_EVENT_SEGMENT:
      if (self->seat && self->samples + self->filled > 0)
        {
          finish_stream (self); /* in the segment it belongs to */
          reset_stream (self);
        }
      if (GST_EVENT_TYPE (event) == GST_EVENT_SEGMENT)
        gst_event_copy_segment (event, &self->segment);
      break;
    case GST_EVENT_EOS:
      if (self->seat)
        {
          finish_stream (self);
          morok_vad_rounds_idle (self->rounds, self->seat);
        }
      break;
    case GST_EVENT_FLUSH_START: morok_vad_pad_unblock (self); break;
    case GST_EVENT_FLUSH_STOP:
      GST_OBJECT_LOCK (self);
      if (self->seat)
        morok_vad_rounds_set_flushing (self->rounds, self->seat, FALSE);
      GST_OBJECT_UNLOCK (self);
      reset_stream (self);
      self->non_finite_told = FALSE;
      break;
    default: break;
    }
  return gst_pad_event_default (pad, parent, event);
}

/* ---- src_%u ---- */

/* (transfer full) The sink pad of @src, or NULL once its pair is being
 * released (morok_vad_pad_release clears the link under @src's lock while
 * the sink pad is alive, so that a query on another thread holds it). */
static MorokVadPad *
sink_of (GstPad *src)
{
  GST_OBJECT_LOCK (src);
  MorokVadPad *sink = gst_pad_get_element_private (src);
  if (sink)
    gst_object_ref (sink);
  GST_OBJECT_UNLOCK (src);
  return sink;
}

static gboolean
morok_vad_pad_src_query (GstPad *pad, GstObject *parent, GstQuery *query)
{
  if (GST_QUERY_TYPE (query) != GST_QUERY_LATENCY)
    return gst_pad_query_default (pad, parent, query);
  g_autoptr (MorokVadPad) self = sink_of (pad);
  if (!self || !gst_pad_peer_query (GST_PAD (self), query))
    return FALSE;
  gboolean live;
  gst_query_parse_latency (query, &live, NULL, NULL);
  GST_OBJECT_LOCK (self);
  guint rate = self->rate ? self->rate : 16000; /* before caps: what 16 kHz needs */
  GST_OBJECT_UNLOCK (self);
  guint max_wait_ms;
  g_object_get (parent, "max-wait", &max_wait_ms, NULL);
  /* the rounds' wait, then the gate's hold in the mode of this upstream */
  GstClockTime ours = max_wait_ms * GST_MSECOND + morok_vad_hold (MOROK_VAD (parent), rate, live);
  GST_DEBUG_OBJECT (self, "adding %" GST_TIME_FORMAT " of latency", GST_TIME_ARGS (ours));
  morok_latency_query_add (query, ours);
  return TRUE;
}

/* Each pad's only internal link is its pair: queries and events that are
 * not ours go between sink_%u and src_%u, never to the other streams. */
static GstIterator *
iterate_pair (GstPad *pad, GstObject *parent)
{
  GstPad *other = MOROK_IS_VAD_PAD (pad) ? gst_object_ref (MOROK_VAD_PAD (pad)->srcpad)
                                         : (GstPad *) sink_of (pad);
  GValue v = G_VALUE_INIT;
  g_value_init (&v, GST_TYPE_PAD);
  g_value_take_object (&v, other);
  /* none once the pair is being released: an iterator over nothing */
  GstIterator *it = gst_iterator_new_single (GST_TYPE_PAD, other ? &v : NULL);
  g_value_unset (&v);
  return it;
}

/* ---- on the element ---- */

static MorokVadPad *
pad_new (GstPadTemplate *sink_templ, const char *name, GstPadTemplate *src_templ,
         const char *src_name)
{
  MorokVadPad *self = g_object_new (MOROK_TYPE_VAD_PAD, "name", name, "direction", GST_PAD_SINK,
                                    "template", sink_templ, NULL);
  GstPad *sink = GST_PAD (self);
  gst_pad_set_chain_function (sink, GST_DEBUG_FUNCPTR (morok_vad_pad_chain));
  gst_pad_set_event_function (sink, GST_DEBUG_FUNCPTR (morok_vad_pad_event));
  gst_pad_set_iterate_internal_links_function (sink, GST_DEBUG_FUNCPTR (iterate_pair));
  GST_PAD_SET_PROXY_CAPS (sink);
  GST_PAD_SET_PROXY_ALLOCATION (sink);
  morok_caps_refusal_watch (sink, morok_vad_report_refused_caps);
  self->srcpad = gst_object_ref_sink (gst_pad_new_from_template (src_templ, src_name));
  gst_pad_set_element_private (self->srcpad, self);
  gst_pad_set_query_function (self->srcpad, GST_DEBUG_FUNCPTR (morok_vad_pad_src_query));
  gst_pad_set_iterate_internal_links_function (self->srcpad, GST_DEBUG_FUNCPTR (iterate_pair));
  GST_PAD_SET_PROXY_CAPS (self->srcpad);
  return self;
}

/* TRUE if @element has a pad sink_@index. Called with its object lock. */
static gboolean
index_taken (GstElement *element, guint index)
{
  g_autofree char *name = g_strdup_printf ("sink_%u", index);
  for (GList *l = element->sinkpads; l; l = l->next)
    if (g_str_equal (GST_PAD_NAME (l->data), name))
      return TRUE;
  return FALSE;
}

GstPad *
morok_vad_pad_request (GstElement *element, GstPadTemplate *templ, const char *name, guint max)
{
  guint index = 0, n = 0;
  GST_OBJECT_LOCK (element);
  for (GList *l = element->sinkpads; l; l = l->next)
    n += MOROK_IS_VAD_PAD (l->data);
  gboolean ok = n < max;
  if (name)
    ok = ok && sscanf (name, "sink_%u", &index) == 1 && !index_taken (element, index);
  else
    while (index_taken (element, index))
      index++;
  GST_OBJECT_UNLOCK (element);
  if (!ok)
    {
      GST_WARNING_OBJECT (element, "no pad %s: %u of max-streams %u in use, or a bad or taken name",
                          name ? name : templ->name_template, n, max);
      return NULL;
    }
  g_autofree char *sink_name = g_strdup_printf ("sink_%u", index);
  g_autofree char *src_name = g_strdup_printf ("src_%u", index);
  GstPadTemplate *src_templ
      = gst_element_class_get_pad_template (GST_ELEMENT_GET_CLASS (element), "src_%u");
  MorokVadPad *pad = pad_new (templ, sink_name, src_templ, src_name);
  gst_element_add_pad (element, pad->srcpad); /* pad keeps its own ref */
  gst_element_add_pad (element, GST_PAD (pad));
  GST_DEBUG_OBJECT (element, "added %s and %s", sink_name, src_name);
  return GST_PAD (pad);
}

void
morok_vad_pad_release (GstElement *element, GstPad *pad)
{
  MorokVadPad *self = MOROK_VAD_PAD (pad);
  morok_vad_pad_unblock (self);
  gst_pad_set_active (pad, FALSE); /* waits for its chain function */
  morok_vad_pad_stop (self);
  GstPad *src = gst_object_ref (self->srcpad);
  GST_OBJECT_LOCK (src);
  gst_pad_set_element_private (src, NULL); /* sink_of () */
  GST_OBJECT_UNLOCK (src);
  gst_element_remove_pad (element, pad);
  gst_pad_set_active (src, FALSE);
  gst_element_remove_pad (element, src);
  gst_object_unref (src);
}

void
morok_vad_pad_foreach (GstElement *element, void (*fn) (MorokVadPad *pad))
{
  GList *pads = NULL;
  GST_OBJECT_LOCK (element);
  for (GList *l = element->sinkpads; l; l = l->next)
    if (MOROK_IS_VAD_PAD (l->data))
      pads = g_list_prepend (pads, gst_object_ref (l->data));
  GST_OBJECT_UNLOCK (element);
  for (GList *l = pads; l; l = l->next)
    fn (l->data);
  g_list_free_full (pads, gst_object_unref);
}

/* ---- GObject ---- */

static void
morok_vad_pad_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  MorokVadPad *self = MOROK_VAD_PAD (object);
  GST_OBJECT_LOCK (self);
  switch (prop_id)
    {
    case PROP_PROBABILITY: g_value_set_double (value, self->probability); break;
    case PROP_CHUNKS_PROCESSED: g_value_set_uint64 (value, self->chunks); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec); break;
    }
  GST_OBJECT_UNLOCK (self);
}

static void
morok_vad_pad_finalize (GObject *object)
{
  MorokVadPad *self = MOROK_VAD_PAD (object);
  g_warn_if_fail (self->seat == NULL);
  gst_pad_set_element_private (self->srcpad, NULL);
  gst_object_unref (self->srcpad);
  g_free (self->audio);
  g_free (self->probs);
  morok_vad_segmenter_free (self->seg);
  morok_silence_gate_free (self->gate);
  G_OBJECT_CLASS (morok_vad_pad_parent_class)->finalize (object);
}

static void
morok_vad_pad_class_init (MorokVadPadClass *klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GST_DEBUG_CATEGORY_INIT (morok_vad_pad_debug, "morokvad", 0, "Silero VAD on Morok");
  gobject_class->get_property = morok_vad_pad_get_property;
  gobject_class->finalize = morok_vad_pad_finalize;
  const GParamFlags ro = G_PARAM_READABLE | G_PARAM_STATIC_STRINGS;
  g_object_class_install_property (
      gobject_class, PROP_PROBABILITY,
      g_param_spec_double ("probability", "Probability",
                           "Speech probability of the stream's last chunk", 0.0, 1.0, 0.0, ro));
  g_object_class_install_property (
      gobject_class, PROP_CHUNKS_PROCESSED,
      g_param_spec_uint64 ("chunks-processed", "Chunks processed",
                           "Chunks of the stream run since the pad was made", 0, G_MAXUINT64, 0,
                           ro));
}

static void
morok_vad_pad_init (MorokVadPad *self)
{
  gst_segment_init (&self->segment, GST_FORMAT_TIME);
  gst_audio_info_init (&self->info);
  self->gate = morok_silence_gate_new ();
}
