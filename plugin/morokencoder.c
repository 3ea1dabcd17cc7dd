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
 * The model (a GigaAM model folder as downloaded, or a converted file; see
 * docs/gigaam-model.md) is loaded
 * and its plan prepared on READY→PAUSED (or shared with another element of
 * the same model and settings, docs/morokencoder.md), for `max-batch`
 * utterances of up to `max-duration` (the plan's b and t bounds) in
 * `precision` f32, f16 (needs AVX512-FP16), bf16 or bf16x3 (AMX-BF16 or
 * AVX512-BF16) or int8 (AVX512-VNNI, or any AVX2 CPU); a missing or bad
 * file, a model made for another sample rate than 16 kHz, or a precision the
 * CPU cannot run, is an error message naming the file and the reason.
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 filesrc location=speech.wav ! wavparse ! audioconvert ! audioresample ! \
 *   morokvad remove-silence=true ! morokencoder model=gigaam-v3.safetensors output=log-probs !
 * fakesink
 * ]|
 */
#include "morokencoder.h"
#include "property-guard.h"
#include "tensors-flexible.h"
#include "models/gigaam-encoder-jit.h"
#include <string.h>

GST_DEBUG_CATEGORY_STATIC (morok_encoder_debug);
#define GST_CAT_DEFAULT morok_encoder_debug

#define DEFAULT_OUTPUT MOROK_ENCODER_OUTPUT_ENCODER

typedef enum
{
  MOROK_ENCODER_OUTPUT_ENCODER,
  MOROK_ENCODER_OUTPUT_LOG_PROBS,
} MorokEncoderOutput;

enum
{
  PROP_0,
  PROP_OUTPUT,
};

static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE (
    "src", GST_PAD_SRC, GST_PAD_ALWAYS,
    GST_STATIC_CAPS ("other/tensors, format = (string) flexible, framerate = (fraction) 0/1"));

struct _MorokEncoder
{
  MorokUtteranceElement parent;

  /* properties, guarded by the object lock */
  MorokEncoderOutput output;

  /* prepared on READY -> PAUSED */
  MorokGigaAm *gigaam;
  GigaAmEncoderJit *encoder;
  GigaAmCtcJit *ctc;
  MorokEncoderOutput prepared_output;
};

G_DEFINE_TYPE (MorokEncoder, morok_encoder, MOROK_TYPE_UTTERANCE_ELEMENT);
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

/* ---- prepare ---- */

static void
morok_encoder_release (MorokUtteranceElement *element)
{
  MorokEncoder *self = MOROK_ENCODER (element);
  g_clear_pointer (&self->encoder, gigaam_encoder_jit_free);
  g_clear_pointer (&self->ctc, gigaam_ctc_jit_free);
  g_clear_pointer (&self->gigaam, morok_gigaam_unref);
}

static MorokUtterancePlan
morok_encoder_read_settings (MorokUtteranceElement *element)
{
  MorokEncoder *self = MOROK_ENCODER (element);
  GST_OBJECT_LOCK (self);
  self->prepared_output = self->output;
  GST_OBJECT_UNLOCK (self);
  return self->prepared_output == MOROK_ENCODER_OUTPUT_LOG_PROBS ? MOROK_UTTERANCE_PLAN_LOG_PROBS
                                                                 : MOROK_UTTERANCE_PLAN_ENCODER;
}

static gboolean
morok_encoder_open (MorokUtteranceElement *element, const MorokUtterancePrototype *proto,
                    GError **error)
{
  MorokEncoder *self = MOROK_ENCODER (element);
  self->gigaam = morok_gigaam_ref (proto->model);
  if (self->prepared_output == MOROK_ENCODER_OUTPUT_LOG_PROBS)
    return (self->ctc = gigaam_ctc_jit_new_context ((GigaAmCtcJit *) proto->plan, error)) != NULL;
  return (self->encoder = gigaam_encoder_jit_new_context ((GigaAmEncoderJit *) proto->plan, error))
         != NULL;
}

/* ---- utterances ---- */

/* Runs the plan on the finished utterances and pushes one tensor each. */
static GstFlowReturn
morok_encoder_run (MorokUtteranceElement *element, const MorokUtterance *utts,
                   const float *const *waves, const gint64 *n, guint count)
{
  MorokEncoder *self = MOROK_ENCODER (element);
  g_autoptr (GError) error = NULL;
  gboolean log_probs = self->prepared_output == MOROK_ENCODER_OUTPUT_LOG_PROBS;
  gboolean ok = log_probs ? gigaam_ctc_jit_run (self->ctc, waves, n, count, &error)
                          : gigaam_encoder_jit_run (self->encoder, waves, n, count, &error);
  const MorokBuffer *out = !ok         ? NULL
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
      GST_BUFFER_DURATION (buf)
          = gst_util_uint64_scale_int (utts[i].n, GST_SECOND, MOROK_UTTERANCE_RATE);
      GST_DEBUG_OBJECT (self,
                        "utterance %u of %u, %" G_GINT64_FORMAT " samples at %" GST_TIME_FORMAT
                        ": [%u, %u]",
                        i + 1, count, utts[i].n, GST_TIME_ARGS (utts[i].pts), rows, cols);
      ret = morok_utterance_element_push (element, buf);
    }
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
    case PROP_OUTPUT: self->output = g_value_get_enum (value); break;
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
    case PROP_OUTPUT: g_value_set_enum (value, self->output); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec); break;
    }
  GST_OBJECT_UNLOCK (self);
}

static void
morok_encoder_class_init (MorokEncoderClass *klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  MorokUtteranceElementClass *utterance_class = MOROK_UTTERANCE_ELEMENT_CLASS (klass);
  GST_DEBUG_CATEGORY_INIT (morok_encoder_debug, "morokencoder", 0, "GigaAM encoder on Morok");
  gobject_class->set_property = morok_encoder_set_property;
  gobject_class->get_property = morok_encoder_get_property;
  g_object_class_install_property (
      gobject_class, PROP_OUTPUT,
      g_param_spec_enum ("output", "Output", "What each tensor buffer holds",
                         MOROK_TYPE_ENCODER_OUTPUT, DEFAULT_OUTPUT,
                         G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY));
  gst_element_class_add_static_pad_template (element_class, &src_template);
  gst_element_class_set_static_metadata (
      element_class, "Morok GigaAM speech encoder", "Filter/Converter/Audio",
      "Encodes each utterance with the GigaAM Conformer compiled "
      "by Morok, as NNStreamer flexible tensors",
      "Morok developers");
  utterance_class->read_settings = morok_encoder_read_settings;
  utterance_class->open = morok_encoder_open;
  utterance_class->release = morok_encoder_release;
  utterance_class->run = morok_encoder_run;
  utterance_class->debug_category = morok_encoder_debug;
  gst_type_mark_as_plugin_api (MOROK_TYPE_ENCODER_OUTPUT, 0);
}

static void
morok_encoder_init (MorokEncoder *self)
{
  self->output = DEFAULT_OUTPUT;
}
