/* SPDX-License-Identifier: MIT */
/**
 * SECTION:element-morokencoder
 * @title: morokencoder
 *
 * Runs the GigaAM Conformer encoder, compiled by Morok, on each utterance
 * of 16 kHz mono audio, and outputs one `other/tensors,format=flexible`
 * buffer per utterance (NNStreamer's layout: a 128-byte header, then the
 * data):
 *
 * - `output=encoder` (default): the encoder output, f32 [d_model, T'],
 *   T' = the utterance's encoded frames (one per 40 ms);
 * - `output=log-probs`: the CTC log-probabilities, f32 [T', classes].
 *
 * An utterance ends at a GAP event (as `morokvad remove-silence=true` sends
 * between speech segments), at EOS, or when it reaches `max-duration`, the
 * longest input the plan is prepared for. The buffer's PTS is that of the
 * utterance's first sample (from the samples and the segment when the
 * audio has no PTS) and its duration that of its audio. Downstream learns
 * with GAP events how far the output is known (a GAP at the segment's start
 * first, then up to the audio seen whenever none is held), so that it
 * prerolls before the first utterance is complete. With
 * `max-batch` above 1, finished utterances wait until that many are there
 * (or EOS) and run as one batch, each still pushed as its own buffer. The
 * element holds up to `max-batch` × `max-duration` of audio and says so in
 * the LATENCY query.
 *
 * The model (a GigaAM safetensors file, see docs/gigaam-model.md) is loaded
 * and its plan prepared on READY→PAUSED, for `max-batch` utterances of up to
 * `max-duration` (the plan's b and t bounds) in `precision` f32, f16 (needs
 * an AVX512-FP16 CPU), bf16 or bf16x3 (need AMX-BF16); a missing or bad
 * file, a model made for another sample rate than 16 kHz, or a precision the
 * CPU cannot run, is an error message naming the file and the reason.
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 filesrc location=speech.wav ! wavparse ! audioconvert ! audioresample ! \
 *   morokvad remove-silence=true ! morokencoder model=gigaam-v3.safetensors output=log-probs ! fakesink
 * ]|
 */
#include "morokencoder.h"
#include "property-guard.h"
#include "tensors-flexible.h"
#include "utterance-gate.h"
#include "models/gigaam-encoder-jit.h"
#include <gst/audio/audio.h>
#include <math.h>
#include <string.h>

GST_DEBUG_CATEGORY_STATIC (morok_encoder_debug);
#define GST_CAT_DEFAULT morok_encoder_debug

#define RATE 16000
#define DEFAULT_MAX_DURATION 30.0
#define DEFAULT_OUTPUT MOROK_ENCODER_OUTPUT_ENCODER
#define DEFAULT_MAX_BATCH 1
#define MAX_BATCH_LIMIT 64
#define DEFAULT_PRECISION MOROK_PRECISION_F32

typedef enum
{
  MOROK_ENCODER_OUTPUT_ENCODER,
  MOROK_ENCODER_OUTPUT_LOG_PROBS,
} MorokEncoderOutput;

enum
{
  PROP_0,
  PROP_MODEL,
  PROP_MAX_DURATION,
  PROP_OUTPUT,
  PROP_MAX_BATCH,
  PROP_PRECISION,
};

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE (
    "sink", GST_PAD_SINK, GST_PAD_ALWAYS,
    GST_STATIC_CAPS ("audio/x-raw, format = (string) { F32LE, S16LE }, rate = (int) 16000, "
                     "channels = (int) 1, layout = (string) interleaved"));
static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE (
    "src", GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS ("other/tensors, format = (string) flexible"));

struct _MorokEncoder
{
  GstElement parent;
  GstPad *sinkpad, *srcpad;

  /* properties, guarded by the object lock */
  char *model;
  gdouble max_duration;
  MorokEncoderOutput output;
  guint max_batch;
  MorokPrecision precision;

