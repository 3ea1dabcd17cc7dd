/* SPDX-License-Identifier: MIT */
/* morokvad's request pads: streams through sink_%u / src_%u of one element,
 * their chunks run together in rounds of the batched plan, give what lone
 * elements give on the same audio (GstHarness, one thread per stream). */
#include "element-checks.h"
#include "fixtures.h"
#include "jit/morok-jit-registry.h"
#include <gst/audio/audio.h>
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <math.h>
#include <string.h>

/* batched products sum in another order than the single-stream plan's
 * (tests/test-silero-vad-batch.c) */
#define PROB_TOLERANCE 1e-5

/* ---- fixtures ---- */

/* @bytes of zeros: silence in S16 and F32. */
static GstBuffer *
silence (gsize bytes)
{
  GstBuffer *buf = gst_buffer_new_allocate (NULL, bytes, NULL);
  gst_buffer_memset (buf, 0, 0, bytes);
  return buf;
}

/* A bus of its own for @element, to read its messages. */
static void
give_bus (GstElement *element)
{
  GstBus *bus = gst_bus_new ();
  gst_element_set_bus (element, bus);
  gst_object_unref (bus);
}

static void
drop_bus (GstElement *element)
{
  GstBus *bus = gst_element_get_bus (element);
  if (bus)
    {
      gst_bus_set_flushing (bus, TRUE);
      gst_object_unref (bus);
    }
  gst_element_set_bus (element, NULL);
}

/* Whether pad_harness () puts a live upstream before the element. */
static gboolean upstream_live = FALSE;

/* A harness on @vad's @sink / @src (a request pair or the always pads),
 * caps of S16 mono audio at @rate, behind an upstream that is live if
 * upstream_live is set. */
static GstHarness *
pad_harness (GstElement *vad, const char *sink, const char *src, guint rate)
{
  GstHarness *h = gst_harness_new_with_element (vad, sink, src);
  gst_harness_set_live (h, upstream_live);
  g_autofree char *caps = g_strdup_printf (
      "audio/x-raw, format=S16LE, rate=%u, channels=1, layout=interleaved", rate);
  gst_harness_set_src_caps_str (h, caps);
  return h;
}

/* What left one stream's src pad, buffer by buffer, and its chunks. */
typedef struct
{
  gint64 pts, size;
  gboolean voice;
} Out;

typedef struct
{
  gboolean start;
  guint64 ts;
  gdouble prob;
} Boundary;

/* One stream: @n_chunks chunks of @pcm from sample @first, one chunk a
 * buffer, pushed @start_ms after the feed starts, @pace_us apart (0:
 * unpaced), pausing @stall_ms before chunk @stall_at; then EOS. */
typedef struct
{
  GstHarness *h;
  GObject *prob_of; /* what has "probability": the request pad or the element */
  const gint16 *pcm;
  guint rate, chunk;
  gsize first;
  guint n_chunks, start_ms, stall_at, stall_ms, pace_us;
  /* results */
  GArray *probs; /* double per chunk */
  GArray *outs;  /* Out */
  gint64 elapsed_us;
  gboolean ok;
} Feed;

static void
pull_outs (Feed *f)
{
  GstBuffer *out;
  while ((out = gst_harness_try_pull (f->h)))
    {
      GstAudioLevelMeta *meta = gst_buffer_get_audio_level_meta (out);
      Out o = { GST_BUFFER_PTS (out), gst_buffer_get_size (out), meta && meta->voice_activity };
      g_array_append_val (f->outs, o);
      gst_buffer_unref (out);
    }
}

static gpointer
feed_run (gpointer data)
{
  Feed *f = data;
  g_usleep (f->start_ms * 1000);
  gint64 t0 = g_get_monotonic_time ();
  for (guint c = 0; c < f->n_chunks; c++)
    {
      if (c == f->stall_at && f->stall_ms)
        g_usleep (f->stall_ms * 1000);
      else if (c && f->pace_us)
        g_usleep (f->pace_us);
      gsize at = f->first + (gsize) c * f->chunk;
      GstBuffer *buf = gst_buffer_new_memdup (f->pcm + at, f->chunk * 2);
      GST_BUFFER_PTS (buf) = gst_util_uint64_scale_int (c * f->chunk, GST_SECOND, f->rate);
      GST_BUFFER_DURATION (buf) = gst_util_uint64_scale_int (f->chunk, GST_SECOND, f->rate);
      if (gst_harness_push (f->h, buf) != GST_FLOW_OK)
        return NULL;
      gdouble p;
      g_object_get (f->prob_of, "probability", &p, NULL);
      g_array_append_val (f->probs, p);
      pull_outs (f);
    }
  gst_harness_push_event (f->h, gst_event_new_eos ());
  pull_outs (f);
  f->elapsed_us = g_get_monotonic_time () - t0;
  f->ok = TRUE;
  return NULL;
}

static void
feed_init (Feed *f, GstHarness *h, GObject *prob_of, const gint16 *pcm, guint rate,
           const Feed *spec)
{
  *f = *spec;
  f->h = h;
  f->prob_of = prob_of;
  f->pcm = pcm;
  f->rate = rate;
  f->chunk = rate == 16000 ? 512 : 256;
  f->probs = g_array_new (FALSE, FALSE, sizeof (gdouble));
  f->outs = g_array_new (FALSE, FALSE, sizeof (Out));
}

