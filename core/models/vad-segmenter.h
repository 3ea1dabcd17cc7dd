/* SPDX-License-Identifier: MIT */
/* Speech segments from Silero VAD probabilities, with the official rules.
 *
 * Silero VAD gives one speech probability per chunk of 512 samples at 16 kHz
 * (256 at 8 kHz). This turns them into speech segments exactly as upstream
 * silero-vad's get_speech_timestamps () does (use_max_poss_sil_at_max_speech
 * on, its default): speech starts at a chunk >= threshold and pauses at a
 * chunk < neg_threshold; a pause of min_silence ends the segment; segments
 * not longer than min_speech are dropped; a segment longer than max_speech is
 * split at the longest pause inside it; then speech_pad is added on each side,
 * or a gap shorter than two pads is shared half and half.
 *
 * morok_vad_segments () works on a whole array of probabilities. A
 * MorokVadSegmenter takes one probability at a time and emits START and END
 * events whose positions, over a stream, are exactly the offline segments:
 *
 *   MorokVadParams params;
 *   morok_vad_params_init (&params, 16000);
 *   params.min_silence_ms = 300;
 *   g_autoptr (MorokVadSegmenter) seg = morok_vad_segmenter_new (&params);
 *   MorokVadEvent ev[MOROK_VAD_EVENTS_MAX];
 *   for (gsize i = 0; i < n_chunks; i++)
 *     {
 *       guint n = morok_vad_segmenter_push (seg, probs[i], ev, G_N_ELEMENTS (ev));
 *       for (guint k = 0; k < n; k++)
 *         g_print ("%s at sample %" G_GINT64_FORMAT "\n",
 *                  ev[k].type == MOROK_VAD_EVENT_START ? "start" : "end", ev[k].sample);
 *     }
 *   guint n = morok_vad_segmenter_finish (seg, n_samples, ev, G_N_ELEMENTS (ev));
 *
 * Split rule at max speech. While a segment is open, every pause that ends
 * because speech resumes (a chunk >= threshold after chunks < neg_threshold)
 * and lasted more than min_silence_at_max_speech is a candidate {start: its
 * first silent chunk, length: samples until speech resumed}. A pause still
 * going on is not a candidate. At the first chunk where pos - segment start >
 * max_speech:
 *   - with candidates, the segment ends at the start of the longest one (the
 *     earliest of equals) and a new segment opens at the end of that pause,
 *     where speech resumed; candidates starting after that stay candidates
 *     of the new segment, and the chunk is then still checked for silence
 *     (upstream has no `continue` there), a pause in progress being measured
 *     again from this chunk. Upstream's "else untrigger" branch cannot be taken: a
 *     candidate always ends in speech by the current chunk.
 *   - without candidates, the segment ends at pos and nothing is open.
 * With max_speech_s infinite (the default) nothing is ever split.
 *
 * Event delay. Events come out when they are certain: a START once its
 * segment can no longer be dropped as too short, an END once no later segment
 * can start within 2 * pad of it (which would move it). The delay of an event
 * is the samples pushed when it comes out minus its sample. With P the pad,
 * W the window, M min speech and S min silence in samples, and every
 * probability either >= threshold or < neg_threshold, it is at most
 *   2 * P + W * (MAX (ceil (M / W), floor (M / W) + ceil (S / W)) + 1)
 * (7104 samples, 444 ms, with the defaults; reached), plus sr * max_speech_s + 2 * W
 * when max_speech_s is finite (a split names a pause up to that far back);
 * morok_vad_params_delay_max () computes it. A run of probabilities in
 * [neg_threshold, threshold) neither starts nor ends anything, so it can hold
 * an event back for as long as it lasts: the offline algorithm too cannot
 * decide until the run ends.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define MOROK_VAD_ERROR (morok_vad_error_quark ())
GQuark morok_vad_error_quark (void);
typedef enum
{
  MOROK_VAD_ERROR_PARAMS, /* a MorokVadParams field out of range; the message names it */
  MOROK_VAD_ERROR_RATE,   /* the model does not run at the stream's sample rate; the message
                           * names the rate */
} MorokVadError;

/* Upstream's defaults: morok_vad_params_init () sets them, and morokvad's
 * properties start from them. */
#define MOROK_VAD_DEFAULT_THRESHOLD 0.5
#define MOROK_VAD_DEFAULT_NEG_THRESHOLD -1.0 /* < 0: derived from the threshold */
#define MOROK_VAD_DEFAULT_MIN_SPEECH_MS 250
#define MOROK_VAD_DEFAULT_MIN_SILENCE_MS 100
#define MOROK_VAD_DEFAULT_SPEECH_PAD_MS 30
#define MOROK_VAD_DEFAULT_MIN_SILENCE_AT_MAX_SPEECH_MS 98

/* Segmentation settings, with upstream's names and units. */
typedef struct
{
  gint sample_rate;                   /* Hz: 16000 (512-sample chunks) or 8000 (256) */
  double threshold;                   /* a chunk is speech at prob >= this; 0.5 */
  double neg_threshold;               /* a chunk is silence at prob < this; < 0: derive
                                       * MAX (threshold - 0.15, 0.01) */
  guint min_speech_ms;                /* segments must be longer to be kept; 250 */
  guint min_silence_ms;               /* a pause this long ends a segment; 100 */
  guint speech_pad_ms;                /* added on each side of a segment; 30 */
  guint min_silence_at_max_speech_ms; /* shortest pause a split may use (exclusive); 98 */
  double max_speech_s;                /* longer segments are split; INFINITY: never */
} MorokVadParams;

