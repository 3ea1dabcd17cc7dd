/* SPDX-License-Identifier: MIT */
/* The VAD segmenter: hand-made probability sequences with segments worked out
 * by hand, a literal transcription of upstream's loop as a second reference,
 * and the streaming events against the offline result on random sequences
 * and on the Silero v5 fixture. */
#include "models/vad-segmenter.h"
#include <malloc.h>
#include <math.h>
#include <string.h>

/* ---- helpers ---- */

/* One probability per character: 'S' speech (0.9), '.' silence (0.1), '~'
 * between the thresholds (0.4, neither starts nor ends speech at the
 * defaults); spaces are ignored. A digit d before a character repeats it
 * d * 10 times ("2S" is twenty speech chunks). */
static GArray *
probs_from_pattern (const char *pattern)
{
  GArray *probs = g_array_new (FALSE, FALSE, sizeof (float));
  guint repeat = 1;
  for (const char *c = pattern; *c; c++)
    {
      float p;
      if (*c >= '1' && *c <= '9')
        {
          repeat = (guint) (*c - '0') * 10;
          continue;
        }
      if (*c == ' ')
        continue;
      p = *c == 'S' ? 0.9f : *c == '~' ? 0.4f : 0.1f;
      g_assert_true (*c == 'S' || *c == '.' || *c == '~');
      for (guint i = 0; i < repeat; i++)
        g_array_append_val (probs, p);
      repeat = 1;
    }
  return probs;
}

/* Runs the segmenter over @probs, checks the events alternate START, END in
 * order, and returns them as segments. @out_delay_max: the largest delay of
 * an event returned by push (samples pushed then, minus its sample). */
static GArray *
stream_segments (const float *probs, gsize n, gint64 total, const MorokVadParams *params,
                 gint64 *out_delay_max)
{
  g_autoptr (MorokVadSegmenter) seg = morok_vad_segmenter_new (params);
  GArray *out = g_array_new (FALSE, FALSE, sizeof (MorokVadSegment));
  MorokVadEvent ev[MOROK_VAD_EVENTS_MAX];
  gint64 w = morok_vad_params_window (params), delay_max = 0;
  MorokVadSegment cur = { -1, -1 };

  for (gsize i = 0; i <= n; i++)
    {
      guint k = i < n ? morok_vad_segmenter_push (seg, probs[i], ev, G_N_ELEMENTS (ev))
                      : morok_vad_segmenter_finish (seg, total, ev, G_N_ELEMENTS (ev));
      for (guint j = 0; j < k; j++)
        {
          if (i < n)
            delay_max = MAX (delay_max, (gint64) (i + 1) * w - ev[j].sample);
          if (ev[j].type == MOROK_VAD_EVENT_START)
            {
              g_assert_cmpint (cur.start, <, 0);
              g_assert_cmpfloat (ev[j].prob, >=, params->threshold);
              cur.start = ev[j].sample;
            }
          else
            {
              g_assert_cmpint (cur.start, >=, 0);
              cur.end = ev[j].sample;
              g_array_append_val (out, cur);
              cur.start = -1;
            }
        }
    }
  g_assert_cmpint (cur.start, <, 0);
  g_assert_cmpuint (morok_vad_segmenter_n_dropped (seg), ==, 0);
  if (out_delay_max)
    *out_delay_max = delay_max;
  return out;
}

static void
assert_segments_equal (GArray *got, GArray *want, const char *what)
{
  gboolean same = got->len == want->len;
  for (guint i = 0; same && i < got->len; i++)
    same = memcmp (&g_array_index (got, MorokVadSegment, i),
                   &g_array_index (want, MorokVadSegment, i), sizeof (MorokVadSegment))
           == 0;
  if (same)
    return;
  g_autoptr (GString) s = g_string_new (NULL);
  for (int k = 0; k < 2; k++)
    {
      GArray *a = k == 0 ? got : want;
      g_string_append (s, k == 0 ? "; got" : "; expected");
      for (guint i = 0; i < a->len; i++)
        g_string_append_printf (s, " [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ")",
                                g_array_index (a, MorokVadSegment, i).start,
                                g_array_index (a, MorokVadSegment, i).end);
    }
  g_test_message ("%s: segments differ%s", what, s->str);
  g_assert_true (same);
}

/* Offline and streaming both give @want (n_want pairs start, end). */
static void
check_pattern (const char *pattern, gint64 total, const MorokVadParams *params, const gint64 *want,
               guint n_want)
{
  g_autoptr (GArray) probs = probs_from_pattern (pattern);
  g_autoptr (GArray) expected = g_array_new (FALSE, FALSE, sizeof (MorokVadSegment));
  g_autoptr (GArray) offline = g_array_new (FALSE, FALSE, sizeof (MorokVadSegment));
  g_array_append_vals (expected, want, n_want);
  if (total < 0)
    total = (gint64) probs->len * morok_vad_params_window (params);

  morok_vad_segments ((float *) probs->data, probs->len, total, params, offline);
  assert_segments_equal (offline, expected, "offline");
  g_autoptr (GArray) streamed
      = stream_segments ((float *) probs->data, probs->len, total, params, NULL);
  assert_segments_equal (streamed, expected, "streaming");
}

/* ---- hand-made sequences ----
 * At 16 kHz with the defaults: window 512, threshold 0.5, neg 0.35,
 * min speech 4000, min silence 1600, pad 480. Chunk i starts at 512 * i. */

