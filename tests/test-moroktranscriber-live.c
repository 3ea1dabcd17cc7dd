/* SPDX-License-Identifier: MIT */
/* moroktranscriber's live mode. Through a file pipeline (upstream not live:
 * mode=live decodes at the same samples whatever the machine's speed), the
 * interim messages against the final ones and the words pushed; with one
 * decode per utterance, the same words as offline; mode=auto on a file, the
 * offline output exactly; mode=live on a file waits for downstream. Through a harness on a test
 * clock (upstream live, the clock moved with the audio), every word leaves before its running time
 * plus the latency the element answers, and with a pipeline latency far too low, words still come,
 * with the excessive-delay warning; a flush during a decode lets nothing of it out after
 * FLUSH_STOP; what live mode measures is measured before the first buffer. */
#include "element-checks.h"
#include "fixtures.h"
#include "io/safetensors.h"
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <gst/check/gsttestclock.h>
#include <string.h>

#define MODEL "gigaam-v3-e2e-ctc-tiny.safetensors"

/* ---- a file through morokvad remove-silence=true ! moroktranscriber ---- */

typedef struct
{
  GString *timeline;   /* timeline_record () */
  GPtrArray *messages; /* GstStructure: moroktranscriber's, in order */
} Run;

static GstBusSyncReply
keep_message (GstBus *bus, GstMessage *msg, gpointer user_data)
{
  const GstStructure *s = gst_message_get_structure (msg);
  if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ELEMENT && s
      && g_str_has_prefix (gst_structure_get_name (s), "moroktranscriber"))
    g_ptr_array_add (user_data, gst_structure_copy (s));
  return GST_BUS_PASS;
}

