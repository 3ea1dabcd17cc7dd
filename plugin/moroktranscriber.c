/* SPDX-License-Identifier: MIT */
/**
 * SECTION:element-moroktranscriber
 * @title: moroktranscriber
 *
 * Speech to text with GigaAM (CTC or RNN-T, as the model file says),
 * compiled by Morok: 16 kHz mono audio in, `text/x-raw, format=utf8` out.
 * Utterances end where morokencoder's do (a GAP event, as
 * `morokvad remove-silence=true` sends between speech segments, a DISCONT,
 * EOS or `max-duration`), and each is decoded greedily once it is complete.
 *
 * - `output=word` (default): one buffer per word, its text without spaces,
 *   PTS the word's start and duration its length: the utterance's time plus
 *   the word's, in the model's 40 ms frames (the last word may end up to a
 *   frame past the audio, whose last frame it covers);
 * - `output=utterance`: one buffer per utterance with its text, PTS its
 *   first sample, duration its audio (none for an utterance without text).
 *
 * Time without text is covered by GAP events (downstream prerolls, a `tee`
 * flows); timestamps never go back. After each utterance's output comes a
 * custom downstream event `rstranscribe/final-transcript` (an empty
 * structure, as gst-plugins-rs's transcribers send it; `textaccumulate`
 * can drain on it) and an element message `moroktranscriber`:
 *
 * - `text` (string): the utterance's text
 * - `start`, `end` (guint64, ns): the utterance's time (buffer time)
 * - `words` (GstValueArray of GstStructure `word`): `word` (string),
 *   `start`, `end` (guint64, ns), as the word buffers carry them
 *
 * The element holds up to `max-batch` × `max-duration` of audio, and then
 * decodes; the LATENCY query adds that and `latency`, the time decoding
 * may take.
 *
 * The model is loaded and its plans prepared on READY→PAUSED, for
 * `max-batch` utterances of up to `max-duration`, in `precision`; a missing
 * or bad file, a model made for another sample rate than 16 kHz, or caps
 * the element does not take, is an error message naming the file or caps
 * and the reason.
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 -m filesrc location=speech.wav ! wavparse ! audioconvert ! audioresample ! \
 *   morokvad remove-silence=true ! moroktranscriber model=gigaam-v3-e2e-rnnt.safetensors ! \
 *   fakesink dump=true
 * ]|
 */
#include "moroktranscriber.h"
#include "property-guard.h"
#include "models/gigaam-encoder-jit.h"
#include "models/rnnt-decode.h"
#include "models/transcript.h"
#include <math.h>
#include <string.h>

GST_DEBUG_CATEGORY_STATIC (morok_transcriber_debug);
#define GST_CAT_DEFAULT morok_transcriber_debug

#define DEFAULT_OUTPUT MOROK_TRANSCRIBER_OUTPUT_WORD
#define DEFAULT_LATENCY_MS 3000
#define FINAL_TRANSCRIPT "rstranscribe/final-transcript"

typedef enum
{
  MOROK_TRANSCRIBER_OUTPUT_WORD,
  MOROK_TRANSCRIBER_OUTPUT_UTTERANCE,
} MorokTranscriberOutput;

enum
{
  PROP_0,
  PROP_OUTPUT,
  PROP_LATENCY,
};

static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE (
    "src", GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS ("text/x-raw, format = (string) utf8"));

struct _MorokTranscriber
{
  MorokUtteranceElement parent;

  /* properties, guarded by the object lock */
  MorokTranscriberOutput output;
  guint latency_ms;

  /* prepared on READY -> PAUSED */
  MorokGigaAm *gigaam;
  GigaAmCtcJit *ctc;        /* CTC models */
  GigaAmRnntJit *rnnt;      /* RNN-T models: the joint's encoder half */
  MorokRnntDecoder *decoder; /* RNN-T models: greedy, max-batch rows */
  MorokCtcToken *tokens;    /* CTC: [encoded frames of max-duration] */
  MorokTranscriberOutput prepared_output;
};

G_DEFINE_TYPE (MorokTranscriber, morok_transcriber, MOROK_TYPE_UTTERANCE_ELEMENT);
GST_ELEMENT_REGISTER_DEFINE (moroktranscriber, "moroktranscriber", GST_RANK_NONE,
                             MOROK_TYPE_TRANSCRIBER);

