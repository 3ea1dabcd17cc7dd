/* SPDX-License-Identifier: MIT */
/* One file past 800 lines: the always pads' whole path (caps, chunking,
 * the model's run, the segmenter, remove-silence) reads in order here; the
 * request pads are morokvad-pad.c, the batched rounds vad-rounds.c. */
/**
 * SECTION:element-morokvad
 * @title: morokvad
 *
 * Voice activity detection with Silero VAD (v4, v5, v6) compiled by Morok.
 * The element passes audio through untouched (F32LE or S16LE, 16000 or 8000
 * Hz, any number of channels; the mix of all channels is analysed), runs the
 * model once per 512 samples (256 at 8 kHz) and:
 *
 * - sets `voice_activity` of a #GstAudioLevelMeta on every buffer (adding
 *   the meta, with level 127, when the buffer has none; an existing level is
 *   kept). It is TRUE while the probability is above #GstMorokVad:threshold
 *   and stays TRUE until it falls under #GstMorokVad:negative-threshold.
 * - posts element messages named `morokvad` (#GstMorokVad:post-messages)
 *   when a speech segment starts and ends, with the segmenter of the official
 *   Silero VAD (thresholds, minimum speech and silence, speech pad, maximum
 *   speech duration split at the longest silence). Fields:
 *   - `type` (string): `speech-start` or `speech-end`
 *   - `timestamp` (guint64): buffer time of the segment boundary, ns (for
 *     buffers without PTS: the segment's start, or the last PTS, plus the
 *     samples since)
 *   - `stream-time` (guint64), `running-time` (guint64): the same boundary
 *   - `probability` (gdouble): the chunk probability that decided it
 *   A boundary is only known once the speech that follows (or the silence)
 *   has lasted long enough, so a message comes up to about 0.45 s (at the
 *   defaults) after the audio it names.
 * - keeps the last chunk's probability in #GstMorokVad:probability and
 *   statistics in #GstMorokVad:chunks-processed and #GstMorokVad:mean-execute-us.
 * - with #GstMorokVad:remove-silence, drops the audio outside speech
 *   segments (keeping the speech pad around each; a buffer that holds a
 *   boundary is cut there), sends a GAP event for each stretch of dropped
 *   time, and reports the delay this needs in the LATENCY query: about
 *   0.48 s at the defaults, the segments' audio exactly.
 *   Behind a live source (upstream answers the LATENCY query live, asked
 *   as each stream starts) it holds only the speech pad and a chunk, 62 ms
 *   at the defaults, and says so: audio passes from the first chunk over
 *   the threshold until min-silence of silence has passed, so every
 *   segment's audio passes and some more (a blip too short to be a
 *   segment, the silence closing one); the messages stay the same.
 *
 * The model and its plans are prepared on READY→PAUSED, once per process
 * for all elements whose model files have the same contents and whose
 * MOROK_* settings are the same (each element runs its own context of the
 * shared program; docs/morokvad.md, "Many elements, one model"); a missing
 * or bad model file is an error message naming the file. DISCONT, FLUSH, a
 * new segment, a GAP event and new caps reset the model state and the
 * segmenter (all but FLUSH after closing and outputting what is open); EOS
 * runs the last partial chunk (zero-padded) and closes an open segment.
 *
 * Many streams, one batched plan: besides its always sink/src pair the
 * element has request pads `sink_%u`, each with its `src_%u`. Every such
 * stream has its own caps, segment, segmenter, meta, remove-silence and
 * messages (with a `pad` field, string: the sink pad's name) and its
 * `probability` and `chunks-processed` as pad properties; the chunks that
 * are ready run together through the batched plan of their rate (up to
 * #GstMorokVad:max-streams streams). A chunk waits at most
 * #GstMorokVad:max-wait for the other streams' chunks, which src_%u adds
 * to its latency (docs/morokvad.md, "Many streams, one element").
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 -m filesrc location=speech.wav ! wavparse ! audioconvert ! audioresample !
 * morokvad ! fakesink
 * gst-launch-1.0 -m morokvad name=v filesrc location=a.wav ! wavparse ! v.sink_0 v.src_0 ! fakesink
 * \ filesrc location=b.wav ! wavparse ! v.sink_1 v.src_1 ! fakesink
 * ]|
 */
#include "morokvad.h"
#include "property-guard.h"
#include "model-path.h"
#include "audio-mix.h"
#include "latency-query.h"
#include "non-finite.h"
#include "sample-clock.h"
#include "silence-gate.h"
#include "morokvad-pad.h"
#include "vad-report.h"
#include "jit/morok-jit-registry.h"
#include "models/silero-vad-jit.h"
#include "models/vad-segmenter.h"
#include <gst/audio/audio.h>
#include <math.h>
#include <string.h>

GST_DEBUG_CATEGORY_STATIC (morok_vad_debug);
#define GST_CAT_DEFAULT morok_vad_debug

#define DEFAULT_MODEL NULL
#define DEFAULT_MODEL_VERSION MOROK_VAD_MODEL_V6
#define DEFAULT_THRESHOLD MOROK_VAD_DEFAULT_THRESHOLD
#define DEFAULT_NEG_THRESHOLD MOROK_VAD_DEFAULT_NEG_THRESHOLD
#define DEFAULT_MIN_SPEECH_MS MOROK_VAD_DEFAULT_MIN_SPEECH_MS
#define DEFAULT_MIN_SILENCE_MS MOROK_VAD_DEFAULT_MIN_SILENCE_MS
#define DEFAULT_SPEECH_PAD_MS MOROK_VAD_DEFAULT_SPEECH_PAD_MS
#define DEFAULT_MAX_SPEECH_S 0.0 /* unlimited: the segmenter's INFINITY */
#define DEFAULT_POST_MESSAGES TRUE
#define DEFAULT_REMOVE_SILENCE FALSE
#define DEFAULT_MAX_WAIT_MS 40
#define DEFAULT_MAX_STREAMS 64