static void
feed_clear (Feed *f)
{
  g_array_unref (f->probs);
  g_array_unref (f->outs);
}

/* The boundaries on @element's bus from pad @pad (NULL: messages without a pad field). */
static GArray *
boundaries_of (GstElement *element, const char *pad)
{
  GArray *out = g_array_new (FALSE, FALSE, sizeof (Boundary));
  GstBus *bus = gst_element_get_bus (element);
  g_autoptr (GList) kept = NULL;
  GstMessage *msg;
  while ((msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ELEMENT)))
    {
      const GstStructure *s = gst_message_get_structure (msg);
      if (gst_structure_has_name (s, "morokvad")
          && g_strcmp0 (gst_structure_get_string (s, "pad"), pad) == 0)
        {
          Boundary b
              = { .start = g_str_equal (gst_structure_get_string (s, "type"), "speech-start") };
          g_assert_true (gst_structure_get_uint64 (s, "timestamp", &b.ts));
          g_assert_true (gst_structure_get_double (s, "probability", &b.prob));
          g_array_append_val (out, b);
          gst_message_unref (msg);
        }
      else
        kept = g_list_append (kept, msg);
    }
  for (GList *l = kept; l; l = l->next) /* the other pads' */
    {
      gst_bus_post (bus, l->data);
    }
  gst_object_unref (bus);
  return out;
}

/* @got gave what @want gave: probabilities within the tolerance, the same
 * buffers out with the same voice activity, the same boundaries. */
static void
assert_same_stream (const char *what, Feed *got, GArray *got_b, Feed *want, GArray *want_b)
{
  fail_unless (got->ok && want->ok, "%s: a push failed", what);
  fail_unless_equals_int (got->probs->len, want->probs->len);
  for (guint i = 0; i < got->probs->len; i++)
    {
      gdouble g = g_array_index (got->probs, gdouble, i),
              w = g_array_index (want->probs, gdouble, i);
      fail_unless (fabs (g - w) <= PROB_TOLERANCE, "%s chunk %u: %f through the pad, %f alone",
                   what, i, g, w);
    }
  fail_unless (got->outs->len == want->outs->len, "%s: %u buffers out, %u alone", what,
               got->outs->len, want->outs->len);
  for (guint i = 0; i < got->outs->len; i++)
    {
      Out *g = &g_array_index (got->outs, Out, i), *w = &g_array_index (want->outs, Out, i);
      fail_unless (g->pts == w->pts && g->size == w->size && g->voice == w->voice,
                   "%s buffer %u: %" G_GINT64_FORMAT "+%" G_GINT64_FORMAT
                   " voice %d, alone %" G_GINT64_FORMAT "+%" G_GINT64_FORMAT " voice %d",
                   what, i, g->pts, g->size, g->voice, w->pts, w->size, w->voice);
    }
  fail_unless (got_b->len == want_b->len, "%s: %u boundaries, %u alone", what, got_b->len,
               want_b->len);
  for (guint i = 0; i < got_b->len; i++)
    {
      Boundary *g = &g_array_index (got_b, Boundary, i), *w = &g_array_index (want_b, Boundary, i);
      fail_unless (g->start == w->start && g->ts == w->ts, "%s boundary %u differs", what, i);
      fail_unless (fabs (g->prob - w->prob) <= PROB_TOLERANCE);
    }
}

/* A lone morokvad of @version on the stream of @spec. */
static void
run_alone (const char *version, const char *prop, const char *value, const gint16 *pcm, guint rate,
           const Feed *spec, Feed *out, GArray **out_bounds)
{
  GstElement *vad = gst_element_factory_make ("morokvad", NULL);
  gst_util_set_object_arg (G_OBJECT (vad), "model-version", version);
  if (prop)
    gst_util_set_object_arg (G_OBJECT (vad), prop, value);
  give_bus (vad);
  GstHarness *h = pad_harness (vad, "sink", "src", rate);
  Feed s = *spec;
  s.start_ms = s.stall_ms = s.pace_us = 0;
  feed_init (out, h, G_OBJECT (vad), pcm, rate, &s);
  feed_run (out);
  *out_bounds = boundaries_of (vad, NULL);
  drop_bus (vad);
  gst_harness_teardown (h);
  gst_object_unref (vad);
}

/* Runs the streams of @specs at once, each in a thread, through the
 * request pads sink_<i> of one morokvad (@prop = @value set, max-wait
 * @max_wait ms), each at its rate (@rate when it gives none), and checks
 * each against a lone element. Returns the element's batch-rounds. */
