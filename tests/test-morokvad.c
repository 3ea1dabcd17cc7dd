/* SPDX-License-Identifier: MIT */
/* The morokvad element, driven with GstHarness on the espeak-ng fixture. */
#include "element-checks.h"
#include "fixtures.h"
#include "jit/morok-jit-registry.h"
#include "models/vad-segmenter.h"
#include "temp-dir.h"
#include "vad-harness.h"
#include <gst/audio/audio.h>
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <math.h>
#include <string.h>

#define RATE 16000
#define CHUNK 512

/* ---- tests ---- */

/* On the fixture, the messages give the segments that the segmenter gives
 * for onnxruntime's probabilities, each boundary within one chunk. */
GST_START_TEST (test_messages_match_reference_segments)
{
  gsize n;
  g_autofree gint16 *pcm = fixture_read_wav ("speech-16k.wav", NULL, &n);
  g_autoptr (GArray) probs = fixture_read_floats ("vad-probs-v6-16k.txt");
  g_autoptr (GArray) want = expected_segments (probs, n);
  GstHarness *h = vad_harness (NULL, NULL);
  push_pcm (h, pcm, 0, n, 1000);
  gst_harness_push_event (h, gst_event_new_eos ());
  g_autoptr (GArray) got = collect_boundaries (h);
  fail_unless (want->len > 0);
  fail_unless_equals_int (got->len, 2 * want->len);
  const GstClockTime chunk_ns = gst_util_uint64_scale_int (CHUNK, GST_SECOND, RATE);
  for (guint i = 0; i < want->len; i++)
    {
      MorokVadSegment *s = &g_array_index (want, MorokVadSegment, i);
      Boundary *b0 = &g_array_index (got, Boundary, 2 * i),
               *b1 = &g_array_index (got, Boundary, 2 * i + 1);
      fail_unless (b0->start && !b1->start);
      GstClockTime t0 = gst_util_uint64_scale_int (s->start, GST_SECOND, RATE);
      GstClockTime t1 = gst_util_uint64_scale_int (s->end, GST_SECOND, RATE);
      fail_unless (ABS ((gint64) b0->ts - (gint64) t0) <= (gint64) chunk_ns,
                   "segment %u starts at %" GST_TIME_FORMAT ", expected %" GST_TIME_FORMAT, i,
                   GST_TIME_ARGS (b0->ts), GST_TIME_ARGS (t0));
      fail_unless (ABS ((gint64) b1->ts - (gint64) t1) <= (gint64) chunk_ns,
                   "segment %u ends at %" GST_TIME_FORMAT ", expected %" GST_TIME_FORMAT, i,
                   GST_TIME_ARGS (b1->ts), GST_TIME_ARGS (t1));
    }
  guint64 chunks;
  g_object_get (h->element, "chunks-processed", &chunks, NULL);
  fail_unless_equals_int ((gint) chunks, (gint) probs->len);
  vad_teardown (h);
}
GST_END_TEST;

/* Pushes the fixture to @h in a segment starting at @segment_start, with
 * @stamped buffers (else without PTS) of @duration (or none), then EOS. */
static void
push_fixture_in_segment (GstHarness *h, GstClockTime segment_start, gboolean stamped,
                         gboolean duration)
{
  gsize n;
  g_autofree gint16 *pcm = fixture_read_wav ("speech-16k.wav", NULL, &n);
  GstSegment segment;
  gst_segment_init (&segment, GST_FORMAT_TIME);
  segment.start = segment.time = segment_start;
  gst_harness_push_event (h, gst_event_new_segment (&segment));
  for (gsize i = 0; i < n; i += 1000)
    {
      GstBuffer *buf = pcm_buffer (pcm, i, MIN (1000, n - i));
      GST_BUFFER_PTS (buf) = stamped ? GST_BUFFER_PTS (buf) + segment_start : GST_CLOCK_TIME_NONE;
      if (!duration)
        GST_BUFFER_DURATION (buf) = GST_CLOCK_TIME_NONE;
      g_assert_cmpint (gst_harness_push (h, buf), ==, GST_FLOW_OK);
    }
  gst_harness_push_event (h, gst_event_new_eos ());
}

/* The fixture's boundaries, pushed in a segment starting at @segment_start
 * and with @stamped buffers (else without PTS). */
static GArray *
boundaries_of_fixture (GstClockTime segment_start, gboolean stamped)
{
  GstHarness *h = vad_harness (NULL, NULL);
  push_fixture_in_segment (h, segment_start, stamped, FALSE);
  GArray *got = collect_boundaries (h);
  vad_teardown (h);
  return got;
}

