/* SPDX-License-Identifier: MIT */
/* The moroktranscriber element: utterances in, timed words out. The three
 * utterances of tests/fixtures/gigaam-audio.safetensors go in with a GAP
 * between them; what comes out is checked against the PyTorch reference's
 * words and frames (tests/fixtures/gigaam-asr-expected.json, the same
 * expectations test-gigaam-asr checks the decoding API against). */
#include "element-checks.h"
#include "fixtures.h"
#include "io/safetensors.h"
#include "jit/morok-jit-registry.h"
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <stdio.h>
#include <string.h>

#define N_UTT 3
#define FRAME (40 * GST_MSECOND) /* GigaAM's encoded frame at 16 kHz */
#define PAUSE (GST_SECOND / 2)   /* the GAP between utterances */

/* The models, table-driven: each test loops over them. */
static const char *const models[] = {
  "gigaam-v3-e2e-ctc-tiny",
  "gigaam-v3-e2e-rnnt-tiny",
  "gigaam-v2-rnnt-tiny",
};

static JsonParser *expected;

/* Utterance @i of @model in gigaam-asr-expected.json. */
static JsonObject *
utterance (const char *model, guint i)
{
  JsonObject *root = json_node_get_object (json_parser_get_root (expected));
  JsonObject *m = json_object_get_object_member (root, model);
  return json_array_get_object_element (json_object_get_array_member (m, "utterances"), i);
}

static JsonObject *
word (const char *model, guint i, guint k)
{
  return json_array_get_object_element (
      json_object_get_array_member (utterance (model, i), "words"), k);
}

static guint
n_words (const char *model, guint i)
{
  return json_array_get_length (json_object_get_array_member (utterance (model, i), "words"));
}

static GstClockTime
samples_time (gint64 n)
{
  return gst_util_uint64_scale_int (n, GST_SECOND, 16000);
}

/* Utterance @i's start: the ones before it, each with the pause after it. */
static GstClockTime
utterance_start (const char *model, guint i)
{
  GstClockTime t = 0;
  for (guint k = 0; k < i; k++)
    t += samples_time (json_object_get_int_member (utterance (model, k), "samples")) + PAUSE;
  return t;
}

static GstClockTime
utterance_end (const char *model, guint i)
{
  return utterance_start (model, i)
         + samples_time (json_object_get_int_member (utterance (model, i), "samples"));
}

/* A harness around moroktranscriber on @model with @props, its messages on
 * a bus of its own (*out_bus), what leaves it recorded into @timeline
 * (NULL: not). */
static GstHarness *
transcriber_harness (const char *model, const char *props, GstBus **out_bus, GString *timeline)
{
  g_autofree char *name = g_strdup_printf ("%s.safetensors", model);
  g_autofree char *path = fixture_path (name);
  g_autofree char *desc = g_strdup_printf ("moroktranscriber model=%s %s", path, props);
  GstHarness *h = gst_harness_new_parse (desc);
  /* upstream not live, as a file: mode=auto decodes offline */
  gst_harness_set_live (h, FALSE);
  gst_harness_set_src_caps_str (h, "audio/x-raw, format=F32LE, rate=16000, channels=1, "
                                   "layout=interleaved");
  GstElement *el = gst_harness_find_element (h, "moroktranscriber");
  *out_bus = gst_bus_new ();
  gst_element_set_bus (el, *out_bus);
  if (timeline)
    timeline_record (el, timeline);
  gst_object_unref (el);
  return h;
}

static void
harness_teardown (GstHarness *h, GstBus *bus)
{
  GstElement *el = gst_harness_find_element (h, "moroktranscriber");
  gst_bus_set_flushing (bus, TRUE);
  gst_element_set_bus (el, NULL);
  gst_object_unref (el);
  gst_object_unref (bus);
  gst_harness_teardown (h);
}

/* Pushes the three fixture utterances in 0.1 s buffers, a GAP of PAUSE
 * after each, then EOS. */
