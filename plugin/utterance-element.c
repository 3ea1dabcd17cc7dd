/* SPDX-License-Identifier: MIT */
#include "utterance-element.h"
#include "caps-refusal.h"
#include "latency-query.h"
#include "live-output.h"
#include "non-finite.h"
#include "property-guard.h"
#include "sample-clock.h"
#include "utterance-prototype.h"
#include <gst/audio/audio.h>
#include <string.h>

#define DEFAULT_MAX_DURATION 30.0
#define DEFAULT_MAX_BATCH 1
#define DEFAULT_PRECISION MOROK_PRECISION_F32
/* the live output's queue: words and GAPs waiting to be pushed */
#define LIVE_OUTPUT_ITEMS 1024
#define PACED_OUTPUT_ITEMS 16

#define SINK_CAPS                                                                                  \
  "audio/x-raw, format = (string) { F32LE, S16LE }, rate = (int) 16000, channels = (int) 1, "      \
  "layout = (string) interleaved"

enum
{
  PROP_0,
  PROP_MODEL,
  PROP_MAX_DURATION,
  PROP_MAX_BATCH,
  PROP_PRECISION,
};

static GstStaticPadTemplate sink_template
    = GST_STATIC_PAD_TEMPLATE ("sink", GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS (SINK_CAPS));

typedef struct
{
  GstPad *sinkpad, *srcpad;

  /* properties, guarded by the object lock */
  char *model_path;
  gdouble max_duration; /* s */
  guint max_batch;
  MorokPrecision precision;

  /* prepared on READY -> PAUSED */
  MorokJitShared *shared;   /* the prototype, shared with other elements */
  MorokGigaAm *model;       /* the prototype's */
  MorokUtteranceGate *gate; /* the utterances held and the GAPs sent for them */

  /* streaming state */
  gboolean s16;
  gboolean non_finite_told; /* non-finite.h: this stream's warning posted */
  GstSegment segment;
  GstClockTime configured_latency; /* the pipeline's LATENCY event */
  GstClockTime answered_latency;   /* the minimum of our last LATENCY answer */

  /* live mode (live-worker.h): decided at the first buffer */
  gboolean live_checked;
  MorokLiveWorker *live;
  MorokLiveOutput *live_out; /* pushes what live decoding outputs */
  MorokSampleClock live_clock;
  gint64 live_seen;        /* samples since the segment started */
  GstClockTime live_shift; /* the subclass's output times are this much later */
  float *live_f32;         /* a buffer's samples as floats */
  gsize live_f32_len;
} MorokUtteranceElementPrivate;

G_DEFINE_ABSTRACT_TYPE_WITH_PRIVATE (MorokUtteranceElement, morok_utterance_element,
                                     GST_TYPE_ELEMENT);

#define PRIV(self)                                                                                 \
  ((MorokUtteranceElementPrivate *) morok_utterance_element_get_instance_private (self))
#define CLASS(self) MOROK_UTTERANCE_ELEMENT_GET_CLASS (self)

#define MOROK_TYPE_PRECISION_ENUM (morok_precision_enum_get_type ())
static GType
morok_precision_enum_get_type (void)
{
  static GType type;
  static const GEnumValue values[] = {
    { MOROK_PRECISION_F32, "f32 throughout", "f32" },
    { MOROK_PRECISION_F16,
      "Products with the weights in f16, sums in f32: faster, about 1e-2 off (AVX512-FP16 only)",
      "f16" },
    { MOROK_PRECISION_BF16,
      "Products with the weights in bf16, sums in f32: fast, about 5e-2 off "
      "(AMX-BF16 or AVX512-BF16 only)",
      "bf16" },
    { MOROK_PRECISION_BF16X3,
      "Products with the weights as three bf16 products, sums in f32: within about 1e-4 of "
      "f32 (AMX-BF16 or AVX512-BF16 only; faster than f32 on AMX only)",
      "bf16x3" },
    { MOROK_PRECISION_INT8,
      "Products with the weights in int8 per column and activations in uint8 per row, sums "
      "in int32: fastest, about 1e-1 off on the tiny fixtures (AVX512-VNNI, or any AVX2 CPU)",
      "int8" },
    { 0, NULL, NULL },
  };
  if (g_once_init_enter (&type))
    g_once_init_leave (&type, g_enum_register_static ("MorokPrecision", values));
  return type;
}