/* Buffers without PTS get their boundaries' times from the samples and the
 * segment: the segment's start plus the samples before, the times that
 * buffers stamped so give. */
GST_START_TEST (test_messages_without_pts)
{
  const GstClockTime start = 2 * GST_SECOND;
  g_autoptr (GArray) want = boundaries_of_fixture (start, TRUE);
  g_autoptr (GArray) got = boundaries_of_fixture (start, FALSE);
  fail_unless (want->len > 0);
  fail_unless_equals_int (got->len, want->len);
  for (guint i = 0; i < got->len; i++)
    {
      Boundary *g = &g_array_index (got, Boundary, i), *w = &g_array_index (want, Boundary, i);
      fail_unless (g->start == w->start);
      fail_unless (w->ts >= start);
      fail_unless_equals_uint64 (g->ts, w->ts);
    }
}
GST_END_TEST;

/* Every buffer carries a GstAudioLevelMeta; an existing level is kept. */
GST_START_TEST (test_meta_on_every_buffer)
{
  gsize n;
  g_autofree gint16 *pcm = fixture_read_wav ("speech-16k.wav", NULL, &n);
  GstHarness *h = vad_harness (NULL, NULL);
  gboolean any_voice = FALSE;
  for (gsize i = 0; i + 1600 <= 16000 * 6; i += 1600)
    {
      GstBuffer *in = pcm_buffer (pcm, i, 1600);
      if (i == 0)
        gst_buffer_add_audio_level_meta (in, 42, FALSE);
      GstBuffer *out = gst_harness_push_and_pull (h, in);
      GstAudioLevelMeta *meta = gst_buffer_get_audio_level_meta (out);
      fail_unless (meta != NULL);
      if (i == 0)
        fail_unless_equals_int (meta->level, 42);
      any_voice = any_voice || meta->voice_activity;
      gst_buffer_unref (out);
    }
  fail_unless (any_voice);
  vad_teardown (h);
}
GST_END_TEST;

/* Probabilities chunk by chunk: pushes @n_chunks chunks starting at @first. */
static void
probs_by_chunk (GstHarness *h, const gint16 *pcm, gsize first, guint n_chunks, double *out,
                gboolean discont_first)
{
  for (guint c = 0; c < n_chunks; c++)
    {
      GstBuffer *buf = pcm_buffer (pcm, first + c * CHUNK, CHUNK);
      if (c == 0 && discont_first)
        GST_BUFFER_FLAG_SET (buf, GST_BUFFER_FLAG_DISCONT);
      g_assert_cmpint (gst_harness_push (h, buf), ==, GST_FLOW_OK);
      g_object_get (h->element, "probability", &out[c], NULL);
    }
}

/* Probabilities of @n_chunks chunks of @pcm given as @format (S16LE or
 * F32LE) in @channels copies of the mono signal, one chunk a buffer; the
 * samples in [@bad, @bad + 64) are NaN, +inf and -inf in F32LE (zero in
 * S16LE) when @bad is not 0. Returns the non-finite input warnings posted,
 * checking the first one's count and time. */
static guint
probs_as (const char *format, guint channels, const gint16 *pcm, guint n_chunks, gsize bad,
          double *out)
{
  GstHarness *h = vad_harness (NULL, NULL);
  g_autofree char *caps = g_strdup_printf (
      "audio/x-raw, format=%s, rate=16000, channels=%u, layout=interleaved", format, channels);
  gst_harness_set_src_caps_str (h, caps);
  gboolean f32 = g_str_equal (format, "F32LE");
  static const float specials[] = { NAN, INFINITY, -INFINITY };
  for (guint c = 0; c < n_chunks; c++)
    {
      GstBuffer *buf = gst_buffer_new_allocate (NULL, CHUNK * channels * (f32 ? 4 : 2), NULL);
      GstMapInfo map;
      gst_buffer_map (buf, &map, GST_MAP_WRITE);
      for (gsize i = 0; i < CHUNK; i++)
        {
          gsize at = c * CHUNK + i;
          gboolean odd = bad && at >= bad && at < bad + 64;
          for (guint k = 0; k < channels; k++)
            if (f32)
              ((float *) map.data)[i * channels + k] = odd ? specials[at % 3] : pcm[at] / 32768.0f;
            else
              ((gint16 *) map.data)[i * channels + k] = odd ? 0 : pcm[at];
        }
      gst_buffer_unmap (buf, &map);
      GST_BUFFER_PTS (buf) = gst_util_uint64_scale_int (c * CHUNK, GST_SECOND, RATE);
      g_assert_cmpint (gst_harness_push (h, buf), ==, GST_FLOW_OK);
      g_object_get (h->element, "probability", &out[c], NULL);
    }
  GstBus *bus = gst_element_get_bus (h->element);
  guint64 samples = 0;
  GstClockTime pts = 0;
  guint warnings = pop_non_finite_warnings (bus, &samples, &pts, NULL);
  gst_object_unref (bus);
  if (warnings > 0)
    {
      fail_unless_equals_uint64 (samples, 64); /* frames, the channels mixed: all in one chunk */
      fail_unless_equals_uint64 (pts,
                                 gst_util_uint64_scale_int (bad / CHUNK * CHUNK, GST_SECOND, RATE));
    }
  vad_teardown (h);
  return warnings;
}

