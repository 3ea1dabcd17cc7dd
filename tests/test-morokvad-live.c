/* SPDX-License-Identifier: MIT */
/* morokvad remove-silence=true behind a live upstream (a harness whose
 * src pad answers LATENCY live) against the same element behind one that
 * is not live, on the espeak-ng fixture: the hold each adds to the LATENCY
 * answer, that no audio is held longer than that in live mode, the same
 * messages (the onnxruntime reference's segments) and at least the same
 * audio. */
#include "fixtures.h"
#include "models/vad-segmenter.h"
#include "vad-harness.h"
#include <gst/check/gstcheck.h>
#include <string.h>

#define RATE 16000
#define CHUNK 512
#define BLOCK 777 /* samples a buffer: not a multiple of the chunk */

/* The holds at the defaults (16 kHz: pad P = 480, window W = 512, min
 * speech M = 4000, min silence S = 1600 samples). Not live, the
 * segmenter's worst event delay 2P + W (max (ceil (M/W), floor (M/W) +
 * ceil (S/W)) + 1) = 960 + 512 * 12 plus the chunk being filled: 7616
 * samples. Live, the pad before a chunk that opens speech plus that
 * chunk: P + W = 992 samples. */
#define HOLD_EXACT_NS (7616 * GST_SECOND / RATE) /* 476 ms */
#define HOLD_LIVE_NS (992 * GST_SECOND / RATE)   /* 62 ms */

static gint64
sample_of (GstClockTime t)
{
  return (gint64) gst_util_uint64_scale_round (t, RATE, GST_SECOND);
}

/* A buffer or GAP that left the element, in samples of the stream. */
typedef struct
{
  gboolean gap, discont;
  gint64 start, len;
  gint64 pushed_before; /* samples pushed in before the push that sent it out */
} Item;

/* One run of the fixture through the element. */
typedef struct
{
  gint64 pushed; /* samples pushed in so far */
  GArray *items; /* Item, in the order they left */
  GArray *bounds;
  guint8 *passed; /* per sample: 1 if a buffer held it */
  GstClockTime latency;
} Run;

static GstPadProbeReturn
record_out (GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
  Run *run = data;
  Item it = { .pushed_before = run->pushed };
  if (info->type & GST_PAD_PROBE_TYPE_BUFFER)
    {
      GstBuffer *buf = GST_PAD_PROBE_INFO_BUFFER (info);
      it.start = sample_of (GST_BUFFER_PTS (buf));
      it.len = (gint64) gst_buffer_get_size (buf) / 2;
      it.discont = GST_BUFFER_IS_DISCONT (buf);
    }
  else if (GST_EVENT_TYPE (GST_PAD_PROBE_INFO_EVENT (info)) == GST_EVENT_GAP)
    {
      GstClockTime t, d;
      gst_event_parse_gap (GST_PAD_PROBE_INFO_EVENT (info), &t, &d);
      it.gap = TRUE;
      it.start = sample_of (t);
      it.len = sample_of (t + d) - it.start;
    }
  else
    return GST_PAD_PROBE_OK;
  g_array_append_val (run->items, it);
  return GST_PAD_PROBE_OK;
}

/* The fixture's @n samples @pcm through morokvad remove-silence=true,
 * behind a @live upstream or not, in buffers of BLOCK samples (the one
 * starting at sample @discont_at flagged DISCONT), then EOS. The buffers
 * that come out hold the input's samples at their times. */
static void
run_fixture_discont (gboolean live, const gint16 *pcm, gsize n, gsize discont_at, Run *run)
{
  GstHarness *h = vad_harness ("remove-silence", "true");
  gst_harness_set_live (h, live);
  *run = (Run){ .items = g_array_new (FALSE, FALSE, sizeof (Item)), .passed = g_new0 (guint8, n) };
  g_autoptr (GstPad) src = gst_element_get_static_pad (h->element, "src");
  gst_pad_add_probe (src, GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM,
                     record_out, run, NULL);
  for (gsize i = 0; i < n; i += BLOCK)
    {
      gsize len = MIN (BLOCK, n - i);
      GstBuffer *buf = pcm_buffer (pcm, i, len);
      if (i == discont_at)
        GST_BUFFER_FLAG_SET (buf, GST_BUFFER_FLAG_DISCONT);
      fail_unless_equals_int (gst_harness_push (h, buf), GST_FLOW_OK);
      run->pushed += (gint64) len;
    }
  gst_harness_push_event (h, gst_event_new_eos ());
  run->latency = gst_harness_query_latency (h);
  run->bounds = collect_boundaries (h);
  GstBuffer *out;
  while ((out = gst_harness_try_pull (h)))
    {
      gint64 s0 = sample_of (GST_BUFFER_PTS (out));
      gsize len = gst_buffer_get_size (out) / 2;
      fail_unless (s0 >= 0 && s0 + (gint64) len <= (gint64) n);
      GstMapInfo map;
      gst_buffer_map (out, &map, GST_MAP_READ);
      fail_unless (memcmp (map.data, pcm + s0, map.size) == 0,
                   "buffer at %" G_GINT64_FORMAT " does not hold the input's samples", s0);
      gst_buffer_unmap (out, &map);
      memset (run->passed + s0, 1, len);
      gst_buffer_unref (out);
    }
  vad_teardown (h);
}