typedef enum
{
  MOROK_VAD_MODEL_V4 = 4,
  MOROK_VAD_MODEL_V5 = 5,
  MOROK_VAD_MODEL_V6 = 6,
} MorokVadModelVersion;

enum
{
  PROP_0,
  PROP_MODEL,
  PROP_MODEL_VERSION,
  PROP_THRESHOLD,
  PROP_NEG_THRESHOLD,
  PROP_MIN_SPEECH_MS,
  PROP_MIN_SILENCE_MS,
  PROP_SPEECH_PAD_MS,
  PROP_MAX_SPEECH_S,
  PROP_POST_MESSAGES,
  PROP_REMOVE_SILENCE,
  PROP_MAX_WAIT_MS,
  PROP_MAX_STREAMS,
  PROP_CHUNKS_PROCESSED,
  PROP_MEAN_EXECUTE_US,
  PROP_PROBABILITY,
  PROP_BATCH_ROUNDS,
};

#define VAD_CAPS                                                                                   \
  GST_STATIC_CAPS ("audio/x-raw, format = (string) { F32LE, S16LE }, rate = (int) { 16000, "       \
                   "8000 }, channels = (int) [ 1, MAX ], layout = (string) interleaved")
static GstStaticPadTemplate sink_template
    = GST_STATIC_PAD_TEMPLATE ("sink", GST_PAD_SINK, GST_PAD_ALWAYS, VAD_CAPS);
static GstStaticPadTemplate src_template
    = GST_STATIC_PAD_TEMPLATE ("src", GST_PAD_SRC, GST_PAD_ALWAYS, VAD_CAPS);
/* the streams of the batched plans: each sink_%u with its src_%u */
static GstStaticPadTemplate sink_request_template
    = GST_STATIC_PAD_TEMPLATE ("sink_%u", GST_PAD_SINK, GST_PAD_REQUEST, VAD_CAPS);
static GstStaticPadTemplate src_request_template
    = GST_STATIC_PAD_TEMPLATE ("src_%u", GST_PAD_SRC, GST_PAD_SOMETIMES, VAD_CAPS);

/* One plan per sample rate the model runs: the registry's prototype for
 * the model's contents, rate and options, and this element's context of
 * it, made when caps first ask for the rate. */
typedef struct
{
  guint rate;
  char *key;              /* its key in the registry */
  MorokJitShared *shared; /* the prototype, shared with other elements */
  SileroVadJit *jit;      /* this element's context of it, NULL until used */
  MorokJitRecurrent *rec;
} RatePlan;

struct _MorokVad
{
  GstAudioFilter parent;

  /* properties, guarded by the object lock */
  char *model;
  MorokVadModelVersion model_version;
  gdouble threshold, neg_threshold, max_speech_s;
  guint min_speech_ms, min_silence_ms, speech_pad_ms;
  gboolean post_messages, remove_silence;
  guint max_wait_ms, max_streams;

  /* statistics, guarded by the object lock */
  guint64 chunks;
  gdouble probability; /* of the last chunk */
  gdouble execute_us_total;

  /* prepared in start () */
  RatePlan plans[2];
  guint n_plans;

  /* the rounds of the request pads, per plan (same index): made in start (),
   * freed on PAUSED -> READY once every pad is inactive */
  MorokVadRounds *rounds[2];

  /* streaming state, streaming thread only */
  RatePlan *plan;       /* the plan for the negotiated rate */
  guint chunk, context; /* samples per chunk, context samples */
  float *audio;         /* the plan's input [context | chunk], filled in place */
  guint filled;         /* new samples in audio */
  MorokVadSegmenter *seg;
  MorokVadParams params;
  gint64 samples;           /* analysed since the last reset */
  MorokSampleClock clock;   /* the time of each sample analysed */
  MorokSilenceGate *gate;   /* remove-silence: audio held until it is decided */
  gboolean mode_chosen;     /* remove-silence: the gate's mode is set for this stream */
  gboolean non_finite_told; /* non-finite.h: this stream's warning posted */
  gint64 delay;             /* remove-silence: samples held back */
};

G_DEFINE_TYPE (MorokVad, morok_vad, GST_TYPE_AUDIO_FILTER);
GST_ELEMENT_REGISTER_DEFINE (morokvad, "morokvad", GST_RANK_NONE, MOROK_TYPE_VAD);

#define MOROK_TYPE_VAD_MODEL_VERSION (morok_vad_model_version_get_type ())
static GType
morok_vad_model_version_get_type (void)
{
  static GType type;
  static const GEnumValue values[] = {
    { MOROK_VAD_MODEL_V4, "Silero VAD v4 (legacy)", "v4" },
    { MOROK_VAD_MODEL_V5, "Silero VAD v5", "v5" },
    { MOROK_VAD_MODEL_V6, "Silero VAD v6", "v6" },
    { 0, NULL, NULL },
  };
  if (g_once_init_enter (&type))
    g_once_init_leave (&type, g_enum_register_static ("MorokVadModelVersion", values));
  return type;
}

/* ---- model and plans ---- */

static void
free_plans (MorokVad *self)
{
  for (guint i = 0; i < self->n_plans; i++)
    {
      g_clear_pointer (&self->plans[i].rec, morok_jit_recurrent_free);
      g_clear_pointer (&self->plans[i].jit, silero_vad_jit_free); /* before the prototype */
      g_clear_pointer (&self->plans[i].shared, morok_jit_registry_release);
      g_clear_pointer (&self->plans[i].key, g_free);
    }
  self->n_plans = 0;
  self->plan = NULL;
}

