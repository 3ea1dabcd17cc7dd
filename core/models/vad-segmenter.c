/* SPDX-License-Identifier: MIT */
/* Speech segments from per-chunk speech probabilities: upstream silero-vad's
 * get_speech_timestamps () loop, run offline over an array or online one chunk
 * at a time, with its padding pass replayed as events. */
#define G_LOG_DOMAIN "morok-models"
#include "models/vad-segmenter.h"
#include <math.h>
#include <string.h>

G_DEFINE_QUARK (morok - vad - error - quark, morok_vad_error)

/* ---- parameters ---- */

void
morok_vad_params_init (MorokVadParams *params, gint sample_rate)
{
  g_return_if_fail (params != NULL);

  params->sample_rate = sample_rate;
  params->threshold = MOROK_VAD_DEFAULT_THRESHOLD;
  params->neg_threshold = MOROK_VAD_DEFAULT_NEG_THRESHOLD;
  params->min_speech_ms = MOROK_VAD_DEFAULT_MIN_SPEECH_MS;
  params->min_silence_ms = MOROK_VAD_DEFAULT_MIN_SILENCE_MS;
  params->speech_pad_ms = MOROK_VAD_DEFAULT_SPEECH_PAD_MS;
  params->min_silence_at_max_speech_ms = MOROK_VAD_DEFAULT_MIN_SILENCE_AT_MAX_SPEECH_MS;
  params->max_speech_s = INFINITY;
}