static const char *
factory_name (MorokUtteranceElement *self)
{
  GstElementFactory *factory = gst_element_get_factory (GST_ELEMENT (self));
  return factory ? gst_plugin_feature_get_name (GST_PLUGIN_FEATURE (factory))
                 : G_OBJECT_TYPE_NAME (self);
}

/* ---- prepare ---- */

static void
release (MorokUtteranceElement *self)
{
  MorokUtteranceElementPrivate *priv = PRIV (self);
  /* the worker's thread runs the subclass's contexts: it stops first */
  g_clear_pointer (&priv->live, morok_live_worker_free);
  g_clear_pointer (&priv->live_out, morok_live_output_free);
  priv->live_checked = FALSE;
  g_clear_pointer (&priv->live_f32, g_free);
  priv->live_f32_len = 0;
  if (CLASS (self)->release)
    CLASS (self)->release (self);
  g_clear_pointer (&priv->model, morok_gigaam_unref);
  g_clear_pointer (&priv->shared, morok_jit_registry_release); /* after the contexts */
  g_clear_pointer (&priv->gate, morok_utterance_gate_free);
}

static gboolean
prepare (MorokUtteranceElement *self)
{
  MorokUtteranceElementPrivate *priv = PRIV (self);
  g_autoptr (GError) error = NULL;
  GST_OBJECT_LOCK (self);
  g_autofree char *path = g_strdup (priv->model_path);
  gdouble max_duration = priv->max_duration;
  guint batch = priv->max_batch;
  MorokPrecision precision = priv->precision;
  GST_OBJECT_UNLOCK (self);
  if (!path)
    {
      GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND, ("No model: set the model property"),
                         ("%s needs a GigaAM model: its folder as downloaded, or a converted file "
                          "(docs/gigaam-model.md)",
                          factory_name (self)));
      return FALSE;
    }
  gint64 t0 = g_get_monotonic_time ();
  /* the environment's settings (MOROK_THREADS, ...), the element's precision */
  g_autoptr (MorokPrepareConfig) config = morok_prepare_config_from_env ();
  morok_prepare_config_set_precision (config, precision);
  MorokUtterancePlan plan = CLASS (self)->read_settings (self);
  gboolean made;
  priv->shared
      = morok_utterance_prototype_acquire (path, plan, batch, max_duration, config, &made, &error);
  const MorokUtterancePrototype *proto
      = priv->shared ? morok_jit_shared_value (priv->shared) : NULL;
  if (!proto || !CLASS (self)->open (self, proto, &error))
    {
      GST_ELEMENT_ERROR (self, RESOURCE, OPEN_READ, ("Could not prepare the model %s", path),
                         ("%s", error->message));
      release (self);
      return FALSE;
    }
  priv->model = morok_gigaam_ref (proto->model);
  gint64 max_samples = morok_gigaam_max_samples (priv->model);
  priv->gate = morok_utterance_gate_new (MOROK_UTTERANCE_RATE, max_samples, batch);
  gsize scratch,
      bytes
      = morok_program_context_bytes (morok_plan_program (morok_jit_plan (proto->plan)), &scratch);
  GST_CAT_INFO_OBJECT (
      CLASS (self)->debug_category, self,
      "%s %s for %u x %.1f s in %.1f ms, %" G_GSIZE_FORMAT " context bytes (%" G_GSIZE_FORMAT
      " of them scratch)", /* shared: another element prepared it */
      made ? "prepared" : "shared", path, batch, (double) max_samples / MOROK_UTTERANCE_RATE,
      (g_get_monotonic_time () - t0) / 1e3, bytes, scratch);
  return TRUE;
}

/* ---- utterances ---- */

static GstFlowReturn
push_now (gpointer user, GstBuffer *buf)
{
  MorokUtteranceElement *self = user;
  MorokUtteranceElementPrivate *priv = PRIV (self);
  return morok_utterance_gate_push (priv->gate, priv->srcpad, buf);
}

static void
push_gap_now (gpointer user, GstClockTime until)
{
  MorokUtteranceElementPrivate *priv = PRIV (MOROK_UTTERANCE_ELEMENT (user));
  morok_utterance_gate_push_gap (priv->gate, priv->srcpad, until);
}

static void
push_event_now (gpointer user, GstEvent *event)
{
  gst_pad_push_event (PRIV (MOROK_UTTERANCE_ELEMENT (user))->srcpad, event);
}

