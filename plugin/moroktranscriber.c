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
 * Offline, the element holds up to `max-batch` × `max-duration` of audio,
 * and then decodes; the LATENCY query adds that and `latency`, the time
 * decoding may take.
 *
 * Live (`mode=auto` with a live upstream, or `mode=live`), it decodes the
 * open utterance every `interval` of audio on a thread of its own, over a
 * window of at most `window` seconds, and pushes each word once it is
 * committed: two decodes in a row agree on it and something follows it,
 * or it started `hold` before the audio's end, or the utterance ended.
 * After each decode an element message `moroktranscriber-interim`
 * (`committed`, `tentative`, `start`, `end`, `words` with a `committed`
 * flag). The LATENCY query adds the hold's delay + interval + latency;
 * `max-observed-delay` keeps the longest delay of a word, and a word later
 * than the pipeline's latency comes with a warning whose details are named
 * `moroktranscriber/excessive-delay` (docs/moroktranscriber.md).
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
#include "transcript-messages.h"
#include "models/gigaam-encoder-jit.h"
#include "models/gigaam-stream.h"
#include "models/live-pace.h"
#include "models/rnnt-decode.h"
#include "models/transcript.h"
#include <math.h>
#include <string.h>

GST_DEBUG_CATEGORY_STATIC (morok_transcriber_debug);
#define GST_CAT_DEFAULT morok_transcriber_debug

#define DEFAULT_OUTPUT MOROK_TRANSCRIBER_OUTPUT_WORD
#define DEFAULT_MODE MOROK_TRANSCRIBER_MODE_AUTO
#define DEFAULT_LATENCY_MS 0 /* measured (live) or OFFLINE_LATENCY_MS */
#define OFFLINE_LATENCY_MS 3000
#define DEFAULT_LATENESS_MS 0
#define DEFAULT_INTERVAL_MS 0 /* from the decode's cost */
#define DEFAULT_HOLD_MS 720
#define DEFAULT_WINDOW 0.0 /* from the decode's cost */
#define MIN_WINDOW 2.0     /* s, the automatic window's range */
#define MAX_WINDOW 6.0
#define FINAL_TRANSCRIPT "rstranscribe/final-transcript"
#define EXCESSIVE_DELAY "moroktranscriber/excessive-delay"

typedef enum
{
  MOROK_TRANSCRIBER_OUTPUT_WORD,
  MOROK_TRANSCRIBER_OUTPUT_UTTERANCE,
} MorokTranscriberOutput;

typedef enum
{
  MOROK_TRANSCRIBER_MODE_AUTO,
  MOROK_TRANSCRIBER_MODE_OFFLINE,
  MOROK_TRANSCRIBER_MODE_LIVE,
} MorokTranscriberMode;

enum
{
  PROP_0,
  PROP_OUTPUT,
  PROP_MODE,
  PROP_LATENCY,
  PROP_LATENESS,
  PROP_MAX_OBSERVED_DELAY,
  PROP_INTERVAL,
  PROP_HOLD,
  PROP_WINDOW,
  N_PROPS
};

static GParamSpec *props[N_PROPS];

static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE (
    "src", GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS ("text/x-raw, format = (string) utf8"));

struct _MorokTranscriber
{
  MorokUtteranceElement parent;

  /* properties, guarded by the object lock */
  MorokTranscriberOutput output;
  MorokTranscriberMode mode;
  guint latency_ms, lateness_ms, interval_ms, hold_ms;
  gdouble window;
  guint max_observed_delay_ms;

  /* prepared on READY -> PAUSED */
  MorokGigaAm *gigaam;
  GigaAmCtcJit *ctc;         /* CTC models */
  GigaAmRnntJit *rnnt;       /* RNN-T models: the joint's encoder half */
  MorokRnntDecoder *decoder; /* RNN-T models: greedy, max-batch rows */
  MorokCtcToken *tokens;     /* CTC: [encoded frames of max-duration] */
  MorokTranscriberOutput prepared_output;

  /* live mode: made by the first live LATENCY query or live_start, then
   * run by the worker thread alone */
  GMutex live_lock; /* making the stream and measuring it */
  MorokGigaAmStream *stream;
  gint64 decode_ns;                               /* the slowest timed decode of a whole window */
  gint64 window_samples;                          /* the window, chosen or set */
  GstClockTime interval, hold, latency, lateness; /* in force */
  guint64 serial;                                 /* the utterance the words below belong to */
  GArray *words;            /* MorokTimedWord: its committed words (texts owned) */
  GstClockTime late_warned; /* the largest delay warned about */
};