/* The element mixes every format and channel count into the same model
 * input: F32 mono, F32 and S16 stereo of one signal give exactly the
 * probabilities of S16 mono; non-finite F32 samples count as silence
 * (exactly as zeros in S16). */
GST_START_TEST (test_formats_and_channels_mix_alike)
{
  gsize n;
  g_autofree gint16 *pcm = fixture_read_wav ("speech-16k.wav", NULL, &n);
  enum
  {
    CHUNKS = 120
  };
  const gsize bad = 80 * CHUNK + 100; /* inside speech: the state carries it on */
  double want[CHUNKS], got[CHUNKS], zeroed[CHUNKS];
  probs_as ("S16LE", 1, pcm, CHUNKS, 0, want);
  const struct
  {
    const char *format;
    guint channels;
  } cases[] = {
    { "F32LE", 1 },
    { "F32LE", 2 },
    { "S16LE", 2 },
  };
  for (guint k = 0; k < G_N_ELEMENTS (cases); k++)
    {
      fail_unless_equals_int (probs_as (cases[k].format, cases[k].channels, pcm, CHUNKS, 0, got),
                              0);
      for (int c = 0; c < CHUNKS; c++)
        fail_unless (got[c] == want[c], "%s x %u, chunk %d: %f, S16 mono %f", cases[k].format,
                     cases[k].channels, c, got[c], want[c]);
    }
  fail_unless_equals_int (probs_as ("S16LE", 1, pcm, CHUNKS, bad, zeroed), 0);
  /* a warning tells the NaNs and infinities apart from silence */
  fail_unless_equals_int (probs_as ("F32LE", 1, pcm, CHUNKS, bad, got), 1);
  double moved = 0;
  for (int c = 0; c < CHUNKS; c++)
    {
      fail_unless (got[c] == zeroed[c], "chunk %d: %f with NaN/inf, %f with zeros", c, got[c],
                   zeroed[c]);
      moved = MAX (moved, fabs (zeroed[c] - want[c]));
    }
  fail_unless (moved > 0); /* the zeroed samples mattered */
}
GST_END_TEST;

/* F32 buffer of @n zeros at sample @first, its samples from @bad on NaN. */
static GstBuffer *
f32_buffer (gsize first, gsize n, gsize bad)
{
  GstBuffer *buf = gst_buffer_new_allocate (NULL, n * sizeof (float), NULL);
  GstMapInfo map;
  gst_buffer_map (buf, &map, GST_MAP_WRITE);
  for (gsize i = 0; i < n; i++)
    ((float *) map.data)[i] = i >= bad ? NAN : 0.0f;
  gst_buffer_unmap (buf, &map);
  GST_BUFFER_PTS (buf) = gst_util_uint64_scale_int (first, GST_SECOND, RATE);
  GST_BUFFER_DURATION (buf) = gst_util_uint64_scale_int (n, GST_SECOND, RATE);
  return buf;
}

/* The non-finite input warning comes once until a flush: not again for
 * later NaNs, nor after a DISCONT or a GAP; again after a flush. */