static guint64
run_streams_against_alone (const char *version, guint rate, const char *prop, const char *value,
                           guint max_wait, const Feed *specs, guint n, Feed *out_feeds)
{
  gsize len[2];
  g_autofree gint16 *pcm16 = fixture_read_wav ("speech-16k.wav", NULL, &len[0]);
  g_autofree gint16 *pcm8 = fixture_read_wav ("speech-8k.wav", NULL, &len[1]);
  GstElement *vad = gst_element_factory_make ("morokvad", NULL);
  gst_util_set_object_arg (G_OBJECT (vad), "model-version", version);
  g_object_set (vad, "max-wait", max_wait, NULL);
  if (prop)
    gst_util_set_object_arg (G_OBJECT (vad), prop, value);
  give_bus (vad);
  GstHarness *h[8];
  GThread *threads[8];
  g_assert_cmpuint (n, <=, G_N_ELEMENTS (h));
  for (guint i = 0; i < n; i++)
    {
      g_autofree char *sink = g_strdup_printf ("sink_%u", i);
      g_autofree char *src = g_strdup_printf ("src_%u", i);
      guint r = specs[i].rate ? specs[i].rate : rate;
      h[i] = pad_harness (vad, sink, src, r);
      g_assert_cmpuint (specs[i].first + (gsize) specs[i].n_chunks * (r == 16000 ? 512 : 256), <=,
                        len[r != 16000]);
      g_autoptr (GstPad) pad = gst_element_get_static_pad (vad, sink);
      feed_init (&out_feeds[i], h[i], G_OBJECT (pad), r == 16000 ? pcm16 : pcm8, r, &specs[i]);
    }
  for (guint i = 0; i < n; i++)
    threads[i] = g_thread_new ("feed", feed_run, &out_feeds[i]);
  for (guint i = 0; i < n; i++)
    g_thread_join (threads[i]);
  guint64 rounds, chunks = 0;
  g_object_get (vad, "batch-rounds", &rounds, NULL);
  guint segments = 0;
  for (guint i = 0; i < n; i++)
    {
      g_autofree char *sink = g_strdup_printf ("sink_%u", i);
      guint r = out_feeds[i].rate;
      g_autofree char *what = g_strdup_printf ("%s %u Hz %s", version, r, sink);
      g_autoptr (GArray) got_b = boundaries_of (vad, sink);
      Feed alone;
      g_autoptr (GArray) want_b = NULL;
      run_alone (version, prop, value, out_feeds[i].pcm, r, &specs[i], &alone, &want_b);
      assert_same_stream (what, &out_feeds[i], got_b, &alone, want_b);
      segments += want_b->len;
      chunks += out_feeds[i].probs->len;
      feed_clear (&alone);
    }
  fail_unless (segments > 0, "no speech in the streams");
  fail_unless (rounds > 0 && rounds <= chunks + n); /* EOS may run a padded chunk */
  drop_bus (vad);
  for (guint i = 0; i < n; i++)
    gst_harness_teardown (h[i]);
  gst_object_unref (vad);
  return rounds;
}

/* ---- tests ---- */

static guint64
chunks_of (GstElement *vad, const char *pad_name)
{
  g_autoptr (GstPad) pad = gst_element_get_static_pad (vad, pad_name);
  guint64 chunks;
  g_object_get (pad, "chunks-processed", &chunks, NULL);
  return chunks;
}

typedef struct
{
  const char *version;
  guint rate;
} Case;

static const Case cases[] = {
  { "v4", 16000 }, { "v5", 16000 }, { "v6", 16000 }, { "v4", 8000 }, { "v5", 8000 }, { "v6", 8000 },
};

/* Three streams of different lengths through sink_0..2 (sink_1 ends
 * early, sink_2 joins 150 ms late) give per stream the probabilities
 * (within 1e-5), buffers, voice activity and boundaries of a lone element
 * on the same audio, for v4, v5, v6 at 16 and 8 kHz; and their chunks ran
 * together: fewer rounds than chunks. */
GST_START_TEST (test_pads_equal_lone_elements)
{
  const Case *c = &cases[__i__];
  const Feed specs[] = {
    { .first = 0, .n_chunks = 150, .pace_us = 200 },
    { .first = 3000, .n_chunks = 70, .pace_us = 200 },
    { .first = 17000, .n_chunks = 120, .start_ms = 150, .pace_us = 200 },
  };
  /* whether chunks share rounds depends on the streams overlapping in
   * time: unpaced, sink_0 and sink_1 last a few ms each, and a feeding
   * thread that started late (other tests on both cores) found the other
   * done and ran every chunk alone, in both attempts of a CI run. Paced
   * 0.2 ms apart they last 15-30 ms: once a stream has brought a chunk, the
   * other's next chunk waits for its next one (up to max-wait), so they
   * run together unless a thread is starved for the whole stream. The
   * results must be equal in every attempt, and one of two attempts must
   * run chunks together. */
  guint64 rounds = 0, chunks = 0;
  for (guint attempt = 0; attempt < 2 && (attempt == 0 || rounds >= chunks); attempt++)
    {
      Feed feeds[G_N_ELEMENTS (specs)];
      rounds = run_streams_against_alone (c->version, c->rate, NULL, NULL, 100, specs,
                                          G_N_ELEMENTS (specs), feeds);
      chunks = 0;
      for (guint i = 0; i < G_N_ELEMENTS (specs); i++)
        {
          chunks += feeds[i].probs->len;
          feed_clear (&feeds[i]);
        }
    }
  fail_unless (rounds < chunks, "%" G_GUINT64_FORMAT " rounds for %" G_GUINT64_FORMAT " chunks",
               rounds, chunks);
}
GST_END_TEST;

/* Streams at 16 and 8 kHz in one element, each through the batched plan
 * of its rate at the same time, give what lone elements give. */