G_DEFINE_TYPE (MorokTranscriber, morok_transcriber, MOROK_TYPE_UTTERANCE_ELEMENT);
GST_ELEMENT_REGISTER_DEFINE (moroktranscriber, "moroktranscriber", GST_RANK_NONE,
                             MOROK_TYPE_TRANSCRIBER);

#define MOROK_TYPE_TRANSCRIBER_MODE (morok_transcriber_mode_get_type ())
static GType
morok_transcriber_mode_get_type (void)
{
  static GType type;
  static const GEnumValue values[] = {
    { MOROK_TRANSCRIBER_MODE_AUTO, "Live when upstream is live, else offline", "auto" },
    { MOROK_TRANSCRIBER_MODE_OFFLINE, "Each utterance decoded once it is complete", "offline" },
    { MOROK_TRANSCRIBER_MODE_LIVE,
      "Utterances decoded while they grow, words committed as they "
      "become stable",
      "live" },
    { 0, NULL, NULL },
  };
  if (g_once_init_enter (&type))
    g_once_init_leave (&type, g_enum_register_static ("MorokTranscriberMode", values));
  return type;
}

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
  /* a LATENCY query may be timing decodes on another thread */
  g_mutex_lock (&self->live_lock);
  g_clear_pointer (&self->stream, morok_gigaam_stream_free);
  if (self->words)
    g_array_set_size (self->words, 0);
  self->serial = 0;
  self->decode_ns = self->window_samples = 0;
  g_clear_pointer (&self->ctc, gigaam_ctc_jit_free);
  g_clear_pointer (&self->rnnt, gigaam_rnnt_jit_free);
  g_clear_pointer (&self->decoder, morok_rnnt_decoder_free);
  g_clear_pointer (&self->tokens, g_free);
  g_clear_pointer (&self->gigaam, morok_gigaam_unref);
  g_mutex_unlock (&self->live_lock);
}

static MorokUtterancePlan
morok_transcriber_read_settings (MorokUtteranceElement *element)
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

/* After an utterance's output: a GAP up to its @end, the final-transcript
 * event, and its message. */
static void
end_utterance (MorokTranscriber *self, const char *text, const MorokTimedWord *words, guint n,
               GstClockTime start, GstClockTime end)
{
  MorokUtteranceElement *element = MOROK_UTTERANCE_ELEMENT (self);
  morok_utterance_element_push_gap (element, end);
  GstStructure *final = gst_structure_new_empty (FINAL_TRANSCRIPT);
  morok_utterance_element_push_event (element,
                                      gst_event_new_custom (GST_EVENT_CUSTOM_DOWNSTREAM, final));
  gst_element_post_message (
      GST_ELEMENT (self),
      gst_message_new_element (GST_OBJECT (self),
                               morok_transcript_structure (text, words, n, start, end)));
}

/* Pushes the words (or the text) of utterance @utt, then ends it. */
static GstFlowReturn
push_transcript (MorokTranscriber *self, const MorokUtterance *utt, const MorokTranscript *tr)
{
  MorokUtteranceElement *element = MOROK_UTTERANCE_ELEMENT (self);
  GstClockTime start = utt->pts;
  GstClockTime end = start + gst_util_uint64_scale_int (utt->n, GST_SECOND, MOROK_UTTERANCE_RATE);
  GST_DEBUG_OBJECT (self, "%" GST_TIME_FORMAT " - %" GST_TIME_FORMAT ": \"%s\", %u words",
                    GST_TIME_ARGS (start), GST_TIME_ARGS (end), tr->text, tr->n_words);
  g_autofree MorokTimedWord *words = g_new (MorokTimedWord, MAX (tr->n_words, 1));
  for (guint k = 0; k < tr->n_words; k++)
    words[k] = (MorokTimedWord){ tr->words[k].text, morok_time_in (start, tr->words[k].start),
                                 morok_time_in (start, tr->words[k].end) };
  GstFlowReturn ret = GST_FLOW_OK;
  if (self->prepared_output == MOROK_TRANSCRIBER_OUTPUT_WORD)
    for (guint k = 0; k < tr->n_words && ret == GST_FLOW_OK; k++)
      ret = morok_utterance_element_push (
          element, morok_text_buffer (words[k].text, words[k].start, words[k].end));
  else if (tr->text[0] != '\0')
    ret = morok_utterance_element_push (element, morok_text_buffer (tr->text, start, end));
  if (ret == GST_FLOW_OK)
    end_utterance (self, tr->text, words, tr->n_words, start, end);
  return ret;
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
  return proj
                 && morok_rnnt_decoder_run (self->decoder, proj->data, proj->shape[1], frames,
                                            count, error)
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
      g_autoptr (MorokTranscript) tr = morok_transcript_new (
          tokens, n_tokens, &vocab, morok_gigaam_frame_seconds (self->gigaam));
      ret = push_transcript (self, &utts[i], tr);
    }
  return ret;
}