static void
free_rounds (MorokVad *self)
{
  MorokVadRounds *rounds[G_N_ELEMENTS (self->rounds)];
  GST_OBJECT_LOCK (self);
  for (guint i = 0; i < G_N_ELEMENTS (self->rounds); i++)
    rounds[i] = g_steal_pointer (&self->rounds[i]);
  GST_OBJECT_UNLOCK (self);
  for (guint i = 0; i < G_N_ELEMENTS (rounds); i++)
    {
      guint64 n_rounds = 0, n_chunks = 0;
      gdouble us = 0;
      if (rounds[i])
        morok_vad_rounds_counts (rounds[i], &n_rounds, &n_chunks, &us);
      if (n_rounds)
        GST_INFO_OBJECT (self,
                         "request pads at %u Hz: %" G_GUINT64_FORMAT " chunks in %" G_GUINT64_FORMAT
                         " rounds, %.1f us an execute, %.1f us a chunk",
                         morok_vad_rounds_rate (rounds[i]), n_chunks, n_rounds, us / n_rounds,
                         us / n_chunks);
      morok_vad_rounds_free (rounds[i]);
    }
}

/* What the registry needs to make one rate's prototype. */
typedef struct
{
  const char *path;
  MorokSileroVad *vad; /* loaded by the first make, or another rate's prototype's */
  guint rate;
  const MorokPrepareConfig *config;
} MakeData;

static MorokJit *
make_rate_prototype (gpointer data, GError **error)
{
  MakeData *d = data;
  if (!d->vad && !(d->vad = morok_silero_vad_load (d->path, error)))
    return NULL;
  if (!morok_silero_vad_supports_rate (d->vad, d->rate))
    {
      g_set_error (error, MOROK_VAD_ERROR, MOROK_VAD_ERROR_RATE,
                   "%s: the model does not run at %u Hz", d->path, d->rate);
      return NULL;
    }
  guint n_in = morok_silero_vad_input_len (d->vad, d->rate);
  gsize n_state = morok_silero_vad_state_len (d->vad);
  g_autoptr (SileroVadJit) jit = silero_vad_jit_new (morok_silero_vad_ref (d->vad));
  g_autoptr (MorokInputSpec) a = morok_input_spec_f32 (MOROK_SHAPE (1, n_in));
  g_autoptr (MorokInputSpec) s = morok_input_spec_f32 (MOROK_SHAPE ((gint64) n_state));
  if (!silero_vad_jit_prepare_with_config (jit, a, s, d->config, error))
    return NULL;
  return silero_vad_jit_jit (g_steal_pointer (&jit));
}

/* Acquires the prototype of each rate the model runs (16 kHz first: the
 * model of its prototype says which other rates it runs). */
static gboolean
prepare_plans (MorokVad *self, const char *path, GError **error)
{
  static const guint rates[] = { 16000, 8000 };
  g_autofree char *file_key = morok_jit_registry_file_key (path, error);
  if (!file_key)
    return FALSE;
  g_autoptr (MorokPrepareConfig) config = silero_vad_jit_config_from_env ();
  g_autofree char *config_key = morok_prepare_config_key (config);
  MakeData d = { .path = path, .config = config };
  gboolean ok = TRUE;
  for (guint i = 0; ok && i < G_N_ELEMENTS (rates); i++)
    {
      if (self->n_plans > 0)
        {
          MorokSileroVad *vad = silero_vad_jit_model (
              (SileroVadJit *) morok_jit_shared_prototype (self->plans[0].shared));
          if (!morok_silero_vad_supports_rate (vad, rates[i]))
            continue;
          if (!d.vad)
            d.vad = morok_silero_vad_ref (vad);
        }
      g_autofree char *key
          = g_strdup_printf ("silero-vad %s rate=%u %s", file_key, rates[i], config_key);
      d.rate = rates[i];
      RatePlan *p = &self->plans[self->n_plans];
      ok = (p->shared = morok_jit_registry_acquire (key, make_rate_prototype, &d, error)) != NULL;
      if (ok)
        {
          p->key = g_steal_pointer (&key);
          p->rate = rates[i];
          self->n_plans++;
        }
    }
  g_clear_pointer (&d.vad, morok_silero_vad_unref);
  return ok;
}

/* This element's context of @p's prototype and its recurrent driver. */
static gboolean
open_context (RatePlan *p, GError **error)
{
  SileroVadJit *proto = (SileroVadJit *) morok_jit_shared_prototype (p->shared);
  if (!(p->jit = silero_vad_jit_new_context (proto, error)))
    return FALSE;
  if (!(p->rec = silero_vad_jit_recurrent_new (p->jit, error)))
    {
      g_clear_pointer (&p->jit, silero_vad_jit_free);
      return FALSE;
    }
  return TRUE;
}