/* Twenty speech chunks between silences are one segment, padded by 30 ms. */
static void
test_simple_burst (void)
{
  MorokVadParams p;
  morok_vad_params_init (&p, 16000);
  /* Opens at chunk 10 (5120). Silence from chunk 30 (15360); at chunk 34,
   * 2048 >= 1600 samples of it: closes at 15360, 10240 > 4000 long, kept.
   * Padded: 5120 - 480, 15360 + 480. */
  static const gint64 want[] = { 4640, 15840 };
  check_pattern ("1. 2S 1.", -1, &p, want, 1);
}

/* A burst not longer than min speech is dropped; one chunk more is kept. */
static void
test_short_burst_dropped (void)
{
  MorokVadParams p;
  morok_vad_params_init (&p, 16000);
  /* 7 chunks: [5120, 8704) is 3584 <= 4000 samples: dropped. */
  check_pattern ("1. SSSSSSS 1.", -1, &p, NULL, 0);
  /* 8 chunks: [5120, 9216) is 4096 > 4000: kept, [4640, 9696). */
  static const gint64 want[] = { 4640, 9696 };
  check_pattern ("1. SSSSSSSS 1.", -1, &p, want, 1);
}

/* A pause shorter than min silence does not end the segment. */
static void
test_short_pause_merged (void)
{
  MorokVadParams p;
  morok_vad_params_init (&p, 16000);
  /* Silence at chunks 20-23 (from 10240): 1536 < 1600 at chunk 23, and
   * speech resumes at 24. Silence again from chunk 34 (17408) closes at 38.
   * One segment [5120, 17408), padded [4640, 17888). */
  static const gint64 want[] = { 4640, 17888 };
  check_pattern ("1. 1S .... 1S 1.", -1, &p, want, 1);
}

/* A pause of min silence or more splits the speech in two segments. */
static void
test_long_pause_splits (void)
{
  MorokVadParams p;
  morok_vad_params_init (&p, 16000);
  /* Silence at chunks 20-24: at 24, 12288 - 10240 = 2048 >= 1600, so the
   * first segment is [5120, 10240). Speech reopens at chunk 25 (12800) and
   * silence from 35 (17920) closes [12800, 17920). The gap 2560 >= 2 * 480:
   * each side gets a full pad. */
  static const gint64 want[] = { 4640, 10720, 12320, 18400 };
  check_pattern ("1. 1S ..... 1S 1.", -1, &p, want, 2);
}

/* Segments closer than two pads share the gap half and half, and the first
 * start stops at 0. */
static void
test_padding_shares_short_gap (void)
{
  MorokVadParams p;
  morok_vad_params_init (&p, 16000);
  p.speech_pad_ms = 100; /* 1600 samples, 2 * pad = 3200 */
  p.min_silence_ms = 50; /* 800 */
  p.min_speech_ms = 100; /* 1600 */
  /* Speech at chunks 2-7 and 11-16. Silence from chunk 8 (4096) is 1024 >=
   * 800 at chunk 10: [1024, 4096). Silence from 17 (8704) closes at 19:
   * [5632, 8704). Gap 1536 < 3200: 768 each side, 4864. First start
   * 1024 - 1600 < 0: 0. Last end 8704 + 1600. */
  static const gint64 want[] = { 0, 4864, 4864, 10304 };
  check_pattern ("..SSSSSS...SSSSSS 1.", -1, &p, want, 2);
}

/* At 8 kHz chunks are 256 samples and every duration is half as many samples. */
static void
test_8khz (void)
{
  MorokVadParams p;
  morok_vad_params_init (&p, 8000);
  /* Window 256, min speech 2000, min silence 800, pad 240. Seven chunks of
   * speech (1792 <= 2000) are dropped. Ten from chunk 27 (6912): silence
   * from 37 (9472) is 1024 >= 800 at chunk 41: [6912, 9472), padded
   * [6672, 9712). The stream ends 100 samples into its last chunk. */
  static const gint64 want[] = { 6672, 9712 };
  check_pattern ("1. SSSSSSS 1. 1S 1.", 46 * 256 + 100, &p, want, 1);
}

/* A segment over max speech is split at the longest pause in it, not the
 * first or the last, and the next segment starts where speech resumed. */
static void
test_max_speech_splits_at_longest_pause (void)
{
  MorokVadParams p;
  morok_vad_params_init (&p, 16000);
  p.min_silence_ms = 500; /* 8000: none of the pauses below ends a segment */
  p.max_speech_s = 2;     /* 32000 - 512 - 2 * 480 = 30528 */
  /* Opens at chunk 2 (1024). Pauses longer than 1568 samples:
   *   A chunks 12-15: from 6144, 2048 long, speech again at 8192
   *   B chunks 26-31: from 13312, 3072 long, speech again at 16384
   *   C chunks 42-46: from 21504, 2560 long, speech again at 24064
   * At chunk 62 (31744 - 1024 > 30528) the longest, B, ends the segment at
   * 13312 and a new one starts at 16384 with C still a candidate. Silence
   * from chunk 70 (35840) closes it at chunk 86, before it gets too long
   * again: [16384, 35840). The gap 3072 >= 960 gets full pads. */
  static const gint64 want[] = { 544, 13792, 15904, 36320 };
  check_pattern ("..1S ....1S ......1S .....2SSSS 4.", -1, &p, want, 2);
}