/* ---- live mode ---- */

static gint64
to_samples (GstClockTime t)
{
  return (gint64) gst_util_uint64_scale (t, MOROK_UTTERANCE_RATE, GST_SECOND);
}

static guint64
fastest_of (const guint64 took[4])
{
  return MIN (took[1], MIN (took[2], took[3]));
}

/* Times decodes of @n samples of silence with @st and, when @half, of
 * their first half (the budget rule's cost of a second), in turns, so that
 * both meet the same moments of a machine whose speed moves: three runs
 * of each after a first that warms the caches. The whole's fastest,
 * median and slowest into @out (a live decode comes after a pause and
 * meets the machine's slow moments as well as its fast ones: the runs
 * sample them), the fastest half into out->half_ns (0: not timed); FALSE
 * with @error. */
static gboolean
time_decodes (MorokTranscriber *self, MorokGigaAmStream *st, gint64 n, gboolean half,
              MorokLiveCost *out, GError **error)
{
  g_autofree float *silence = g_new0 (float, n);
  guint64 took[2][4] = { { 0 } };
  for (int run = 0; run < 4; run++)
    for (int h = 0; h <= half; h++)
      {
        gint64 t0 = g_get_monotonic_time ();
        gboolean more;
        if (!morok_gigaam_stream_decode (st, silence, h ? n / 2 : n, FALSE, &more, error))
          return FALSE;
        took[h][run] = MAX (g_get_monotonic_time () - t0, 1) * GST_USECOND;
        morok_gigaam_stream_reset (st);
      }
  GST_DEBUG_OBJECT (self,
                    "decodes of %.2f s timed: %.1f, then %.1f %.1f %.1f ms; of half: %.1f, "
                    "then %.1f %.1f %.1f ms",
                    n / (double) MOROK_UTTERANCE_RATE, took[0][0] / 1e6, took[0][1] / 1e6,
                    took[0][2] / 1e6, took[0][3] / 1e6, took[1][0] / 1e6, took[1][1] / 1e6,
                    took[1][2] / 1e6, took[1][3] / 1e6);
  out->fastest_ns = fastest_of (took[0]);
  out->slowest_ns = MAX (took[0][1], MAX (took[0][2], took[0][3]));
  out->median_ns = took[0][1] + took[0][2] + took[0][3] - out->fastest_ns - out->slowest_ns;
  out->half_ns = half ? fastest_of (took[1]) : 0;
  return TRUE;
}

/* With live_lock: the stream of the properties' settings, the cost of a
 * decode of a whole window on this machine and the settings it implies;
 * once per prepare. */