static void
run_fixture (gboolean live, const gint16 *pcm, gsize n, Run *run)
{
  run_fixture_discont (live, pcm, n, G_MAXSIZE, run);
}

static void
run_clear (Run *run)
{
  g_array_unref (run->items);
  g_array_unref (run->bounds);
  g_free (run->passed);
}

/* The LATENCY answer of morokvad with @prop = @value, behind a @live
 * upstream (answering 0), before caps and after a buffer. */
static void
assert_latency (const char *prop, const char *value, gboolean live, GstClockTime want)
{
  GstHarness *h = vad_harness (prop, value);
  gst_harness_set_live (h, live);
  fail_unless_equals_uint64 (gst_harness_query_latency (h), want);
  gint16 silence[BLOCK] = { 0 };
  fail_unless_equals_int (gst_harness_push (h, pcm_buffer (silence, 0, BLOCK)), GST_FLOW_OK);
  fail_unless_equals_uint64 (gst_harness_query_latency (h), want);
  vad_teardown (h);
}

/* ---- tests ---- */

/* remove-silence adds its hold to the LATENCY answer: 62 ms behind a live
 * upstream, 476 ms behind one that is not; without it, nothing. */
GST_START_TEST (test_latency_answers)
{
  assert_latency ("remove-silence", "true", TRUE, HOLD_LIVE_NS);
  assert_latency ("remove-silence", "true", FALSE, HOLD_EXACT_NS);
  assert_latency (NULL, NULL, TRUE, 0);
  assert_latency (NULL, NULL, FALSE, 0);
}
GST_END_TEST;

/* Behind a live upstream, every buffer and GAP leaves no later than the
 * advertised hold after its first sample came in: its first sample s is out
 * once sample s + hold is in (s + hold + 1 samples), so what leaves during
 * a push was not yet due before it. What leaves tiles the stream, in order. */
GST_START_TEST (test_live_holds_no_longer_than_advertised)
{
  gsize n;
  g_autofree gint16 *pcm = fixture_read_wav ("speech-16k.wav", NULL, &n);
  Run run;
  run_fixture (TRUE, pcm, n, &run);
  fail_unless_equals_uint64 (run.latency, HOLD_LIVE_NS);
  gint64 hold = sample_of (run.latency), at = 0;
  guint buffers = 0;
  for (guint i = 0; i < run.items->len; i++)
    {
      Item *it = &g_array_index (run.items, Item, i);
      fail_unless (it->start == at,
                   "item %u starts at %" G_GINT64_FORMAT ", expected %" G_GINT64_FORMAT, i,
                   it->start, at);
      fail_unless (it->len > 0);
      fail_unless (it->pushed_before <= it->start + hold,
                   "%s at sample %" G_GINT64_FORMAT " left after %" G_GINT64_FORMAT
                   " samples were in: held more than %" G_GINT64_FORMAT,
                   it->gap ? "GAP" : "buffer", it->start, it->pushed_before, hold);
      at += it->len;
      buffers += !it->gap;
    }
  fail_unless_equals_int64 (at, (gint64) n);
  fail_unless (buffers > 0 && buffers < run.items->len);
  run_clear (&run);
}
GST_END_TEST;

/* Live or not, the messages are the same, and they are the segments of
 * onnxruntime's probabilities (the fixture's reference, each boundary
 * within a chunk). */