GstFlowReturn
morok_utterance_element_push (MorokUtteranceElement *self, GstBuffer *buf)
{
  MorokUtteranceElementPrivate *priv = PRIV (self);
  if (!priv->live_out)
    return push_now (self, buf);
  /* its delay is taken now: a sink that syncs may still hold the push
   * thread on the buffer before it, which is not decoding falling behind */
  if (CLASS (self)->live_ready)
    CLASS (self)->live_ready (self, buf);
  return morok_live_output_buffer (priv->live_out, buf);
}

GstFlowReturn
morok_utterance_element_flow (MorokUtteranceElement *self)
{
  MorokUtteranceElementPrivate *priv = PRIV (self);
  return priv->live_out ? morok_live_output_flow (priv->live_out) : GST_FLOW_OK;
}

void
morok_utterance_element_push_gap (MorokUtteranceElement *self, GstClockTime until)
{
  MorokUtteranceElementPrivate *priv = PRIV (self);
  if (priv->live_out)
    morok_live_output_gap (priv->live_out, until);
  else
    push_gap_now (self, until);
}

void
morok_utterance_element_push_event (MorokUtteranceElement *self, GstEvent *event)
{
  MorokUtteranceElementPrivate *priv = PRIV (self);
  if (priv->live_out)
    morok_live_output_event (priv->live_out, event);
  else
    push_event_now (self, event);
}

GstClockTime
morok_utterance_element_running_time (MorokUtteranceElement *self, GstClockTime t)
{
  return gst_segment_to_running_time (&PRIV (self)->segment, GST_FORMAT_TIME, t);
}

GstClockTime
morok_utterance_element_now (MorokUtteranceElement *self)
{
  GstClock *clock = gst_element_get_clock (GST_ELEMENT (self));
  if (!clock)
    return GST_CLOCK_TIME_NONE;
  GstClockTime now = gst_clock_get_time (clock),
               base = gst_element_get_base_time (GST_ELEMENT (self));
  gst_object_unref (clock);
  return now >= base ? now - base : 0;
}

GstClockTime
morok_utterance_element_deadline_latency (MorokUtteranceElement *self)
{
  MorokUtteranceElementPrivate *priv = PRIV (self);
  GST_OBJECT_LOCK (self);
  GstClockTime configured = priv->configured_latency, answered = priv->answered_latency;
  GST_OBJECT_UNLOCK (self);
  if (!GST_CLOCK_TIME_IS_VALID (configured))
    return answered;
  return GST_CLOCK_TIME_IS_VALID (answered) ? MAX (configured, answered) : configured;
}

/* ---- live mode ---- */

static GstFlowReturn
live_decode (gpointer user, const MorokLiveUtterance *utt, gint64 n, gboolean final)
{
  MorokUtteranceElement *self = user;
  return CLASS (self)->live_decode (self, utt, n, final);
}

static void
live_gap (gpointer user, GstClockTime until)
{
  MorokUtteranceElement *self = user;
  morok_utterance_element_push_gap (self, until + PRIV (self)->live_shift);
}

void
morok_utterance_element_set_live_shift (MorokUtteranceElement *self, GstClockTime shift)
{
  PRIV (self)->live_shift = shift;
}

/* At the first buffer: live mode when upstream is live and the subclass
 * has one. */
static void
choose_mode (MorokUtteranceElement *self)
{
  MorokUtteranceElementPrivate *priv = PRIV (self);
  priv->live_checked = TRUE;
  if (!CLASS (self)->live_start)
    return;
  gboolean upstream_live = morok_latency_query_upstream_live (priv->sinkpad, FALSE, NULL);
  gint64 interval = CLASS (self)->live_start (self, upstream_live);
  if (interval <= 0)
    return;
  static const MorokLiveOutputCallbacks output = { push_now, push_gap_now, push_event_now };
  /* live upstream: items leave at their time plus the latency, so the
   * queue holds that much output, a few words and a GAP per decode, and a
   * stuck downstream still meets a bound; not live (mode=live on a file),
   * decoding keeps only a little ahead of downstream, as offline */
  priv->live_out = morok_live_output_new (&output, self,
                                          upstream_live ? LIVE_OUTPUT_ITEMS : PACED_OUTPUT_ITEMS);
  static const MorokLiveCallbacks callbacks = { live_decode, live_gap };
  priv->live = morok_live_worker_new (MOROK_UTTERANCE_RATE, morok_gigaam_max_samples (priv->model),
                                      interval, !upstream_live, &callbacks, self);
  morok_sample_clock_init (&priv->live_clock, MOROK_UTTERANCE_RATE);
  priv->live_seen = 0;
  GST_CAT_INFO_OBJECT (CLASS (self)->debug_category, self,
                       "live mode (upstream %s): decoding every %.0f ms as utterances grow",
                       upstream_live ? "live" : "not live", interval * 1e3 / MOROK_UTTERANCE_RATE);
}