static gboolean
ensure_stream (MorokTranscriber *self, GError **error)
{
  if (self->stream)
    return TRUE;
  GST_OBJECT_LOCK (self);
  GstClockTime latency = self->latency_ms * GST_MSECOND, interval = self->interval_ms * GST_MSECOND;
  self->hold = self->hold_ms * GST_MSECOND;
  self->lateness = self->lateness_ms * GST_MSECOND;
  gdouble window = self->window;
  GST_OBJECT_UNLOCK (self);
  gint64 max_samples = morok_gigaam_max_samples (self->gigaam);
  MorokGigaAmStreamSettings settings = {
    .window = MIN ((gint64) (window * MOROK_UTTERANCE_RATE), max_samples),
    .hold = to_samples (self->hold),
  };
  gint64 probed = 0; /* samples of the decode timed for the automatic window */
  MorokLiveCost pace = { 0 };
  gboolean budget = interval == 0; /* the budget rule needs a half timed */
  if (window == 0)
    {
      /* automatic: the longest window, in whole seconds, whose decode keeps
       * the interval at its floor (more left context, fewer errors where it
       * costs no latency), and twice the hold at least */
      gdouble lo = MAX (MIN_WINDOW, ceil (2.0 * self->hold / GST_SECOND)),
              hi = MAX (MAX_WINDOW, lo);
      settings.window = MIN ((gint64) (hi * MOROK_UTTERANCE_RATE), max_samples);
      g_autoptr (MorokGigaAmStream) probe = morok_gigaam_stream_new (
          self->gigaam, self->ctc, self->rnnt, self->decoder, &settings, error);
      probed = MIN ((gint64) (MIN_WINDOW * MOROK_UTTERANCE_RATE), max_samples);
      if (!probe || !time_decodes (self, probe, probed, budget, &pace, error))
        return FALSE;
      settings.window = MIN (
          (gint64) (morok_live_window (pace.median_ns, MIN_WINDOW, lo, hi) * MOROK_UTTERANCE_RATE),
          max_samples);
    }
  self->stream = morok_gigaam_stream_new (self->gigaam, self->ctc, self->rnnt, self->decoder,
                                          &settings, error);
  /* a window of the probed length costs what the probe measured */
  pace.window_s = settings.window / (double) MOROK_UTTERANCE_RATE;
  if (!self->stream
      || (settings.window != probed
          && !time_decodes (self, self->stream, settings.window, budget, &pace, error)))
    {
      g_clear_pointer (&self->stream, morok_gigaam_stream_free);
      return FALSE;
    }
  self->decode_ns = pace.slowest_ns;
  self->window_samples = settings.window;
  self->latency = latency ? latency : morok_live_latency (pace.slowest_ns);
  self->interval = interval ? interval : morok_live_interval (&pace);
  GST_INFO_OBJECT (
      self,
      "live: a decode of the window (%.1f s) takes %.1f/%.1f/%.1f ms (fastest/median/slowest), "
      "of half at fastest %.1f ms (0: not timed); interval %" GST_TIME_FORMAT
      ", hold %" GST_TIME_FORMAT ", latency %" GST_TIME_FORMAT,
      pace.window_s, pace.fastest_ns / 1e6, pace.median_ns / 1e6, pace.slowest_ns / 1e6,
      pace.half_ns / 1e6, GST_TIME_ARGS (self->interval), GST_TIME_ARGS (self->hold),
      GST_TIME_ARGS (self->latency));
  return TRUE;
}

/* What live decoding holds at most: a word is committed at the latest in
 * the first decode after its start is the hold's delay behind the audio's
 * end (decodes come every `interval`; the delay is `hold` counted in the
 * model's frames, morok_gigaam_stream_hold_delay), and may take
 * `latency`. The buffer that brings the audio of that decode arrives
 * within upstream's latency (a live source's answer counts its buffers'
 * length), so what it carries past the interval adds nothing. */
static GstClockTime
live_total_latency (MorokTranscriber *self)
{
  GstClockTime delay = gst_util_uint64_scale_int_ceil (
      morok_gigaam_stream_hold_delay (self->stream), GST_SECOND, MOROK_UTTERANCE_RATE);
  return delay + self->interval + self->latency;
}

/* Whether to decode live, upstream live or not. */
static gboolean
decodes_live (MorokTranscriber *self, gboolean upstream_live)
{
  GST_OBJECT_LOCK (self);
  MorokTranscriberMode mode = self->mode;
  GST_OBJECT_UNLOCK (self);
  return mode == MOROK_TRANSCRIBER_MODE_LIVE
         || (mode == MOROK_TRANSCRIBER_MODE_AUTO && upstream_live);
}

static GstClockTime
morok_transcriber_live_latency (MorokUtteranceElement *element, gboolean upstream_live)
{
  MorokTranscriber *self = MOROK_TRANSCRIBER (element);
  if (!decodes_live (self, upstream_live))
    return GST_CLOCK_TIME_NONE;
  g_autoptr (GError) error = NULL;
  g_mutex_lock (&self->live_lock);
  gboolean ok = self->gigaam && ensure_stream (self, &error);
  GstClockTime total = ok ? live_total_latency (self) : GST_CLOCK_TIME_NONE;
  g_mutex_unlock (&self->live_lock);
  if (!ok && error)
    GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS, ("Cannot decode live: %s", error->message),
                       (NULL));
  return total;
}