#define MOROK_TYPE_TRANSCRIBER_OUTPUT (morok_transcriber_output_get_type ())
static GType
morok_transcriber_output_get_type (void)
{
  static GType type;
  static const GEnumValue values[] = {
    { MOROK_TRANSCRIBER_OUTPUT_WORD, "One buffer per word", "word" },
    { MOROK_TRANSCRIBER_OUTPUT_UTTERANCE, "One buffer per utterance", "utterance" },
    { 0, NULL, NULL },
  };
  if (g_once_init_enter (&type))
    g_once_init_leave (&type, g_enum_register_static ("MorokTranscriberOutput", values));
  return type;
}

/* ---- prepare ---- */

static void
morok_transcriber_release (MorokUtteranceElement *element)
{
  MorokTranscriber *self = MOROK_TRANSCRIBER (element);
  g_clear_pointer (&self->ctc, gigaam_ctc_jit_free);
  g_clear_pointer (&self->rnnt, gigaam_rnnt_jit_free);
  g_clear_pointer (&self->decoder, morok_rnnt_decoder_free);
  g_clear_pointer (&self->tokens, g_free);
  g_clear_pointer (&self->gigaam, morok_gigaam_unref);
}

static MorokUtterancePlan
morok_transcriber_plan (MorokUtteranceElement *element)
{
  MorokTranscriber *self = MOROK_TRANSCRIBER (element);
  GST_OBJECT_LOCK (self);
  self->prepared_output = self->output;
  GST_OBJECT_UNLOCK (self);
  return MOROK_UTTERANCE_PLAN_ASR;
}

static gboolean
morok_transcriber_open (MorokUtteranceElement *element, const MorokUtterancePrototype *proto,
                        GError **error)
{
  MorokTranscriber *self = MOROK_TRANSCRIBER (element);
  MorokGigaAm *model = proto->model;
  self->gigaam = morok_gigaam_ref (model);
  if (proto->decoder)
    return (self->rnnt = gigaam_rnnt_jit_new_context ((GigaAmRnntJit *) proto->plan, error))
           && (self->decoder = morok_rnnt_decoder_new_context (proto->decoder, error));
  self->tokens = g_new (MorokCtcToken,
                        morok_gigaam_encoded_frames (model, morok_gigaam_max_samples (model)));
  return (self->ctc = gigaam_ctc_jit_new_context ((GigaAmCtcJit *) proto->plan, error)) != NULL;
}

/* ---- output ---- */

/* @seconds into the utterance starting at @start. */
static GstClockTime
time_in (GstClockTime start, double seconds)
{
  return start + (GstClockTime) llround (seconds * GST_SECOND);
}

static GstBuffer *
text_buffer (const char *text, GstClockTime pts, GstClockTime end)
{
  GstBuffer *buf = gst_buffer_new_memdup (text, strlen (text));
  GST_BUFFER_PTS (buf) = pts;
  GST_BUFFER_DURATION (buf) = end - pts;
  return buf;
}

/* The element message of an utterance [@start, @end). (transfer full) */
static GstMessage *
transcript_message (MorokTranscriber *self, const MorokTranscript *tr, GstClockTime start,
                    GstClockTime end)
{
  GValue words = G_VALUE_INIT;
  g_value_init (&words, GST_TYPE_ARRAY);
  for (guint k = 0; k < tr->n_words; k++)
    {
      GValue word = G_VALUE_INIT;
      g_value_init (&word, GST_TYPE_STRUCTURE);
      GstStructure *w = gst_structure_new (
          "word", "word", G_TYPE_STRING, tr->words[k].text, "start", G_TYPE_UINT64,
          time_in (start, tr->words[k].start), "end", G_TYPE_UINT64,
          time_in (start, tr->words[k].end), NULL);
      g_value_take_boxed (&word, w);
      gst_value_array_append_and_take_value (&words, &word);
    }
  GstStructure *s = gst_structure_new ("moroktranscriber", "text", G_TYPE_STRING, tr->text,
                                       "start", G_TYPE_UINT64, start, "end", G_TYPE_UINT64, end,
                                       NULL);
  gst_structure_take_value (s, "words", &words);
  return gst_message_new_element (GST_OBJECT (self), s);
}