  /* prepared on READY -> PAUSED */
  MorokGigaAm *gigaam;
  GigaAmEncoderJit *encoder;
  GigaAmCtcJit *ctc;
  MorokEncoderOutput prepared_output;
  gint64 max_samples;
  guint batch;          /* max-batch when prepared */
  MorokUtteranceGate *gate; /* the utterances held and the GAPs sent for them */

  /* streaming state */
  gboolean s16;
};

G_DEFINE_TYPE (MorokEncoder, morok_encoder, GST_TYPE_ELEMENT);
GST_ELEMENT_REGISTER_DEFINE (morokencoder, "morokencoder", GST_RANK_NONE, MOROK_TYPE_ENCODER);

#define MOROK_TYPE_ENCODER_OUTPUT (morok_encoder_output_get_type ())
static GType
morok_encoder_output_get_type (void)
{
  static GType type;
  static const GEnumValue values[] = {
    { MOROK_ENCODER_OUTPUT_ENCODER, "Encoder output [d_model, frames]", "encoder" },
    { MOROK_ENCODER_OUTPUT_LOG_PROBS, "CTC log-probabilities [frames, classes]", "log-probs" },
    { 0, NULL, NULL },
  };
  if (g_once_init_enter (&type))
    g_once_init_leave (&type, g_enum_register_static ("MorokEncoderOutput", values));
  return type;
}

#define MOROK_TYPE_ENCODER_PRECISION (morok_encoder_precision_get_type ())
static GType
morok_encoder_precision_get_type (void)
{
  static GType type;
  static const GEnumValue values[] = {
    { MOROK_PRECISION_F32, "f32 throughout", "f32" },
    { MOROK_PRECISION_F16,
      "Products with the weights in f16, sums in f32: faster, about 1e-2 off (AVX512-FP16 only)",
      "f16" },
    { MOROK_PRECISION_BF16,
      "Products with the weights in bf16 on AMX, sums in f32: fastest, about 5e-2 off "
      "(AMX-BF16 only)",
      "bf16" },
    { MOROK_PRECISION_BF16X3,
      "Products with the weights as three bf16 products on AMX, sums in f32: fast, within "
      "about 1e-4 of f32 (AMX-BF16 only)",
      "bf16x3" },
    { 0, NULL, NULL },
  };
  if (g_once_init_enter (&type))
    g_once_init_leave (&type, g_enum_register_static ("MorokEncoderPrecision", values));
  return type;
}

/* ---- prepare ---- */

static void
release (MorokEncoder *self)
{
  g_clear_pointer (&self->encoder, gigaam_encoder_jit_free);
  g_clear_pointer (&self->ctc, gigaam_ctc_jit_free);
  g_clear_pointer (&self->gigaam, morok_gigaam_unref);
  g_clear_pointer (&self->gate, morok_utterance_gate_free);
}