static gint64
morok_transcriber_live_start (MorokUtteranceElement *element, gboolean upstream_live)
{
  MorokTranscriber *self = MOROK_TRANSCRIBER (element);
  if (!decodes_live (self, upstream_live))
    return 0;
  g_autoptr (GError) error = NULL;
  g_mutex_lock (&self->live_lock);
  gboolean ok = ensure_stream (self, &error);
  g_mutex_unlock (&self->live_lock);
  if (!ok)
    {
      GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS, ("Cannot decode live: %s", error->message),
                         (NULL));
      return 0;
    }
  morok_gigaam_stream_reset (self->stream);
  self->serial = 0;
  self->late_warned = 0;
  GST_OBJECT_LOCK (self);
  self->max_observed_delay_ms = 0;
  GST_OBJECT_UNLOCK (self);
  morok_utterance_element_set_live_shift (element, self->lateness);
  return MAX (to_samples (self->interval), 1);
}

/* A word ready to leave now: its delay, max-observed-delay, and a warning
 * when that is past the pipeline's latency. */
static void
morok_transcriber_live_ready (MorokUtteranceElement *element, GstBuffer *buf)
{
  MorokTranscriber *self = MOROK_TRANSCRIBER (element);
  GstClockTime pts = GST_BUFFER_PTS (buf);
  GstClockTime now = morok_utterance_element_now (element);
  GstClockTime at = morok_utterance_element_running_time (element, pts);
  if (!GST_CLOCK_TIME_IS_VALID (now) || !GST_CLOCK_TIME_IS_VALID (at))
    return;
  GstClockTime delay = now > at ? now - at : 0;
  guint ms = (guint) MIN (delay / GST_MSECOND, G_MAXUINT);
  GST_OBJECT_LOCK (self);
  gboolean grew = ms > self->max_observed_delay_ms;
  if (grew)
    self->max_observed_delay_ms = ms;
  GST_OBJECT_UNLOCK (self);
  if (grew)
    g_object_notify_by_pspec (G_OBJECT (self), props[PROP_MAX_OBSERVED_DELAY]);
  GstClockTime allowed = morok_utterance_element_deadline_latency (element);
  if (GST_CLOCK_TIME_IS_VALID (allowed) && delay > allowed && delay > self->late_warned)
    {
      self->late_warned = delay;
      g_autoptr (GError) warning
          = g_error_new (GST_STREAM_ERROR, GST_STREAM_ERROR_FAILED,
                         "A word left %" G_GUINT64_FORMAT
                         " ms after its time, past the pipeline's latency of %" G_GUINT64_FORMAT
                         " ms: the machine does not keep up",
                         delay / GST_MSECOND, allowed / GST_MSECOND);
      g_autofree char *debug = g_strdup_printf ("raise latency (now %" G_GUINT64_FORMAT
                                                " ms) or interval, or lower window",
                                                self->latency / GST_MSECOND);
      GstStructure *details = gst_structure_new (EXCESSIVE_DELAY, "delay", G_TYPE_UINT64, delay,
                                                 "latency", G_TYPE_UINT64, allowed, NULL);
      GST_WARNING_OBJECT (self, "%s", warning->message);
      gst_element_post_message (
          GST_ELEMENT (self),
          gst_message_new_warning_with_details (GST_OBJECT (self), warning, debug, details));
    }
}

/* The text of @n tokens forming one word (NULL when they spell none), its
 * start and end in seconds into the utterance. (transfer full) */
static char *
word_of (MorokTranscriber *self, const MorokCtcToken *tokens, guint n, double *start, double *end)
{
  MorokVocabulary vocab;
  morok_gigaam_vocabulary (self->gigaam, &vocab);
  g_autoptr (MorokTranscript) tr
      = morok_transcript_new (tokens, n, &vocab, morok_gigaam_frame_seconds (self->gigaam));
  if (tr->n_words == 0)
    return NULL;
  *start = tr->words[0].start;
  *end = tr->words[tr->n_words - 1].end;
  return g_strdup (g_strstrip (tr->text));
}