/* Without a pause to split at, a segment over max speech is cut at the chunk
 * that exceeds it, and the speech that goes on opens a new segment. */
static void
test_max_speech_cuts_without_pause (void)
{
  MorokVadParams p;
  morok_vad_params_init (&p, 16000);
  p.max_speech_s = 1; /* 16000 - 512 - 960 = 14528 */
  /* Opens at 0; at chunk 29, 14848 > 14528: cut [0, 14848), nothing open.
   * Chunk 30 reopens at 15360; silence from chunk 40 (20480) closes at 44.
   * Gap 512 < 960: 256 each side. */
  static const gint64 want[] = { 0, 15104, 15104, 20960 };
  check_pattern ("4S 2.", -1, &p, want, 2);
}

/* Speech running to the end of the stream ends there, if long enough. */
static void
test_speech_to_end_of_stream (void)
{
  MorokVadParams p;
  morok_vad_params_init (&p, 16000);
  /* Opens at 5120, the stream ends at 15160 (200 samples short of chunk
   * 30's end): 10040 > 4000, kept [5120, 15160); padded, the end stops at
   * the stream's end. */
  static const gint64 want[] = { 4640, 15160 };
  check_pattern ("1. 2S", 30 * 512 - 200, &p, want, 1);
  /* Seven chunks of speech at the end: 8704 - 5120 <= 4000, dropped. */
  check_pattern ("1. SSSSSSS", -1, &p, NULL, 0);
}

/* Probabilities between neg_threshold and threshold neither open nor close. */
static void
test_hysteresis (void)
{
  MorokVadParams p;
  morok_vad_params_init (&p, 16000);
  /* The first 10 (0.4) open nothing; at chunks 30-39 they keep the segment
   * open; silence from chunk 40 (20480) closes [10240, 20480). */
  static const gint64 want[] = { 9760, 20960 };
  check_pattern ("1~ 1. 1S 1~ 1.", -1, &p, want, 1);
}

/* ---- a literal reference ----
 * Upstream's loop as written, with its list of candidate pauses and its
 * prev_end / next_start variables, to check the segmenter's shortcuts (a
 * monotone stack for the list, the dead branches left out). */

typedef struct
{
  gint64 end;
  gint64 dur;
} RefPause;

static GArray *
reference_segments (const float *probs, gsize n, gint64 total, const MorokVadParams *params)
{
  gint64 sr = params->sample_rate, w = morok_vad_params_window (params);
  double thr = params->threshold;
  double neg = params->neg_threshold >= 0 ? params->neg_threshold : MAX (thr - 0.15, 0.01);
  gint64 min_speech = sr * params->min_speech_ms / 1000;
  gint64 pad = sr * params->speech_pad_ms / 1000;
  double max_speech = (double) sr * params->max_speech_s - w - 2.0 * pad;
  gint64 min_silence = sr * params->min_silence_ms / 1000;
  gint64 min_sil_max = sr * params->min_silence_at_max_speech_ms / 1000;
  gboolean triggered = FALSE, has_cur = FALSE;
  gint64 cur_start = 0, temp_end = 0, prev_end = 0, next_start = 0;
  g_autoptr (GArray) ends = g_array_new (FALSE, FALSE, sizeof (RefPause));
  GArray *out = g_array_new (FALSE, FALSE, sizeof (MorokVadSegment));

  for (gsize i = 0; i < n; i++)
    {
      double p = probs[i];
      gint64 pos = w * (gint64) i;
      if (p >= thr && temp_end != 0)
        {
          RefPause e = { temp_end, pos - temp_end };
          if (e.dur > min_sil_max)
            g_array_append_val (ends, e);
          temp_end = 0;
          if (next_start < prev_end)
            next_start = pos;
        }
      if (p >= thr && !triggered)
        {
          triggered = has_cur = TRUE;
          cur_start = pos;
          continue;
        }
      if (triggered && (double) (pos - cur_start) > max_speech)
        {
          if (ends->len > 0)
            {
              RefPause best = g_array_index (ends, RefPause, 0);
              for (guint k = 1; k < ends->len; k++)
                if (g_array_index (ends, RefPause, k).dur > best.dur)
                  best = g_array_index (ends, RefPause, k);
              prev_end = best.end;
              g_array_append_val (out, ((MorokVadSegment){ cur_start, prev_end }));
              has_cur = FALSE;
              next_start = prev_end + best.dur;
              if (next_start < prev_end + pos)
                {
                  cur_start = next_start;
                  has_cur = TRUE;
                }
              else
                {
                  triggered = FALSE;
                }
              guint kept = 0;
              for (guint k = 0; k < ends->len; k++)
                if (g_array_index (ends, RefPause, k).end > next_start)
                  g_array_index (ends, RefPause, kept++) = g_array_index (ends, RefPause, k);
              g_array_set_size (ends, kept);
              prev_end = next_start = temp_end = 0;
            }
          else
            {
              g_array_append_val (out, ((MorokVadSegment){ cur_start, pos }));
              has_cur = triggered = FALSE;
              prev_end = next_start = temp_end = 0;
              g_array_set_size (ends, 0);
              continue;
            }
        }
      if (p < neg && triggered)
        {
          if (temp_end == 0)
            temp_end = pos;
          if (pos - temp_end < min_silence)
            continue;
          if (temp_end - cur_start > min_speech)
            g_array_append_val (out, ((MorokVadSegment){ cur_start, temp_end }));
          has_cur = triggered = FALSE;
          prev_end = next_start = temp_end = 0;
          g_array_set_size (ends, 0);
        }
    }
  if (has_cur && total - cur_start > min_speech)
    g_array_append_val (out, ((MorokVadSegment){ cur_start, total }));

  for (guint i = 0; i < out->len; i++)
    {
      MorokVadSegment *s = &g_array_index (out, MorokVadSegment, i);
      if (i == 0)
        s->start = MAX (0, s->start - pad);
      if (i + 1 < out->len)
        {
          gint64 silence = s[1].start - s->end;
          if (silence < 2 * pad)
            {
              s->end += silence / 2;
              s[1].start = MAX (0, s[1].start - silence / 2);
            }
          else
            {
              s->end = MIN (total, s->end + pad);
              s[1].start = MAX (0, s[1].start - pad);
            }
        }
      else
        {
          s->end = MIN (total, s->end + pad);
        }
    }
  return out;
}