static void
push_utterances (GstHarness *h)
{
  GError *e = NULL;
  g_autofree char *path = fixture_path ("gigaam-audio.safetensors");
  MorokSafetensors *audio = morok_safetensors_open (path, &e);
  g_assert_no_error (e);
  GstClockTime t = 0;
  for (guint i = 0; i < N_UTT; i++)
    {
      g_autofree char *name = g_strdup_printf ("audio.%u", i);
      const MorokSafetensor *tensor = morok_safetensors_get (audio, name, &e);
      g_assert_no_error (e);
      g_autofree float *wave = morok_safetensor_dup_f32 (tensor, &e);
      for (gint64 at = 0; at < tensor->n_elements; at += 1600)
        {
          gint64 len = MIN (1600, tensor->n_elements - at);
          GstBuffer *buf = gst_buffer_new_memdup (wave + at, len * sizeof (float));
          GST_BUFFER_PTS (buf) = t + samples_time (at);
          GST_BUFFER_DURATION (buf) = samples_time (len);
          fail_unless_equals_int (gst_harness_push (h, buf), GST_FLOW_OK);
        }
      t += samples_time (tensor->n_elements);
      fail_unless (gst_harness_push_event (h, gst_event_new_gap (t, PAUSE)));
      t += PAUSE;
    }
  morok_safetensors_free (audio);
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
}

/* Each word is one buffer with the word's text, PTS its utterance's start
 * plus start_frame × 40 ms and duration (end_frame − start_frame) × 40 ms,
 * the reference's words and frames. */
/* Pushes the utterances into @h and pulls @model's words out of it. */
static void
check_words (GstHarness *h, const char *model)
{
  push_utterances (h);
  for (guint i = 0; i < N_UTT; i++)
    for (guint k = 0; k < n_words (model, i); k++)
      {
        JsonObject *w = word (model, i, k);
        GstBuffer *buf = gst_harness_try_pull (h);
        fail_unless (buf != NULL, "%s: no buffer for word %u of utterance %u", model, k, i);
        gint64 f0 = json_object_get_int_member (w, "start_frame");
        gint64 f1 = json_object_get_int_member (w, "end_frame");
        fail_unless_equals_uint64 (GST_BUFFER_PTS (buf), utterance_start (model, i) + f0 * FRAME);
        fail_unless_equals_uint64 (GST_BUFFER_DURATION (buf), (f1 - f0) * FRAME);
        GstMapInfo map;
        gst_buffer_map (buf, &map, GST_MAP_READ);
        g_autofree char *text = g_strndup ((const char *) map.data, map.size);
        fail_unless_equals_string (text, json_object_get_string_member (w, "word"));
        gst_buffer_unmap (buf, &map);
        gst_buffer_unref (buf);
      }
  fail_unless (gst_harness_try_pull (h) == NULL, "%s: more buffers than words", model);
}

GST_START_TEST (test_words)
{
  const char *model = models[__i__];
  GstBus *bus;
  GstHarness *h = transcriber_harness (model, "", &bus, NULL);
  check_words (h, model);
  harness_teardown (h, bus);
}
GST_END_TEST;

/* Two elements of one model share its prepared plans (for RNN-T the
 * decoder's too: one prepare) and each still gives the reference's words;
 * the last to stop frees them. */
GST_START_TEST (test_shared_plans)
{
  const char *model = models[__i__];
  guint64 before = morok_jit_registry_prepare_count ();
  GstBus *bus_a, *bus_b;
  GstHarness *a = transcriber_harness (model, "", &bus_a, NULL);
  gst_harness_play (a);
  GstHarness *b = transcriber_harness (model, "", &bus_b, NULL);
  gst_harness_play (b);
  fail_unless_equals_int (morok_jit_registry_prepare_count () - before, 1);
  fail_unless_equals_int (morok_jit_registry_n_prototypes (), 1);
  check_words (b, model);
  check_words (a, model);
  harness_teardown (a, bus_a);
  fail_unless_equals_int (morok_jit_registry_n_prototypes (), 1);
  harness_teardown (b, bus_b);
  fail_unless_equals_int (morok_jit_registry_n_prototypes (), 0);
}
GST_END_TEST;

/* What @model's utterances must give: GAP events for all time without
 * words (contiguous from 0; a word may overlap the one before, and no GAP
 * reaches into a later word), each utterance's words (the last may end up
 * to a frame past the audio), a GAP up to its end, its final-transcript
 * event, then the GAP upstream sent after it. */