gboolean
morok_vad_params_check (const MorokVadParams *params, GError **error)
{
  g_return_val_if_fail (params != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (params->sample_rate != 16000 && params->sample_rate != 8000)
    {
      g_set_error (error, MOROK_VAD_ERROR, MOROK_VAD_ERROR_PARAMS,
                   "VAD sample_rate is %d Hz, expected 16000 or 8000", params->sample_rate);
      return FALSE;
    }
  if (!(params->threshold >= 0 && params->threshold <= 1))
    {
      g_set_error (error, MOROK_VAD_ERROR, MOROK_VAD_ERROR_PARAMS,
                   "VAD threshold is %g, expected a value in [0, 1]", params->threshold);
      return FALSE;
    }
  if (isnan (params->neg_threshold) || params->neg_threshold > 1)
    {
      g_set_error (error, MOROK_VAD_ERROR, MOROK_VAD_ERROR_PARAMS,
                   "VAD neg_threshold is %g, expected a value in [0, 1] (or < 0 to derive it)",
                   params->neg_threshold);
      return FALSE;
    }
  if (!(params->max_speech_s > 0))
    {
      g_set_error (error, MOROK_VAD_ERROR, MOROK_VAD_ERROR_PARAMS,
                   "VAD max_speech_s is %g, expected a positive number of seconds (or INFINITY)",
                   params->max_speech_s);
      return FALSE;
    }
  return TRUE;
}

guint
morok_vad_params_window (const MorokVadParams *params)
{
  g_return_val_if_fail (params != NULL, 0);
  return params->sample_rate == 8000 ? 256 : 512;
}

/* The parameters in samples, as upstream computes them. sample_rate is a
 * multiple of 1000, so every "sr * ms / 1000" is a whole number. */
typedef struct
{
  gint64 window;
  double threshold;
  double neg_threshold;
  gint64 min_speech; /* kept segments are longer than this */
  gint64 min_silence;
  gint64 pad;
  gint64 min_silence_at_max_speech; /* split candidates are longer than this */
  double max_speech;                /* sr * max_speech_s - window - 2 * pad; may be inf */
  gboolean can_split;               /* max_speech is below any reachable distance */
} VadLimits;

static void
vad_limits_init (VadLimits *lim, const MorokVadParams *params)
{
  gint64 sr = params->sample_rate;

  lim->window = morok_vad_params_window (params);
  lim->threshold = params->threshold;
  lim->neg_threshold
      = params->neg_threshold >= 0 ? params->neg_threshold : MAX (params->threshold - 0.15, 0.01);
  lim->min_speech = sr * params->min_speech_ms / 1000;
  lim->min_silence = sr * params->min_silence_ms / 1000;
  lim->pad = sr * params->speech_pad_ms / 1000;
  lim->min_silence_at_max_speech = sr * params->min_silence_at_max_speech_ms / 1000;
  lim->max_speech
      = (double) sr * params->max_speech_s - (double) lim->window - 2.0 * (double) lim->pad;
  lim->can_split = lim->max_speech < (double) G_MAXINT64 / 2;
}

gint64
morok_vad_params_delay_max (const MorokVadParams *params)
{
  g_return_val_if_fail (params != NULL, G_MAXINT64);

  VadLimits lim;
  vad_limits_init (&lim, params);
  gint64 w = lim.window;
  gint64 chunks
      = MAX ((lim.min_speech + w - 1) / w, lim.min_speech / w + (lim.min_silence + w - 1) / w) + 1;
  gint64 delay = 2 * lim.pad + w * chunks;
  if (!lim.can_split)
    return delay;
  double split = (double) params->sample_rate * params->max_speech_s + 2.0 * (double) w;
  if (split >= (double) (G_MAXINT64 / 2))
    return G_MAXINT64;
  return delay + (gint64) ceil (split);
}

/* ---- the loop ----
 *
 * One step of upstream's loop per chunk, before padding: it opens a segment
 * at a speech chunk, closes it after min_silence of silence (dropping it if
 * not longer than min_speech) or when it grows past max_speech, and hands
 * out the closed segments it keeps. The offline function and the segmenter
 * both run it, so they differ only in when they apply the padding. */

/* A pause inside the open segment: a split candidate. */
typedef struct
{
  gint64 start;      /* its first silent chunk (upstream's temp_end) */
  gint64 length;     /* samples until speech resumed */
  float resume_prob; /* the chunk where speech resumed */
} VadPause;

/* A kept segment as the loop closes it, unpadded. */
typedef struct
{
  gint64 start;
  gint64 end;
  guint64 id;       /* the id the loop gave it when it opened */
  float start_prob; /* the chunk that opened it */
  float end_prob;   /* the chunk that closed it */
} VadRaw;

typedef struct
{
  VadLimits lim;
  gboolean triggered; /* a segment is open */
  gint64 start;       /* the open segment's first sample */
  float start_prob;
  guint64 id;        /* bumped at each opening */
  gint64 temp_end;   /* first chunk of the silence in progress; 0: none */
  gint64 closed_end; /* the end of the last segment closed, kept or not; 0: none */

  /* Split candidates that can still be chosen, in time order, lengths not
   * increasing: a pause followed by a strictly longer one can never be the
   * longest of the candidates left, since candidates only leave from the
   * front. So the front is upstream's max (possible_ends), the earliest of the
   * longest, and dropping the front is upstream's "keep those after it".
   * Entries are pauses[first .. first + n). */
  VadPause *pauses;
  guint first;
  guint n;
  guint capacity;
  gboolean can_grow; /* offline: grow; streaming: fixed */
  guint64 n_dropped;
} VadLoop;

static void
vad_loop_init (VadLoop *loop, const MorokVadParams *params, gboolean can_grow)
{
  memset (loop, 0, sizeof *loop);
  vad_limits_init (&loop->lim, params);
  loop->can_grow = can_grow;
  if (!loop->lim.can_split)
    return;
  if (can_grow)
    {
      loop->capacity = 16;
    }
  else
    {
      /* Candidates of one segment lie in (start, pos] and each takes more
       * than min_silence_at_max_speech of silence, plus a chunk of speech
       * unless neg_threshold > threshold lets one chunk be both; pos - start
       * <= max_speech at every chunk that adds one, except for one chunk
       * more while an overlong segment is being split. */
      gint64 w = loop->lim.window;
      gint64 step = (loop->lim.min_silence_at_max_speech / w + 1) * w;
      if (loop->lim.neg_threshold <= loop->lim.threshold)
        step += w;
      double most = floor (MAX (loop->lim.max_speech, 0) / (double) step) + 2;
      loop->capacity = (guint) MIN (most, (double) MOROK_VAD_SPLIT_CANDIDATES_MAX);
    }
  loop->pauses = g_new (VadPause, loop->capacity);
}

static void
vad_loop_clear (VadLoop *loop)
{
  g_clear_pointer (&loop->pauses, g_free);
}

static void
vad_loop_reset (VadLoop *loop)
{
  loop->triggered = FALSE;
  loop->start = 0;
  loop->temp_end = 0;
  loop->closed_end = 0;
  loop->first = 0;
  loop->n = 0;
}

static void
vad_loop_add_pause (VadLoop *loop, gint64 start, gint64 length, float resume_prob)
{
  while (loop->n > 0 && loop->pauses[loop->first + loop->n - 1].length < length)
    loop->n--;
  if (loop->n == 0)
    loop->first = 0;
  if (loop->first + loop->n == loop->capacity && loop->first > 0)
    {
      memmove (loop->pauses, loop->pauses + loop->first, loop->n * sizeof (VadPause));
      loop->first = 0;
    }
  if (loop->n == loop->capacity)
    {
      if (!loop->can_grow)
        {
          if (loop->n_dropped++ == 0)
            g_debug ("VAD split candidate at sample %" G_GINT64_FORMAT " dropped: all %u "
                     "in use (logged once)",
                     start, loop->capacity);
          return;
        }
      loop->capacity *= 2;
      loop->pauses = g_renew (VadPause, loop->pauses, loop->capacity);
    }
  loop->pauses[loop->first + loop->n++] = (VadPause){ start, length, resume_prob };
}

static void
vad_loop_open (VadLoop *loop, gint64 start, float prob)
{
  loop->triggered = TRUE;
  loop->start = start;
  loop->start_prob = prob;
  loop->id++;
}

static void
vad_loop_close (VadLoop *loop, gint64 end)
{
  loop->triggered = FALSE;
  loop->closed_end = end;
  loop->temp_end = 0;
  loop->first = 0;
  loop->n = 0;
}

static VadRaw
vad_loop_raw (const VadLoop *loop, gint64 end, float end_prob)
{
  return (VadRaw){ loop->start, end, loop->id, loop->start_prob, end_prob };
}

/* Runs the loop body for the chunk at sample @pos. Writes the segments it
 * closes and keeps to @out (two at most: a split, then the new segment ending
 * at the same chunk) and returns how many. */
static guint
vad_loop_step (VadLoop *loop, float prob, gint64 pos, VadRaw out[2])
{
  const VadLimits *lim = &loop->lim;
  double p = prob;
  guint n_out = 0;

  /* Speech after a silence: the pause ends here, and may be a split point. */
  if (p >= lim->threshold && loop->temp_end != 0)
    {
      gint64 length = pos - loop->temp_end;
      if (lim->can_split && length > lim->min_silence_at_max_speech)
        vad_loop_add_pause (loop, loop->temp_end, length, prob);
      loop->temp_end = 0;
    }

  if (p >= lim->threshold && !loop->triggered)
    {
      vad_loop_open (loop, pos, prob);
      return 0;
    }

  if (loop->triggered && (double) (pos - loop->start) > lim->max_speech)
    {
      if (loop->n == 0)
        {
          out[n_out++] = vad_loop_raw (loop, pos, prob);
          vad_loop_close (loop, pos);
          return n_out;
        }
      /* Upstream opens the next segment if "next_start < prev_end + pos",
       * i.e. length < pos: always, as a pause starts after the segment's
       * first chunk (start > 0) and ended by pos. */
      VadPause longest = loop->pauses[loop->first];
      gint64 resume = longest.start + longest.length;
      out[n_out++] = vad_loop_raw (loop, longest.start, prob);
      vad_loop_open (loop, resume, longest.resume_prob);
      /* Upstream keeps the candidates starting after resume. The next one
       * starts there or later: at resume itself when neg_threshold >
       * threshold made that chunk both speech and silence. */
      do
        {
          loop->first++;
          loop->n--;
        }
      while (loop->n > 0 && loop->pauses[loop->first].start <= resume);
      loop->temp_end = 0;
      /* no return: upstream goes on to the silence test with this chunk */
    }

  if (p < lim->neg_threshold && loop->triggered)
    {
      if (loop->temp_end == 0)
        loop->temp_end = pos;
      if (pos - loop->temp_end < lim->min_silence)
        return n_out;
      if (loop->temp_end - loop->start > lim->min_speech)
        out[n_out++] = vad_loop_raw (loop, loop->temp_end, prob);
      vad_loop_close (loop, loop->temp_end);
    }
  return n_out;
}

/* End of stream: keeps the open segment, ending it at @total, if it is longer
 * than min_speech. */
static gboolean
vad_loop_finish (VadLoop *loop, gint64 total, float last_prob, VadRaw *out)
{
  gboolean kept = loop->triggered && total - loop->start > loop->lim.min_speech;
  if (kept)
    *out = vad_loop_raw (loop, total, last_prob);
  vad_loop_close (loop, total);
  return kept;
}

/* ---- padding ----
 *
 * Upstream's last pass, per pair of neighbours with gap = next.start - end:
 * a gap under 2 * pad is split, end + gap / 2 and next.start - gap / 2;
 * otherwise end + pad (at most total) and next.start - pad (at least 0). The
 * first start is start - pad (at least 0), the last end end + pad (at most
 * total). Each padded value depends only on a segment and its neighbour. */

static gint64
pad_start (const VadLimits *lim, gint64 start, gboolean has_prev, gint64 prev_end)
{
  gint64 gap = start - prev_end;
  if (has_prev && gap < 2 * lim->pad)
    return MAX (0, start - gap / 2);
  return MAX (0, start - lim->pad);
}

static gint64
pad_end (const VadLimits *lim, gint64 end, gboolean has_next, gint64 next_start, gint64 total)
{
  gint64 gap = next_start - end;
  if (has_next && gap < 2 * lim->pad)
    return end + gap / 2;
  return MIN (total, end + lim->pad);
}

static gboolean
total_fits (gint64 n_chunks, gint64 window, gint64 total_samples)
{
  if (n_chunks == 0)
    return total_samples == 0;
  return total_samples > (n_chunks - 1) * window && total_samples <= n_chunks * window;
}

/* ---- offline ---- */

void
morok_vad_segments (const float *probs, gsize n_chunks, gint64 total_samples,
                    const MorokVadParams *params, GArray *out_segments)
{
  g_return_if_fail (probs != NULL || n_chunks == 0);
  g_return_if_fail (params != NULL && morok_vad_params_check (params, NULL));
  g_return_if_fail (out_segments != NULL);
  g_return_if_fail (g_array_get_element_size (out_segments) == sizeof (MorokVadSegment));
  g_return_if_fail (
      total_fits ((gint64) n_chunks, morok_vad_params_window (params), total_samples));

  VadLoop loop;
  vad_loop_init (&loop, params, TRUE);
  const VadLimits *lim = &loop.lim;
  g_autoptr (GArray) raw = g_array_new (FALSE, FALSE, sizeof (VadRaw));
  VadRaw closed[2];

  for (gsize i = 0; i < n_chunks; i++)
    {
      guint n = vad_loop_step (&loop, probs[i], (gint64) i * lim->window, closed);
      g_array_append_vals (raw, closed, n);
    }
  if (n_chunks > 0 && vad_loop_finish (&loop, total_samples, probs[n_chunks - 1], closed))
    g_array_append_val (raw, closed[0]);

  g_array_set_size (out_segments, raw->len);
  for (guint i = 0; i < raw->len; i++)
    {
      const VadRaw *r = &g_array_index (raw, VadRaw, i);
      const VadRaw *prev = i > 0 ? r - 1 : NULL;
      const VadRaw *next = i + 1 < raw->len ? r + 1 : NULL;
      MorokVadSegment *s = &g_array_index (out_segments, MorokVadSegment, i);
      s->start = pad_start (lim, r->start, prev != NULL, prev ? prev->end : 0);
      s->end = pad_end (lim, r->end, next != NULL, next ? next->start : 0, total_samples);
    }
  vad_loop_clear (&loop);
}

/* ---- streaming ----
 *
 * The loop runs as it does offline; what is left is knowing when a padded
 * position is final. A START needs its segment to be kept, which is certain
 * once the earliest end it could still get is more than min_speech after it:
 * the silence in progress, or else the end of this chunk. An END needs the
 * next kept segment's start, or to know that it will be at least 2 * pad
 * away: the open segment starts there or later, and with none open nothing
 * can start before the next chunk. */

struct _MorokVadSegmenter
{
  VadLoop loop;
  gint64 n_chunks; /* pushed since the stream began */
  float last_prob;

  gboolean speaking; /* the last chunk's hysteresis state */

  guint64 open_id;       /* the loop's open segment as last seen */
  gboolean open_started; /* its START went out */

  gboolean has_kept; /* a kept segment closed in this stream */
  gint64 kept_end;   /* the last one's end, unpadded */
  float kept_end_prob;
  gboolean kept_end_sent;
};

/* Where events go during one call. */
typedef struct
{
  MorokVadEvent *events;
  guint n;
  guint max;
} EventSink;

static void
sink_add (EventSink *sink, MorokVadEventType type, gint64 sample, float prob)
{
  if (G_UNLIKELY (sink->n >= sink->max))
    {
      g_critical ("VAD segmenter: more than %u events in one call", sink->max);
      return;
    }
  sink->events[sink->n++] = (MorokVadEvent){ type, sample, prob };
}

/* Sends the last kept segment's END, the next kept segment starting at
 * @next_start (has_next) or none at all before @total. */
static void
send_end (MorokVadSegmenter *seg, EventSink *sink, gboolean has_next, gint64 next_start,
          gint64 total)
{
  gint64 end = pad_end (&seg->loop.lim, seg->kept_end, has_next, next_start, total);
  sink_add (sink, MOROK_VAD_EVENT_END, end, seg->kept_end_prob);
  seg->kept_end_sent = TRUE;
}

/* Sends the START of a segment now certain to be kept, after the END before it. */
static void
send_start (MorokVadSegmenter *seg, EventSink *sink, gint64 start, float prob)
{
  /* The next start is a chunk's position, so below total: no clamp. */
  if (seg->has_kept && !seg->kept_end_sent)
    send_end (seg, sink, TRUE, start, G_MAXINT64);
  gint64 padded = pad_start (&seg->loop.lim, start, seg->has_kept, seg->kept_end);
  sink_add (sink, MOROK_VAD_EVENT_START, padded, prob);
}

static void
take_kept (MorokVadSegmenter *seg, EventSink *sink, const VadRaw *raw)
{
  if (!(seg->open_started && raw->id == seg->open_id))
    send_start (seg, sink, raw->start, raw->start_prob);
  seg->open_started = FALSE;
  seg->has_kept = TRUE;
  seg->kept_end = raw->end;
  seg->kept_end_prob = raw->end_prob;
  seg->kept_end_sent = FALSE;
}

MorokVadSegmenter *
morok_vad_segmenter_new (const MorokVadParams *params)
{
  g_return_val_if_fail (params != NULL && morok_vad_params_check (params, NULL), NULL);

  MorokVadSegmenter *seg = g_new0 (MorokVadSegmenter, 1);
  vad_loop_init (&seg->loop, params, FALSE);
  return seg;
}

void
morok_vad_segmenter_free (MorokVadSegmenter *seg)
{
  if (seg == NULL)
    return;
  vad_loop_clear (&seg->loop);
  g_free (seg);
}

void
morok_vad_segmenter_reset (MorokVadSegmenter *seg)
{
  g_return_if_fail (seg != NULL);

  vad_loop_reset (&seg->loop);
  seg->n_chunks = 0;
  seg->last_prob = 0;
  seg->speaking = FALSE;
  seg->open_started = FALSE;
  seg->has_kept = FALSE;
  seg->kept_end = 0;
  seg->kept_end_sent = FALSE;
}

guint
morok_vad_segmenter_push (MorokVadSegmenter *seg, float prob, MorokVadEvent *out_events,
                          guint max_events)
{
  g_return_val_if_fail (seg != NULL, 0);
  g_return_val_if_fail (out_events != NULL && max_events >= MOROK_VAD_EVENTS_MAX, 0);

  VadLoop *loop = &seg->loop;
  const VadLimits *lim = &loop->lim;
  EventSink sink = { out_events, 0, MOROK_VAD_EVENTS_MAX };
  gint64 pos = seg->n_chunks * lim->window;
  VadRaw closed[2];

  guint n_closed = vad_loop_step (loop, prob, pos, closed);
  seg->n_chunks++;
  seg->last_prob = prob;
  /* on at threshold, off under neg_threshold, kept in between */
  seg->speaking = prob >= lim->threshold ? TRUE : prob < lim->neg_threshold ? FALSE : seg->speaking;
  for (guint i = 0; i < n_closed; i++)
    take_kept (seg, &sink, &closed[i]);

  if (loop->triggered)
    {
      if (loop->id != seg->open_id)
        {
          seg->open_id = loop->id;
          seg->open_started = FALSE;
        }
      /* A future silence starts after this chunk, the stream ends after its
       * first sample, a split keeps the segment. */
      gint64 earliest_end = loop->temp_end != 0 ? loop->temp_end : pos + 1;
      if (!seg->open_started && earliest_end - loop->start > lim->min_speech)
        {
          send_start (seg, &sink, loop->start, loop->start_prob);
          seg->open_started = TRUE;
        }
    }

  if (seg->has_kept && !seg->kept_end_sent)
    {
      /* A kept segment still to come starts at the open one or later; with
       * none open, at the next chunk or later. Once this chunk reaches
       * end + pad, total does too. */
      gint64 next_min = loop->triggered ? loop->start : pos + lim->window;
      if (next_min - seg->kept_end >= 2 * lim->pad && pos + 1 >= seg->kept_end + lim->pad)
        send_end (seg, &sink, FALSE, 0, G_MAXINT64);
    }
  return sink.n;
}

guint
morok_vad_segmenter_finish (MorokVadSegmenter *seg, gint64 total_samples, MorokVadEvent *out_events,
                            guint max_events)
{
  g_return_val_if_fail (seg != NULL, 0);
  g_return_val_if_fail (out_events != NULL && max_events >= MOROK_VAD_EVENTS_MAX, 0);
  g_return_val_if_fail (total_fits (seg->n_chunks, seg->loop.lim.window, total_samples), 0);

  EventSink sink = { out_events, 0, MOROK_VAD_EVENTS_MAX };
  VadRaw last;

  if (vad_loop_finish (&seg->loop, total_samples, seg->last_prob, &last))
    take_kept (seg, &sink, &last);
  if (seg->has_kept && !seg->kept_end_sent)
    send_end (seg, &sink, FALSE, 0, total_samples);
  morok_vad_segmenter_reset (seg);
  return sink.n;
}

void
morok_vad_segmenter_tentative (const MorokVadSegmenter *seg, gint64 *out_start, gint64 *out_end)
{
  g_return_if_fail (seg != NULL && out_start != NULL && out_end != NULL);

  /* the loop keeps the start of the segment it closed last (0 before any) */
  const VadLoop *loop = &seg->loop;
  *out_start = MAX (0, loop->start - loop->lim.pad);
  if (loop->triggered)
    *out_end = G_MAXINT64;
  else
    *out_end = loop->closed_end != 0 ? loop->closed_end + loop->lim.pad : 0;
}

gint64
morok_vad_params_tentative_delay (const MorokVadParams *params)
{
  g_return_val_if_fail (params != NULL, 0);

  VadLimits lim;
  vad_limits_init (&lim, params);
  return lim.pad + lim.window;
}

gboolean
morok_vad_segmenter_speaking (const MorokVadSegmenter *seg)
{
  g_return_val_if_fail (seg != NULL, FALSE);
  return seg->speaking;
}

guint64
morok_vad_segmenter_n_dropped (const MorokVadSegmenter *seg)
{
  g_return_val_if_fail (seg != NULL, 0);
  return seg->loop.n_dropped;
}