GST_START_TEST (test_pads_mixed_rates)
{
  const Feed specs[] = {
    { .first = 0, .n_chunks = 120, .rate = 16000 },
    { .first = 0, .n_chunks = 160, .rate = 8000 },
    { .first = 9000, .n_chunks = 100, .rate = 16000 },
    { .first = 4000, .n_chunks = 140, .rate = 8000 },
  };
  Feed feeds[G_N_ELEMENTS (specs)];
  run_streams_against_alone ("v5", 16000, NULL, NULL, 100, specs, G_N_ELEMENTS (specs), feeds);
  for (guint i = 0; i < G_N_ELEMENTS (specs); i++)
    feed_clear (&feeds[i]);
}
GST_END_TEST;

/* With remove-silence, each pad passes the buffers (cut at the same
 * boundaries, with the same times) that a lone element passes. */
GST_START_TEST (test_pads_remove_silence_equal_lone)
{
  const Feed specs[] = {
    { .first = 0, .n_chunks = 200 },
    { .first = 5000, .n_chunks = 160 },
  };
  Feed feeds[G_N_ELEMENTS (specs)];
  run_streams_against_alone ("v6", 16000, "remove-silence", "true", 100, specs,
                             G_N_ELEMENTS (specs), feeds);
  for (guint i = 0; i < G_N_ELEMENTS (specs); i++)
    feed_clear (&feeds[i]);
}
GST_END_TEST;

/* Behind live upstreams too (remove-silence in live mode), each pad
 * passes the buffers, cut alike, that a lone element passes. */
GST_START_TEST (test_pads_remove_silence_live_equal_lone)
{
  const Feed specs[] = {
    { .first = 0, .n_chunks = 200 },
    { .first = 5000, .n_chunks = 160 },
  };
  Feed feeds[G_N_ELEMENTS (specs)];
  upstream_live = TRUE;
  run_streams_against_alone ("v6", 16000, "remove-silence", "true", 100, specs,
                             G_N_ELEMENTS (specs), feeds);
  upstream_live = FALSE;
  for (guint i = 0; i < G_N_ELEMENTS (specs); i++)
    feed_clear (&feeds[i]);
}
GST_END_TEST;

/* A stream that stops sending for 5 s (a stalled live source, no EOS)
 * holds the other up once, for max-wait (200 ms), not for the stall: the
 * other's 100 chunks are done well before the stall ends (under 4 s, on a
 * loaded 2-core machine about 2); both streams still give a lone element's
 * results. */
GST_START_TEST (test_stalled_stream_does_not_block)
{
  const Feed specs[] = {
    { .first = 0, .n_chunks = 100, .start_ms = 50 },
    { .first = 3000, .n_chunks = 40, .stall_at = 5, .stall_ms = 5000 },
  };
  Feed feeds[G_N_ELEMENTS (specs)];
  run_streams_against_alone ("v6", 16000, NULL, NULL, 200, specs, G_N_ELEMENTS (specs), feeds);
  fail_unless (feeds[0].elapsed_us < 4 * G_USEC_PER_SEC, "the other stream took %.2f s",
               feeds[0].elapsed_us / 1e6);
  fail_unless (feeds[1].elapsed_us >= 5 * G_USEC_PER_SEC);
  for (guint i = 0; i < G_N_ELEMENTS (specs); i++)
    feed_clear (&feeds[i]);
}
GST_END_TEST;

/* Pushes a chunk every 30 ms for 1.5 s, as a live source would. */
static gpointer
push_paced (gpointer data)
{
  Feed *f = data;
  for (guint c = 0; c < 50; c++)
    {
      f->ok
          = gst_harness_push (f->h, gst_buffer_new_memdup (f->pcm + c * 512, 1024)) == GST_FLOW_OK;
      g_usleep (30000);
    }
  return NULL;
}

/* A buffer of 40 chunks on one pad, while another pad brings a chunk
 * every 30 ms, is held max-wait (100 ms) at most plus the executes, not
 * paced by the other stream (40 x 30 ms = 1.2 s): its push returns in
 * under 0.7 s. */
GST_START_TEST (test_large_buffer_held_max_wait)
{
  gsize len;
  g_autofree gint16 *pcm = fixture_read_wav ("speech-16k.wav", NULL, &len);
  GstElement *vad = gst_element_factory_make ("morokvad", NULL);
  g_object_set (vad, "max-wait", 100, NULL);
  GstHarness *a = pad_harness (vad, "sink_0", "src_0", 16000);
  GstHarness *b = pad_harness (vad, "sink_1", "src_1", 16000);
  Feed paced = { .h = b, .pcm = pcm };
  GThread *thread = g_thread_new ("paced", push_paced, &paced);
  g_usleep (200000);
  gint64 t0 = g_get_monotonic_time ();
  fail_unless_equals_int (gst_harness_push (a, gst_buffer_new_memdup (pcm + 30000, 40 * 1024)),
                          GST_FLOW_OK);
  gint64 held = g_get_monotonic_time () - t0;
  g_thread_join (thread);
  fail_unless (paced.ok);
  fail_unless (held < 700000, "the buffer was held %.2f s", held / 1e6);
  fail_unless_equals_int ((gint) chunks_of (vad, "sink_0"), 40);
  gst_harness_teardown (a);
  gst_harness_teardown (b);
  gst_object_unref (vad);
}
GST_END_TEST;

typedef struct
{
  GstHarness *h;
  GstBuffer *buf;
  GMutex lock;
  GCond cond;
  gboolean done;
} LatePush;