GST_START_TEST (test_live_messages_equal_exact)
{
  gsize n;
  g_autofree gint16 *pcm = fixture_read_wav ("speech-16k.wav", NULL, &n);
  g_autoptr (GArray) probs = fixture_read_floats ("vad-probs-v6-16k.txt");
  g_autoptr (GArray) want = expected_segments (probs, n);
  Run live, exact;
  run_fixture (TRUE, pcm, n, &live);
  run_fixture (FALSE, pcm, n, &exact);
  fail_unless (want->len > 1);
  fail_unless_equals_int (live.bounds->len, exact.bounds->len);
  fail_unless_equals_int (live.bounds->len, 2 * want->len);
  for (guint i = 0; i < live.bounds->len; i++)
    {
      Boundary *l = &g_array_index (live.bounds, Boundary, i);
      Boundary *e = &g_array_index (exact.bounds, Boundary, i);
      fail_unless (l->start == e->start && l->ts == e->ts, "boundary %u differs", i);
      MorokVadSegment *s = &g_array_index (want, MorokVadSegment, i / 2);
      fail_unless (l->start == (i % 2 == 0));
      fail_unless (ABS (sample_of (l->ts) - (l->start ? s->start : s->end)) <= CHUNK,
                   "boundary %u at sample %" G_GINT64_FORMAT ", reference %" G_GINT64_FORMAT, i,
                   sample_of (l->ts), l->start ? s->start : s->end);
    }
  run_clear (&live);
  run_clear (&exact);
}
GST_END_TEST;

/* Every sample that passes behind an upstream that is not live passes
 * behind a live one too (live mode may pass more: speech it cannot yet
 * know to be too short, the silence after speech until min-silence has
 * passed). */
GST_START_TEST (test_live_passes_all_exact_audio)
{
  gsize n;
  g_autofree gint16 *pcm = fixture_read_wav ("speech-16k.wav", NULL, &n);
  Run live, exact;
  run_fixture (TRUE, pcm, n, &live);
  run_fixture (FALSE, pcm, n, &exact);
  gsize n_exact = 0, n_live = 0;
  for (gsize i = 0; i < n; i++)
    {
      fail_unless (live.passed[i] || !exact.passed[i], "sample %zu passes only when not live", i);
      n_exact += exact.passed[i];
      n_live += live.passed[i];
    }
  fail_unless (n_exact > 0 && n_live < n);
  GST_INFO ("of %zu samples, %zu pass live, %zu not live", n, n_live, n_exact);
  run_clear (&live);
  run_clear (&exact);
}
GST_END_TEST;

/* Behind a live upstream, a DISCONT buffer in the middle of speech (the
 * element starts over there) passes in pieces as its audio is decided, and
 * only the piece at its start carries DISCONT: the transcriber ends an
 * utterance at a DISCONT. */
GST_START_TEST (test_live_discont_only_at_its_start)
{
  gsize n;
  g_autofree gint16 *pcm = fixture_read_wav ("speech-16k.wav", NULL, &n);
  g_autoptr (GArray) probs = fixture_read_floats ("vad-probs-v6-16k.txt");
  g_autoptr (GArray) segs = expected_segments (probs, n);
  MorokVadSegment *s = &g_array_index (segs, MorokVadSegment, 0);
  gsize discont_at = (gsize) (s->start + s->end) / 2 / BLOCK * BLOCK;
  Run run;
  run_fixture_discont (TRUE, pcm, n, discont_at, &run);
  guint pieces = 0;
  for (guint i = 0; i < run.items->len; i++)
    {
      Item *it = &g_array_index (run.items, Item, i);
      gboolean inside = it->start > (gint64) discont_at && it->start < (gint64) discont_at + BLOCK;
      pieces += !it->gap && (it->start == (gint64) discont_at || inside);
      fail_unless (!it->discont || it->start == (gint64) discont_at,
                   "buffer at %" G_GINT64_FORMAT " is DISCONT", it->start);
    }
  fail_unless (pieces >= 2, "the DISCONT buffer left in %u pieces", pieces);
  run_clear (&run);
}
GST_END_TEST;

/* What left the element in @h's src pad probe @run, in order: no piece
 * starts before the end of the one before (a GAP included). */
static void
assert_in_order (Run *run)
{
  gint64 end = 0;
  for (guint i = 0; i < run->items->len; i++)
    {
      Item *it = &g_array_index (run->items, Item, i);
      fail_unless (it->start >= end,
                   "%s at %" G_GINT64_FORMAT " after one ending at %" G_GINT64_FORMAT,
                   it->gap ? "a GAP" : "a buffer", it->start, end);
      end = it->start + it->len;
    }
}