/* A buffer's samples to the worker. */
static GstFlowReturn
live_chain (MorokUtteranceElement *self, GstBuffer *buf)
{
  MorokUtteranceElementPrivate *priv = PRIV (self);
  if (GST_BUFFER_IS_DISCONT (buf))
    morok_live_worker_end (priv->live);
  morok_sample_clock_sync (&priv->live_clock, priv->live_seen, GST_BUFFER_PTS (buf),
                           &priv->segment);
  GstMapInfo map;
  gst_buffer_map (buf, &map, GST_MAP_READ);
  gsize frames = map.size / (priv->s16 ? 2 : 4);
  if (frames > priv->live_f32_len)
    {
      priv->live_f32 = g_renew (float, priv->live_f32, frames);
      priv->live_f32_len = frames;
    }
  gsize bad = morok_utterance_samples_to_f32 (map.data, frames, priv->s16, priv->live_f32);
  gst_buffer_unmap (buf, &map);
  morok_non_finite_warn (GST_ELEMENT (self), NULL, bad, frames, GST_BUFFER_PTS (buf),
                         &priv->non_finite_told);
  GstClockTime pts = morok_sample_clock_time (&priv->live_clock, priv->live_seen);
  priv->live_seen += (gint64) frames;
  return morok_live_worker_append (priv->live, priv->live_f32, frames, pts);
}

/* The live path's serialized events; FALSE: not handled here. */
static gboolean
live_sink_event (MorokUtteranceElement *self, GstEvent *event)
{
  MorokUtteranceElementPrivate *priv = PRIV (self);
  switch (GST_EVENT_TYPE (event))
    {
    case GST_EVENT_GAP:
      {
        GstClockTime ts, duration;
        gst_event_parse_gap (event, &ts, &duration);
        GstClockTime end = ts + (GST_CLOCK_TIME_IS_VALID (duration) ? duration : 0);
        morok_live_worker_end (priv->live);
        morok_sample_clock_sync (&priv->live_clock, priv->live_seen, end, &priv->segment);
        morok_live_worker_gap (priv->live, end);
        gst_event_unref (event);
        return TRUE;
      }
    case GST_EVENT_EOS:
      morok_live_worker_end (priv->live);
      morok_live_worker_gap (priv->live,
                             morok_sample_clock_time (&priv->live_clock, priv->live_seen));
      morok_live_worker_drain (priv->live);
      morok_live_output_drain (priv->live_out);
      return FALSE;
    case GST_EVENT_SEGMENT:
      /* the utterances held belong to the segment before */
      morok_live_worker_end (priv->live);
      morok_live_worker_drain (priv->live);
      morok_live_output_drain (priv->live_out);
      morok_sample_clock_init (&priv->live_clock, MOROK_UTTERANCE_RATE);
      priv->live_seen = 0;
      return FALSE;
    case GST_EVENT_FLUSH_STOP:
      morok_live_worker_set_flushing (priv->live, FALSE);
      morok_live_output_set_flushing (priv->live_out, FALSE);
      morok_sample_clock_init (&priv->live_clock, MOROK_UTTERANCE_RATE);
      priv->live_seen = 0;
      return FALSE;
    case GST_EVENT_CAPS:
    case GST_EVENT_STREAM_START: return FALSE; /* before any output */
    default:
      if (!GST_EVENT_IS_SERIALIZED (event) || !GST_EVENT_IS_DOWNSTREAM (event))
        return FALSE;
      /* after the output already decoded (tags, custom events) */
      morok_live_output_event (priv->live_out, event);
      return TRUE;
    }
}