static gboolean
prepare (MorokEncoder *self)
{
  g_autoptr (GError) error = NULL;
  GST_OBJECT_LOCK (self);
  g_autofree char *path = g_strdup (self->model);
  gdouble max_duration = self->max_duration;
  self->prepared_output = self->output;
  self->batch = self->max_batch;
  MorokPrecision precision = self->precision;
  GST_OBJECT_UNLOCK (self);
  if (!path)
    {
      GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND, ("No model: set the model property"),
                         ("morokencoder needs a GigaAM safetensors file (docs/gigaam-model.md)"));
      return FALSE;
    }
  gint64 t0 = g_get_monotonic_time ();
  self->gigaam = morok_gigaam_load (path, &error);
  if (self->gigaam && !morok_gigaam_check_sample_rate (self->gigaam, RATE, &error))
    g_clear_pointer (&self->gigaam, morok_gigaam_unref);
  if (self->gigaam)
    {
      self->max_samples = MAX ((gint64) (max_duration * RATE), morok_gigaam_min_samples (self->gigaam));
      morok_gigaam_set_limits (self->gigaam, self->batch, self->max_samples);
      /* the environment's settings (MOROK_THREADS, ...), the element's precision */
      g_autoptr (MorokPrepareConfig) config = morok_prepare_config_from_env ();
      morok_prepare_config_set_precision (config, precision);
      gboolean ok;
      if (self->prepared_output == MOROK_ENCODER_OUTPUT_LOG_PROBS)
        {
          self->ctc = gigaam_ctc_jit_new (morok_gigaam_ref (self->gigaam));
          ok = gigaam_ctc_jit_prepare_at_bounds (self->ctc, config, &error);
        }
      else
        {
          self->encoder = gigaam_encoder_jit_new (morok_gigaam_ref (self->gigaam));
          ok = gigaam_encoder_jit_prepare_at_bounds (self->encoder, config, &error);
        }
      if (!ok)
        g_clear_pointer (&self->gigaam, morok_gigaam_unref);
    }
  if (!self->gigaam)
    {
      GST_ELEMENT_ERROR (self, RESOURCE, OPEN_READ, ("Could not prepare the model %s", path),
                         ("%s", error->message));
      release (self);
      return FALSE;
    }
  self->gate = morok_utterance_gate_new (RATE, self->max_samples, self->batch);
  GST_INFO_OBJECT (self, "prepared %s for %u x %.1f s in %.1f ms", path, self->batch,
                   (double) self->max_samples / RATE, (g_get_monotonic_time () - t0) / 1e3);
  return TRUE;
}

/* ---- utterances ---- */

/* Runs the plan on the finished utterances and pushes one tensor each. */
static GstFlowReturn
run_batch (MorokEncoder *self)
{
  guint count;
  MorokUtterance *utts = morok_utterance_gate_batch (self->gate, &count);
  if (count == 0)
    return GST_FLOW_OK;
  g_autoptr (GError) error = NULL;
  const float *waves[MAX_BATCH_LIMIT];
  gint64 n[MAX_BATCH_LIMIT];
  for (guint i = 0; i < count; i++)
    {
      waves[i] = utts[i].samples;
      n[i] = MAX (utts[i].n, morok_gigaam_min_samples (self->gigaam));
      if (n[i] > utts[i].n) /* shorter than one frame: pad with silence */
        memset (utts[i].samples + utts[i].n, 0, (n[i] - utts[i].n) * sizeof (float));
    }
  gboolean log_probs = self->prepared_output == MOROK_ENCODER_OUTPUT_LOG_PROBS;
  gboolean ok = log_probs ? gigaam_ctc_jit_run (self->ctc, waves, n, count, &error)
                          : gigaam_encoder_jit_run (self->encoder, waves, n, count, &error);
  const MorokBuffer *out = !ok          ? NULL
                           : log_probs ? gigaam_ctc_jit_output (self->ctc, &error)
                                       : gigaam_encoder_jit_output (self->encoder, &error);
  if (!out)
    {
      GST_ELEMENT_ERROR (self, STREAM, FAILED, (NULL), ("encoder failed: %s", error->message));
      return GST_FLOW_ERROR;
    }
  GstFlowReturn ret = GST_FLOW_OK;
  for (guint i = 0; i < count && ret == GST_FLOW_OK; i++)
    {
      /* [b, d, T'] or [b, T', C]: item i's first `frames` frames are valid */
      guint32 frames = (guint32) morok_gigaam_encoded_frames (self->gigaam, n[i]);
      guint32 rows = log_probs ? frames : (guint32) out->shape[1];
      guint32 cols = log_probs ? (guint32) out->shape[2] : frames;
      gsize stride = (gsize) out->shape[2], bytes = (gsize) rows * cols * sizeof (float);
      const float *item = (const float *) out->data + (gsize) i * out->shape[1] * out->shape[2];
      GstBuffer *buf = gst_buffer_new_allocate (NULL, MOROK_TENSORS_HEADER_SIZE + bytes, NULL);
      GstMapInfo map;
      gst_buffer_map (buf, &map, GST_MAP_WRITE);
      guint32 dims[2] = { rows, cols };
      morok_tensors_header_write_f32 (map.data, dims, 2);
      float *dst = (float *) (map.data + MOROK_TENSORS_HEADER_SIZE);
      for (guint32 r = 0; r < rows; r++)
        memcpy (dst + (gsize) r * cols, item + r * stride, cols * sizeof (float));
      gst_buffer_unmap (buf, &map);
      GST_BUFFER_PTS (buf) = utts[i].pts;
      GST_BUFFER_DURATION (buf) = gst_util_uint64_scale_int (utts[i].n, GST_SECOND, RATE);
      GST_DEBUG_OBJECT (self, "utterance %u of %u, %" G_GINT64_FORMAT " samples at %"
                        GST_TIME_FORMAT ": [%u, %u]", i + 1, count, utts[i].n,
                        GST_TIME_ARGS (utts[i].pts), rows, cols);
      ret = morok_utterance_gate_push (self->gate, self->srcpad, buf);
    }
  morok_utterance_gate_batch_done (self->gate, self->srcpad);
  return ret;
}