/* ---- random sequences ---- */

static void
random_params (GRand *r, MorokVadParams *p)
{
  morok_vad_params_init (p, g_rand_boolean (r) ? 16000 : 8000);
  p->threshold = g_rand_double_range (r, 0.2, 0.8);
  switch (g_rand_int_range (r, 0, 4))
    {
    case 0: p->neg_threshold = g_rand_double_range (r, 0, p->threshold); break;
    case 1:
      p->neg_threshold = g_rand_double (r); /* may exceed threshold */
      break;
    default: break;
    }
  p->min_speech_ms = g_rand_int_range (r, 0, 600);
  p->min_silence_ms = g_rand_int_range (r, 0, 5) == 0 ? 0 : g_rand_int_range (r, 0, 500);
  p->speech_pad_ms = g_rand_int_range (r, 0, 5) == 0 ? 0 : g_rand_int_range (r, 0, 400);
  p->min_silence_at_max_speech_ms = g_rand_int_range (r, 0, 200);
  if (g_rand_int_range (r, 0, 3) > 0)
    p->max_speech_s = g_rand_double_range (r, 0.02, 5);
}

/* A bursty two-state Markov chain: long runs of speech and of silence, with
 * some chunks in between the thresholds and some on them exactly. @clean:
 * only values >= threshold or < neg_threshold. */
static GArray *
random_probs (GRand *r, const MorokVadParams *params, gboolean clean)
{
  double thr = params->threshold;
  double neg = params->neg_threshold >= 0 ? params->neg_threshold : MAX (thr - 0.15, 0.01);
  double lo = MIN (thr, neg), hi = MAX (thr, neg);
  double stay = g_rand_double_range (r, 0.5, 0.99);
  double noise = clean ? 0 : g_rand_double_range (r, 0, 0.3);
  gsize n = g_rand_int_range (r, 0, 8) == 0 ? g_rand_int_range (r, 0, 20)
                                            : g_rand_int_range (r, 20, 3000);
  GArray *probs = g_array_sized_new (FALSE, FALSE, sizeof (float), n);
  gboolean speech = g_rand_boolean (r);

  for (gsize i = 0; i < n; i++)
    {
      if (g_rand_double (r) > stay)
        speech = !speech;
      double p;
      if (clean)
        p = speech ? g_rand_double_range (r, hi, 1) : g_rand_double_range (r, 0, lo) * 0.999;
      else if (g_rand_double (r) < noise)
        p = g_rand_int_range (r, 0, 3) == 0 ? (float) thr : g_rand_double_range (r, lo, hi);
      else
        p = speech ? g_rand_double_range (r, thr, 1) : g_rand_double_range (r, 0, neg);
      float f = (float) p;
      if (clean && !(speech ? f >= hi : f < lo))
        f = speech ? 1.0f : 0.0f;
      g_array_append_val (probs, f);
    }
  return probs;
}

/* Speech with pauses of one length, just long enough to split at, as dense
 * as they come: the most candidates a segment can hold. */
static GArray *
dense_pause_probs (GRand *r, const MorokVadParams *params)
{
  gint64 w = morok_vad_params_window (params);
  gint64 pause = (params->sample_rate * params->min_silence_at_max_speech_ms / 1000) / w + 1;
  gsize n = g_rand_int_range (r, 100, 3000);
  GArray *probs = g_array_sized_new (FALSE, FALSE, sizeof (float), n);
  for (gsize i = 0; i < n; i++)
    {
      float f = (i % (pause + 1)) == 0 ? 1.0f : 0.0f;
      g_array_append_val (probs, f);
    }
  return probs;
}

/* On thousands of random sequences with random parameters, the streaming
 * events are the offline segments, which are the literal reference's; on
 * sequences without in-between values, no event comes later than
 * morok_vad_params_delay_max () says. */