/* Runs the finished utterances through the subclass. */
static GstFlowReturn
run_batch (MorokUtteranceElement *self)
{
  MorokUtteranceElementPrivate *priv = PRIV (self);
  guint count;
  MorokUtterance *utts = morok_utterance_gate_batch (priv->gate, &count);
  if (count == 0)
    return GST_FLOW_OK;
  const float *waves[MOROK_UTTERANCE_MAX_BATCH_LIMIT];
  gint64 n[MOROK_UTTERANCE_MAX_BATCH_LIMIT];
  gint64 samples = 0;
  for (guint i = 0; i < count; i++)
    {
      waves[i] = utts[i].samples;
      n[i] = MAX (utts[i].n, morok_gigaam_min_samples (priv->model));
      if (n[i] > utts[i].n) /* shorter than one frame: pad with silence */
        memset (utts[i].samples + utts[i].n, 0, (n[i] - utts[i].n) * sizeof (float));
      samples += utts[i].n;
    }
  gint64 t0 = g_get_monotonic_time ();
  GstFlowReturn ret = CLASS (self)->run (self, utts, waves, n, count);
  /* bench/compare-transcriber.sh reads this line */
  GST_CAT_INFO_OBJECT (
      CLASS (self)->debug_category, self, "ran %u utterances, %.3f s of audio, in %.1f ms", count,
      (double) samples / MOROK_UTTERANCE_RATE, (g_get_monotonic_time () - t0) / 1e3);
  morok_utterance_gate_batch_done (priv->gate, priv->srcpad);
  return ret;
}

/* Ends the current utterance; runs the batch once it is full, or with
 * @drain whatever waits. */
static GstFlowReturn
finish_utterance (MorokUtteranceElement *self, gboolean drain)
{
  MorokUtteranceGate *gate = PRIV (self)->gate;
  morok_utterance_gate_end (gate);
  return morok_utterance_gate_batch_full (gate) || drain ? run_batch (self) : GST_FLOW_OK;
}

static GstFlowReturn
morok_utterance_element_chain (GstPad *pad, GstObject *parent, GstBuffer *buf)
{
  MorokUtteranceElement *self = MOROK_UTTERANCE_ELEMENT (parent);
  MorokUtteranceElementPrivate *priv = PRIV (self);
  GstFlowReturn ret = GST_FLOW_OK;
  if (!priv->gate)
    {
      gst_buffer_unref (buf);
      return GST_FLOW_NOT_NEGOTIATED;
    }
  if (!priv->live_checked)
    choose_mode (self);
  if (priv->live)
    {
      ret = live_chain (self, buf);
      gst_buffer_unref (buf);
      return ret;
    }
  if (GST_BUFFER_IS_DISCONT (buf))
    ret = finish_utterance (self, FALSE);
  morok_utterance_gate_sync (priv->gate, GST_BUFFER_PTS (buf));
  /* before the first utterance is complete, downstream learns it may preroll */
  morok_utterance_gate_push_gap_to_held (priv->gate, priv->srcpad);
  GstMapInfo map;
  gst_buffer_map (buf, &map, GST_MAP_READ);
  gsize bps = priv->s16 ? 2 : 4, frames = map.size / bps, bad = 0;
  for (gsize at = 0; at < frames && ret == GST_FLOW_OK;)
    {
      at += morok_utterance_gate_append (priv->gate, map.data + at * bps, frames - at, priv->s16,
                                         &bad);
      if (morok_utterance_gate_batch_full (priv->gate))
        ret = run_batch (self);
    }
  gst_buffer_unmap (buf, &map);
  morok_non_finite_warn (GST_ELEMENT (self), NULL, bad, frames, GST_BUFFER_PTS (buf),
                         &priv->non_finite_told);
  gst_buffer_unref (buf);
  return ret;
}