static char *
expected_timeline (const char *model)
{
  GString *s = g_string_new ("G0+0");
  GstClockTime known = 0;
  for (guint i = 0; i < N_UTT; i++)
    {
      GstClockTime start = utterance_start (model, i), end = utterance_end (model, i);
      for (guint k = 0; k < n_words (model, i); k++)
        {
          JsonObject *w = word (model, i, k);
          GstClockTime pts = start + json_object_get_int_member (w, "start_frame") * FRAME;
          GstClockTime stop = start + json_object_get_int_member (w, "end_frame") * FRAME;
          if (pts > known)
            g_string_append_printf (s, " G%" G_GUINT64_FORMAT "+%" G_GUINT64_FORMAT,
                                    known / GST_MSECOND, (pts - known) / GST_MSECOND);
          g_string_append_printf (s, " B%" G_GUINT64_FORMAT "+%" G_GUINT64_FORMAT,
                                  pts / GST_MSECOND, (stop - pts) / GST_MSECOND);
          known = MAX (known, stop);
        }
      if (end > known)
        g_string_append_printf (s, " G%" G_GUINT64_FORMAT "+%" G_GUINT64_FORMAT,
                                known / GST_MSECOND, (end - known) / GST_MSECOND);
      g_string_append (s, " F");
      known = MAX (known, end);
      g_string_append_printf (s, " G%" G_GUINT64_FORMAT "+%" G_GUINT64_FORMAT, known / GST_MSECOND,
                              (end + PAUSE - known) / GST_MSECOND);
      known = end + PAUSE;
    }
  return g_string_free (s, FALSE);
}

/* GAP events cover the time without words, never a later word's; after
 * each utterance's last word comes the final-transcript event. */
GST_START_TEST (test_gaps_and_final_transcripts)
{
  const char *model = models[__i__];
  g_autoptr (GString) timeline = g_string_new (NULL);
  GstBus *bus;
  GstHarness *h = transcriber_harness (model, "", &bus, timeline);
  push_utterances (h);
  g_autofree char *want = expected_timeline (model);
  fail_unless_equals_string (timeline->str, want);
  harness_teardown (h, bus);
}
GST_END_TEST;

/* @timeline with each run of contiguous GAPs as one. (transfer full) */
static char *
merge_gaps (const char *timeline)
{
  g_auto (GStrv) items = g_strsplit (timeline, " ", -1);
  GString *s = g_string_new (NULL);
  gint64 gap_start = -1, gap_end = -1;
  for (guint i = 0;; i++)
    {
      gint64 ts, duration;
      gboolean gap
          = items[i]
            && sscanf (items[i], "G%" G_GINT64_FORMAT "+%" G_GINT64_FORMAT, &ts, &duration) == 2;
      if (gap && ts == gap_end)
        {
          gap_end = ts + duration;
          continue;
        }
      if (gap_start >= 0) /* the run before ends here */
        g_string_append_printf (s, " G%" G_GINT64_FORMAT "+%" G_GINT64_FORMAT, gap_start,
                                gap_end - gap_start);
      gap_start = gap ? ts : -1;
      gap_end = gap ? ts + duration : -1;
      if (!items[i])
        break;
      if (!gap)
        g_string_append_printf (s, " %s", items[i]);
    }
  return g_string_free (s, FALSE);
}

/* max-batch=3: the utterances wait and run as one batch, and what comes out
 * is the same as one by one (a batch's items are decoded as alone), but for
 * how the time before each is cut into GAPs. */
GST_START_TEST (test_max_batch)
{
  const char *model = models[__i__];
  g_autoptr (GString) timeline = g_string_new (NULL);
  GstBus *bus;
  GstHarness *h = transcriber_harness (model, "max-batch=3", &bus, timeline);
  push_utterances (h);
  g_autofree char *alone = expected_timeline (model);
  g_autofree char *want = merge_gaps (alone);
  g_autofree char *got = merge_gaps (timeline->str);
  fail_unless_equals_string (got, want);
  harness_teardown (h, bus);
}
GST_END_TEST;

/* At each utterance's end an element message "moroktranscriber" carries its
 * text, start and end (ns) and its words (word, start, end), as the
 * reference says. */