static gboolean
morok_vad_start (GstBaseTransform *trans)
{
  MorokVad *self = MOROK_VAD (trans);
  g_autoptr (GError) error = NULL;
  self->non_finite_told = FALSE;
  GST_OBJECT_LOCK (self);
  g_autofree char *model = g_strdup (self->model);
  MorokVadModelVersion version = self->model_version;
  guint max_streams = self->max_streams;
  GstClockTime max_wait = self->max_wait_ms * GST_MSECOND;
  GST_OBJECT_UNLOCK (self);

  g_autofree char *path = model ? g_strdup (model) : NULL;
  if (!path)
    {
      g_autofree char *name = g_strdup_printf ("silero_vad_v%d.onnx", version);
      path = morok_model_path_find (name, &error);
    }
  gint64 t0 = g_get_monotonic_time ();
  if (!path || !prepare_plans (self, path, &error))
    {
      GST_ELEMENT_ERROR (self, RESOURCE, OPEN_READ,
                         ("Could not prepare the VAD model %s", path ? path : "(default)"),
                         ("%s", error->message));
      free_plans (self);
      return FALSE;
    }
  gsize scratch,
      bytes = morok_program_context_bytes (
          morok_plan_program (morok_jit_plan (morok_jit_shared_prototype (self->plans[0].shared))),
          &scratch);
  GST_INFO_OBJECT (self,
                   "prepared %s: %u plans in %.1f ms, %" G_GSIZE_FORMAT
                   " context bytes at 16 kHz (%" G_GSIZE_FORMAT " of them scratch)",
                   path, self->n_plans, (g_get_monotonic_time () - t0) / 1e3, bytes, scratch);
  free_rounds (self);
  GST_OBJECT_LOCK (self);
  for (guint i = 0; i < self->n_plans; i++)
    self->rounds[i] = morok_vad_rounds_new (
        silero_vad_jit_model ((SileroVadJit *) morok_jit_shared_prototype (self->plans[i].shared)),
        self->plans[i].rate, max_streams, max_wait, self->plans[i].key);
  GST_OBJECT_UNLOCK (self);
  return TRUE;
}

static gboolean
morok_vad_stop (GstBaseTransform *trans)
{
  MorokVad *self = MOROK_VAD (trans);
  free_plans (self);
  g_clear_pointer (&self->seg, morok_vad_segmenter_free);
  self->audio = NULL;
  morok_silence_gate_reset (self->gate);
  return TRUE;
}

/* ---- stream state ---- */

gboolean
morok_vad_settings (MorokVad *self, guint rate, MorokVadParams *out_params,
                    gboolean *out_remove_silence, GError **error)
{
  GST_OBJECT_LOCK (self);
  morok_vad_params_init (out_params, (gint) rate);
  out_params->threshold = self->threshold;
  out_params->neg_threshold = self->neg_threshold;
  out_params->min_speech_ms = self->min_speech_ms;
  out_params->min_silence_ms = self->min_silence_ms;
  out_params->speech_pad_ms = self->speech_pad_ms;
  out_params->max_speech_s = self->max_speech_s > 0 ? self->max_speech_s : INFINITY;
  if (out_remove_silence)
    *out_remove_silence = self->remove_silence;
  GST_OBJECT_UNLOCK (self);
  return morok_vad_params_check (out_params, error);
}

GstClockTime
morok_vad_hold (MorokVad *self, guint rate, gboolean live)
{
  MorokVadParams params;
  gboolean remove_silence;
  if (!morok_vad_settings (self, rate, &params, &remove_silence, NULL) || !remove_silence)
    return 0;
  return gst_util_uint64_scale_int (morok_silence_gate_hold_len (&params, live), GST_SECOND, rate);
}

static void
reset_stream (MorokVad *self)
{
  if (self->plan)
    morok_jit_recurrent_reset (self->plan->rec);
  if (self->seg)
    morok_vad_segmenter_reset (self->seg);
  if (self->audio)
    memset (self->audio, 0, (self->context + self->chunk) * sizeof (float));
  self->filled = 0;
  self->samples = 0;
  morok_sample_clock_init (&self->clock, self->plan ? self->plan->rate : 0);
  morok_silence_gate_reset (self->gate);
  self->mode_chosen = FALSE;
}

static void finish_stream (MorokVad *self);

static gboolean
morok_vad_setup (GstAudioFilter *filter, const GstAudioInfo *info)
{
  MorokVad *self = MOROK_VAD (filter);
  /* new caps mid-stream: the stream so far ends first, in its own format
   * (downstream gets the new caps after this) */
  if (self->plan && self->seg && self->samples + self->filled > 0)
    finish_stream (self);
  self->plan = NULL;
  for (guint i = 0; i < self->n_plans; i++)
    if (self->plans[i].rate == (guint) GST_AUDIO_INFO_RATE (info))
      self->plan = &self->plans[i];
  if (!self->plan)
    {
      GST_ELEMENT_ERROR (self, STREAM, FORMAT, (NULL),
                         ("the model does not run at %d Hz", GST_AUDIO_INFO_RATE (info)));
      return FALSE;
    }
  g_autoptr (GError) error = NULL;
  if (!self->plan->jit && !open_context (self->plan, &error))
    {
      GST_ELEMENT_ERROR (self, RESOURCE, NO_SPACE_LEFT, (NULL), ("%s", error->message));
      self->plan = NULL;
      return FALSE;
    }
  if (!morok_vad_settings (self, self->plan->rate, &self->params, NULL, &error))
    {
      GST_ELEMENT_ERROR (self, LIBRARY, SETTINGS, (NULL), ("%s", error->message));
      return FALSE;
    }
  g_clear_pointer (&self->seg, morok_vad_segmenter_free);
  self->seg = morok_vad_segmenter_new (&self->params);
  MorokSileroVad *vad = silero_vad_jit_model (self->plan->jit);
  self->chunk = morok_silero_vad_chunk_len (vad, self->plan->rate);
  self->context = morok_silero_vad_context_len (vad, self->plan->rate);
  self->audio = silero_vad_jit_audio_mut (self->plan->jit, NULL)->data; /* prepared: there */
  morok_silence_gate_configure (self->gate, GST_AUDIO_INFO_BPF (info), self->plan->rate,
                                &self->clock);
  reset_stream (self);
  GST_DEBUG_OBJECT (self, "%d Hz, %d channels: chunks of %u samples", self->plan->rate,
                    GST_AUDIO_INFO_CHANNELS (info), self->chunk);
  return TRUE;
}

/* ---- analysis ---- */