GST_START_TEST (test_non_finite_warns_once_a_stream)
{
  GstHarness *h = vad_harness (NULL, NULL);
  gst_harness_set_src_caps_str (
      h, "audio/x-raw, format=F32LE, rate=16000, channels=1, layout=interleaved");
  GstBus *bus = gst_element_get_bus (h->element);
  guint64 samples = 0;
  GstClockTime pts = 0;
  fail_unless_equals_int (gst_harness_push (h, f32_buffer (0, CHUNK, CHUNK)), GST_FLOW_OK);
  fail_unless_equals_int (pop_non_finite_warnings (bus, NULL, NULL, NULL), 0);
  fail_unless_equals_int (gst_harness_push (h, f32_buffer (CHUNK, CHUNK, 12)), GST_FLOW_OK);
  fail_unless_equals_int (gst_harness_push (h, f32_buffer (2 * CHUNK, CHUNK, 0)), GST_FLOW_OK);
  fail_unless_equals_int (pop_non_finite_warnings (bus, &samples, &pts, NULL), 1);
  fail_unless_equals_uint64 (samples, CHUNK - 12);
  fail_unless_equals_uint64 (pts, gst_util_uint64_scale_int (CHUNK, GST_SECOND, RATE));
  gst_harness_push_event (h, gst_event_new_gap (3 * CHUNK * GST_SECOND / RATE, GST_SECOND));
  GstBuffer *discont = f32_buffer (4 * CHUNK + RATE, CHUNK, 0);
  GST_BUFFER_FLAG_SET (discont, GST_BUFFER_FLAG_DISCONT);
  fail_unless_equals_int (gst_harness_push (h, discont), GST_FLOW_OK);
  fail_unless_equals_int (pop_non_finite_warnings (bus, NULL, NULL, NULL), 0);
  gst_harness_push_event (h, gst_event_new_flush_start ());
  gst_harness_push_event (h, gst_event_new_flush_stop (TRUE));
  GstSegment segment;
  gst_segment_init (&segment, GST_FORMAT_TIME);
  gst_harness_push_event (h, gst_event_new_segment (&segment));
  fail_unless_equals_int (gst_harness_push (h, f32_buffer (0, CHUNK, 0)), GST_FLOW_OK);
  fail_unless_equals_int (pop_non_finite_warnings (bus, &samples, NULL, NULL), 1);
  fail_unless_equals_uint64 (samples, CHUNK);
  gst_object_unref (bus);
  vad_teardown (h);
}
GST_END_TEST;

/* After a DISCONT buffer the probabilities equal those of a fresh element. */
GST_START_TEST (test_discont_resets_state)
{
  gsize n;
  g_autofree gint16 *pcm = fixture_read_wav ("speech-16k.wav", NULL, &n);
  enum
  {
    AFTER = 40
  };
  const gsize split = 150 * CHUNK; /* inside speech: the state matters */
  double fresh[AFTER], resumed[AFTER], carried[AFTER];
  GstHarness *a = vad_harness (NULL, NULL);
  probs_by_chunk (a, pcm, split, AFTER, fresh, FALSE);
  vad_teardown (a);
  GstHarness *b = vad_harness (NULL, NULL);
  double scratch[150];
  probs_by_chunk (b, pcm, 0, 150, scratch, FALSE);
  probs_by_chunk (b, pcm, split, AFTER, resumed, TRUE);
  vad_teardown (b);
  GstHarness *c = vad_harness (NULL, NULL);
  probs_by_chunk (c, pcm, 0, 150, scratch, FALSE);
  probs_by_chunk (c, pcm, split, AFTER, carried, FALSE);
  vad_teardown (c);
  double diff_carried = 0;
  for (int i = 0; i < AFTER; i++)
    {
      fail_unless (fabs (fresh[i] - resumed[i]) < 1e-6, "chunk %d: %f after DISCONT, %f fresh", i,
                   resumed[i], fresh[i]);
      diff_carried = MAX (diff_carried, fabs (fresh[i] - carried[i]));
    }
  /* without the DISCONT the state is carried, and the values differ */
  fail_unless (diff_carried > 1e-3);
}
GST_END_TEST;

/* MOROK_PRECISION=int8 is for the encoders: morokvad runs Silero in f32
 * (int8 moves its probabilities by up to 0.36), so an element started
 * under it shares the f32 element's program and gives its probabilities. */
GST_START_TEST (test_int8_setting_runs_f32)
{
  gsize n;
  g_autofree gint16 *pcm = fixture_read_wav ("speech-16k.wav", NULL, &n);
  enum
  {
    CHUNKS = 200
  };
  double f32[CHUNKS], int8[CHUNKS];
  GstHarness *a = vad_harness (NULL, NULL);
  guint64 before = morok_jit_registry_prepare_count ();
  g_setenv ("MOROK_PRECISION", "int8", TRUE);
  GstHarness *b = vad_harness (NULL, NULL);
  g_unsetenv ("MOROK_PRECISION");
  fail_unless_equals_int (morok_jit_registry_prepare_count () - before, 0);
  probs_by_chunk (a, pcm, 0, CHUNKS, f32, FALSE);
  probs_by_chunk (b, pcm, 0, CHUNKS, int8, FALSE);
  for (int i = 0; i < CHUNKS; i++)
    fail_unless (int8[i] == f32[i], "chunk %d: %f under int8, %f", i, int8[i], f32[i]);
  vad_teardown (a);
  vad_teardown (b);
}
GST_END_TEST;