static void
test_random_stream_equals_offline (void)
{
  g_autoptr (GRand) r = g_rand_new_with_seed (20240601);
  guint n_cases = g_test_thorough () ? 20000 : 4000;
  guint n_segments = 0, n_split = 0;
  double worst = 0;

  for (guint c = 0; c < n_cases; c++)
    {
      MorokVadParams params;
      random_params (r, &params);
      int kind = g_rand_int_range (r, 0, 10);
      gboolean clean = kind < 4;
      if (clean)
        params.neg_threshold = -1;
      if (kind == 9)
        {
          params.min_silence_ms
              = MAX (params.min_silence_ms, 2 * params.min_silence_at_max_speech_ms + 100);
          params.max_speech_s = g_rand_double_range (r, 0.2, 3);
        }
      g_autoptr (GArray) probs
          = kind == 9 ? dense_pause_probs (r, &params) : random_probs (r, &params, clean);
      const float *pv = (const float *) probs->data;
      gint64 w = morok_vad_params_window (&params);
      gint64 total
          = probs->len == 0 ? 0 : ((gint64) probs->len - 1) * w + g_rand_int_range (r, 1, w + 1);

      g_autoptr (GArray) offline = g_array_new (FALSE, FALSE, sizeof (MorokVadSegment));
      morok_vad_segments (pv, probs->len, total, &params, offline);
      g_autoptr (GArray) ref = reference_segments (pv, probs->len, total, &params);
      g_autofree char *what = g_strdup_printf (
          "case %u (%d Hz, threshold %g, neg %g, min speech %u ms, min silence %u ms, pad %u ms, "
          "split pause %u ms, max speech %g s, %u chunks)",
          c, params.sample_rate, params.threshold, params.neg_threshold, params.min_speech_ms,
          params.min_silence_ms, params.speech_pad_ms, params.min_silence_at_max_speech_ms,
          params.max_speech_s, probs->len);
      assert_segments_equal (offline, ref, what);

      gint64 delay;
      g_autoptr (GArray) streamed = stream_segments (pv, probs->len, total, &params, &delay);
      assert_segments_equal (streamed, offline, what);
      if (clean)
        {
          gint64 bound = morok_vad_params_delay_max (&params);
          g_assert_cmpint (delay, <=, bound);
          if (!isfinite (params.max_speech_s))
            worst = MAX (worst, (double) delay / (double) bound);
        }
      n_segments += offline->len;
      n_split += isfinite (params.max_speech_s);
    }
  g_test_message ("%u cases, %u segments, %u with max speech; worst delay without it: %.0f%% "
                  "of the bound",
                  n_cases, n_segments, n_split, 100 * worst);
}

/* ---- tentative spans ---- */

/* The regions a live gate passes, from the tentative span after each push
 * of @probs: each opens where a span opens and closes at the end of the
 * span that closes it (G_MAXINT64 if open at the end). Checks that a span
 * opens no earlier than morok_vad_params_tentative_delay () before the
 * samples pushed then: audio held that long is not yet out when it opens. */
static GArray *
tentative_regions (const float *probs, gsize n, const MorokVadParams *params)
{
  g_autoptr (MorokVadSegmenter) seg = morok_vad_segmenter_new (params);
  GArray *out = g_array_new (FALSE, FALSE, sizeof (MorokVadSegment));
  MorokVadEvent ev[MOROK_VAD_EVENTS_MAX];
  gint64 w = morok_vad_params_window (params);
  gint64 delay = morok_vad_params_tentative_delay (params);
  MorokVadSegment open = { -1, -1 };
  for (gsize i = 0; i < n; i++)
    {
      morok_vad_segmenter_push (seg, probs[i], ev, G_N_ELEMENTS (ev));
      gint64 start, end;
      morok_vad_segmenter_tentative (seg, &start, &end);
      g_assert_cmpint (start, <, end == 0 ? 1 : end);
      if (end == G_MAXINT64 && open.start < 0)
        {
          g_assert_cmpint (start, >=, (gint64) (i + 1) * w - delay);
          open.start = start;
        }
      else if (end != G_MAXINT64 && open.start >= 0)
        {
          open.end = end;
          g_array_append_val (out, open);
          open.start = -1;
        }
    }
  if (open.start >= 0)
    {
      open.end = G_MAXINT64;
      g_array_append_val (out, open);
    }
  return out;
}

/* Every sample of @segments lies in one of @regions. */
static void
assert_regions_cover (GArray *segments, GArray *regions, const char *what)
{
  for (guint i = 0; i < segments->len; i++)
    {
      const MorokVadSegment *s = &g_array_index (segments, MorokVadSegment, i);
      gint64 at = s->start;
      for (guint k = 0; k < regions->len && at < s->end; k++)
        {
          const MorokVadSegment *r = &g_array_index (regions, MorokVadSegment, k);
          if (r->start <= at && at < r->end)
            at = r->end;
        }
      if (at < s->end)
        g_test_message ("%s: segment [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT
                        ") not covered from %" G_GINT64_FORMAT,
                        what, s->start, s->end, at);
      g_assert_cmpint (at, >=, s->end);
    }
}

/* On random sequences with random parameters (splits at max speech
 * included), every offline segment lies in the regions the tentative spans
 * open and close, each known no later than the tentative delay after its
 * start. */