GST_START_TEST (test_messages)
{
  const char *model = models[__i__];
  GstBus *bus;
  GstHarness *h = transcriber_harness (model, "", &bus, NULL);
  push_utterances (h);
  for (guint i = 0; i < N_UTT; i++)
    {
      GstMessage *msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ELEMENT);
      fail_unless (msg != NULL, "%s: no message for utterance %u", model, i);
      const GstStructure *s = gst_message_get_structure (msg);
      fail_unless (gst_structure_has_name (s, "moroktranscriber"));
      fail_unless_equals_string (gst_structure_get_string (s, "text"),
                                 json_object_get_string_member (utterance (model, i), "text"));
      guint64 start, end;
      fail_unless (gst_structure_get_uint64 (s, "start", &start));
      fail_unless (gst_structure_get_uint64 (s, "end", &end));
      fail_unless_equals_uint64 (start, utterance_start (model, i));
      fail_unless_equals_uint64 (end, utterance_end (model, i));
      const GValue *words = gst_structure_get_value (s, "words");
      fail_unless (GST_VALUE_HOLDS_ARRAY (words));
      fail_unless_equals_int (gst_value_array_get_size (words), n_words (model, i));
      for (guint k = 0; k < n_words (model, i); k++)
        {
          const GstStructure *ws = gst_value_get_structure (gst_value_array_get_value (words, k));
          JsonObject *w = word (model, i, k);
          fail_unless_equals_string (gst_structure_get_string (ws, "word"),
                                     json_object_get_string_member (w, "word"));
          fail_unless (gst_structure_get_uint64 (ws, "start", &start));
          fail_unless (gst_structure_get_uint64 (ws, "end", &end));
          GstClockTime t0 = utterance_start (model, i);
          fail_unless_equals_uint64 (start,
                                     t0 + json_object_get_int_member (w, "start_frame") * FRAME);
          fail_unless_equals_uint64 (end, t0 + json_object_get_int_member (w, "end_frame") * FRAME);
        }
      gst_message_unref (msg);
    }
  fail_unless (gst_bus_pop_filtered (bus, GST_MESSAGE_ELEMENT) == NULL);
  harness_teardown (h, bus);
}
GST_END_TEST;

/* output=utterance: one buffer per utterance, its text, PTS its first
 * sample and duration its audio. */
GST_START_TEST (test_output_utterance)
{
  const char *model = models[__i__];
  GstBus *bus;
  GstHarness *h = transcriber_harness (model, "output=utterance", &bus, NULL);
  push_utterances (h);
  for (guint i = 0; i < N_UTT; i++)
    {
      GstBuffer *buf = gst_harness_try_pull (h);
      fail_unless (buf != NULL, "%s: no buffer for utterance %u", model, i);
      fail_unless_equals_uint64 (GST_BUFFER_PTS (buf), utterance_start (model, i));
      fail_unless_equals_uint64 (GST_BUFFER_DURATION (buf),
                                 utterance_end (model, i) - utterance_start (model, i));
      GstMapInfo map;
      gst_buffer_map (buf, &map, GST_MAP_READ);
      g_autofree char *text = g_strndup ((const char *) map.data, map.size);
      fail_unless_equals_string (text,
                                 json_object_get_string_member (utterance (model, i), "text"));
      gst_buffer_unmap (buf, &map);
      gst_buffer_unref (buf);
    }
  fail_unless (gst_harness_try_pull (h) == NULL);
  harness_teardown (h, bus);
}
GST_END_TEST;

/* Decoding offline, the LATENCY query adds max-batch × max-duration and
 * latency: upstream's (the harness's, none) + 2 × 1 s + 250 ms, upstream
 * live too. */
GST_START_TEST (test_latency)
{
  GstBus *bus;
  GstHarness *h = transcriber_harness (
      models[0], "mode=offline max-duration=1 max-batch=2 latency=250", &bus, NULL);
  gst_harness_set_live (h, TRUE);
  fail_unless_equals_uint64 (gst_harness_query_latency (h), 2250 * GST_MSECOND);
  harness_teardown (h, bus);
}
GST_END_TEST;

/* A tee feeding morokvad remove-silence=true ! moroktranscriber on one
 * branch and a plain sink on the other, with default queues, prerolls and
 * reaches EOS with text out (7.4 s of audio, more than the other branch's
 * queue holds: without GAPs the tee would block). */