static gboolean
morok_utterance_element_sink_event (GstPad *pad, GstObject *parent, GstEvent *event)
{
  MorokUtteranceElement *self = MOROK_UTTERANCE_ELEMENT (parent);
  MorokUtteranceElementPrivate *priv = PRIV (self);
  if (GST_EVENT_TYPE (event) == GST_EVENT_FLUSH_START && priv->live)
    {
      morok_live_worker_set_flushing (priv->live, TRUE);
      morok_live_output_set_flushing (priv->live_out, TRUE);
    }
  if (priv->live && live_sink_event (self, event))
    return TRUE;
  switch (GST_EVENT_TYPE (event))
    {
    case GST_EVENT_CAPS:
      {
        GstCaps *caps;
        GstAudioInfo info;
        gst_event_parse_caps (event, &caps);
        if (!gst_audio_info_from_caps (&info, caps))
          {
            gst_event_unref (event);
            return FALSE;
          }
        priv->s16 = GST_AUDIO_INFO_FORMAT (&info) == GST_AUDIO_FORMAT_S16LE;
        gst_event_unref (event);
        GstCaps *out = gst_pad_get_pad_template_caps (priv->srcpad);
        gboolean ok = gst_pad_push_event (priv->srcpad, gst_event_new_caps (out));
        gst_caps_unref (out);
        return ok;
      }
    case GST_EVENT_SEGMENT:
      {
        /* what is held belongs to the segment before */
        if (priv->gate && finish_utterance (self, TRUE) != GST_FLOW_OK)
          GST_CAT_DEBUG_OBJECT (CLASS (self)->debug_category, self,
                                "downstream refused the last utterance");
        /* only now: live output of the segment before reads it until here */
        gst_event_copy_segment (event, &priv->segment);
        if (priv->gate)
          morok_utterance_gate_set_segment (priv->gate, &priv->segment);
        break;
      }
    case GST_EVENT_GAP:
      {
        /* the end of an utterance (silence removed upstream): not passed on
         * as it is, since utterances still held may lie before it; the gate
         * sends its own GAPs up to where output is known */
        GstClockTime ts, duration;
        gst_event_parse_gap (event, &ts, &duration);
        gst_event_unref (event);
        if (!priv->gate)
          return TRUE;
        morok_utterance_gate_gap (priv->gate, ts, duration);
        if (finish_utterance (self, FALSE) != GST_FLOW_OK)
          GST_CAT_DEBUG_OBJECT (CLASS (self)->debug_category, self,
                                "downstream refused an utterance");
        morok_utterance_gate_push_gap_to_held (priv->gate, priv->srcpad);
        return TRUE;
      }
    case GST_EVENT_EOS:
      /* EOS also runs a batch that is not full, and tells the time up to
       * the end of the audio */
      if (priv->gate)
        {
          if (finish_utterance (self, TRUE) != GST_FLOW_OK)
            GST_CAT_DEBUG_OBJECT (CLASS (self)->debug_category, self,
                                  "downstream refused the last utterance");
          morok_utterance_gate_push_gap_to_held (priv->gate, priv->srcpad);
        }
      break;
    case GST_EVENT_FLUSH_STOP:
      if (priv->gate)
        morok_utterance_gate_flush (priv->gate);
      priv->non_finite_told = FALSE;
      break;
    default: break;
    }
  return gst_pad_event_default (pad, parent, event);
}

/* Caps the sink pad refuses (caps-refusal.h): what it takes. */
static void
refused_caps (GstElement *element, GstPad *pad, GstCaps *caps)
{
  MorokUtteranceElement *self = MOROK_UTTERANCE_ELEMENT (element);
  g_autofree char *text = gst_caps_to_string (caps);
  GST_ELEMENT_ERROR (
      self, STREAM, FORMAT,
      ("%s takes 16000 Hz mono audio, F32LE or S16LE, not %s", factory_name (self), text),
      ("put audioconvert ! audioresample before %s", factory_name (self)));
}

static gboolean
morok_utterance_element_src_query (GstPad *pad, GstObject *parent, GstQuery *query)
{
  MorokUtteranceElement *self = MOROK_UTTERANCE_ELEMENT (parent);
  MorokUtteranceElementPrivate *priv = PRIV (self);
  if (GST_QUERY_TYPE (query) == GST_QUERY_LATENCY)
    {
      if (!gst_pad_peer_query (priv->sinkpad, query))
        return FALSE;
      gboolean live;
      GstClockTime min, max;
      gst_query_parse_latency (query, &live, &min, &max);
      GstClockTime ours = CLASS (self)->live_latency ? CLASS (self)->live_latency (self, live)
                                                     : GST_CLOCK_TIME_NONE;
      if (!GST_CLOCK_TIME_IS_VALID (ours))
        {
          /* an utterance is output when its batch is full: its own audio,
           * up to max-duration, and that of max-batch - 1 more after it */
          GST_OBJECT_LOCK (self);
          ours = (GstClockTime) (priv->max_duration * priv->max_batch * GST_SECOND);
          if (CLASS (self)->extra_latency)
            ours += CLASS (self)->extra_latency (self);
          GST_OBJECT_UNLOCK (self);
        }
      GST_CAT_DEBUG_OBJECT (CLASS (self)->debug_category, self,
                            "adding %" GST_TIME_FORMAT " of latency", GST_TIME_ARGS (ours));
      morok_latency_query_add (query, ours);
      GST_OBJECT_LOCK (self);
      priv->answered_latency = min + ours;
      GST_OBJECT_UNLOCK (self);
      return TRUE;
    }
  return gst_pad_query_default (pad, parent, query);
}