/* Mid-speech, live, an upstream GAP (a lost second, as a network source
 * tells it) or new caps: what the element holds leaves before them, in
 * order, and the segment open there is closed. */
static void
run_interrupted (gboolean gap, Run *run, gsize *at)
{
  gsize n;
  g_autofree gint16 *pcm = fixture_read_wav ("speech-16k.wav", NULL, &n);
  g_autoptr (GArray) probs = fixture_read_floats ("vad-probs-v6-16k.txt");
  g_autoptr (GArray) segs = expected_segments (probs, n);
  MorokVadSegment *s = &g_array_index (segs, MorokVadSegment, 0);
  *at = (gsize) (s->start + s->end) / 2 / BLOCK * BLOCK;
  GstHarness *h = vad_harness ("remove-silence", "true");
  gst_harness_set_live (h, TRUE);
  *run = (Run){ .items = g_array_new (FALSE, FALSE, sizeof (Item)), .passed = g_new0 (guint8, n) };
  g_autoptr (GstPad) src = gst_element_get_static_pad (h->element, "src");
  gst_pad_add_probe (src, GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM,
                     record_out, run, NULL);
  for (gsize i = 0; i < *at; i += BLOCK)
    fail_unless_equals_int (gst_harness_push (h, pcm_buffer (pcm, i, BLOCK)), GST_FLOW_OK);
  gsize next = *at;
  if (gap)
    {
      fail_unless (gst_harness_push_event (
          h, gst_event_new_gap (gst_util_uint64_scale_int (*at, GST_SECOND, RATE), GST_SECOND)));
      next += RATE;
    }
  else
    gst_harness_set_src_caps_str (h, "audio/x-raw, format=S16LE, rate=16000, channels=1, "
                                     "layout=interleaved, channel-mask=(bitmask)0x0");
  for (gsize i = next; i + BLOCK <= MIN (n, next + RATE); i += BLOCK)
    fail_unless_equals_int (gst_harness_push (h, pcm_buffer (pcm, i, BLOCK)), GST_FLOW_OK);
  run->bounds = collect_boundaries (h);
  vad_teardown (h);
}

GST_START_TEST (test_live_gap_and_caps_mid_speech)
{
  for (int gap = 0; gap < 2; gap++)
    {
      Run run;
      gsize at;
      run_interrupted (gap, &run, &at);
      assert_in_order (&run);
      /* the held audio just before: out, and before anything after it */
      gboolean held_out = FALSE;
      for (guint i = 0; i < run.items->len; i++)
        {
          Item *it = &g_array_index (run.items, Item, i);
          if (!it->gap && it->start < (gint64) at && it->start + it->len == (gint64) at)
            held_out = TRUE;
        }
      fail_unless (held_out, "%s: the audio held before it did not leave", gap ? "GAP" : "caps");
      guint starts = 0, ends = 0;
      for (guint i = 0; i < run.bounds->len; i++)
        {
          if (g_array_index (run.bounds, Boundary, i).start)
            starts++;
          else
            ends++;
        }
      fail_unless (starts >= 1 && ends >= 1 && ends >= starts - 1,
                   "%s: %u speech-start, %u speech-end", gap ? "GAP" : "caps", starts, ends);
      fail_unless (g_array_index (run.bounds, Boundary, 1).start == FALSE
                       && g_array_index (run.bounds, Boundary, 1).ts
                              <= gst_util_uint64_scale_int (at, GST_SECOND, RATE),
                   "%s: the segment open there is not closed there", gap ? "GAP" : "caps");
      run_clear (&run);
    }
}
GST_END_TEST;

static Suite *
morokvad_live_suite (void)
{
  Suite *s = suite_create ("morokvad-live");
  TCase *tc = tcase_create ("general");
  tcase_set_timeout (tc, 120);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_latency_answers);
  tcase_add_test (tc, test_live_holds_no_longer_than_advertised);
  tcase_add_test (tc, test_live_messages_equal_exact);
  tcase_add_test (tc, test_live_passes_all_exact_audio);
  tcase_add_test (tc, test_live_discont_only_at_its_start);
  tcase_add_test (tc, test_live_gap_and_caps_mid_speech);
  return s;
}

GST_CHECK_MAIN (morokvad_live);