/* Tells the gate (remove-silence) of the @n events @ev and posts them. */
static void
report_events (MorokVad *self, const MorokVadEvent *ev, guint n)
{
  gboolean exact = self->remove_silence && !morok_silence_gate_is_live (self->gate);
  MorokVadReportTo to = { GST_ELEMENT (self), NULL, exact ? self->gate : NULL, &self->clock,
                          &GST_BASE_TRANSFORM (self)->segment };
  morok_vad_report_events (&to, ev, n);
}

/* Runs the model on the full chunk, then feeds the segmenter. */
static gboolean
run_chunk (MorokVad *self)
{
  g_autoptr (GError) error = NULL;
  gint64 t0 = g_get_monotonic_time ();
  const float *p = morok_jit_recurrent_step (self->plan->rec, &error);
  if (!p)
    {
      GST_ELEMENT_ERROR (self, STREAM, FAILED, (NULL), ("VAD step failed: %s", error->message));
      return FALSE;
    }
  gint64 t1 = g_get_monotonic_time ();
  float prob = p[0];
  GST_OBJECT_LOCK (self);
  self->chunks++;
  self->execute_us_total += (gdouble) (t1 - t0);
  self->probability = prob;
  GST_OBJECT_UNLOCK (self);
  GST_LOG_OBJECT (self, "chunk at %" G_GINT64_FORMAT ": p = %.4f", self->samples, prob);
  MorokVadEvent ev[MOROK_VAD_EVENTS_MAX];
  guint n = morok_vad_segmenter_push (self->seg, prob, ev, G_N_ELEMENTS (ev));
  self->samples += self->chunk;
  /* the last context samples of this chunk start the next one */
  memmove (self->audio, self->audio + self->chunk, self->context * sizeof (float));
  self->filled = 0;
  report_events (self, ev, n);
  if (self->remove_silence && morok_silence_gate_is_live (self->gate))
    morok_silence_gate_follow (self->gate, self->seg);
  return TRUE;
}

/* Mixes @frames interleaved frames to mono straight into the plan's audio
 * input, running the model each time a chunk is full; the mixes that were
 * not finite are counted into *@non_finite. */
static gboolean
analyse (MorokVad *self, const guint8 *data, gsize frames, const GstAudioInfo *info,
         gsize *non_finite)
{
  guint ch = GST_AUDIO_INFO_CHANNELS (info), bpf = GST_AUDIO_INFO_BPF (info);
  gboolean s16 = GST_AUDIO_INFO_FORMAT (info) == GST_AUDIO_FORMAT_S16LE;
  while (frames > 0)
    {
      gsize n = MIN (frames, self->chunk - self->filled);
      float *dst = self->audio + self->context + self->filled;
      if (s16)
        morok_audio_mix_s16 (dst, data, n, ch);
      else
        *non_finite += morok_audio_mix_f32 (dst, data, n, ch);
      data += n * bpf, frames -= n, self->filled += n;
      if (self->filled == self->chunk && !run_chunk (self))
        return FALSE;
    }
  return TRUE;
}

/* ---- buffers ---- */

static void finish_stream (MorokVad *self);

static GstFlowReturn
morok_vad_submit_input_buffer (GstBaseTransform *trans, gboolean discont, GstBuffer *buf)
{
  MorokVad *self = MOROK_VAD (trans);
  GstAudioFilter *filter = GST_AUDIO_FILTER (trans);
  if (!self->plan)
    {
      gst_buffer_unref (buf);
      return GST_FLOW_NOT_NEGOTIATED;
    }
  GstFlowReturn ret = GST_BASE_TRANSFORM_CLASS (morok_vad_parent_class)
                          ->submit_input_buffer (trans, discont, buf);
  if (ret != GST_FLOW_OK)
    return ret;
  buf = trans->queued_buf;
  if (GST_BUFFER_IS_DISCONT (buf) && self->samples + self->filled > 0)
    {
      /* time jumps: close what is open, output what is held, start afresh */
      GST_DEBUG_OBJECT (self, "discont: resetting the model state");
      finish_stream (self);
      reset_stream (self);
    }
  if (self->remove_silence && !self->mode_chosen)
    {
      /* live or exact mode for the stream now starting */
      self->delay = morok_silence_gate_choose_mode (self->gate, GST_BASE_TRANSFORM_SINK_PAD (self),
                                                    &self->params);
      self->mode_chosen = TRUE;
      GST_DEBUG_OBJECT (self, "%s mode: holding %" G_GINT64_FORMAT " samples back",
                        morok_silence_gate_is_live (self->gate) ? "live" : "exact", self->delay);
    }
  /* a PTS pins the clock; without one, times follow from the samples */
  morok_sample_clock_sync (&self->clock, self->samples + self->filled, GST_BUFFER_PTS (buf),
                           &trans->segment);
  GstMapInfo map;
  if (!gst_buffer_map (buf, &map, GST_MAP_READ))
    return GST_FLOW_ERROR;
  gsize frames = map.size / GST_AUDIO_INFO_BPF (&filter->info), bad = 0;
  gboolean ok = analyse (self, map.data, frames, &filter->info, &bad);
  gst_buffer_unmap (buf, &map);
  morok_non_finite_warn (GST_ELEMENT (self), NULL, bad, frames, GST_BUFFER_PTS (buf),
                         &self->non_finite_told);
  return ok ? GST_FLOW_OK : GST_FLOW_ERROR;
}