static gpointer
push_late (gpointer data)
{
  LatePush *p = data;
  GstFlowReturn ret = gst_harness_push (p->h, p->buf);
  g_mutex_lock (&p->lock);
  p->done = ret == GST_FLOW_OK;
  g_cond_signal (&p->cond);
  g_mutex_unlock (&p->lock);
  return NULL;
}

/* Behind a live source the rounds' wait counts from the buffer's time,
 * not from when its thread brings it: a chunk that comes long after its
 * time (its running time on the pipeline clock, here a test clock at 100
 * s) runs at once, though another stream waited for sends nothing and
 * max-wait is 10 s. */
GST_START_TEST (test_late_buffer_waits_less)
{
  gsize len;
  g_autofree gint16 *pcm = fixture_read_wav ("speech-16k.wav", NULL, &len);
  upstream_live = TRUE;
  GstElement *vad = gst_element_factory_make ("morokvad", NULL);
  g_object_set (vad, "max-wait", 10000, NULL);
  GstHarness *a = pad_harness (vad, "sink_0", "src_0", 16000);
  GstHarness *b = pad_harness (vad, "sink_1", "src_1", 16000);
  gst_harness_use_testclock (a);
  gst_harness_set_time (a, 100 * GST_SECOND);
  /* a chunk each: b is waited for from then on */
  GstBuffer *opening[2] = { gst_buffer_new_memdup (pcm, 1024), gst_buffer_new_memdup (pcm, 1024) };
  for (int i = 0; i < 2; i++)
    {
      GST_BUFFER_PTS (opening[i]) = 0;
      GST_BUFFER_DURATION (opening[i]) = 32 * GST_MSECOND;
    }
  LatePush pb = { .h = b, .buf = opening[1] };
  g_mutex_init (&pb.lock);
  g_cond_init (&pb.cond);
  GThread *tb = g_thread_new ("b", push_late, &pb);
  fail_unless_equals_int (gst_harness_push (a, opening[0]), GST_FLOW_OK);
  g_thread_join (tb);
  fail_unless (pb.done);
  /* then a's next chunk alone, 100 s after its time */
  LatePush pa = { .h = a, .buf = gst_buffer_new_memdup (pcm + 512, 1024) };
  GST_BUFFER_PTS (pa.buf) = 32 * GST_MSECOND;
  GST_BUFFER_DURATION (pa.buf) = 32 * GST_MSECOND;
  g_mutex_init (&pa.lock);
  g_cond_init (&pa.cond);
  GThread *ta = g_thread_new ("a", push_late, &pa);
  g_mutex_lock (&pa.lock);
  /* a wait limit, not a timing claim: 10 s of max-wait would pass it */
  gint64 limit = g_get_monotonic_time () + 5 * G_TIME_SPAN_SECOND;
  while (!pa.done && g_cond_wait_until (&pa.cond, &pa.lock, limit))
    ;
  gboolean ran = pa.done;
  g_mutex_unlock (&pa.lock);
  g_thread_join (ta);
  fail_unless (ran, "the late chunk waited for the other stream");
  fail_unless_equals_int ((gint) chunks_of (vad, "sink_0"), 2);
  gst_harness_teardown (a);
  gst_harness_teardown (b);
  gst_object_unref (vad);
  upstream_live = FALSE;
}
GST_END_TEST;

/* After FLUSH_START / FLUSH_STOP a pad's stream starts over: its next
 * chunks give what a new pad's first chunks give. */
GST_START_TEST (test_flush_resets_pad)
{
  gsize len;
  g_autofree gint16 *pcm = fixture_read_wav ("speech-16k.wav", NULL, &len);
  GstElement *vad = gst_element_factory_make ("morokvad", NULL);
  GstHarness *a = pad_harness (vad, "sink_0", "src_0", 16000);
  GstHarness *b = pad_harness (vad, "sink_1", "src_1", 16000);
  g_autoptr (GstPad) pa = gst_element_get_static_pad (vad, "sink_0");
  g_autoptr (GstPad) pb = gst_element_get_static_pad (vad, "sink_1");
  const Feed before = { .first = 50000, .n_chunks = 60 }, after = { .first = 0, .n_chunks = 30 };
  /* no EOS: push the chunks by hand */
  for (guint c = 0; c < before.n_chunks; c++)
    fail_unless_equals_int (
        gst_harness_push (a, gst_buffer_new_memdup (pcm + before.first + c * 512, 1024)),
        GST_FLOW_OK);
  fail_unless (gst_harness_push_event (a, gst_event_new_flush_start ()));
  fail_unless (gst_harness_push_event (a, gst_event_new_flush_stop (TRUE)));
  GstSegment seg;
  gst_segment_init (&seg, GST_FORMAT_TIME);
  gst_harness_push_event (a, gst_event_new_segment (&seg));
  Feed fa, fb;
  feed_init (&fa, a, G_OBJECT (pa), pcm, 16000, &after);
  feed_init (&fb, b, G_OBJECT (pb), pcm, 16000, &after);
  feed_run (&fa);
  feed_run (&fb);
  for (guint i = 0; i < after.n_chunks; i++)
    fail_unless (g_array_index (fa.probs, gdouble, i) == g_array_index (fb.probs, gdouble, i),
                 "chunk %u: %f after the flush, %f new", i, g_array_index (fa.probs, gdouble, i),
                 g_array_index (fb.probs, gdouble, i));
  feed_clear (&fa);
  feed_clear (&fb);
  gst_harness_teardown (a);
  gst_harness_teardown (b);
  gst_object_unref (vad);
}
GST_END_TEST;