/* Pushes the words (or the text) of utterance @utt, a GAP up to its end,
 * the final-transcript event, and posts its message. */
static GstFlowReturn
push_transcript (MorokTranscriber *self, const MorokUtterance *utt, const MorokTranscript *tr)
{
  MorokUtteranceElement *element = MOROK_UTTERANCE_ELEMENT (self);
  GstClockTime start = utt->pts;
  GstClockTime end = start + gst_util_uint64_scale_int (utt->n, GST_SECOND, MOROK_UTTERANCE_RATE);
  GST_DEBUG_OBJECT (self, "%" GST_TIME_FORMAT " - %" GST_TIME_FORMAT ": \"%s\", %u words",
                    GST_TIME_ARGS (start), GST_TIME_ARGS (end), tr->text, tr->n_words);
  GstFlowReturn ret = GST_FLOW_OK;
  if (self->prepared_output == MOROK_TRANSCRIBER_OUTPUT_WORD)
    for (guint k = 0; k < tr->n_words && ret == GST_FLOW_OK; k++)
      ret = morok_utterance_element_push (
          element, text_buffer (tr->words[k].text, time_in (start, tr->words[k].start),
                                time_in (start, tr->words[k].end)));
  else if (tr->text[0] != '\0')
    ret = morok_utterance_element_push (element, text_buffer (tr->text, start, end));
  if (ret != GST_FLOW_OK)
    return ret;
  morok_utterance_element_tell (element, end);
  GstStructure *final = gst_structure_new_empty (FINAL_TRANSCRIPT);
  gst_pad_push_event (morok_utterance_element_src_pad (element),
                      gst_event_new_custom (GST_EVENT_CUSTOM_DOWNSTREAM, final));
  gst_element_post_message (GST_ELEMENT (self), transcript_message (self, tr, start, end));
  return GST_FLOW_OK;
}

/* ---- utterances ---- */

/* Runs the plan on @count utterances and, for RNN-T, the greedy decoder:
 * the CTC log-probabilities [b, T', C] or the joint's encoder half
 * [b, T', J] (the decoder holds the tokens), or NULL with @error. */
static const MorokBuffer *
encode (MorokTranscriber *self, const float *const *waves, const gint64 *n, const gint64 *frames,
        guint count, GError **error)
{
  if (self->ctc)
    return gigaam_ctc_jit_run (self->ctc, waves, n, count, error)
               ? gigaam_ctc_jit_output (self->ctc, error)
               : NULL;
  if (!gigaam_rnnt_jit_run (self->rnnt, waves, n, count, error))
    return NULL;
  const MorokBuffer *proj = gigaam_rnnt_jit_output (self->rnnt, error);
  return proj && morok_rnnt_decoder_run (self->decoder, proj->data, proj->shape[1], frames, count,
                                         error)
             ? proj
             : NULL;
}

/* Encodes and decodes @count utterances, then pushes each one's text. */
static GstFlowReturn
morok_transcriber_run (MorokUtteranceElement *element, const MorokUtterance *utts,
                       const float *const *waves, const gint64 *n, guint count)
{
  MorokTranscriber *self = MOROK_TRANSCRIBER (element);
  const MorokGigaAmConfig *cfg = morok_gigaam_config (self->gigaam);
  g_autoptr (GError) error = NULL;
  gint64 frames[MOROK_UTTERANCE_MAX_BATCH_LIMIT];
  for (guint i = 0; i < count; i++)
    frames[i] = morok_gigaam_encoded_frames (self->gigaam, n[i]);
  const MorokBuffer *out = encode (self, waves, n, frames, count, &error);
  if (!out)
    {
      GST_ELEMENT_ERROR (self, STREAM, FAILED, (NULL), ("transcribing failed: %s", error->message));
      return GST_FLOW_ERROR;
    }
  MorokVocabulary vocab;
  morok_gigaam_vocabulary (self->gigaam, &vocab);
  GstFlowReturn ret = GST_FLOW_OK;
  for (guint i = 0; i < count && ret == GST_FLOW_OK; i++)
    {
      guint n_tokens;
      const MorokCtcToken *tokens;
      if (self->rnnt)
        tokens = morok_rnnt_decoder_tokens (self->decoder, i, &n_tokens);
      else
        {
          const float *item = (const float *) out->data + (gsize) i * out->shape[1] * out->shape[2];
          n_tokens = morok_ctc_greedy_decode (item, frames[i], cfg->n_classes, cfg->n_classes,
                                              cfg->blank_id, self->tokens);
          tokens = self->tokens;
        }
      g_autoptr (MorokTranscript) tr
          = morok_transcript_new (tokens, n_tokens, &vocab,
                                  morok_gigaam_frame_seconds (self->gigaam));
      ret = push_transcript (self, &utts[i], tr);
    }
  return ret;
}