/* Pushes (output=word) and keeps the words the last decode committed. */
static GstFlowReturn
push_committed (MorokTranscriber *self, const MorokLiveUtterance *utt)
{
  const MorokStreamCommit *sc = morok_gigaam_stream_commit (self->stream);
  GstClockTime base = utt->pts + self->lateness;
  GstFlowReturn ret = GST_FLOW_OK;
  for (guint w = 0; w < morok_stream_commit_n_words (sc) && ret == GST_FLOW_OK; w++)
    {
      guint n;
      const MorokCtcToken *tokens = morok_stream_commit_word (sc, w, &n);
      double start, end;
      char *text = word_of (self, tokens, n, &start, &end);
      if (!text)
        continue;
      MorokTimedWord word = { text, morok_time_in (base, start), morok_time_in (base, end) };
      GST_LOG_OBJECT (self, "commits \"%s\" at frame %" G_GINT64_FORMAT, text, tokens[0].frame);
      g_array_append_val (self->words, word);
      if (self->prepared_output != MOROK_TRANSCRIBER_OUTPUT_WORD)
        continue;
      ret = morok_utterance_element_push (MOROK_UTTERANCE_ELEMENT (self),
                                          morok_text_buffer (text, word.start, word.end));
    }
  return ret;
}

/* GST_DEBUG=moroktranscriber:6 shows each decode's tentative tokens as
 * text@frame: what the commit rules saw. */
static void
log_tentative (MorokTranscriber *self, const MorokCtcToken *tokens, guint k, gint64 n,
               const MorokVocabulary *vocab)
{
  if (gst_debug_category_get_threshold (morok_transcriber_debug) < GST_LEVEL_LOG)
    return;
  g_autoptr (GString) s = g_string_new (NULL);
  for (guint i = 0; i < k; i++)
    g_string_append_printf (s, " %s@%" G_GINT64_FORMAT,
                            tokens[i].id < vocab->n_tokens ? vocab->tokens[tokens[i].id] : "?",
                            tokens[i].frame);
  GST_LOG_OBJECT (self, "decode of %.3f s: commit frame %" G_GINT64_FORMAT ", tentative%s",
                  n / (double) MOROK_UTTERANCE_RATE,
                  morok_stream_commit_frame (morok_gigaam_stream_commit (self->stream)), s->str);
}

/* The interim message after a decode of @utt's first @n samples. */
static void
post_interim (MorokTranscriber *self, const MorokLiveUtterance *utt, gint64 n)
{
  const MorokStreamCommit *sc = morok_gigaam_stream_commit (self->stream);
  GstClockTime base = utt->pts + self->lateness;
  guint k;
  const MorokCtcToken *tokens = morok_stream_commit_tentative (sc, &k);
  MorokVocabulary vocab;
  morok_gigaam_vocabulary (self->gigaam, &vocab);
  log_tentative (self, tokens, k, n, &vocab);
  g_autoptr (MorokTranscript) tr
      = morok_transcript_new (tokens, k, &vocab, morok_gigaam_frame_seconds (self->gigaam));
  g_autofree MorokTimedWord *tentative = g_new (MorokTimedWord, MAX (tr->n_words, 1));
  for (guint i = 0; i < tr->n_words; i++)
    tentative[i] = (MorokTimedWord){ tr->words[i].text, morok_time_in (base, tr->words[i].start),
                                     morok_time_in (base, tr->words[i].end) };
  GstStructure *s = morok_interim_structure (
      (MorokTimedWord *) self->words->data, self->words->len, tentative, tr->n_words,
      g_strstrip (tr->text), base,
      base + gst_util_uint64_scale_int (n, GST_SECOND, MOROK_UTTERANCE_RATE));
  gst_element_post_message (GST_ELEMENT (self), gst_message_new_element (GST_OBJECT (self), s));
}

static void
clear_word (gpointer word)
{
  g_free (((MorokTimedWord *) word)->text);
}

/* On the worker thread: decodes the first @n samples of @utt (all of it
 * when @final), pushes the words it commits, posts the interim message,
 * and at the end of the utterance what offline decoding sends. */