/* A request pad's NaNs count as silence, and the element warns of them
 * once, naming the pad. */
GST_START_TEST (test_non_finite_warns)
{
  GstElement *vad = gst_element_factory_make ("morokvad", NULL);
  give_bus (vad);
  GstHarness *h = gst_harness_new_with_element (vad, "sink_0", "src_0");
  gst_harness_set_src_caps_str (
      h, "audio/x-raw, format=F32LE, rate=16000, channels=1, layout=interleaved");
  for (guint c = 0; c < 2; c++)
    {
      GstBuffer *buf = silence (512 * sizeof (float));
      GstMapInfo map;
      gst_buffer_map (buf, &map, GST_MAP_WRITE);
      for (guint i = 100; i < 512; i++)
        ((float *) map.data)[i] = NAN;
      gst_buffer_unmap (buf, &map);
      GST_BUFFER_PTS (buf) = c * 32 * GST_MSECOND;
      fail_unless_equals_int (gst_harness_push (h, buf), GST_FLOW_OK);
    }
  g_autoptr (GstPad) pad = gst_element_get_static_pad (vad, "sink_0");
  gdouble prob = -1;
  g_object_get (pad, "probability", &prob, NULL);
  fail_unless (prob >= 0 && prob < 0.5, "probability %f", prob); /* silence */
  GstBus *bus = gst_element_get_bus (vad);
  guint64 samples = 0;
  g_autofree char *name = NULL;
  fail_unless_equals_int (pop_non_finite_warnings (bus, &samples, NULL, &name), 1);
  fail_unless_equals_uint64 (samples, 412);
  fail_unless_equals_string (name, "sink_0"); /* which stream it was */
  gst_object_unref (bus);
  drop_bus (vad);
  gst_harness_teardown (h);
  gst_object_unref (vad);
}
GST_END_TEST;

/* Caps that a request pad does not take are an error naming the pad (and
 * what works); negotiation fails. */
GST_START_TEST (test_bad_caps_names_pad)
{
  const struct
  {
    const char *caps, *expect;
  } bad[] = {
    { "audio/x-raw, format=S16LE, rate=44100, channels=1, layout=interleaved", "44100" },
    { "audio/x-raw, format=F64LE, rate=16000, channels=1, layout=interleaved", "F32LE" },
  };
  for (guint k = 0; k < G_N_ELEMENTS (bad); k++)
    {
      GstElement *vad = gst_element_factory_make ("morokvad", NULL);
      give_bus (vad);
      GstHarness *ok = pad_harness (vad, "sink_0", "src_0", 16000);
      GstHarness *h = gst_harness_new_with_element (vad, "sink_1", "src_1");
      gst_harness_set_src_caps_str (h, bad[k].caps);
      fail_unless_equals_int (gst_harness_push (h, silence (1024)), GST_FLOW_NOT_NEGOTIATED);
      GstBus *bus = gst_element_get_bus (vad);
      GstMessage *msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
      fail_unless (msg != NULL);
      GError *err = NULL;
      gst_message_parse_error (msg, &err, NULL);
      fail_unless (strstr (err->message, "sink_1") && strstr (err->message, bad[k].expect), "%s",
                   err->message);
      g_error_free (err);
      gst_message_unref (msg);
      gst_object_unref (bus);
      /* the other pad streams on */
      fail_unless_equals_int (gst_harness_push (ok, silence (1024)), GST_FLOW_OK);
      drop_bus (vad);
      gst_harness_teardown (h);
      gst_harness_teardown (ok);
      gst_object_unref (vad);
    }
}
GST_END_TEST;

/* src_%u answers LATENCY with max-wait added, before caps too (a live
 * pipeline asks before its sources send), and with remove-silence the
 * segmenter's delay too. */
GST_START_TEST (test_pad_latency)
{
  GstElement *vad = gst_element_factory_make ("morokvad", NULL);
  g_object_set (vad, "max-wait", 70, NULL);
  GstHarness *h = gst_harness_new_with_element (vad, "sink_0", "src_0");
  fail_unless (latency_at_least (h, 70 * GST_MSECOND));
  gst_harness_set_src_caps_str (h, "audio/x-raw, format=S16LE, rate=16000, channels=1, "
                                   "layout=interleaved");
  gst_harness_push (h, silence (1024));
  fail_unless (latency_at_least (h, 70 * GST_MSECOND));
  fail_unless (!latency_at_least (h, 71 * GST_MSECOND));
  gst_harness_teardown (h);
  gst_object_unref (vad);

  vad = gst_element_factory_make ("morokvad", NULL);
  g_object_set (vad, "max-wait", 70, "remove-silence", TRUE, NULL);
  h = pad_harness (vad, "sink_0", "src_0", 16000);
  gst_harness_push (h, silence (1024));
  fail_unless (latency_at_least (h, 370 * GST_MSECOND));
  gst_harness_teardown (h);
  gst_object_unref (vad);
}
GST_END_TEST;

/* Behind a live upstream, src_%u's LATENCY answer adds max-wait and the
 * live hold of remove-silence: 70 ms + 62 ms (the speech pad, 30 ms, and a
 * chunk, 32 ms), before caps and after. */