/* A segment in samples from the start of the stream: [start, end). */
typedef struct
{
  gint64 start;
  gint64 end;
} MorokVadSegment;

typedef enum
{
  MOROK_VAD_EVENT_START, /* a segment starts at sample */
  MOROK_VAD_EVENT_END,   /* the open segment ends at sample (exclusive) */
} MorokVadEventType;

typedef struct
{
  MorokVadEventType type;
  gint64 sample; /* padded position, as in morok_vad_segments ()'s result */
  float prob;    /* START: the chunk whose speech opened the segment (>= threshold);
                  * END: the chunk that closed it (the last chunk at end of stream) */
} MorokVadEvent;

/* The most events one push or finish can return. */
#define MOROK_VAD_EVENTS_MAX 5

/* Candidates the streaming split keeps at most. Enough for any segment when
 * max_speech_s <= about 160 s at the defaults; past that, a pause found while
 * all are in use is not recorded (morok_vad_segmenter_n_dropped () counts them)
 * and a split may differ from the offline result. */
#define MOROK_VAD_SPLIT_CANDIDATES_MAX 1024

/* ---- parameters ---- */

/* Sets upstream's defaults for @sample_rate, which morok_vad_params_check ()
 * then accepts if it is 16000 or 8000. */
void morok_vad_params_init (MorokVadParams *params, gint sample_rate);
/* TRUE if every field is in range; else MOROK_VAD_ERROR_PARAMS naming the field. */
gboolean morok_vad_params_check (const MorokVadParams *params, GError **error);
/* Samples per chunk: 512 at 16 kHz, 256 at 8 kHz. */
guint morok_vad_params_window (const MorokVadParams *params);
/* The worst-case event delay in samples described above (for probabilities
 * outside [neg_threshold, threshold)); G_MAXINT64 if too large to say. */
gint64 morok_vad_params_delay_max (const MorokVadParams *params);

/* The samples after a sample that must have been pushed (as chunks) before
 * its tentative span (morok_vad_segmenter_tentative ()) is known:
 * speech_pad + window, since a span's start lies a pad before the chunk that
 * opens it and a chunk's probability needs all its samples. 992 samples,
 * 62 ms, at 16 kHz with the defaults. */
gint64 morok_vad_params_tentative_delay (const MorokVadParams *params);

/* ---- offline ---- */

/* Replaces the contents of @out_segments (GArray of MorokVadSegment) with the
 * segments of @probs, one per chunk; chunk i covers samples [i * window,
 * (i + 1) * window) and the last one may be partial: @total_samples lies in
 * ((n_chunks - 1) * window, n_chunks * window] (0 when there are none).
 * @params must pass morok_vad_params_check (). */
void morok_vad_segments (const float *probs, gsize n_chunks, gint64 total_samples,
                         const MorokVadParams *params, GArray *out_segments);

/* ---- streaming ---- */

typedef struct _MorokVadSegmenter MorokVadSegmenter;

/* (transfer full) A segmenter at the start of a stream; NULL (with a critical)
 * if @params fails morok_vad_params_check (). @params is copied. */
MorokVadSegmenter *morok_vad_segmenter_new (const MorokVadParams *params);
void morok_vad_segmenter_free (MorokVadSegmenter *seg);
/* Forgets the stream: the next push is chunk 0 of a new one. */
void morok_vad_segmenter_reset (MorokVadSegmenter *seg);
/* Takes the next chunk's probability. Writes the events it makes certain, in
 * stream order, to @out_events, whose room @max_events must be at least
 * MOROK_VAD_EVENTS_MAX, and returns how many. Allocates nothing. */
guint morok_vad_segmenter_push (MorokVadSegmenter *seg, float prob, MorokVadEvent *out_events,
                                guint max_events);
/* Ends the stream at @total_samples (in the last pushed chunk, as for
 * morok_vad_segments ()), writes the remaining events and returns how many.
 * The segmenter is then reset. */
guint morok_vad_segmenter_finish (MorokVadSegmenter *seg, gint64 total_samples,
                                  MorokVadEvent *out_events, guint max_events);
/* The hysteresis state after the last push: TRUE from a chunk >= threshold
 * until a chunk < neg_threshold (FALSE before the first push and after a
 * reset). Segments add min speech, min silence and padding on top of it. */
gboolean morok_vad_segmenter_speaking (const MorokVadSegmenter *seg);
/* Where speech may lie before the events are certain, for audio that must
 * not wait for them (morokvad in live pipelines). The loop opens a segment
 * at a chunk >= threshold and closes it after min_silence of silence,
 * whether it is then kept or dropped as too short, or at max_speech when it
 * has no pause to split at; a split closes one segment and opens the next
 * at once. Its tentative span is [start - speech_pad, end + speech_pad)
 * (start at least 0), end being G_MAXINT64 while it is open. Writes the span
 * of the segment open after the last push, else of the last one closed
 * ([0, 0) before any). A segment of morok_vad_segments () starts no earlier
 * than the span the loop opened it in (before any split) and ends no later
 * than that span's end when the loop closes it, or the end of the stream:
 * a sample outside the spans, each taken as open until it closes, is in no
 * segment. */
void morok_vad_segmenter_tentative (const MorokVadSegmenter *seg, gint64 *out_start,
                                    gint64 *out_end);
/* Split candidates not recorded for want of room since the segmenter was made. */
guint64 morok_vad_segmenter_n_dropped (const MorokVadSegmenter *seg);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (MorokVadSegmenter, morok_vad_segmenter_free)

G_END_DECLS