static void
test_tentative_spans_cover_segments (void)
{
  g_autoptr (GRand) r = g_rand_new_with_seed (20261207);
  guint n_cases = g_test_thorough () ? 20000 : 3000;
  for (guint c = 0; c < n_cases; c++)
    {
      MorokVadParams params;
      random_params (r, &params);
      gboolean dense = g_rand_int_range (r, 0, 10) == 0;
      if (dense)
        {
          params.min_silence_ms
              = MAX (params.min_silence_ms, 2 * params.min_silence_at_max_speech_ms + 100);
          params.max_speech_s = g_rand_double_range (r, 0.2, 3);
        }
      g_autoptr (GArray) probs
          = dense ? dense_pause_probs (r, &params) : random_probs (r, &params, g_rand_boolean (r));
      const float *pv = (const float *) probs->data;
      gint64 w = morok_vad_params_window (&params);
      gint64 total
          = probs->len == 0 ? 0 : ((gint64) probs->len - 1) * w + g_rand_int_range (r, 1, w + 1);
      g_autoptr (GArray) offline = g_array_new (FALSE, FALSE, sizeof (MorokVadSegment));
      morok_vad_segments (pv, probs->len, total, &params, offline);
      g_autoptr (GArray) regions = tentative_regions (pv, probs->len, &params);
      g_autofree char *what = g_strdup_printf ("case %u", c);
      assert_regions_cover (offline, regions, what);
    }
}

/* At the defaults the tentative delay is the pad and a chunk: 480 + 512
 * samples at 16 kHz, 240 + 256 at 8 kHz (62 ms both). */
static void
test_tentative_delay_at_defaults (void)
{
  MorokVadParams p;
  morok_vad_params_init (&p, 16000);
  g_assert_cmpint (morok_vad_params_tentative_delay (&p), ==, 992);
  morok_vad_params_init (&p, 8000);
  g_assert_cmpint (morok_vad_params_tentative_delay (&p), ==, 496);
}

/* The segmenter's split candidates never run out on segments up to max
 * speech long, however dense the pauses. */
static void
test_candidates_suffice (void)
{
  g_autoptr (GRand) r = g_rand_new_with_seed (7);
  for (guint c = 0; c < 300; c++)
    {
      MorokVadParams params;
      random_params (r, &params);
      params.min_silence_ms = 2 * params.min_silence_at_max_speech_ms + 100;
      params.max_speech_s = g_rand_double_range (r, 0.2, 20);
      g_autoptr (GArray) probs = dense_pause_probs (r, &params);
      g_autoptr (MorokVadSegmenter) seg = morok_vad_segmenter_new (&params);
      MorokVadEvent ev[MOROK_VAD_EVENTS_MAX];
      for (guint i = 0; i < probs->len; i++)
        morok_vad_segmenter_push (seg, g_array_index (probs, float, i), ev, G_N_ELEMENTS (ev));
      g_assert_cmpuint (morok_vad_segmenter_n_dropped (seg), ==, 0);
    }
}

/* When all candidates are in use a new pause is not recorded, and counted. */
static void
test_full_candidates_are_counted (void)
{
  MorokVadParams p;
  morok_vad_params_init (&p, 16000);
  p.min_silence_at_max_speech_ms = 0; /* every pause of one chunk counts */
  p.max_speech_s = 1000;              /* room for more than the maximum */
  g_autoptr (MorokVadSegmenter) seg = morok_vad_segmenter_new (&p);
  MorokVadEvent ev[MOROK_VAD_EVENTS_MAX];
  /* 1100 pauses of one chunk, all 512 long: each could be the next split. */
  for (guint i = 0; i < 2 * 1100 + 1; i++)
    morok_vad_segmenter_push (seg, i % 2 == 0 ? 0.9f : 0.1f, ev, G_N_ELEMENTS (ev));
  g_assert_cmpuint (morok_vad_segmenter_n_dropped (seg), ==, 1100 - MOROK_VAD_SPLIT_CANDIDATES_MAX);
}

/* ---- the segmenter's contract ---- */

/* The usage example of vad-segmenter.h. */
static void
test_header_example (void)
{
  gsize n_chunks = 40;
  gint64 n_samples = 40 * 512;
  g_autoptr (GArray) a = probs_from_pattern ("1. 2S 1.");
  const float *probs = (const float *) a->data;
  guint n_events = 0;

  MorokVadParams params;
  morok_vad_params_init (&params, 16000);
  params.min_silence_ms = 300;
  g_autoptr (MorokVadSegmenter) seg = morok_vad_segmenter_new (&params);
  MorokVadEvent ev[MOROK_VAD_EVENTS_MAX];
  for (gsize i = 0; i < n_chunks; i++)
    {
      guint n = morok_vad_segmenter_push (seg, probs[i], ev, G_N_ELEMENTS (ev));
      for (guint k = 0; k < n; k++)
        g_test_message ("%s at sample %" G_GINT64_FORMAT,
                        ev[k].type == MOROK_VAD_EVENT_START ? "start" : "end", ev[k].sample);
      n_events += n;
    }
  guint n = morok_vad_segmenter_finish (seg, n_samples, ev, G_N_ELEMENTS (ev));

  /* The START came during the pushes; 300 ms of silence is not there by
   * chunk 39, so the segment ends with the stream: [4640, 20480). */
  g_assert_cmpuint (n_events, ==, 1);
  g_assert_cmpuint (n, ==, 1);
  g_assert_cmpint (ev[0].type, ==, MOROK_VAD_EVENT_END);
  g_assert_cmpint (ev[0].sample, ==, 20480);
}