/* EOS in the middle of speech closes the open segment. */
GST_START_TEST (test_eos_closes_open_segment)
{
  gsize n;
  g_autofree gint16 *pcm = fixture_read_wav ("speech-16k.wav", NULL, &n);
  g_autoptr (GArray) probs = fixture_read_floats ("vad-probs-v6-16k.txt");
  g_autoptr (GArray) segs = expected_segments (probs, n);
  MorokVadSegment *s = &g_array_index (segs, MorokVadSegment, 0);
  gsize cut = (s->start + s->end) / 2; /* the middle of the first segment */
  GstHarness *h = vad_harness (NULL, NULL);
  push_pcm (h, pcm, 0, cut, 777);
  g_autoptr (GArray) before = collect_boundaries (h);
  gst_harness_push_event (h, gst_event_new_eos ());
  g_autoptr (GArray) after = collect_boundaries (h);
  fail_unless_equals_int (before->len, 1);
  fail_unless (g_array_index (before, Boundary, 0).start);
  fail_unless_equals_int (after->len, 1);
  Boundary *end = &g_array_index (after, Boundary, 0);
  fail_unless (!end->start);
  fail_unless_equals_uint64 (end->ts, gst_util_uint64_scale_int (cut, GST_SECOND, RATE));
  vad_teardown (h);
}
GST_END_TEST;

/* remove-silence passes exactly the speech samples plus pads, in order and
 * with their timestamps, and sends GAP events for the rest. */
GST_START_TEST (test_remove_silence)
{
  gsize n;
  g_autofree gint16 *pcm = fixture_read_wav ("speech-16k.wav", NULL, &n);
  GstHarness *h = vad_harness ("remove-silence", "true");
  push_pcm (h, pcm, 0, n, 1000);
  gst_harness_push_event (h, gst_event_new_eos ());
  g_autoptr (GArray) bounds = collect_boundaries (h);
  fail_unless (bounds->len >= 2 && bounds->len % 2 == 0);
  /* the segments the element announced, in samples */
  gsize kept = 0;
  GstBuffer *out;
  gint64 prev_end = -1;
  while ((out = gst_harness_try_pull (h)))
    {
      gint64 s0 = (gint64) gst_util_uint64_scale_round (GST_BUFFER_PTS (out), RATE, GST_SECOND);
      gsize len = gst_buffer_get_size (out) / 2;
      gboolean inside = FALSE;
      for (guint i = 0; i < bounds->len; i += 2)
        {
          gint64 a = (gint64) gst_util_uint64_scale_round (g_array_index (bounds, Boundary, i).ts,
                                                           RATE, GST_SECOND);
          gint64 b = (gint64) gst_util_uint64_scale_round (
              g_array_index (bounds, Boundary, i + 1).ts, RATE, GST_SECOND);
          inside = inside || (s0 >= a && s0 + (gint64) len <= b);
        }
      fail_unless (inside, "buffer at sample %" G_GINT64_FORMAT " of %zu samples is outside speech",
                   s0, len);
      fail_unless (s0 >= prev_end);
      prev_end = s0 + (gint64) len;
      /* the samples themselves are untouched */
      GstMapInfo map;
      gst_buffer_map (out, &map, GST_MAP_READ);
      fail_unless (memcmp (map.data, pcm + s0, map.size) == 0);
      gst_buffer_unmap (out, &map);
      kept += len;
      gst_buffer_unref (out);
    }
  gsize want = 0;
  for (guint i = 0; i < bounds->len; i += 2)
    want += gst_util_uint64_scale_round (g_array_index (bounds, Boundary, i + 1).ts
                                             - g_array_index (bounds, Boundary, i).ts,
                                         RATE, GST_SECOND);
  fail_unless (ABS ((gssize) kept - (gssize) want) <= (gssize) bounds->len,
               "kept %zu samples, segments hold %zu", kept, want);
  guint gaps = 0;
  GstEvent *ev;
  while ((ev = gst_harness_try_pull_event (h)))
    {
      gaps += GST_EVENT_TYPE (ev) == GST_EVENT_GAP;
      gst_event_unref (ev);
    }
  fail_unless (gaps > 0);
  /* the delay is reported as latency */
  fail_unless (latency_at_least (h, 300 * GST_MSECOND));
  vad_teardown (h);
}
GST_END_TEST;