GST_START_TEST (test_pad_latency_live)
{
  GstElement *vad = gst_element_factory_make ("morokvad", NULL);
  g_object_set (vad, "max-wait", 70, "remove-silence", TRUE, NULL);
  GstHarness *h = gst_harness_new_with_element (vad, "sink_0", "src_0");
  gst_harness_set_live (h, TRUE);
  fail_unless_equals_uint64 (gst_harness_query_latency (h), 132 * GST_MSECOND);
  gst_harness_set_src_caps_str (h, "audio/x-raw, format=S16LE, rate=8000, channels=1, "
                                   "layout=interleaved");
  gst_harness_push (h, silence (1024));
  fail_unless_equals_uint64 (gst_harness_query_latency (h), 132 * GST_MSECOND);
  gst_harness_teardown (h);
  gst_object_unref (vad);
}
GST_END_TEST;

/* max-streams bounds the request pads: past it no pad is made; a
 * released one makes room, and takes its src pad along. */
GST_START_TEST (test_max_streams)
{
  GstElement *vad = gst_element_factory_make ("morokvad", NULL);
  g_object_set (vad, "max-streams", 2, NULL);
  GstPad *a = gst_element_request_pad_simple (vad, "sink_%u");
  GstPad *b = gst_element_request_pad_simple (vad, "sink_%u");
  fail_unless (a && b);
  fail_unless_equals_string (GST_PAD_NAME (b), "sink_1");
  g_autoptr (GstPad) src = gst_element_get_static_pad (vad, "src_1");
  fail_unless (src != NULL);
  fail_unless (gst_element_request_pad_simple (vad, "sink_%u") == NULL);
  gst_element_release_request_pad (vad, a);
  gst_object_unref (a);
  GstPad *c = gst_element_request_pad_simple (vad, "sink_7");
  fail_unless (c != NULL);
  g_autoptr (GstPad) src7 = gst_element_get_static_pad (vad, "src_7");
  g_autoptr (GstPad) src0 = gst_element_get_static_pad (vad, "src_0");
  fail_unless (src7 != NULL && src0 == NULL); /* src_0 went with sink_0 */
  gst_object_unref (b);
  gst_object_unref (c);
  gst_object_unref (vad);
}
GST_END_TEST;

/* The probability of sink_0 after one chunk of speech through @h. */
static gdouble
first_chunk_probability (GstHarness *h, GstElement *vad, const gint16 *pcm)
{
  GstBuffer *buf = gst_buffer_new_memdup (pcm + 16000, 512 * 2);
  GST_BUFFER_PTS (buf) = 0;
  fail_unless_equals_int (gst_harness_push (h, buf), GST_FLOW_OK);
  g_autoptr (GstPad) pad = gst_element_get_static_pad (vad, "sink_0");
  gdouble p;
  g_object_get (pad, "probability", &p, NULL);
  return p;
}

/* Two elements of one model share the batched plan of their request pads
 * as they share the single-stream ones: the second prepares nothing, and
 * its stream computes what the first's does; the last to stop frees. */
GST_START_TEST (test_elements_share_batched_plan)
{
  gsize n;
  g_autofree gint16 *pcm = fixture_read_wav ("speech-16k.wav", NULL, &n);
  guint64 before = morok_jit_registry_prepare_count ();
  GstElement *va = gst_element_factory_make ("morokvad", NULL);
  GstHarness *a = pad_harness (va, "sink_0", "src_0", 16000);
  gdouble pa = first_chunk_probability (a, va, pcm);
  guint64 made = morok_jit_registry_prepare_count () - before;
  fail_unless_equals_int (made, 3); /* 16 and 8 kHz plans, the 16 kHz batch */
  GstElement *vb = gst_element_factory_make ("morokvad", NULL);
  GstHarness *b = pad_harness (vb, "sink_0", "src_0", 16000);
  gdouble pb = first_chunk_probability (b, vb, pcm);
  fail_unless_equals_int (morok_jit_registry_prepare_count () - before, 3);
  fail_unless_equals_int (morok_jit_registry_n_prototypes (), 3);
  fail_unless (pa == pb && pa > 0.0, "%g, %g", pa, pb);
  gst_harness_teardown (a);
  gst_object_unref (va);
  fail_unless_equals_int (morok_jit_registry_n_prototypes (), 3);
  gst_harness_teardown (b);
  gst_object_unref (vb);
  fail_unless_equals_int (morok_jit_registry_n_prototypes (), 0);
}
GST_END_TEST;

/* In PLAYING, with a live stream on sink_0, pads are requested, stream,
 * and are released while their sources still send, five times: no error,
 * no deadlock, and sink_0 streams on. */
static GstPadProbeReturn
drop_data (GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
  (void) pad, (void) info, (void) data;
  return GST_PAD_PROBE_DROP;
}