static GstFlowReturn
morok_transcriber_live_decode (MorokUtteranceElement *element, const MorokLiveUtterance *utt,
                               gint64 n, gboolean final)
{
  MorokTranscriber *self = MOROK_TRANSCRIBER (element);
  if (utt->serial != self->serial)
    {
      morok_gigaam_stream_reset (self->stream);
      g_array_set_size (self->words, 0);
      self->serial = utt->serial;
    }
  GstFlowReturn ret = GST_FLOW_OK;
  for (gboolean more = TRUE; more && ret == GST_FLOW_OK;)
    {
      g_autoptr (GError) error = NULL;
      gint64 t0 = g_get_monotonic_time ();
      if (!morok_gigaam_stream_decode (self->stream, utt->samples, n, final, &more, &error))
        {
          GST_ELEMENT_ERROR (self, STREAM, FAILED, (NULL),
                             ("transcribing failed: %s", error->message));
          return GST_FLOW_ERROR;
        }
      /* against the decode timed at the start, which interval and latency follow */
      GST_DEBUG_OBJECT (self, "decode of %.3f s%s took %.1f ms (timed at the start: up to %.1f ms)",
                        n / (double) MOROK_UTTERANCE_RATE, final ? " (final)" : "",
                        (g_get_monotonic_time () - t0) / 1e3, self->decode_ns / 1e6);
      ret = push_committed (self, utt);
      if (ret == GST_FLOW_OK)
        ret = morok_utterance_element_flow (element); /* no more windows once flushing */
    }
  if (ret != GST_FLOW_OK)
    return ret;
  post_interim (self, utt, n);
  GstClockTime base = utt->pts + self->lateness;
  const MorokStreamCommit *sc = morok_gigaam_stream_commit (self->stream);
  /* nothing comes before the first frame not settled */
  morok_utterance_element_push_gap (
      element, morok_time_in (base, morok_stream_commit_settled (sc)
                                        * morok_gigaam_frame_seconds (self->gigaam)));
  if (!final)
    return GST_FLOW_OK;
  GstClockTime end = base + gst_util_uint64_scale_int (n, GST_SECOND, MOROK_UTTERANCE_RATE);
  g_autofree char *text
      = morok_timed_words_join ((MorokTimedWord *) self->words->data, self->words->len);
  if (self->prepared_output == MOROK_TRANSCRIBER_OUTPUT_UTTERANCE && text[0] != '\0')
    ret = morok_utterance_element_push (element, morok_text_buffer (text, base, end));
  if (ret == GST_FLOW_OK)
    end_utterance (self, text, (MorokTimedWord *) self->words->data, self->words->len, base, end);
  return ret;
}

/* Called with the object lock. */
static GstClockTime
morok_transcriber_extra_latency (MorokUtteranceElement *element)
{
  guint ms = MOROK_TRANSCRIBER (element)->latency_ms;
  return (ms ? ms : OFFLINE_LATENCY_MS) * GST_MSECOND;
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
    case PROP_MODE: self->mode = g_value_get_enum (value); break;
    case PROP_LATENCY: self->latency_ms = g_value_get_uint (value); break;
    case PROP_LATENESS: self->lateness_ms = g_value_get_uint (value); break;
    case PROP_INTERVAL: self->interval_ms = g_value_get_uint (value); break;
    case PROP_HOLD: self->hold_ms = g_value_get_uint (value); break;
    case PROP_WINDOW: self->window = g_value_get_double (value); break;
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
    case PROP_MODE: g_value_set_enum (value, self->mode); break;
    case PROP_LATENCY: g_value_set_uint (value, self->latency_ms); break;
    case PROP_LATENESS: g_value_set_uint (value, self->lateness_ms); break;
    case PROP_MAX_OBSERVED_DELAY: g_value_set_uint (value, self->max_observed_delay_ms); break;
    case PROP_INTERVAL: g_value_set_uint (value, self->interval_ms); break;
    case PROP_HOLD: g_value_set_uint (value, self->hold_ms); break;
    case PROP_WINDOW: g_value_set_double (value, self->window); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec); break;
    }
  GST_OBJECT_UNLOCK (self);
}