static GstFlowReturn
morok_vad_generate_output (GstBaseTransform *trans, GstBuffer **outbuf)
{
  MorokVad *self = MOROK_VAD (trans);
  *outbuf = NULL;
  GstBuffer *buf = trans->queued_buf;
  trans->queued_buf = NULL;
  if (buf)
    {
      buf = gst_buffer_make_writable (buf);
      morok_vad_report_meta (buf, morok_vad_segmenter_speaking (self->seg));
      if (!self->remove_silence)
        {
          *outbuf = buf;
          return GST_FLOW_OK;
        }
      gint64 frames = (gint64) (gst_buffer_get_size (buf)
                                / GST_AUDIO_INFO_BPF (&GST_AUDIO_FILTER (self)->info));
      morok_silence_gate_hold (self->gate, buf, self->samples + self->filled - frames);
    }
  if (!self->remove_silence)
    return GST_FLOW_OK;
  /* what lies further back than the gate's hold is decided */
  return morok_silence_gate_release (self->gate, GST_BASE_TRANSFORM_SRC_PAD (self),
                                     self->samples + self->filled - self->delay);
}

/* EOS: the last partial chunk, zero-padded; close what is open; output
 * everything held. */
static void
finish_stream (MorokVad *self)
{
  if (!self->plan)
    return;
  gint64 total = self->samples + self->filled;
  if (self->filled > 0)
    {
      memset (self->audio + self->context + self->filled, 0,
              (self->chunk - self->filled) * sizeof (float));
      self->filled = self->chunk;
      run_chunk (self);
    }
  MorokVadEvent ev[MOROK_VAD_EVENTS_MAX];
  report_events (self, ev, morok_vad_segmenter_finish (self->seg, total, ev, G_N_ELEMENTS (ev)));
  morok_silence_gate_release (self->gate, GST_BASE_TRANSFORM_SRC_PAD (self), G_MAXINT64);
  self->samples = 0;
}

static gboolean
morok_vad_sink_event (GstBaseTransform *trans, GstEvent *event)
{
  MorokVad *self = MOROK_VAD (trans);
  switch (GST_EVENT_TYPE (event))
    {
    case GST_EVENT_EOS: finish_stream (self); break;
    case GST_EVENT_FLUSH_STOP:
      reset_stream (self);
      self->non_finite_told = FALSE;
      break;
    case GST_EVENT_GAP: /* no audio for a while: as a DISCONT, before the GAP goes on */
    case GST_EVENT_SEGMENT:
      if (self->plan && self->samples + self->filled > 0)
        {
          finish_stream (self);
          reset_stream (self);
        }
      break;
    default: break;
    }
  return GST_BASE_TRANSFORM_CLASS (morok_vad_parent_class)->sink_event (trans, event);
}

static gboolean
morok_vad_query (GstBaseTransform *trans, GstPadDirection direction, GstQuery *query)
{
  MorokVad *self = MOROK_VAD (trans);
  gboolean ret = GST_BASE_TRANSFORM_CLASS (morok_vad_parent_class)->query (trans, direction, query);
  if (ret && GST_QUERY_TYPE (query) == GST_QUERY_LATENCY && direction == GST_PAD_SRC)
    {
      /* the hold of the mode the stream runs in (or will) from this
       * upstream; before caps, what 16 kHz needs */
      gboolean live;
      gst_query_parse_latency (query, &live, NULL, NULL);
      RatePlan *plan = self->plan;
      GstClockTime ours = morok_vad_hold (self, plan ? plan->rate : 16000, live);
      GST_DEBUG_OBJECT (self, "upstream %slive: adding %" GST_TIME_FORMAT " of latency",
                        live ? "" : "not ", GST_TIME_ARGS (ours));
      morok_latency_query_add (query, ours);
    }
  return ret;
}

/* ---- request pads ---- */

MorokVadRounds *
morok_vad_rounds_of (MorokVad *self, guint rate, GError **error)
{
  for (guint i = 0; i < self->n_plans; i++)
    if (self->plans[i].rate == rate && self->rounds[i])
      return self->rounds[i];
  if (self->n_plans)
    g_set_error (error, MOROK_VAD_ERROR, MOROK_VAD_ERROR_RATE, "the model does not run at %u Hz",
                 rate);
  else
    g_set_error (error, MOROK_JIT_ERROR, MOROK_JIT_ERROR_NOT_PREPARED, "no model prepared");
  return NULL;
}

static GstPad *
morok_vad_request_new_pad (GstElement *element, GstPadTemplate *templ, const char *name,
                           const GstCaps *caps)
{
  MorokVad *self = MOROK_VAD (element);
  GST_OBJECT_LOCK (self);
  guint max = self->max_streams;
  GST_OBJECT_UNLOCK (self);
  return morok_vad_pad_request (element, templ, name, max);
}

/* PAUSED -> READY: the chunks waiting in rounds return before the pads
 * deactivate; once all are inactive the streams and rounds go. */
static GstStateChangeReturn
morok_vad_change_state (GstElement *element, GstStateChange transition)
{
  MorokVad *self = MOROK_VAD (element);
  if (transition == GST_STATE_CHANGE_PAUSED_TO_READY)
    morok_vad_pad_foreach (element, morok_vad_pad_unblock);
  GstStateChangeReturn ret
      = GST_ELEMENT_CLASS (morok_vad_parent_class)->change_state (element, transition);
  if (transition == GST_STATE_CHANGE_PAUSED_TO_READY)
    {
      morok_vad_pad_foreach (element, morok_vad_pad_stop);
      free_rounds (self);
    }
  return ret;
}

/* ---- properties ---- */