static gboolean
morok_utterance_element_src_event (GstPad *pad, GstObject *parent, GstEvent *event)
{
  if (GST_EVENT_TYPE (event) == GST_EVENT_LATENCY)
    {
      GstClockTime latency;
      gst_event_parse_latency (event, &latency);
      GST_OBJECT_LOCK (parent);
      PRIV (MOROK_UTTERANCE_ELEMENT (parent))->configured_latency = latency;
      GST_OBJECT_UNLOCK (parent);
    }
  return gst_pad_event_default (pad, parent, event);
}

static GstStateChangeReturn
morok_utterance_element_change_state (GstElement *element, GstStateChange transition)
{
  MorokUtteranceElement *self = MOROK_UTTERANCE_ELEMENT (element);
  MorokUtteranceElementPrivate *priv = PRIV (self);
  if (transition == GST_STATE_CHANGE_READY_TO_PAUSED && !prepare (self))
    return GST_STATE_CHANGE_FAILURE;
  if (transition == GST_STATE_CHANGE_READY_TO_PAUSED)
    priv->non_finite_told = FALSE;
  /* what live mode measures (seconds of decodes for a large model) is
   * measured now, before a live source upstream starts (the bin starts it
   * after this element), not on the first buffer: that would hold up the
   * streaming thread, and the source overrun. Not when a buffer came in
   * PAUSED (upstream prerolled: not live) or upstream answers not live (a
   * live source may not answer before it runs). */
  if (transition == GST_STATE_CHANGE_PAUSED_TO_PLAYING && CLASS (self)->live_latency
      && !priv->live_checked && morok_latency_query_upstream_live (priv->sinkpad, TRUE, NULL))
    CLASS (self)->live_latency (self, TRUE);
  /* a chain () waiting for the worker returns before the pads go down */
  if (transition == GST_STATE_CHANGE_PAUSED_TO_READY && priv->live)
    {
      morok_live_worker_set_flushing (priv->live, TRUE);
      morok_live_output_set_flushing (priv->live_out, TRUE);
    }
  GstStateChangeReturn ret = GST_ELEMENT_CLASS (morok_utterance_element_parent_class)
                                 ->change_state (element, transition);
  if (transition == GST_STATE_CHANGE_PAUSED_TO_READY)
    release (self);
  return ret;
}

/* ---- properties ---- */

static void
morok_utterance_element_set_property (GObject *object, guint prop_id, const GValue *value,
                                      GParamSpec *pspec)
{
  MorokUtteranceElement *self = MOROK_UTTERANCE_ELEMENT (object);
  MorokUtteranceElementPrivate *priv = PRIV (self);
  if (!morok_property_settable (GST_ELEMENT (self), CLASS (self)->debug_category, pspec))
    return;
  GST_OBJECT_LOCK (self);
  switch (prop_id)
    {
    case PROP_MODEL:
      g_free (priv->model_path);
      priv->model_path = g_value_dup_string (value);
      break;
    case PROP_MAX_DURATION: priv->max_duration = g_value_get_double (value); break;
    case PROP_MAX_BATCH: priv->max_batch = g_value_get_uint (value); break;
    case PROP_PRECISION: priv->precision = g_value_get_enum (value); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec); break;
    }
  GST_OBJECT_UNLOCK (self);
}

static void
morok_utterance_element_get_property (GObject *object, guint prop_id, GValue *value,
                                      GParamSpec *pspec)
{
  MorokUtteranceElementPrivate *priv = PRIV (MOROK_UTTERANCE_ELEMENT (object));
  GST_OBJECT_LOCK (object);
  switch (prop_id)
    {
    case PROP_MODEL: g_value_set_string (value, priv->model_path); break;
    case PROP_MAX_DURATION: g_value_set_double (value, priv->max_duration); break;
    case PROP_MAX_BATCH: g_value_set_uint (value, priv->max_batch); break;
    case PROP_PRECISION: g_value_set_enum (value, priv->precision); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec); break;
    }
  GST_OBJECT_UNLOCK (object);
}