/* Ends the current utterance; runs the batch once it is full, or with
 * @drain whatever waits. */
static GstFlowReturn
finish_utterance (MorokEncoder *self, gboolean drain)
{
  morok_utterance_gate_end (self->gate);
  return morok_utterance_gate_batch_full (self->gate) || drain ? run_batch (self) : GST_FLOW_OK;
}

static GstFlowReturn
morok_encoder_chain (GstPad *pad, GstObject *parent, GstBuffer *buf)
{
  MorokEncoder *self = MOROK_ENCODER (parent);
  GstFlowReturn ret = GST_FLOW_OK;
  if (!self->gate)
    {
      gst_buffer_unref (buf);
      return GST_FLOW_NOT_NEGOTIATED;
    }
  if (GST_BUFFER_IS_DISCONT (buf))
    ret = finish_utterance (self, FALSE);
  morok_utterance_gate_sync (self->gate, GST_BUFFER_PTS (buf));
  /* before the first utterance is complete, downstream learns it may preroll */
  morok_utterance_gate_announce (self->gate, self->srcpad);
  GstMapInfo map;
  gst_buffer_map (buf, &map, GST_MAP_READ);
  gsize bps = self->s16 ? 2 : 4, frames = map.size / bps;
  for (gsize at = 0; at < frames && ret == GST_FLOW_OK;)
    {
      at += morok_utterance_gate_append (self->gate, map.data + at * bps, frames - at, self->s16);
      if (morok_utterance_gate_batch_full (self->gate))
        ret = run_batch (self);
    }
  gst_buffer_unmap (buf, &map);
  gst_buffer_unref (buf);
  return ret;
}

static gboolean
morok_encoder_sink_event (GstPad *pad, GstObject *parent, GstEvent *event)
{
  MorokEncoder *self = MOROK_ENCODER (parent);
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
        self->s16 = GST_AUDIO_INFO_FORMAT (&info) == GST_AUDIO_FORMAT_S16LE;
        gst_event_unref (event);
        GstCaps *out = gst_caps_from_string ("other/tensors, format = (string) flexible, "
                                             "framerate = (fraction) 0/1");
        gboolean ok = gst_pad_push_event (self->srcpad, gst_event_new_caps (out));
        gst_caps_unref (out);
        return ok;
      }
    case GST_EVENT_SEGMENT:
      {
        /* what is held belongs to the segment before */
        if (self->gate && finish_utterance (self, TRUE) != GST_FLOW_OK)
          GST_DEBUG_OBJECT (self, "downstream refused the last utterance");
        GstSegment segment;
        gst_event_copy_segment (event, &segment);
        if (self->gate)
          morok_utterance_gate_set_segment (self->gate, &segment);
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
        if (!self->gate)
          return TRUE;
        morok_utterance_gate_gap (self->gate, ts, duration);
        if (finish_utterance (self, FALSE) != GST_FLOW_OK)
          GST_DEBUG_OBJECT (self, "downstream refused an utterance");
        morok_utterance_gate_announce (self->gate, self->srcpad);
        return TRUE;
      }
    case GST_EVENT_EOS:
      /* EOS also runs a batch that is not full, and tells the time up to
       * the end of the audio */
      if (self->gate)
        {
          if (finish_utterance (self, TRUE) != GST_FLOW_OK)
            GST_DEBUG_OBJECT (self, "downstream refused the last utterance");
          morok_utterance_gate_announce (self->gate, self->srcpad);
        }
      break;
    case GST_EVENT_FLUSH_STOP:
      if (self->gate)
        morok_utterance_gate_flush (self->gate);
      break;
    default:
      break;
    }
  return gst_pad_event_default (pad, parent, event);
}