GST_START_TEST (test_tee_prerolls)
{
  g_autofree char *model = fixture_path ("gigaam-v3-e2e-ctc-tiny.safetensors");
  g_autofree char *branch = g_strdup_printf ("morokvad remove-silence=true ! "
                                             "moroktranscriber name=el output=utterance model=%s",
                                             model);
  fail_unless (assert_tee_prerolls ("gigaam-utterances-16k.wav", branch) > 0);
}
GST_END_TEST;

/* A live source through morokvad remove-silence=true ! moroktranscriber
 * into a sink that syncs on the clock at the advertised latency: 3 s run
 * without an error, a warning or a QoS message (a late buffer). */
GST_START_TEST (test_live_source)
{
  g_autofree char *model = fixture_path ("gigaam-v3-e2e-ctc-tiny.safetensors");
  g_autofree char *desc = g_strdup_printf (
      "audiotestsrc is-live=true wave=pink-noise samplesperbuffer=800 num-buffers=60 ! "
      "audio/x-raw,rate=16000,channels=1 ! morokvad remove-silence=true ! "
      "moroktranscriber model=%s max-duration=2 latency=1000 ! "
      "fakesink sync=true qos=true max-lateness=0",
      model);
  GstElement *pipe = gst_parse_launch (desc, NULL);
  fail_unless (pipe != NULL);
  fail_unless (gst_element_set_state (pipe, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
  GstBus *bus = gst_element_get_bus (pipe);
  GstMessage *msg;
  guint bad = 0;
  /* a wait limit, not a timing claim: preparing may compile the model */
  while ((msg = gst_bus_timed_pop_filtered (bus, 60 * GST_SECOND,
                                            GST_MESSAGE_EOS | GST_MESSAGE_ERROR
                                                | GST_MESSAGE_WARNING | GST_MESSAGE_QOS)))
    {
      gboolean eos = GST_MESSAGE_TYPE (msg) == GST_MESSAGE_EOS;
      if (!eos)
        g_printerr ("%s from %s\n", GST_MESSAGE_TYPE_NAME (msg), GST_MESSAGE_SRC_NAME (msg));
      bad += !eos;
      gst_message_unref (msg);
      if (eos)
        break;
    }
  fail_unless_equals_int (bad, 0);
  fail_unless_equals_int (gst_element_set_state (pipe, GST_STATE_NULL), GST_STATE_CHANGE_SUCCESS);
  gst_object_unref (bus);
  gst_object_unref (pipe);
}
GST_END_TEST;

/* In PLAYING, latency (read at prepare) is ignored with a warning in
 * moroktranscriber's debug category. */
GST_START_TEST (test_ready_only_properties)
{
  GstBus *bus;
  GstHarness *h = transcriber_harness (models[0], "latency=100", &bus, NULL);
  GstElement *el = gst_harness_find_element (h, "moroktranscriber");
  g_autofree char *category = set_property_warning_category (el, "latency", "5");
  fail_unless_equals_string (category, "moroktranscriber");
  guint latency;
  g_object_get (el, "latency", &latency, NULL);
  fail_unless_equals_int (latency, 100);
  gst_object_unref (el);
  harness_teardown (h, bus);
}
GST_END_TEST;

static void
edit_sample_rate_48k (JsonObject *header, JsonObject *config)
{
  json_object_set_int_member (json_object_get_object_member (config, "preprocessor"), "sample_rate",
                              48000);
}

/* A missing, wrong or absent model, or one made for 48 kHz audio, is an
 * error message naming the file and the reason; the state change fails. */
GST_START_TEST (test_bad_model)
{
  assert_fails_to_start ("moroktranscriber", NULL, "model property");
  assert_fails_to_start ("moroktranscriber", "/nonexistent/gigaam.safetensors",
                         "/nonexistent/gigaam.safetensors");
  g_autofree char *wrong = fixture_path ("onnx-tiny.onnx");
  assert_fails_to_start ("moroktranscriber", wrong, "onnx-tiny.onnx");
  g_autofree char *dir = g_dir_make_tmp ("morok-transcriber-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "gigaam-48k.safetensors", NULL);
  fixture_write_gigaam (path, edit_sample_rate_48k, 0);
  assert_fails_to_start ("moroktranscriber", path,
                         "gigaam-48k.safetensors: 'preprocessor.sample_rate' is 48000 Hz, "
                         "the audio is 16000 Hz");
  g_unlink (path);
  g_rmdir (dir);
}
GST_END_TEST;

/* Audio at 44.1 kHz fails negotiation with an error saying what the
 * element takes. */
GST_START_TEST (test_wrong_caps)
{
  /* the element alone: a bin's ghost pad would refuse the caps first */
  g_autofree char *model = fixture_path ("gigaam-v3-e2e-ctc-tiny.safetensors");
  GstElement *el = gst_object_ref_sink (gst_element_factory_make ("moroktranscriber", NULL));
  g_object_set (el, "model", model, NULL);
  GstBus *bus = gst_bus_new ();
  gst_element_set_bus (el, bus);
  GstHarness *h = gst_harness_new_with_element (el, "sink", "src");
  gst_harness_set_src_caps_str (h, "audio/x-raw, format=F32LE, rate=44100, channels=1, "
                                   "layout=interleaved");
  GstBuffer *buf = gst_buffer_new_allocate (NULL, 1764, NULL);
  gst_buffer_memset (buf, 0, 0, 1764);
  fail_unless_equals_int (gst_harness_push (h, buf), GST_FLOW_NOT_NEGOTIATED);
  GstMessage *msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
  fail_unless (msg != NULL);
  GError *err = NULL;
  gst_message_parse_error (msg, &err, NULL);
  fail_unless (strstr (err->message, "takes 16000 Hz mono audio") != NULL, "%s", err->message);
  fail_unless (strstr (err->message, "44100") != NULL, "%s", err->message);
  g_error_free (err);
  gst_message_unref (msg);
  gst_bus_set_flushing (bus, TRUE);
  gst_element_set_bus (el, NULL);
  gst_object_unref (bus);
  gst_harness_teardown (h);
  gst_object_unref (el);
}
GST_END_TEST;

/* 20 cycles NULL <-> PLAYING, each preparing an RNN-T model (plans and
 * decoder), leave nothing behind. */
GST_START_TEST (test_state_cycles)
{
  g_autofree char *model = fixture_path ("gigaam-v2-rnnt-tiny.safetensors");
  g_autofree char *desc = g_strdup_printf ("audiotestsrc num-buffers=8 samplesperbuffer=1600 ! "
                                           "audio/x-raw,rate=16000,channels=1 ! moroktranscriber "
                                           "model=%s max-duration=2 ! fakesink",
                                           model);
  assert_cycles_leak_nothing (desc, 20);
}
GST_END_TEST;

static Suite *
moroktranscriber_suite (void)
{
  Suite *s = suite_create ("moroktranscriber");
  TCase *tc = tcase_create ("general");
  tcase_set_timeout (tc, 180);
  suite_add_tcase (s, tc);
  tcase_add_loop_test (tc, test_words, 0, G_N_ELEMENTS (models));
  tcase_add_loop_test (tc, test_shared_plans, 0, G_N_ELEMENTS (models));
  tcase_add_loop_test (tc, test_gaps_and_final_transcripts, 0, G_N_ELEMENTS (models));
  tcase_add_loop_test (tc, test_max_batch, 0, G_N_ELEMENTS (models));
  tcase_add_loop_test (tc, test_messages, 0, G_N_ELEMENTS (models));
  tcase_add_loop_test (tc, test_output_utterance, 0, G_N_ELEMENTS (models));
  tcase_add_test (tc, test_latency);
  tcase_add_test (tc, test_tee_prerolls);
  tcase_add_test (tc, test_live_source);
  tcase_add_test (tc, test_ready_only_properties);
  tcase_add_test (tc, test_bad_model);
  tcase_add_test (tc, test_wrong_caps);
  tcase_add_test (tc, test_state_cycles);
  return s;
}

int
main (int argc, char **argv)
{
  gst_check_init (&argc, &argv);
  g_autofree char *path = fixture_path ("gigaam-asr-expected.json");
  GError *e = NULL;
  expected = json_parser_new ();
  g_assert_true (json_parser_load_from_file (expected, path, &e));
  int failed = gst_check_run_suite (moroktranscriber_suite (), "moroktranscriber", __FILE__);
  g_object_unref (expected);
  return failed ? 1 : 0;
}