/* With remove-silence, the times (PTS or GAP timestamp, then duration) of
 * what comes out for the fixture pushed in a segment starting at
 * @segment_start, with @stamped buffers (else without PTS): the buffers'
 * into @buffers, the GAP events' into @gaps. */
static void
removed_of_fixture (GstClockTime segment_start, gboolean stamped, GArray *buffers, GArray *gaps)
{
  GstHarness *h = vad_harness ("remove-silence", "true");
  push_fixture_in_segment (h, segment_start, stamped, TRUE);
  GstBuffer *out;
  while ((out = gst_harness_try_pull (h)))
    {
      GstClockTime t[2] = { GST_BUFFER_PTS (out), GST_BUFFER_DURATION (out) };
      g_array_append_vals (buffers, t, 2);
      gst_buffer_unref (out);
    }
  GstEvent *ev;
  while ((ev = gst_harness_try_pull_event (h)))
    {
      if (GST_EVENT_TYPE (ev) == GST_EVENT_GAP)
        {
          GstClockTime t[2];
          gst_event_parse_gap (ev, &t[0], &t[1]);
          g_array_append_vals (gaps, t, 2);
        }
      gst_event_unref (ev);
    }
  vad_teardown (h);
}

/* remove-silence on buffers without PTS: the same GAP events and buffer
 * times as for buffers stamped with the segment's start plus the samples
 * before (the sample clock's times). */
GST_START_TEST (test_remove_silence_without_pts)
{
  const GstClockTime start = 2 * GST_SECOND;
  g_autoptr (GArray) want_bufs = g_array_new (FALSE, FALSE, sizeof (GstClockTime));
  g_autoptr (GArray) want_gaps = g_array_new (FALSE, FALSE, sizeof (GstClockTime));
  g_autoptr (GArray) got_bufs = g_array_new (FALSE, FALSE, sizeof (GstClockTime));
  g_autoptr (GArray) got_gaps = g_array_new (FALSE, FALSE, sizeof (GstClockTime));
  removed_of_fixture (start, TRUE, want_bufs, want_gaps);
  removed_of_fixture (start, FALSE, got_bufs, got_gaps);
  fail_unless (want_gaps->len > 0 && want_bufs->len > 0);
  fail_unless_equals_int (got_gaps->len, want_gaps->len);
  fail_unless_equals_int (got_bufs->len, want_bufs->len);
  for (guint i = 0; i < want_gaps->len; i++)
    fail_unless_equals_uint64 (g_array_index (got_gaps, GstClockTime, i),
                               g_array_index (want_gaps, GstClockTime, i));
  for (guint i = 0; i < want_bufs->len; i++)
    fail_unless_equals_uint64 (g_array_index (got_bufs, GstClockTime, i),
                               g_array_index (want_bufs, GstClockTime, i));
  fail_unless (g_array_index (want_gaps, GstClockTime, 0) >= start);
}
GST_END_TEST;

/* In PLAYING, the properties read at prepare (GST_PARAM_MUTABLE_READY) are
 * ignored with a warning in morokvad's debug category; post-messages
 * (MUTABLE_PLAYING) still changes. */
GST_START_TEST (test_ready_only_properties)
{
  GstHarness *h = vad_harness (NULL, NULL);
  fail_unless (GST_STATE (h->element) == GST_STATE_PLAYING);
  g_autofree char *category = set_property_warning_category (h->element, "threshold", "0.9");
  fail_unless_equals_string (category, "morokvad");
  g_object_set (h->element, "post-messages", FALSE, NULL);
  gdouble threshold;
  gboolean post;
  g_object_get (h->element, "threshold", &threshold, "post-messages", &post, NULL);
  fail_unless_equals_float (threshold, 0.5);
  fail_unless (!post);
  vad_teardown (h);
}
GST_END_TEST;