static void
morok_transcriber_finalize (GObject *object)
{
  MorokTranscriber *self = MOROK_TRANSCRIBER (object);
  G_OBJECT_CLASS (morok_transcriber_parent_class)->finalize (object);
  g_array_unref (self->words);
  g_mutex_clear (&self->live_lock);
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
  gobject_class->finalize = morok_transcriber_finalize;
  props[PROP_OUTPUT] = g_param_spec_enum ("output", "Output", "What each text buffer holds",
                                          MOROK_TYPE_TRANSCRIBER_OUTPUT, DEFAULT_OUTPUT, ready);
  props[PROP_MODE] = g_param_spec_enum (
      "mode", "Mode",
      "Offline: each utterance decoded once complete; live: decoded as it grows, "
      "committed words pushed at once and interim results posted",
      MOROK_TYPE_TRANSCRIBER_MODE, DEFAULT_MODE, ready);
  props[PROP_LATENCY] = g_param_spec_uint (
      "latency", "Latency",
      "Time (ms) decoding may take beyond the audio the element holds, added to the LATENCY "
      "answer. 0: live, twice the slowest of the decodes of the window timed at the start (at "
      "least 50 ms); "
      "offline, 3000",
      0, G_MAXUINT32 / 1000, DEFAULT_LATENCY_MS, ready);
  props[PROP_LATENESS] = g_param_spec_uint (
      "lateness", "Lateness",
      "Live: the words' timestamps are this much (ms) later than their audio, so that a "
      "transcription that cannot keep up still meets its deadlines",
      0, G_MAXUINT32 / 1000, DEFAULT_LATENESS_MS, ready);
  props[PROP_MAX_OBSERVED_DELAY] = g_param_spec_uint (
      "max-observed-delay", "Maximum observed delay",
      "Live: the longest time (ms) from a word's running time to its being ready to push, since "
      "PAUSED",
      0, G_MAXUINT, 0, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  props[PROP_INTERVAL] = g_param_spec_uint (
      "interval", "Interval",
      "Live: audio (ms) between two decodes of a growing utterance. 0: from the measured decode, "
      "the shorter of nine decodes and the interval at which decoding costs 7 times the "
      "offline decoding (at least twice the slowest decode), at least 100 ms",
      0, 10000, DEFAULT_INTERVAL_MS, ready);
  props[PROP_HOLD] = g_param_spec_uint (
      "hold", "Hold",
      "Live: the longest (ms) from a word's start until it is committed, stable or not", 40, 10000,
      DEFAULT_HOLD_MS, ready);
  props[PROP_WINDOW] = g_param_spec_double (
      "window", "Window",
      "Live: the most audio (s) one decode covers, the utterance's end and the left context "
      "before it (at least twice hold; at most max-duration). 0: the longest of 2 to 6 s, in "
      "whole seconds, whose decode takes at most a ninth of 100 ms as measured at the start, "
      "and at least twice hold",
      0.0, 600.0, DEFAULT_WINDOW, ready);
  g_object_class_install_properties (gobject_class, N_PROPS, props);
  gst_element_class_add_static_pad_template (element_class, &src_template);
  gst_element_class_set_static_metadata (element_class, "Morok GigaAM speech transcriber",
                                         "Audio/Text/Filter",
                                         "Transcribes each utterance with GigaAM (CTC or RNN-T) "
                                         "compiled by Morok, as timed words or utterances",
                                         "Morok developers");
  utterance_class->read_settings = morok_transcriber_read_settings;
  utterance_class->open = morok_transcriber_open;
  utterance_class->release = morok_transcriber_release;
  utterance_class->run = morok_transcriber_run;
  utterance_class->extra_latency = morok_transcriber_extra_latency;
  utterance_class->live_start = morok_transcriber_live_start;
  utterance_class->live_decode = morok_transcriber_live_decode;
  utterance_class->live_latency = morok_transcriber_live_latency;
  utterance_class->live_ready = morok_transcriber_live_ready;
  utterance_class->debug_category = morok_transcriber_debug;
  gst_type_mark_as_plugin_api (MOROK_TYPE_TRANSCRIBER_OUTPUT, 0);
  gst_type_mark_as_plugin_api (MOROK_TYPE_TRANSCRIBER_MODE, 0);
}

static void
morok_transcriber_init (MorokTranscriber *self)
{
  self->output = DEFAULT_OUTPUT;
  self->mode = DEFAULT_MODE;
  self->latency_ms = DEFAULT_LATENCY_MS;
  self->lateness_ms = DEFAULT_LATENESS_MS;
  self->interval_ms = DEFAULT_INTERVAL_MS;
  self->hold_ms = DEFAULT_HOLD_MS;
  self->window = DEFAULT_WINDOW;
  g_mutex_init (&self->live_lock);
  self->words = g_array_new (FALSE, FALSE, sizeof (MorokTimedWord));
  g_array_set_clear_func (self->words, clear_word);
}