GST_START_TEST (test_request_release_while_playing)
{
  const char *live = "audiotestsrc is-live=true samplesperbuffer=160 wave=pink-noise ! "
                     "audio/x-raw,rate=16000,channels=1";
  g_autofree char *desc = g_strdup_printf ("morokvad name=v max-wait=20 %s ! v.sink_0 "
                                           "v.src_0 ! fakesink sync=true",
                                           live);
  GstElement *pipe = gst_parse_launch (desc, NULL);
  GstElement *vad = gst_bin_get_by_name (GST_BIN (pipe), "v");
  fail_unless (gst_element_set_state (pipe, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
  fail_unless (gst_element_get_state (pipe, NULL, NULL, 10 * GST_SECOND)
               == GST_STATE_CHANGE_SUCCESS);
  for (guint k = 0; k < 5; k++)
    {
      GstElement *src = gst_parse_bin_from_description (live, TRUE, NULL);
      GstElement *sink = gst_element_factory_make ("fakesink", NULL);
      g_object_set (sink, "async", FALSE, NULL); /* a live branch has no preroll */
      gst_bin_add_many (GST_BIN (pipe), src, sink, NULL);
      GstPad *req = gst_element_request_pad_simple (vad, "sink_%u");
      fail_unless (req != NULL);
      g_autofree char *src_name = g_strdup_printf ("src_%s", GST_PAD_NAME (req) + 5);
      g_autoptr (GstPad) out = gst_element_get_static_pad (vad, src_name);
      g_autoptr (GstPad) sink_pad = gst_element_get_static_pad (sink, "sink");
      g_autoptr (GstPad) src_pad = gst_element_get_static_pad (src, "src");
      fail_unless_equals_int (gst_pad_link (out, sink_pad), GST_PAD_LINK_OK);
      fail_unless_equals_int (gst_pad_link (src_pad, req), GST_PAD_LINK_OK);
      gst_element_sync_state_with_parent (sink);
      gst_element_sync_state_with_parent (src);
      for (guint t = 0; t < 100 && chunks_of (vad, GST_PAD_NAME (req)) < 5; t++)
        g_usleep (20000);
      fail_unless (chunks_of (vad, GST_PAD_NAME (req)) >= 5, "%s did not stream",
                   GST_PAD_NAME (req));
      /* its source still sends: from here its buffers stop at a probe, since
       * one pushed once the pad is gone would be not-linked, an error of the
       * source (a race of the test, not of the element: a CI run hit it);
       * one already in the chain function is waited for by the release */
      gst_pad_add_probe (src_pad, GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_BUFFER_LIST,
                         drop_data, NULL, NULL);
      gst_element_release_request_pad (vad, req);
      gst_object_unref (req);
      gst_element_set_state (src, GST_STATE_NULL);
      gst_element_set_state (sink, GST_STATE_NULL);
      gst_bin_remove_many (GST_BIN (pipe), src, sink, NULL);
    }
  guint64 before = chunks_of (vad, "sink_0");
  g_usleep (300000);
  fail_unless (chunks_of (vad, "sink_0") > before + 3);
  GstBus *bus = gst_element_get_bus (pipe);
  GstMessage *err = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
  if (err)
    {
      GError *e = NULL;
      gst_message_parse_error (err, &e, NULL);
      fail ("error: %s", e->message);
    }
  gst_object_unref (bus);
  fail_unless (gst_element_set_state (pipe, GST_STATE_NULL) == GST_STATE_CHANGE_SUCCESS);
  gst_object_unref (vad);
  gst_object_unref (pipe);
}
GST_END_TEST;

/* 20 cycles NULL <-> PLAYING of two streams through request pads (16 and
 * 8 kHz, stereo, ending at different times) and one through the always
 * pads of the same element leave nothing behind. */
GST_START_TEST (test_pads_state_cycles)
{
  assert_cycles_leak_nothing (
      "morokvad name=v audiotestsrc num-buffers=4 samplesperbuffer=700 ! "
      "audio/x-raw,rate=16000,channels=1 ! v.sink_0 v.src_0 ! fakesink "
      "audiotestsrc num-buffers=9 samplesperbuffer=300 ! audio/x-raw,rate=8000,channels=2 ! "
      "v.sink_1 v.src_1 ! fakesink "
      "audiotestsrc num-buffers=5 samplesperbuffer=500 ! audio/x-raw,rate=16000 ! v.sink v.src ! "
      "fakesink",
      20);
}
GST_END_TEST;

static Suite *
morokvad_pads_suite (void)
{
  Suite *s = suite_create ("morokvad-pads");
  TCase *tc = tcase_create ("general");
  tcase_set_timeout (tc, 240);
  suite_add_tcase (s, tc);
  tcase_add_loop_test (tc, test_pads_equal_lone_elements, 0, G_N_ELEMENTS (cases));
  tcase_add_test (tc, test_pads_mixed_rates);
  tcase_add_test (tc, test_pads_remove_silence_equal_lone);
  tcase_add_test (tc, test_pads_remove_silence_live_equal_lone);
  tcase_add_test (tc, test_stalled_stream_does_not_block);
  tcase_add_test (tc, test_large_buffer_held_max_wait);
  tcase_add_test (tc, test_flush_resets_pad);
  tcase_add_test (tc, test_bad_caps_names_pad);
  tcase_add_test (tc, test_non_finite_warns);
  tcase_add_test (tc, test_pad_latency);
  tcase_add_test (tc, test_pad_latency_live);
  tcase_add_test (tc, test_max_streams);
  tcase_add_test (tc, test_elements_share_batched_plan);
  tcase_add_test (tc, test_request_release_while_playing);
  tcase_add_test (tc, test_pads_state_cycles);
  tcase_add_test (tc, test_late_buffer_waits_less);
  return s;
}

GST_CHECK_MAIN (morokvad_pads);