static void
morok_vad_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  MorokVad *self = MOROK_VAD (object);
  if (!morok_property_settable (GST_ELEMENT (self), GST_CAT_DEFAULT, pspec))
    return;
  GST_OBJECT_LOCK (self);
  switch (prop_id)
    {
    case PROP_MODEL:
      g_free (self->model);
      self->model = g_value_dup_string (value);
      break;
    case PROP_MODEL_VERSION: self->model_version = g_value_get_enum (value); break;
    case PROP_THRESHOLD: self->threshold = g_value_get_double (value); break;
    case PROP_NEG_THRESHOLD: self->neg_threshold = g_value_get_double (value); break;
    case PROP_MIN_SPEECH_MS: self->min_speech_ms = g_value_get_uint (value); break;
    case PROP_MIN_SILENCE_MS: self->min_silence_ms = g_value_get_uint (value); break;
    case PROP_SPEECH_PAD_MS: self->speech_pad_ms = g_value_get_uint (value); break;
    case PROP_MAX_SPEECH_S: self->max_speech_s = g_value_get_double (value); break;
    case PROP_POST_MESSAGES: self->post_messages = g_value_get_boolean (value); break;
    case PROP_REMOVE_SILENCE: self->remove_silence = g_value_get_boolean (value); break;
    case PROP_MAX_WAIT_MS: self->max_wait_ms = g_value_get_uint (value); break;
    case PROP_MAX_STREAMS: self->max_streams = g_value_get_uint (value); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec); break;
    }
  GST_OBJECT_UNLOCK (self);
}

static void
morok_vad_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  MorokVad *self = MOROK_VAD (object);
  GST_OBJECT_LOCK (self);
  switch (prop_id)
    {
    case PROP_MODEL: g_value_set_string (value, self->model); break;
    case PROP_MODEL_VERSION: g_value_set_enum (value, self->model_version); break;
    case PROP_THRESHOLD: g_value_set_double (value, self->threshold); break;
    case PROP_NEG_THRESHOLD: g_value_set_double (value, self->neg_threshold); break;
    case PROP_MIN_SPEECH_MS: g_value_set_uint (value, self->min_speech_ms); break;
    case PROP_MIN_SILENCE_MS: g_value_set_uint (value, self->min_silence_ms); break;
    case PROP_SPEECH_PAD_MS: g_value_set_uint (value, self->speech_pad_ms); break;
    case PROP_MAX_SPEECH_S: g_value_set_double (value, self->max_speech_s); break;
    case PROP_POST_MESSAGES: g_value_set_boolean (value, self->post_messages); break;
    case PROP_REMOVE_SILENCE: g_value_set_boolean (value, self->remove_silence); break;
    case PROP_MAX_WAIT_MS: g_value_set_uint (value, self->max_wait_ms); break;
    case PROP_MAX_STREAMS: g_value_set_uint (value, self->max_streams); break;
    case PROP_CHUNKS_PROCESSED: g_value_set_uint64 (value, self->chunks); break;
    case PROP_MEAN_EXECUTE_US:
      g_value_set_double (value, self->chunks ? self->execute_us_total / self->chunks : 0.0);
      break;
    case PROP_PROBABILITY: g_value_set_double (value, self->probability); break;
    case PROP_BATCH_ROUNDS:
      {
        guint64 total = 0, rounds, chunks;
        for (guint i = 0; i < G_N_ELEMENTS (self->rounds); i++)
          if (self->rounds[i])
            {
              morok_vad_rounds_counts (self->rounds[i], &rounds, &chunks, NULL);
              total += rounds;
            }
        g_value_set_uint64 (value, total);
        break;
      }
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec); break;
    }
  GST_OBJECT_UNLOCK (self);
}

static void
morok_vad_finalize (GObject *object)
{
  MorokVad *self = MOROK_VAD (object);
  g_free (self->model);
  morok_silence_gate_free (self->gate);
  free_rounds (self);
  G_OBJECT_CLASS (morok_vad_parent_class)->finalize (object);
}