/* An unsupported rate fails negotiation with a message naming the rates. */
GST_START_TEST (test_unsupported_rate)
{
  GstHarness *h = gst_harness_new ("morokvad");
  GstBus *bus = gst_bus_new ();
  gst_element_set_bus (h->element, bus);
  gst_harness_set_src_caps_str (
      h, "audio/x-raw, format=S16LE, rate=44100, channels=1, layout=interleaved");
  GstBuffer *buf = gst_buffer_new_allocate (NULL, 882, NULL);
  gst_buffer_memset (buf, 0, 0, 882);
  fail_unless_equals_int (gst_harness_push (h, buf), GST_FLOW_NOT_NEGOTIATED);
  GstMessage *msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
  fail_unless (msg != NULL);
  GError *err = NULL;
  gst_message_parse_error (msg, &err, NULL);
  fail_unless (strstr (err->message, "16000") != NULL, "%s", err->message);
  g_error_free (err);
  gst_message_unref (msg);
  gst_object_unref (bus);
  vad_teardown (h);
}
GST_END_TEST;

/* A compiler that exits early or rejects a flag fails the state change
 * with an error naming it and what it printed; the host process lives on. */
GST_START_TEST (test_broken_compiler) { assert_broken_compilers_fail_to_start ("morokvad", NULL); }
GST_END_TEST;

/* A missing or corrupt model is an error message on the bus naming the
 * file; the state change fails and nothing crashes. */
GST_START_TEST (test_bad_model)
{
  assert_fails_to_start ("morokvad", "/nonexistent/vad.onnx", "/nonexistent/vad.onnx");
  g_autofree char *wav = fixture_path ("speech-16k.wav");
  assert_fails_to_start ("morokvad", wav, "speech-16k.wav");
  g_autofree char *tiny = fixture_path ("onnx-tiny.onnx");
  assert_fails_to_start ("morokvad", tiny, "onnx-tiny.onnx");
}
GST_END_TEST;

/* 50 cycles NULL <-> PLAYING in a pipeline with audio flowing leave no
 * object or buffer behind. */
GST_START_TEST (test_state_cycles)
{
  assert_cycles_leak_nothing ("audiotestsrc num-buffers=4 samplesperbuffer=700 ! "
                              "audio/x-raw,rate=16000,channels=1 ! morokvad ! fakesink",
                              50);
}
GST_END_TEST;

/* ---- many elements, one model ---- */

/* Prototypes the registry made while two harnesses of @model_a and
 * @model_b (NULL: the default model) started, and how many were alive
 * with both running. */
static guint64
prepares_of_two (const char *model_a, const char *model_b, guint *out_alive)
{
  guint64 before = morok_jit_registry_prepare_count ();
  GstHarness *a = vad_harness (model_a ? "model" : NULL, model_a);
  GstHarness *b = vad_harness (model_b ? "model" : NULL, model_b);
  *out_alive = morok_jit_registry_n_prototypes ();
  vad_teardown (a);
  vad_teardown (b);
  fail_unless_equals_int (morok_jit_registry_n_prototypes (), 0);
  return morok_jit_registry_prepare_count () - before;
}

/* Two elements of one model share its program: the first prepares one
 * prototype per rate (16 and 8 kHz), the second none; the same bytes
 * under another file name share too; another model does not. The last
 * element to stop frees them all. */
GST_START_TEST (test_elements_share_program)
{
  guint alive;
  fail_unless_equals_int (prepares_of_two (NULL, NULL, &alive), 2);
  fail_unless_equals_int (alive, 2);

  g_autofree char *v6 = g_build_filename (g_getenv ("MOROK_MODEL_DIR"), "silero_vad_v6.onnx", NULL);
  g_autofree char *dir = temp_dir_new ();
  g_autofree char *copy = g_build_filename (dir, "renamed.onnx", NULL);
  g_autofree char *bytes = NULL;
  gsize len;
  fail_unless (g_file_get_contents (v6, &bytes, &len, NULL), "%s", v6);
  fail_unless (g_file_set_contents (copy, bytes, len, NULL));
  fail_unless_equals_int (prepares_of_two (v6, copy, &alive), 2);
  fail_unless_equals_int (alive, 2);

  g_autofree char *v5 = g_build_filename (g_getenv ("MOROK_MODEL_DIR"), "silero_vad_v5.onnx", NULL);
  fail_unless_equals_int (prepares_of_two (v6, v5, &alive), 4);
  fail_unless_equals_int (alive, 4);
  temp_dir_remove (dir);
}
GST_END_TEST;

/* A setting that changes the program (here MOROK_THREADS) makes another
 * prototype: an element started under MOROK_THREADS=1 does not share with
 * one started without it. */