/* After a reset (or a finish) the same probabilities give the same events. */
static void
test_reset_starts_over (void)
{
  MorokVadParams p;
  morok_vad_params_init (&p, 16000);
  g_autoptr (GArray) a = probs_from_pattern ("1. 2S 1. 1S ..");
  g_autoptr (MorokVadSegmenter) seg = morok_vad_segmenter_new (&p);
  MorokVadEvent ev[MOROK_VAD_EVENTS_MAX];
  GArray *runs[3];
  gboolean did_reset = FALSE;

  for (int run = 0; run < 3; run++)
    {
      runs[run] = g_array_new (FALSE, FALSE, sizeof (MorokVadEvent));
      for (guint i = 0; i < a->len; i++)
        {
          guint n
              = morok_vad_segmenter_push (seg, g_array_index (a, float, i), ev, G_N_ELEMENTS (ev));
          g_array_append_vals (runs[run], ev, n);
          if (run == 0 && i == 25 && !did_reset)
            {
              did_reset = TRUE;
              morok_vad_segmenter_reset (seg); /* run 0 was half a stream */
              g_array_set_size (runs[run], 0);
              i = (guint) -1;
            }
        }
      guint n = morok_vad_segmenter_finish (seg, (gint64) a->len * 512, ev, G_N_ELEMENTS (ev));
      g_array_append_vals (runs[run], ev, n);
    }
  g_assert_cmpuint (runs[0]->len, ==, 4);
  for (int run = 1; run < 3; run++)
    {
      g_assert_cmpuint (runs[run]->len, ==, runs[0]->len);
      /* field by field: the padding after type and prob is never written */
      for (guint i = 0; i < runs[0]->len; i++)
        {
          const MorokVadEvent *got = &g_array_index (runs[run], MorokVadEvent, i);
          const MorokVadEvent *want = &g_array_index (runs[0], MorokVadEvent, i);
          g_assert_cmpint (got->type, ==, want->type);
          g_assert_cmpint (got->sample, ==, want->sample);
          g_assert_cmpfloat (got->prob, ==, want->prob);
        }
    }
  for (int run = 0; run < 3; run++)
    g_array_unref (runs[run]);
}

/* The speaking state (the meta morokvad puts on each buffer): on at a chunk
 * >= threshold, off at one < neg_threshold, unchanged in between; worked out
 * by hand for the derived neg_threshold (0.5 - 0.15 = 0.35) and for one
 * given (0.2); a reset switches it off. */
static void
test_speaking_hysteresis (void)
{
  static const float probs[] = { 0.1f, 0.6f, 0.4f, 0.3f, 0.45f, 0.5f, 0.25f, 0.15f };
  static const gboolean derived[] = { FALSE, TRUE, TRUE, FALSE, FALSE, TRUE, FALSE, FALSE };
  static const gboolean given[] = { FALSE, TRUE, TRUE, TRUE, TRUE, TRUE, TRUE, FALSE };
  const gboolean *want[] = { derived, given };
  MorokVadEvent ev[MOROK_VAD_EVENTS_MAX];
  for (guint v = 0; v < 2; v++)
    {
      MorokVadParams p;
      morok_vad_params_init (&p, 16000);
      p.neg_threshold = v == 0 ? -1 : 0.2;
      g_autoptr (MorokVadSegmenter) seg = morok_vad_segmenter_new (&p);
      g_assert_false (morok_vad_segmenter_speaking (seg));
      for (guint i = 0; i < G_N_ELEMENTS (probs); i++)
        {
          morok_vad_segmenter_push (seg, probs[i], ev, G_N_ELEMENTS (ev));
          g_assert_cmpint (morok_vad_segmenter_speaking (seg), ==, want[v][i]);
        }
      morok_vad_segmenter_push (seg, 0.9f, ev, G_N_ELEMENTS (ev));
      g_assert_true (morok_vad_segmenter_speaking (seg));
      morok_vad_segmenter_reset (seg);
      g_assert_false (morok_vad_segmenter_speaking (seg));
    }
}

/* Pushing allocates nothing, even while splitting at max speech. */
static void
test_push_allocates_nothing (void)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
  MorokVadParams p;
  morok_vad_params_init (&p, 16000);
  p.max_speech_s = 1;     /* 28 chunks and a bit */
  p.min_silence_ms = 300; /* longer than the pauses below */
  /* Segments of 60 speech chunks with pauses of 4 and 6 chunks: split. */
  g_autoptr (GArray) probs = probs_from_pattern ("1. 2S .... 2S ...... 2S 2.");
  g_autoptr (MorokVadSegmenter) seg = morok_vad_segmenter_new (&p);
  MorokVadEvent ev[MOROK_VAD_EVENTS_MAX];
  guint n_events = 0;

  morok_vad_segmenter_push (seg, 0.9f, ev, G_N_ELEMENTS (ev));
  struct mallinfo2 before = mallinfo2 ();
  for (int round = 0; round < 200; round++)
    for (guint i = 0; i < probs->len; i++)
      n_events
          += morok_vad_segmenter_push (seg, g_array_index (probs, float, i), ev, G_N_ELEMENTS (ev));
  struct mallinfo2 after = mallinfo2 ();
  g_assert_cmpuint (n_events, >, 0);
  g_assert_cmpuint (after.uordblks, ==, before.uordblks);
  g_assert_cmpuint (after.hblkhd, ==, before.hblkhd);
#else
  g_test_skip ("needs glibc's mallinfo2 ()");
#endif
}

/* A sample rate other than 16000 or 8000, a threshold outside [0, 1] and a
 * max speech that is not positive are errors naming the field. */