static void
morok_vad_class_init (MorokVadClass *klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstBaseTransformClass *trans_class = GST_BASE_TRANSFORM_CLASS (klass);
  GstAudioFilterClass *filter_class = GST_AUDIO_FILTER_CLASS (klass);
  GST_DEBUG_CATEGORY_INIT (morok_vad_debug, "morokvad", 0, "Silero VAD on Morok");

  gobject_class->set_property = morok_vad_set_property;
  gobject_class->get_property = morok_vad_get_property;
  gobject_class->finalize = morok_vad_finalize;

  const GParamFlags rw = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS;
  const GParamFlags ready = rw | GST_PARAM_MUTABLE_READY;
  g_object_class_install_property (
      gobject_class, PROP_MODEL,
      g_param_spec_string ("model", "Model",
                           "Silero VAD ONNX file (NULL: the installed file of model-version); "
                           "the version is read from the file",
                           DEFAULT_MODEL, ready));
  g_object_class_install_property (
      gobject_class, PROP_MODEL_VERSION,
      g_param_spec_enum ("model-version", "Model version",
                         "Installed model to use when model is not set",
                         MOROK_TYPE_VAD_MODEL_VERSION, DEFAULT_MODEL_VERSION, ready));
  g_object_class_install_property (gobject_class, PROP_THRESHOLD,
                                   g_param_spec_double ("threshold", "Threshold",
                                                        "Speech probability that starts speech",
                                                        0.0, 1.0, DEFAULT_THRESHOLD, ready));
  g_object_class_install_property (
      gobject_class, PROP_NEG_THRESHOLD,
      g_param_spec_double ("negative-threshold", "Negative threshold",
                           "Probability under which speech may end (-1: threshold - 0.15, at "
                           "least 0.01)",
                           -1.0, 1.0, DEFAULT_NEG_THRESHOLD, ready));
  g_object_class_install_property (gobject_class, PROP_MIN_SPEECH_MS,
                                   g_param_spec_uint ("min-speech", "Minimum speech",
                                                      "Shorter speech is ignored (ms)", 0,
                                                      G_MAXUINT, DEFAULT_MIN_SPEECH_MS, ready));
  g_object_class_install_property (gobject_class, PROP_MIN_SILENCE_MS,
                                   g_param_spec_uint ("min-silence", "Minimum silence",
                                                      "Silence that ends a speech segment (ms)", 0,
                                                      G_MAXUINT, DEFAULT_MIN_SILENCE_MS, ready));
  g_object_class_install_property (gobject_class, PROP_SPEECH_PAD_MS,
                                   g_param_spec_uint ("speech-pad", "Speech pad",
                                                      "Added before and after each segment (ms)", 0,
                                                      G_MAXUINT, DEFAULT_SPEECH_PAD_MS, ready));
  g_object_class_install_property (
      gobject_class, PROP_MAX_SPEECH_S,
      g_param_spec_double ("max-speech", "Maximum speech",
                           "Longer segments are split at their longest silence (s; 0: "
                           "unlimited)",
                           0.0, G_MAXDOUBLE, DEFAULT_MAX_SPEECH_S, ready));
  g_object_class_install_property (
      gobject_class, PROP_POST_MESSAGES,
      g_param_spec_boolean ("post-messages", "Post messages",
                            "Post speech-start and speech-end element messages",
                            DEFAULT_POST_MESSAGES, rw | GST_PARAM_MUTABLE_PLAYING));
  g_object_class_install_property (
      gobject_class, PROP_REMOVE_SILENCE,
      g_param_spec_boolean ("remove-silence", "Remove silence",
                            "Drop audio outside speech segments and send GAP events instead",
                            DEFAULT_REMOVE_SILENCE, ready));
  g_object_class_install_property (
      gobject_class, PROP_MAX_WAIT_MS,
      g_param_spec_uint ("max-wait", "Maximum wait",
                         "Request pads: the longest a chunk waits for the other streams' "
                         "chunks before its round runs without them, added to the pad's "
                         "latency (ms)",
                         0, 10000, DEFAULT_MAX_WAIT_MS, ready));
  g_object_class_install_property (
      gobject_class, PROP_MAX_STREAMS,
      g_param_spec_uint ("max-streams", "Maximum streams",
                         "Request pads: the most sink_%u pads, the batch bound of the "
                         "batched plans",
                         1, 4096, DEFAULT_MAX_STREAMS, ready));
  g_object_class_install_property (
      gobject_class, PROP_CHUNKS_PROCESSED,
      g_param_spec_uint64 ("chunks-processed", "Chunks processed",
                           "Model executions since the element was created", 0, G_MAXUINT64, 0,
                           G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
  g_object_class_install_property (gobject_class, PROP_MEAN_EXECUTE_US,
                                   g_param_spec_double ("mean-execute-us", "Mean execute time",
                                                        "Mean time of one model execution (µs)",
                                                        0.0, G_MAXDOUBLE, 0.0,
                                                        G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
  g_object_class_install_property (
      gobject_class, PROP_PROBABILITY,
      g_param_spec_double ("probability", "Probability",
                           "Speech probability of the last chunk analysed", 0.0, 1.0, 0.0,
                           G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));

  g_object_class_install_property (
      gobject_class, PROP_BATCH_ROUNDS,
      g_param_spec_uint64 ("batch-rounds", "Batch rounds",
                           "Request pads: batched executes since the element started (the "
                           "pads' chunks-processed over this: the mean batch)",
                           0, G_MAXUINT64, 0, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));

  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_add_static_pad_template (element_class, &src_template);
  gst_element_class_add_static_pad_template_with_gtype (element_class, &sink_request_template,
                                                        MOROK_TYPE_VAD_PAD);
  gst_element_class_add_static_pad_template (element_class, &src_request_template);
  element_class->request_new_pad = GST_DEBUG_FUNCPTR (morok_vad_request_new_pad);
  element_class->release_pad = GST_DEBUG_FUNCPTR (morok_vad_pad_release);
  element_class->change_state = GST_DEBUG_FUNCPTR (morok_vad_change_state);
  gst_element_class_set_static_metadata (
      element_class, "Morok voice activity detector", "Filter/Analyzer/Audio",
      "Detects speech with Silero VAD compiled by Morok", "Morok developers");

  trans_class->start = GST_DEBUG_FUNCPTR (morok_vad_start);
  trans_class->stop = GST_DEBUG_FUNCPTR (morok_vad_stop);
  trans_class->submit_input_buffer = GST_DEBUG_FUNCPTR (morok_vad_submit_input_buffer);
  trans_class->generate_output = GST_DEBUG_FUNCPTR (morok_vad_generate_output);
  trans_class->sink_event = GST_DEBUG_FUNCPTR (morok_vad_sink_event);
  trans_class->query = GST_DEBUG_FUNCPTR (morok_vad_query);
  filter_class->setup = GST_DEBUG_FUNCPTR (morok_vad_setup);
  gst_type_mark_as_plugin_api (MOROK_TYPE_VAD_MODEL_VERSION, 0);
}

static void
morok_vad_init (MorokVad *self)
{
  self->model_version = DEFAULT_MODEL_VERSION;
  self->threshold = DEFAULT_THRESHOLD;
  self->neg_threshold = DEFAULT_NEG_THRESHOLD;
  self->min_speech_ms = DEFAULT_MIN_SPEECH_MS;
  self->min_silence_ms = DEFAULT_MIN_SILENCE_MS;
  self->speech_pad_ms = DEFAULT_SPEECH_PAD_MS;
  self->max_speech_s = DEFAULT_MAX_SPEECH_S;
  self->post_messages = DEFAULT_POST_MESSAGES;
  self->remove_silence = DEFAULT_REMOVE_SILENCE;
  self->max_wait_ms = DEFAULT_MAX_WAIT_MS;
  self->max_streams = DEFAULT_MAX_STREAMS;
  self->gate = morok_silence_gate_new ();
  morok_caps_refusal_watch (GST_BASE_TRANSFORM_SINK_PAD (self), morok_vad_report_refused_caps);
}