static gboolean
morok_encoder_src_query (GstPad *pad, GstObject *parent, GstQuery *query)
{
  MorokEncoder *self = MOROK_ENCODER (parent);
  if (GST_QUERY_TYPE (query) == GST_QUERY_LATENCY)
    {
      if (!gst_pad_peer_query (self->sinkpad, query))
        return FALSE;
      gboolean live;
      GstClockTime min, max;
      gst_query_parse_latency (query, &live, &min, &max);
      /* an utterance is output when its batch is full: its own audio, up
       * to max-duration, and that of max-batch - 1 more after it */
      GST_OBJECT_LOCK (self);
      GstClockTime ours = (GstClockTime) (self->max_duration * self->max_batch * GST_SECOND);
      GST_OBJECT_UNLOCK (self);
      gst_query_set_latency (query, live, min + ours, GST_CLOCK_TIME_IS_VALID (max) ? max + ours : max);
      return TRUE;
    }
  return gst_pad_query_default (pad, parent, query);
}

static GstStateChangeReturn
morok_encoder_change_state (GstElement *element, GstStateChange transition)
{
  MorokEncoder *self = MOROK_ENCODER (element);
  if (transition == GST_STATE_CHANGE_READY_TO_PAUSED)
    {
      if (!prepare (self))
        return GST_STATE_CHANGE_FAILURE;
    }
  GstStateChangeReturn ret = GST_ELEMENT_CLASS (morok_encoder_parent_class)->change_state (element, transition);
  if (transition == GST_STATE_CHANGE_PAUSED_TO_READY)
    release (self);
  return ret;
}

/* ---- properties ---- */

static void
morok_encoder_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  MorokEncoder *self = MOROK_ENCODER (object);
  if (!morok_property_settable (GST_ELEMENT (self), GST_CAT_DEFAULT, pspec))
    return;
  GST_OBJECT_LOCK (self);
  switch (prop_id)
    {
    case PROP_MODEL:
      g_free (self->model);
      self->model = g_value_dup_string (value);
      break;
    case PROP_MAX_DURATION: self->max_duration = g_value_get_double (value); break;
    case PROP_OUTPUT: self->output = g_value_get_enum (value); break;
    case PROP_MAX_BATCH: self->max_batch = g_value_get_uint (value); break;
    case PROP_PRECISION: self->precision = g_value_get_enum (value); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec); break;
    }
  GST_OBJECT_UNLOCK (self);
}

static void
morok_encoder_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  MorokEncoder *self = MOROK_ENCODER (object);
  GST_OBJECT_LOCK (self);
  switch (prop_id)
    {
    case PROP_MODEL: g_value_set_string (value, self->model); break;
    case PROP_MAX_DURATION: g_value_set_double (value, self->max_duration); break;
    case PROP_OUTPUT: g_value_set_enum (value, self->output); break;
    case PROP_MAX_BATCH: g_value_set_uint (value, self->max_batch); break;
    case PROP_PRECISION: g_value_set_enum (value, self->precision); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec); break;
    }
  GST_OBJECT_UNLOCK (self);
}