/* The src pad, from the subclass's template: during init the instance's
 * class is still this one. */
static void
morok_utterance_element_constructed (GObject *object)
{
  MorokUtteranceElementPrivate *priv = PRIV (MOROK_UTTERANCE_ELEMENT (object));
  G_OBJECT_CLASS (morok_utterance_element_parent_class)->constructed (object);
  GstPadTemplate *src = gst_element_class_get_pad_template (GST_ELEMENT_GET_CLASS (object), "src");
  priv->srcpad = gst_pad_new_from_template (src, "src");
  gst_pad_set_query_function (priv->srcpad, GST_DEBUG_FUNCPTR (morok_utterance_element_src_query));
  gst_pad_set_event_function (priv->srcpad, GST_DEBUG_FUNCPTR (morok_utterance_element_src_event));
  gst_pad_use_fixed_caps (priv->srcpad);
  gst_element_add_pad (GST_ELEMENT (object), priv->srcpad);
}

static void
morok_utterance_element_finalize (GObject *object)
{
  MorokUtteranceElement *self = MOROK_UTTERANCE_ELEMENT (object);
  release (self);
  g_free (PRIV (self)->model_path);
  G_OBJECT_CLASS (morok_utterance_element_parent_class)->finalize (object);
}

static void
morok_utterance_element_class_init (MorokUtteranceElementClass *klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  gobject_class->set_property = morok_utterance_element_set_property;
  gobject_class->get_property = morok_utterance_element_get_property;
  gobject_class->constructed = morok_utterance_element_constructed;
  gobject_class->finalize = morok_utterance_element_finalize;
  const GParamFlags ready = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY;
  g_object_class_install_property (
      gobject_class, PROP_MODEL,
      g_param_spec_string (
          "model", "Model",
          "GigaAM model folder as downloaded, or a file made by scripts/gigaam/convert.py", NULL,
          ready));
  g_object_class_install_property (
      gobject_class, PROP_MAX_DURATION,
      g_param_spec_double ("max-duration", "Maximum duration",
                           "Longest utterance (s): the plan's bound on the input length; longer "
                           "audio is cut into utterances of this length",
                           0.1, 600.0, DEFAULT_MAX_DURATION, ready));
  g_object_class_install_property (
      gobject_class, PROP_MAX_BATCH,
      g_param_spec_uint ("max-batch", "Maximum batch",
                         "Utterances run together: the plan's bound on the batch; above 1, "
                         "finished utterances wait for the batch to fill (or EOS)",
                         1, MOROK_UTTERANCE_MAX_BATCH_LIMIT, DEFAULT_MAX_BATCH, ready));
  g_object_class_install_property (
      gobject_class, PROP_PRECISION,
      g_param_spec_enum ("precision", "Precision",
                         "Arithmetic of the products with the model's weights",
                         MOROK_TYPE_PRECISION_ENUM, DEFAULT_PRECISION, ready));
  gst_element_class_add_static_pad_template (element_class, &sink_template);
  element_class->change_state = GST_DEBUG_FUNCPTR (morok_utterance_element_change_state);
  gst_type_mark_as_plugin_api (MOROK_TYPE_PRECISION_ENUM, 0);
  gst_type_mark_as_plugin_api (MOROK_TYPE_UTTERANCE_ELEMENT, 0);
}

static void
morok_utterance_element_init (MorokUtteranceElement *self)
{
  MorokUtteranceElementPrivate *priv = PRIV (self);
  priv->max_duration = DEFAULT_MAX_DURATION;
  priv->max_batch = DEFAULT_MAX_BATCH;
  priv->precision = DEFAULT_PRECISION;
  priv->configured_latency = GST_CLOCK_TIME_NONE;
  priv->answered_latency = GST_CLOCK_TIME_NONE;
  gst_segment_init (&priv->segment, GST_FORMAT_TIME);
  priv->sinkpad = gst_pad_new_from_static_template (&sink_template, "sink");
  gst_pad_set_chain_function (priv->sinkpad, GST_DEBUG_FUNCPTR (morok_utterance_element_chain));
  gst_pad_set_event_function (priv->sinkpad,
                              GST_DEBUG_FUNCPTR (morok_utterance_element_sink_event));
  morok_caps_refusal_watch (priv->sinkpad, refused_caps);
  gst_element_add_pad (GST_ELEMENT (self), priv->sinkpad);
}