static void
test_bad_params (void)
{
  MorokVadParams p;
  GError *error = NULL;

  morok_vad_params_init (&p, 16000);
  g_assert_true (morok_vad_params_check (&p, &error));
  g_assert_no_error (error);

  p.sample_rate = 44100;
  g_assert_false (morok_vad_params_check (&p, &error));
  g_assert_error (error, MOROK_VAD_ERROR, MOROK_VAD_ERROR_PARAMS);
  g_assert_nonnull (strstr (error->message, "sample_rate is 44100"));
  g_clear_error (&error);

  morok_vad_params_init (&p, 8000);
  p.threshold = 1.5;
  g_assert_false (morok_vad_params_check (&p, &error));
  g_assert_error (error, MOROK_VAD_ERROR, MOROK_VAD_ERROR_PARAMS);
  g_assert_nonnull (strstr (error->message, "threshold is 1.5"));
  g_clear_error (&error);

  morok_vad_params_init (&p, 8000);
  p.max_speech_s = 0;
  g_assert_false (morok_vad_params_check (&p, &error));
  g_assert_error (error, MOROK_VAD_ERROR, MOROK_VAD_ERROR_PARAMS);
  g_assert_nonnull (strstr (error->message, "max_speech_s"));
  g_clear_error (&error);
}

/* ---- the Silero v5 fixture ---- */

/* On real Silero v5 probabilities (tests/fixtures, from the silero branch),
 * streaming equals offline equals the reference, with and without splits. */
static void
test_fixture_v5 (void)
{
  g_autofree char *path
      = g_test_build_filename (G_TEST_DIST, "fixtures", "vad-probs-v5-16k.txt", NULL);
  g_autofree char *text = NULL;
  if (!g_file_get_contents (path, &text, NULL, NULL))
    {
      g_test_skip ("no tests/fixtures/vad-probs-v5-16k.txt in this tree");
      return;
    }
  g_autoptr (GArray) probs = g_array_new (FALSE, FALSE, sizeof (float));
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  for (char **l = lines; *l; l++)
    {
      char *end;
      if (**l == '#' || **l == '\0')
        continue;
      float p = (float) g_ascii_strtod (*l, &end);
      g_assert_true (end != *l);
      g_array_append_val (probs, p);
    }
  g_assert_cmpuint (probs->len, >, 100);

  for (int variant = 0; variant < 2; variant++)
    {
      MorokVadParams params;
      morok_vad_params_init (&params, 16000);
      if (variant == 1)
        params.max_speech_s = 2;
      gint64 total = (gint64) probs->len * 512;
      const float *pv = (const float *) probs->data;
      g_autoptr (GArray) offline = g_array_new (FALSE, FALSE, sizeof (MorokVadSegment));
      morok_vad_segments (pv, probs->len, total, &params, offline);
      g_autoptr (GArray) ref = reference_segments (pv, probs->len, total, &params);
      g_autoptr (GArray) streamed = stream_segments (pv, probs->len, total, &params, NULL);
      assert_segments_equal (offline, ref, "fixture, reference");
      assert_segments_equal (streamed, offline, "fixture, streaming");
      g_assert_cmpuint (offline->len, >, 0);
      g_test_message ("fixture, max speech %g s: %u segments", params.max_speech_s, offline->len);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/vad-segmenter/offline/simple-burst", test_simple_burst);
  g_test_add_func ("/vad-segmenter/offline/short-burst-is-dropped", test_short_burst_dropped);
  g_test_add_func ("/vad-segmenter/offline/short-pause-is-merged", test_short_pause_merged);
  g_test_add_func ("/vad-segmenter/offline/long-pause-splits", test_long_pause_splits);
  g_test_add_func ("/vad-segmenter/offline/padding-shares-short-gap",
                   test_padding_shares_short_gap);
  g_test_add_func ("/vad-segmenter/offline/8khz", test_8khz);
  g_test_add_func ("/vad-segmenter/offline/max-speech-splits-at-longest-pause",
                   test_max_speech_splits_at_longest_pause);
  g_test_add_func ("/vad-segmenter/offline/max-speech-cuts-without-pause",
                   test_max_speech_cuts_without_pause);
  g_test_add_func ("/vad-segmenter/offline/speech-to-end-of-stream", test_speech_to_end_of_stream);
  g_test_add_func ("/vad-segmenter/offline/hysteresis", test_hysteresis);
  g_test_add_func ("/vad-segmenter/stream/equals-offline-on-random",
                   test_random_stream_equals_offline);
  g_test_add_func ("/vad-segmenter/stream/candidates-suffice", test_candidates_suffice);
  g_test_add_func ("/vad-segmenter/stream/full-candidates-are-counted",
                   test_full_candidates_are_counted);
  g_test_add_func ("/vad-segmenter/stream/header-example", test_header_example);
  g_test_add_func ("/vad-segmenter/stream/reset-starts-over", test_reset_starts_over);
  g_test_add_func ("/vad-segmenter/stream/push-allocates-nothing", test_push_allocates_nothing);
  g_test_add_func ("/vad-segmenter/stream/speaking-hysteresis", test_speaking_hysteresis);
  g_test_add_func ("/vad-segmenter/tentative/spans-cover-segments",
                   test_tentative_spans_cover_segments);
  g_test_add_func ("/vad-segmenter/tentative/delay-at-defaults", test_tentative_delay_at_defaults);
  g_test_add_func ("/vad-segmenter/params/bad-values-are-errors", test_bad_params);
  g_test_add_func ("/vad-segmenter/fixture/v5-16k-stream-equals-offline", test_fixture_v5);
  return g_test_run ();
}