static void
morok_encoder_finalize (GObject *object)
{
  MorokEncoder *self = MOROK_ENCODER (object);
  release (self);
  g_free (self->model);
  G_OBJECT_CLASS (morok_encoder_parent_class)->finalize (object);
}

static void
morok_encoder_class_init (MorokEncoderClass *klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GST_DEBUG_CATEGORY_INIT (morok_encoder_debug, "morokencoder", 0, "GigaAM encoder on Morok");
  gobject_class->set_property = morok_encoder_set_property;
  gobject_class->get_property = morok_encoder_get_property;
  gobject_class->finalize = morok_encoder_finalize;
  const GParamFlags ready = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY;
  g_object_class_install_property (gobject_class, PROP_MODEL,
      g_param_spec_string ("model", "Model", "GigaAM safetensors file (scripts/gigaam/convert.py)",
                           NULL, ready));
  g_object_class_install_property (gobject_class, PROP_MAX_DURATION,
      g_param_spec_double ("max-duration", "Maximum duration",
                           "Longest utterance (s): the plan's bound on the input length; longer "
                           "audio is cut into utterances of this length",
                           0.1, 600.0, DEFAULT_MAX_DURATION, ready));
  g_object_class_install_property (gobject_class, PROP_OUTPUT,
      g_param_spec_enum ("output", "Output", "What each tensor buffer holds",
                         MOROK_TYPE_ENCODER_OUTPUT, DEFAULT_OUTPUT, ready));
  g_object_class_install_property (gobject_class, PROP_MAX_BATCH,
      g_param_spec_uint ("max-batch", "Maximum batch",
                         "Utterances run together: the plan's bound on the batch; above 1, "
                         "finished utterances wait for the batch to fill (or EOS)",
                         1, MAX_BATCH_LIMIT, DEFAULT_MAX_BATCH, ready));
  g_object_class_install_property (gobject_class, PROP_PRECISION,
      g_param_spec_enum ("precision", "Precision",
                         "Arithmetic of the products with the model's weights",
                         MOROK_TYPE_ENCODER_PRECISION, DEFAULT_PRECISION, ready));
  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_add_static_pad_template (element_class, &src_template);
  gst_element_class_set_static_metadata (element_class, "Morok GigaAM speech encoder",
                                         "Filter/Converter/Audio",
                                         "Encodes each utterance with the GigaAM Conformer compiled "
                                         "by Morok, as NNStreamer flexible tensors",
                                         "Morok developers");
  element_class->change_state = GST_DEBUG_FUNCPTR (morok_encoder_change_state);
  gst_type_mark_as_plugin_api (MOROK_TYPE_ENCODER_OUTPUT, 0);
  gst_type_mark_as_plugin_api (MOROK_TYPE_ENCODER_PRECISION, 0);
}

static void
morok_encoder_init (MorokEncoder *self)
{
  self->max_duration = DEFAULT_MAX_DURATION;
  self->output = DEFAULT_OUTPUT;
  self->max_batch = DEFAULT_MAX_BATCH;
  self->precision = DEFAULT_PRECISION;
  self->sinkpad = gst_pad_new_from_static_template (&sink_template, "sink");
  gst_pad_set_chain_function (self->sinkpad, GST_DEBUG_FUNCPTR (morok_encoder_chain));
  gst_pad_set_event_function (self->sinkpad, GST_DEBUG_FUNCPTR (morok_encoder_sink_event));
  GST_PAD_SET_PROXY_ALLOCATION (self->sinkpad);
  gst_element_add_pad (GST_ELEMENT (self), self->sinkpad);
  self->srcpad = gst_pad_new_from_static_template (&src_template, "src");
  gst_pad_set_query_function (self->srcpad, GST_DEBUG_FUNCPTR (morok_encoder_src_query));
  gst_pad_use_fixed_caps (self->srcpad);
  gst_element_add_pad (GST_ELEMENT (self), self->srcpad);
}