/* Runs gigaam-utterances-16k.wav through the element with @props to EOS. */
static void
run_file (const char *props, Run *run)
{
  g_autofree char *wav = fixture_path ("gigaam-utterances-16k.wav");
  g_autofree char *model = fixture_path (MODEL);
  g_autofree char *desc = g_strdup_printf (
      "filesrc location=%s ! wavparse ! audioconvert ! morokvad remove-silence=true ! "
      "moroktranscriber name=el model=%s %s ! fakesink",
      wav, model, props);
  GstElement *pipe = gst_parse_launch (desc, NULL);
  fail_unless (pipe != NULL);
  run->timeline = g_string_new (NULL);
  run->messages = g_ptr_array_new_with_free_func ((GDestroyNotify) gst_structure_free);
  GstElement *el = gst_bin_get_by_name (GST_BIN (pipe), "el");
  timeline_record (el, run->timeline);
  gst_object_unref (el);
  GstBus *bus = gst_element_get_bus (pipe);
  gst_bus_set_sync_handler (bus, keep_message, run->messages, NULL);
  fail_unless (gst_element_set_state (pipe, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
  /* a wait limit, not a timing claim: preparing may compile the model */
  GstMessage *msg
      = gst_bus_timed_pop_filtered (bus, 60 * GST_SECOND, GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  fail_unless (msg != NULL && GST_MESSAGE_TYPE (msg) == GST_MESSAGE_EOS);
  gst_message_unref (msg);
  fail_unless_equals_int (gst_element_set_state (pipe, GST_STATE_NULL), GST_STATE_CHANGE_SUCCESS);
  gst_bus_set_sync_handler (bus, NULL, NULL, NULL);
  gst_object_unref (bus);
  gst_object_unref (pipe);
}

static void
run_clear (Run *run)
{
  g_string_free (run->timeline, TRUE);
  g_ptr_array_unref (run->messages);
}

/* The buffers of a timeline ("B<pts>+<duration>"), space-separated. */
static char *
buffers_of (const char *timeline)
{
  GString *out = g_string_new (NULL);
  g_auto (GStrv) items = g_strsplit (timeline, " ", -1);
  for (char **i = items; *i; i++)
    if ((*i)[0] == 'B')
      g_string_append_printf (out, "%s ", *i);
  return g_string_free (out, FALSE);
}

/* The final messages' words as "<start ms>+<duration ms>" and their texts. */
static void
final_words (Run *run, GString *times, GString *texts)
{
  for (guint m = 0; m < run->messages->len; m++)
    {
      const GstStructure *s = g_ptr_array_index (run->messages, m);
      if (!gst_structure_has_name (s, "moroktranscriber"))
        continue;
      const GValue *words = gst_structure_get_value (s, "words");
      for (guint k = 0; k < gst_value_array_get_size (words); k++)
        {
          const GstStructure *w = gst_value_get_structure (gst_value_array_get_value (words, k));
          guint64 start, end;
          gst_structure_get_uint64 (w, "start", &start);
          gst_structure_get_uint64 (w, "end", &end);
          g_string_append_printf (times, "B%" G_GUINT64_FORMAT "+%" G_GUINT64_FORMAT " ",
                                  start / GST_MSECOND, (end - start) / GST_MSECOND);
          g_string_append_printf (texts, "%s ", gst_structure_get_string (w, "word"));
        }
    }
}

/* Decoded every 200 ms: each utterance has interim messages before its
 * final one; the committed text only grows, never changes, and ends as the
 * final text; the buffers are the final messages' words. */
GST_START_TEST (test_interim_and_commits)
{
  Run run;
  run_file ("mode=live interval=200 hold=600", &run);
  guint utterances = 0, interims = 0;
  g_autofree char *committed = g_strdup ("");
  for (guint m = 0; m < run.messages->len; m++)
    {
      const GstStructure *s = g_ptr_array_index (run.messages, m);
      const char *now = gst_structure_get_string (
          s, gst_structure_has_name (s, "moroktranscriber") ? "text" : "committed");
      fail_unless (g_str_has_prefix (now, committed), "\"%s\" then \"%s\"", committed, now);
      if (gst_structure_has_name (s, "moroktranscriber"))
        {
          fail_unless (interims > 0, "utterance %u: no interim message", utterances);
          fail_unless_equals_string (now, committed);
          utterances++;
          interims = 0;
          g_free (committed);
          committed = g_strdup ("");
          continue;
        }
      fail_unless (gst_structure_has_name (s, "moroktranscriber-interim"));
      interims++;
      g_free (committed);
      committed = g_strdup (now);
      /* the words carry their state: committed ones first */
      const GValue *words = gst_structure_get_value (s, "words");
      gboolean tentative = FALSE;
      for (guint k = 0; k < gst_value_array_get_size (words); k++)
        {
          gboolean c;
          const GstStructure *w = gst_value_get_structure (gst_value_array_get_value (words, k));
          fail_unless (gst_structure_get_boolean (w, "committed", &c));
          fail_if (c && tentative);
          tentative |= !c;
        }
    }
  fail_unless (utterances >= 3, "%u utterances", utterances);
  GString *times = g_string_new (NULL), *texts = g_string_new (NULL);
  final_words (&run, times, texts);
  g_autofree char *buffers = buffers_of (run.timeline->str);
  fail_unless_equals_string (buffers, times->str);
  fail_unless (texts->len > 0);
  g_string_free (times, TRUE);
  g_string_free (texts, TRUE);
  run_clear (&run);
}
GST_END_TEST;

/* One decode per utterance (interval longer than any, window covering
 * it): the words, their times and texts, and the buffers are the offline
 * ones. The window set to 30 s; then automatic with a hold of 4 s, which
 * makes it twice the hold at least: 8 s, longer than these utterances. */
static const char *const one_decode[] = {
  "mode=live interval=10000 window=30 hold=600",
  "mode=live interval=10000 hold=4000",
};

GST_START_TEST (test_whole_utterance_equals_offline)
{
  Run live, offline;
  run_file (one_decode[__i__], &live);
  run_file ("mode=offline", &offline);
  GString *lt = g_string_new (NULL), *lw = g_string_new (NULL);
  GString *ot = g_string_new (NULL), *ow = g_string_new (NULL);
  final_words (&live, lt, lw);
  final_words (&offline, ot, ow);
  fail_unless (ow->len > 0);
  fail_unless_equals_string (lw->str, ow->str);
  fail_unless_equals_string (lt->str, ot->str);
  g_autofree char *lb = buffers_of (live.timeline->str);
  g_autofree char *ob = buffers_of (offline.timeline->str);
  fail_unless_equals_string (lb, ob);
  g_string_free (lt, TRUE);
  g_string_free (lw, TRUE);
  g_string_free (ot, TRUE);
  g_string_free (ow, TRUE);
  run_clear (&live);
  run_clear (&offline);
}
GST_END_TEST;

/* mode=auto with a file (not live): exactly the offline output, GAPs and
 * final-transcript events included, and no interim message. */
GST_START_TEST (test_auto_on_a_file_is_offline)
{
  Run autom, offline;
  run_file ("", &autom);
  run_file ("mode=offline", &offline);
  fail_unless_equals_string (autom.timeline->str, offline.timeline->str);
  for (guint m = 0; m < autom.messages->len; m++)
    fail_unless (
        gst_structure_has_name (g_ptr_array_index (autom.messages, m), "moroktranscriber"));
  run_clear (&autom);
  run_clear (&offline);
}
GST_END_TEST;

static GstPadProbeReturn
last_pts (GstPad *pad, GstPadProbeInfo *info, gpointer user_data)
{
  GstClockTime pts = GST_BUFFER_PTS (GST_PAD_PROBE_INFO_BUFFER (info));
  g_atomic_pointer_set ((gpointer *) user_data, GSIZE_TO_POINTER ((gsize) pts));
  return GST_PAD_PROBE_OK;
}

/* mode=live on a file whose sink holds the preroll buffer: the element
 * reads on only until its output queue is full, then waits for
 * downstream, as offline; memory stays bounded however long the file. */
GST_START_TEST (test_paced_waits_for_downstream)
{
  g_autofree char *wav = fixture_path ("digits-continuous-16k.wav");
  g_autofree char *model = fixture_path (MODEL);
  g_autofree char *desc = g_strdup_printf ("filesrc location=%s ! wavparse ! audioconvert ! "
                                           "moroktranscriber name=el mode=live model=%s ! "
                                           "fakesink sync=true",
                                           wav, model);
  gpointer in = NULL;
  GstElement *el, *pipe = parse_with_probe (desc, "sink", last_pts, &in, &el);
  fail_unless (gst_element_set_state (pipe, GST_STATE_PAUSED) != GST_STATE_CHANGE_FAILURE);
  /* wait limits, not timing claims */
  fail_unless_equals_int (gst_element_get_state (pipe, NULL, NULL, 60 * GST_SECOND),
                          GST_STATE_CHANGE_SUCCESS);
  g_usleep (G_TIME_SPAN_SECOND);
  gsize then = GPOINTER_TO_SIZE (g_atomic_pointer_get (&in));
  g_usleep (G_TIME_SPAN_SECOND);
  gsize now = GPOINTER_TO_SIZE (g_atomic_pointer_get (&in));
  fail_unless (now == then && now < 20 * GST_SECOND, "input went on in PAUSED: %.1f s, then %.1f s",
               then / 1e9, now / 1e9);
  fail_unless_equals_int (gst_element_set_state (pipe, GST_STATE_NULL), GST_STATE_CHANGE_SUCCESS);
  gst_object_unref (el);
  gst_object_unref (pipe);
}
GST_END_TEST;

/* ---- a harness on a test clock ---- */

#define BUF 320       /* samples a buffer: 20 ms */
#define INTERVAL 3200 /* the interval=200 below */

typedef struct
{
  GstHarness *h;
  GstBus *bus;
  GstElement *el;
  GstTestClock *clock;
  GstClockTime base, latency; /* the element's base time, its LATENCY answer */
  GstClockTime worst;         /* the largest arrival - (running time + latency) seen */
  guint words;
  GstMessage *warning; /* the first warning */
} Clocked;

static void
clocked_start (Clocked *c, const char *props)
{
  g_autofree char *model = fixture_path (MODEL);
  g_autofree char *desc
      = g_strdup_printf ("moroktranscriber model=%s mode=auto interval=200 %s", model, props);
  memset (c, 0, sizeof *c);
  c->h = gst_harness_new_parse (desc);
  gst_harness_use_testclock (c->h);
  c->clock = gst_harness_get_testclock (c->h);
  gst_harness_set_src_caps_str (c->h, "audio/x-raw, format=F32LE, rate=16000, channels=1, "
                                      "layout=interleaved");
  c->el = gst_harness_find_element (c->h, "moroktranscriber");
  c->bus = gst_bus_new ();
  gst_element_set_bus (c->el, c->bus);
  gst_harness_play (c->h);
  c->base = gst_element_get_base_time (c->el);
  c->latency = gst_harness_query_latency (c->h);
  fail_unless (GST_CLOCK_TIME_IS_VALID (c->latency));
}

static void
clocked_stop (Clocked *c)
{
  gst_bus_set_flushing (c->bus, TRUE);
  gst_element_set_bus (c->el, NULL);
  gst_object_unref (c->bus);
  gst_object_unref (c->el);
  gst_object_unref (c->clock);
  if (c->warning)
    gst_message_unref (c->warning);
  gst_harness_teardown (c->h);
}

/* Waits (bounded) for the next element message named @name, keeping the
 * first warning. */
static GstStructure *
wait_message (Clocked *c, const char *name)
{
  for (;;)
    {
      GstMessage *msg = gst_bus_timed_pop_filtered (
          c->bus, 30 * GST_SECOND, GST_MESSAGE_ELEMENT | GST_MESSAGE_ERROR | GST_MESSAGE_WARNING);
      fail_unless (msg != NULL, "no %s message", name);
      fail_if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR);
      if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_WARNING)
        {
          if (!c->warning)
            c->warning = gst_message_ref (msg);
          gst_message_unref (msg);
          continue;
        }
      GstStructure *s = gst_structure_copy (gst_message_get_structure (msg));
      gst_message_unref (msg);
      if (gst_structure_has_name (s, name))
        return s;
      gst_structure_free (s);
    }
}

/* Pulls the words out now: each one's arrival on the clock against its
 * running time plus the latency. A serialized event sent through first
 * comes out after everything the element decoded so far. */
static void
pull_words (Clocked *c)
{
  fail_unless (gst_harness_push_event (
      c->h, gst_event_new_custom (GST_EVENT_CUSTOM_DOWNSTREAM, gst_structure_new_empty ("sync"))));
  for (gboolean seen = FALSE; !seen;)
    {
      GstEvent *event = gst_harness_pull_event (c->h); /* waits at most 60 s */
      fail_unless (event != NULL);
      seen = GST_EVENT_TYPE (event) == GST_EVENT_CUSTOM_DOWNSTREAM
             && gst_event_has_name (event, "sync");
      gst_event_unref (event);
    }
  GstBuffer *buf;
  while ((buf = gst_harness_try_pull (c->h)))
    {
      GstClockTime now = gst_clock_get_time (GST_CLOCK (c->clock)) - c->base;
      GstClockTime due = GST_BUFFER_PTS (buf) + c->latency; /* segment from 0 */
      if (now > due)
        c->worst = MAX (c->worst, now - due);
      c->words++;
      gst_buffer_unref (buf);
    }
}

/* Pushes @wave's @n samples at @t as 20 ms buffers, the clock at each
 * buffer's end plus @late (the audio arrives that late), waiting for the
 * decode due at every INTERVAL samples; then a GAP of 0.5 s and the final
 * decode. */
static void
push_utterance (Clocked *c, const float *wave, gint64 n, GstClockTime t, GstClockTime late)
{
  for (gint64 at = 0; at < n; at += BUF)
    {
      gint64 len = MIN (BUF, n - at);
      GstBuffer *buf = gst_buffer_new_memdup (wave + at, len * sizeof (float));
      GST_BUFFER_PTS (buf) = t + gst_util_uint64_scale_int (at, GST_SECOND, 16000);
      GST_BUFFER_DURATION (buf) = gst_util_uint64_scale_int (len, GST_SECOND, 16000);
      gst_test_clock_set_time (c->clock,
                               c->base + GST_BUFFER_PTS (buf) + GST_BUFFER_DURATION (buf) + late);
      fail_unless_equals_int (gst_harness_push (c->h, buf), GST_FLOW_OK);
      if ((at + len) % INTERVAL == 0)
        gst_structure_free (wait_message (c, "moroktranscriber-interim"));
      pull_words (c);
    }
  GstClockTime end = t + gst_util_uint64_scale_int (n, GST_SECOND, 16000);
  fail_unless (gst_harness_push_event (c->h, gst_event_new_gap (end, GST_SECOND / 2)));
  gst_structure_free (wait_message (c, "moroktranscriber"));
  pull_words (c);
}

/* A fixture utterance of 2.3 s (the tiny CTC model's third), as F32. */
static float *
fixture_wave (gint64 *out_n)
{
  GError *e = NULL;
  g_autofree char *path = fixture_path ("gigaam-audio.safetensors");
  MorokSafetensors *audio = morok_safetensors_open (path, &e);
  fail_unless (audio != NULL);
  const MorokSafetensor *t = morok_safetensors_get (audio, "audio.2", &e);
  *out_n = t->n_elements;
  float *wave = morok_safetensor_dup_f32 (t, &e);
  morok_safetensors_free (audio);
  return wave;
}

/* Live, on time: every word leaves before its running time plus the
 * element's latency (the hold's delay, the interval and `latency`:
 * decoding takes no clock time here; the tiny v3 encodes frame j once the
 * audio reaches j + 1/2 frames of 40 ms, so a word is committed by the
 * hold once the audio is the hold less 20 ms past its start), and
 * max-observed-delay says so; with
 * a hold of 600 ms the words are committed as two decodes agree, with one
 * of 120 ms by the hold. */
static const guint holds[] = { 600, 120 };

GST_START_TEST (test_words_before_deadline)
{
  Clocked c;
  guint hold = holds[__i__];
  g_autofree char *props = g_strdup_printf ("latency=100 hold=%u", hold);
  clocked_start (&c, props);
  fail_unless_equals_uint64 (c.latency, (hold - 20 + 200 + 100) * GST_MSECOND);
  gint64 n;
  g_autofree float *wave = fixture_wave (&n);
  push_utterance (&c, wave, n, 0, 0);
  push_utterance (&c, wave, n, 3 * GST_SECOND, 0);
  fail_unless (c.words > 4, "%u words", c.words);
  fail_unless_equals_uint64 (c.worst, 0);
  guint delay;
  g_object_get (c.el, "max-observed-delay", &delay, NULL);
  fail_unless (delay > 0 && delay * GST_MSECOND <= c.latency, "%u ms", delay);
  if (c.warning)
    {
      GError *err = NULL;
      gst_message_parse_warning (c.warning, &err, NULL);
      fail ("warning: %s", err->message);
    }
  clocked_stop (&c);
}
GST_END_TEST;

/* The audio reaches the element 5 s late, past the pipeline's latency of
 * 2 s: the words still come, max-observed-delay shows the delay, and an
 * element warning with details moroktranscriber/excessive-delay says it. */
GST_START_TEST (test_excessive_delay)
{
  Clocked c;
  clocked_start (&c, "latency=100 hold=600");
  fail_unless (gst_harness_push_upstream_event (c.h, gst_event_new_latency (2 * GST_SECOND)));
  gint64 n;
  g_autofree float *wave = fixture_wave (&n);
  push_utterance (&c, wave, n, 0, 5 * GST_SECOND);
  fail_unless (c.words > 2, "%u words", c.words);
  guint delay;
  g_object_get (c.el, "max-observed-delay", &delay, NULL);
  fail_unless (delay >= 5000, "%u ms", delay);
  fail_unless (c.warning != NULL);
  const GstStructure *details = NULL;
  gst_message_parse_warning_details (c.warning, &details);
  fail_unless (details != NULL
               && gst_structure_has_name (details, "moroktranscriber/excessive-delay"));
  guint64 d, allowed;
  fail_unless (gst_structure_get_uint64 (details, "delay", &d));
  fail_unless (gst_structure_get_uint64 (details, "latency", &allowed));
  fail_unless_equals_uint64 (allowed, 2 * GST_SECOND);
  fail_unless (d > 5 * GST_SECOND);
  clocked_stop (&c);
}
GST_END_TEST;

/* ---- words of one time into a sink that syncs ---- */

typedef struct
{
  GstClockTime last;
  guint same; /* buffers with the time of the one before */
} SameTimes;

static GstPadProbeReturn
count_same_times (GstPad *pad, GstPadProbeInfo *info, gpointer user_data)
{
  SameTimes *t = user_data;
  GstClockTime pts = GST_BUFFER_PTS (GST_PAD_PROBE_INFO_BUFFER (info));
  if (pts == t->last)
    t->same++;
  t->last = pts;
  return GST_PAD_PROBE_OK;
}

/* A real-time source into the seeded RNN-T, which emits several words in
 * one frame (on a sine, every run: noise left it to chance, and one run in
 * four of 4 s had no such pair), and fakesink sync=true, which holds the push of each until
 * its time plus the latency: the next word of the same time reaches the
 * sink just after that, but decoding kept up, so no excessive-delay
 * warning and max-observed-delay within the latency (a generous
 * `latency`: the claim is about what is measured, not this machine). */
GST_START_TEST (test_sync_sink_is_not_decoding_late)
{
  g_autofree char *model = fixture_path ("gigaam-v3-rnnt-tiny.safetensors");
  g_autofree char *desc
      = g_strdup_printf ("audiotestsrc is-live=true wave=sine samplesperbuffer=320 ! "
                         "audio/x-raw,rate=16000,channels=1 ! audioconvert ! "
                         "moroktranscriber name=el model=%s latency=2000 ! fakesink sync=true",
                         model);
  SameTimes times = { GST_CLOCK_TIME_NONE, 0 };
  GstElement *el, *pipe = parse_with_probe (desc, "src", count_same_times, &times, &el);
  GstBus *bus = gst_element_get_bus (pipe);
  fail_unless (gst_element_set_state (pipe, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
  GstClockTime latency = GST_CLOCK_TIME_NONE;
  gint64 end = g_get_monotonic_time () + 4 * G_TIME_SPAN_SECOND;
  while (g_get_monotonic_time () < end)
    {
      GstMessage *msg = gst_bus_timed_pop_filtered (bus, 20 * GST_MSECOND,
                                                    GST_MESSAGE_WARNING | GST_MESSAGE_ERROR);
      fail_unless (msg == NULL, "%s from %s", GST_MESSAGE_TYPE_NAME (msg),
                   GST_MESSAGE_SRC_NAME (msg));
    }
  GstQuery *query = gst_query_new_latency ();
  fail_unless (gst_element_query (pipe, query));
  gst_query_parse_latency (query, NULL, &latency, NULL);
  gst_query_unref (query);
  fail_unless_equals_int (gst_element_set_state (pipe, GST_STATE_NULL), GST_STATE_CHANGE_SUCCESS);
  guint delay;
  g_object_get (el, "max-observed-delay", &delay, NULL);
  g_test_message ("%u words of the time of the one before", times.same);
  fail_unless (times.same > 0, "no two words of one time: the case is not tested");
  fail_unless (delay * GST_MSECOND < latency, "%u ms, latency %" GST_TIME_FORMAT, delay,
               GST_TIME_ARGS (latency));
  gst_object_unref (bus);
  gst_object_unref (el);
  gst_object_unref (pipe);
}
GST_END_TEST;

/* ---- a flush while a decode runs ---- */

typedef struct
{
  GMutex lock;
  GCond cond;
  gboolean held, release; /* the worker waits in its first interim message */
  GString *src;           /* what left the src pad: B, G, S (segment), X (flush stop) */
} FlushRun;

static GstBusSyncReply
hold_first_interim (GstBus *bus, GstMessage *msg, gpointer user_data)
{
  FlushRun *f = user_data;
  const GstStructure *s = gst_message_get_structure (msg);
  if (s && gst_structure_has_name (s, "moroktranscriber-interim"))
    {
      g_mutex_lock (&f->lock);
      if (!f->held)
        {
          f->held = TRUE;
          g_cond_broadcast (&f->cond);
          while (!f->release)
            g_cond_wait (&f->cond, &f->lock);
        }
      g_mutex_unlock (&f->lock);
    }
  return GST_BUS_PASS;
}

static GstPadProbeReturn
record_src (GstPad *pad, GstPadProbeInfo *info, gpointer user_data)
{
  FlushRun *f = user_data;
  char kind = 0;
  if (info->type & GST_PAD_PROBE_TYPE_BUFFER)
    kind = 'B';
  else
    switch (GST_EVENT_TYPE (GST_PAD_PROBE_INFO_EVENT (info)))
      {
      case GST_EVENT_GAP: kind = 'G'; break;
      case GST_EVENT_SEGMENT: kind = 'S'; break;
      case GST_EVENT_FLUSH_STOP: kind = 'X'; break;
      default: break;
      }
  if (kind)
    {
      g_mutex_lock (&f->lock);
      g_string_append_c (f->src, kind);
      g_mutex_unlock (&f->lock);
    }
  return GST_PAD_PROBE_OK;
}

static gpointer
flush_stop (gpointer h)
{
  return GINT_TO_POINTER (gst_harness_push_event (h, gst_event_new_flush_stop (TRUE)));
}

/* FLUSH_START and FLUSH_STOP while a decode runs (held in its interim
 * message, on the worker thread): the decode's output goes nowhere, and
 * nothing leaves between FLUSH_STOP and the next SEGMENT. */
GST_START_TEST (test_flush_during_decode)
{
  FlushRun f = { .src = g_string_new (NULL) };
  g_mutex_init (&f.lock);
  g_cond_init (&f.cond);
  g_autofree char *model = fixture_path (MODEL);
  g_autofree char *desc
      = g_strdup_printf ("moroktranscriber model=%s mode=auto interval=200", model);
  GstHarness *h = gst_harness_new_parse (desc);
  gst_harness_set_src_caps_str (h, "audio/x-raw, format=F32LE, rate=16000, channels=1, "
                                   "layout=interleaved");
  GstElement *el = gst_harness_find_element (h, "moroktranscriber");
  GstBus *bus = gst_bus_new ();
  gst_bus_set_sync_handler (bus, hold_first_interim, &f, NULL);
  gst_element_set_bus (el, bus);
  GstPad *src = gst_element_get_static_pad (el, "src");
  gst_pad_add_probe (src,
                     GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM
                         | GST_PAD_PROBE_TYPE_EVENT_FLUSH,
                     record_src, &f, NULL);
  gst_harness_play (h);
  gint64 n;
  g_autofree float *wave = fixture_wave (&n);
  for (gint64 at = 0; at + BUF <= MIN (n, 16000); at += BUF)
    {
      GstBuffer *buf = gst_buffer_new_memdup (wave + at, BUF * sizeof (float));
      GST_BUFFER_PTS (buf) = gst_util_uint64_scale_int (at, GST_SECOND, 16000);
      GST_BUFFER_DURATION (buf) = gst_util_uint64_scale_int (BUF, GST_SECOND, 16000);
      fail_unless_equals_int (gst_harness_push (h, buf), GST_FLOW_OK);
    }
  g_mutex_lock (&f.lock);
  /* a wait limit, not a timing claim */
  gint64 limit = g_get_monotonic_time () + 30 * G_TIME_SPAN_SECOND;
  while (!f.held)
    fail_unless (g_cond_wait_until (&f.cond, &f.lock, limit), "no decode");
  g_mutex_unlock (&f.lock);
  fail_unless (gst_harness_push_event (h, gst_event_new_flush_start ()));
  /* FLUSH_STOP may wait for the decode: from another thread */
  GThread *stopper = g_thread_new ("flush-stop", flush_stop, h);
  g_usleep (100 * G_TIME_SPAN_MILLISECOND);
  g_mutex_lock (&f.lock);
  f.release = TRUE;
  g_cond_broadcast (&f.cond);
  g_mutex_unlock (&f.lock);
  fail_unless (GPOINTER_TO_INT (g_thread_join (stopper)));
  GstSegment segment;
  gst_segment_init (&segment, GST_FORMAT_TIME);
  segment.start = segment.time = 100 * GST_SECOND;
  fail_unless (gst_harness_push_event (h, gst_event_new_segment (&segment)));
  g_mutex_lock (&f.lock);
  const char *x = strrchr (f.src->str, 'X');
  fail_unless (x != NULL && x[1] == 'S', "after FLUSH_STOP: %s (all: %s)", x ? x : "-", f.src->str);
  g_mutex_unlock (&f.lock);
  gst_object_unref (src);
  gst_bus_set_flushing (bus, TRUE);
  gst_element_set_bus (el, NULL);
  gst_object_unref (bus);
  gst_object_unref (el);
  gst_harness_teardown (h);
  g_string_free (f.src, TRUE);
  g_mutex_clear (&f.lock);
  g_cond_clear (&f.cond);
}
GST_END_TEST;

/* ---- when live mode measures ---- */

static gboolean before_data; /* no buffer pushed yet */
static gint measured, measured_before_data;

static void
on_log (GstDebugCategory *category, GstDebugLevel level, const gchar *file, const gchar *function,
        gint line, GObject *object, GstDebugMessage *message, gpointer user_data)
{
  if (level == GST_LEVEL_INFO && g_str_equal (function, "ensure_stream")
      && g_str_equal (gst_debug_category_get_name (category), "moroktranscriber"))
    {
      g_atomic_int_inc (&measured);
      if (before_data)
        g_atomic_int_inc (&measured_before_data);
    }
}

/* The decodes live mode times (seconds of them with a full-size model) run
 * once, as the element goes to PLAYING with upstream live, before any
 * buffer: on the first buffer the streaming thread would wait for them and
 * a live source overrun. */
GST_START_TEST (test_measured_before_data)
{
  gst_debug_set_active (TRUE);
  gst_debug_set_threshold_for_name ("moroktranscriber", GST_LEVEL_INFO);
  gst_debug_add_log_function (on_log, NULL, NULL);
  g_autofree char *model = fixture_path (MODEL);
  g_autofree char *desc = g_strdup_printf ("moroktranscriber model=%s mode=auto", model);
  before_data = TRUE;
  GstHarness *h = gst_harness_new_parse (desc);
  gst_harness_set_src_caps_str (h, "audio/x-raw, format=F32LE, rate=16000, channels=1, "
                                   "layout=interleaved");
  gst_harness_play (h);
  before_data = FALSE;
  GstBuffer *buf = gst_buffer_new_and_alloc (BUF * sizeof (float));
  gst_buffer_memset (buf, 0, 0, BUF * sizeof (float));
  GST_BUFFER_PTS (buf) = 0;
  GST_BUFFER_DURATION (buf) = gst_util_uint64_scale_int (BUF, GST_SECOND, 16000);
  fail_unless_equals_int (gst_harness_push (h, buf), GST_FLOW_OK);
  fail_unless (GST_CLOCK_TIME_IS_VALID (gst_harness_query_latency (h)));
  gst_debug_remove_log_function (on_log);
  gst_harness_teardown (h);
  fail_unless_equals_int (measured, 1);
  fail_unless_equals_int (measured_before_data, 1);
}
GST_END_TEST;

static Suite *
live_suite (void)
{
  Suite *s = suite_create ("moroktranscriber-live");
  TCase *tc = tcase_create ("general");
  tcase_set_timeout (tc, 180);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_interim_and_commits);
  tcase_add_loop_test (tc, test_whole_utterance_equals_offline, 0, G_N_ELEMENTS (one_decode));
  tcase_add_test (tc, test_auto_on_a_file_is_offline);
  tcase_add_test (tc, test_paced_waits_for_downstream);
  tcase_add_loop_test (tc, test_words_before_deadline, 0, G_N_ELEMENTS (holds));
  tcase_add_test (tc, test_excessive_delay);
  tcase_add_test (tc, test_flush_during_decode);
  tcase_add_test (tc, test_sync_sink_is_not_decoding_late);
  tcase_add_test (tc, test_measured_before_data);
  return s;
}

GST_CHECK_MAIN (live);