/* Called with the object lock. */
static GstClockTime
morok_transcriber_extra_latency (MorokUtteranceElement *element)
{
  return MOROK_TRANSCRIBER (element)->latency_ms * GST_MSECOND;
}

/* ---- properties ---- */

static void
morok_transcriber_set_property (GObject *object, guint prop_id, const GValue *value,
                                GParamSpec *pspec)
{
  MorokTranscriber *self = MOROK_TRANSCRIBER (object);
  if (!morok_property_settable (GST_ELEMENT (self), GST_CAT_DEFAULT, pspec))
    return;
  GST_OBJECT_LOCK (self);
  switch (prop_id)
    {
    case PROP_OUTPUT: self->output = g_value_get_enum (value); break;
    case PROP_LATENCY: self->latency_ms = g_value_get_uint (value); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec); break;
    }
  GST_OBJECT_UNLOCK (self);
}

static void
morok_transcriber_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  MorokTranscriber *self = MOROK_TRANSCRIBER (object);
  GST_OBJECT_LOCK (self);
  switch (prop_id)
    {
    case PROP_OUTPUT: g_value_set_enum (value, self->output); break;
    case PROP_LATENCY: g_value_set_uint (value, self->latency_ms); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec); break;
    }
  GST_OBJECT_UNLOCK (self);
}

static void
morok_transcriber_class_init (MorokTranscriberClass *klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  MorokUtteranceElementClass *utterance_class = MOROK_UTTERANCE_ELEMENT_CLASS (klass);
  GST_DEBUG_CATEGORY_INIT (morok_transcriber_debug, "moroktranscriber", 0,
                           "GigaAM speech to text on Morok");
  gobject_class->set_property = morok_transcriber_set_property;
  gobject_class->get_property = morok_transcriber_get_property;
  const GParamFlags ready = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY;
  g_object_class_install_property (gobject_class, PROP_OUTPUT,
      g_param_spec_enum ("output", "Output", "What each text buffer holds",
                         MOROK_TYPE_TRANSCRIBER_OUTPUT, DEFAULT_OUTPUT, ready));
  g_object_class_install_property (gobject_class, PROP_LATENCY,
      g_param_spec_uint ("latency", "Latency",
                         "Time (ms) decoding an utterance may take, advertised in the LATENCY "
                         "query on top of the max-batch x max-duration of audio held",
                         0, G_MAXUINT32 / 1000, DEFAULT_LATENCY_MS, ready));
  gst_element_class_add_static_pad_template (element_class, &src_template);
  gst_element_class_set_static_metadata (element_class, "Morok GigaAM speech transcriber",
                                         "Audio/Text/Filter",
                                         "Transcribes each utterance with GigaAM (CTC or RNN-T) "
                                         "compiled by Morok, as timed words or utterances",
                                         "Morok developers");
  utterance_class->plan = morok_transcriber_plan;
  utterance_class->open = morok_transcriber_open;
  utterance_class->release = morok_transcriber_release;
  utterance_class->run = morok_transcriber_run;
  utterance_class->extra_latency = morok_transcriber_extra_latency;
  utterance_class->src_caps = "text/x-raw, format = (string) utf8";
  utterance_class->debug_category = morok_transcriber_debug;
  gst_type_mark_as_plugin_api (MOROK_TYPE_TRANSCRIBER_OUTPUT, 0);
}

static void
morok_transcriber_init (MorokTranscriber *self)
{
  self->output = DEFAULT_OUTPUT;
  self->latency_ms = DEFAULT_LATENCY_MS;
}