GST_START_TEST (test_other_options_do_not_share)
{
  guint64 before = morok_jit_registry_prepare_count ();
  GstHarness *a = vad_harness (NULL, NULL);
  g_setenv ("MOROK_THREADS", "1", TRUE);
  GstHarness *b = vad_harness (NULL, NULL);
  g_unsetenv ("MOROK_THREADS");
  fail_unless_equals_int (morok_jit_registry_prepare_count () - before, 4);
  fail_unless_equals_int (morok_jit_registry_n_prototypes (), 4);
  vad_teardown (a);
  vad_teardown (b);
  fail_unless_equals_int (morok_jit_registry_n_prototypes (), 0);
}
GST_END_TEST;

/* An element sharing its program with another, chunks of the two
 * interleaved (a different stretch of speech each), gives exactly the
 * probabilities of a lone element on the same audio. */
GST_START_TEST (test_shared_probabilities_equal_lone)
{
  gsize n;
  g_autofree gint16 *pcm = fixture_read_wav ("speech-16k.wav", NULL, &n);
  enum
  {
    CHUNKS = 120
  };
  fail_unless (n >= 2 * CHUNKS * CHUNK);
  double lone[CHUNKS], shared[CHUNKS], other[CHUNKS];
  GstHarness *h = vad_harness (NULL, NULL);
  probs_by_chunk (h, pcm, 0, CHUNKS, lone, FALSE);
  vad_teardown (h);

  GstHarness *a = vad_harness (NULL, NULL);
  GstHarness *b = vad_harness (NULL, NULL);
  for (guint c = 0; c < CHUNKS; c++)
    {
      GstBuffer *buf = pcm_buffer (pcm, CHUNKS * CHUNK + c * CHUNK, CHUNK);
      fail_unless_equals_int (gst_harness_push (b, buf), GST_FLOW_OK);
      g_object_get (b->element, "probability", &other[c], NULL);
      fail_unless_equals_int (gst_harness_push (a, pcm_buffer (pcm, c * CHUNK, CHUNK)),
                              GST_FLOW_OK);
      g_object_get (a->element, "probability", &shared[c], NULL);
    }
  gboolean differ = FALSE;
  for (guint c = 0; c < CHUNKS; c++)
    {
      fail_unless (shared[c] == lone[c], "chunk %u: %f shared, %f alone", c, shared[c], lone[c]);
      differ = differ || other[c] != lone[c];
    }
  fail_unless (differ);
  vad_teardown (a);
  vad_teardown (b);
}
GST_END_TEST;

#define CYCLE_THREADS 8
#define CYCLES 20

/* Eight threads start and stop twenty pipelines each, at once: every run
 * reaches EOS, and when all have stopped the registry holds nothing (the
 * last release of each prototype freed it). */
GST_START_TEST (test_parallel_start_stop)
{
  guint64 prepares = run_parallel_cycles ("audiotestsrc num-buffers=3 samplesperbuffer=700 ! "
                                          "audio/x-raw,rate=16000,channels=1 ! morokvad ! fakesink",
                                          CYCLE_THREADS, CYCLES);
  fail_unless (prepares >= 2 && prepares <= 2 * CYCLE_THREADS * CYCLES, "%" G_GUINT64_FORMAT,
               prepares);
  fail_unless_equals_int (morok_jit_registry_n_prototypes (), 0);
}
GST_END_TEST;

static Suite *
morokvad_suite (void)
{
  Suite *s = suite_create ("morokvad");
  TCase *tc = tcase_create ("general");
  tcase_set_timeout (tc, 120);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_messages_match_reference_segments);
  tcase_add_test (tc, test_messages_without_pts);
  tcase_add_test (tc, test_meta_on_every_buffer);
  tcase_add_test (tc, test_ready_only_properties);
  tcase_add_test (tc, test_discont_resets_state);
  tcase_add_test (tc, test_formats_and_channels_mix_alike);
  tcase_add_test (tc, test_non_finite_warns_once_a_stream);
  tcase_add_test (tc, test_eos_closes_open_segment);
  tcase_add_test (tc, test_int8_setting_runs_f32);
  tcase_add_test (tc, test_remove_silence);
  tcase_add_test (tc, test_remove_silence_without_pts);
  tcase_add_test (tc, test_unsupported_rate);
  tcase_add_test (tc, test_bad_model);
  tcase_add_test (tc, test_broken_compiler);
  tcase_add_test (tc, test_state_cycles);
  tcase_add_test (tc, test_elements_share_program);
  tcase_add_test (tc, test_other_options_do_not_share);
  tcase_add_test (tc, test_shared_probabilities_equal_lone);
  tcase_add_test (tc, test_parallel_start_stop);
  return s;
}

GST_CHECK_MAIN (morokvad);
