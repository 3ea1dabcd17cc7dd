/* SPDX-License-Identifier: MIT */
/* moroktranscriber and morokencoder with model= a model hub folder, as
 * downloaded (scripts/gigaam/make-hub-fixtures.py writes the six upstream
 * kinds from the converted fixtures): on the fixture utterances, each folder
 * gives what its converted file gives, word for word, message for message,
 * and the same encoder tensors. */
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "element-checks.h"
#include "fixtures.h"
#include "hub-fixtures.h"

#define N_UTT 3
#define RATE 16000
#define PAUSE (300 * GST_MSECOND)

/* What left an element: its buffers' times and the text of its messages,
 * in order, and its buffers' bytes. */
typedef struct
{
  GString *events;
  GPtrArray *payloads; /* GBytes* */
} Output;

static void
output_clear (Output *o)
{
  g_string_free (o->events, TRUE);
  g_ptr_array_unref (o->payloads);
}

/* Runs "@factory model=@model" on the three fixture utterances, each one
 * buffer of F32 followed by a GAP of PAUSE, then EOS. */
static Output
run_element (const char *factory, const char *model)
{
  Output o
      = { g_string_new (NULL), g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref) };
  g_autofree char *desc = g_strdup_printf ("%s model=%s", factory, model);
  GstHarness *h = gst_harness_new_parse (desc);
  /* a file's way: each utterance decoded once, offline */
  gst_harness_set_live (h, FALSE);
  gst_harness_set_src_caps_str (h, "audio/x-raw, format=F32LE, rate=16000, channels=1, "
                                   "layout=interleaved");
  GstElement *el = gst_harness_find_element (h, factory);
  GstBus *bus = gst_bus_new ();
  gst_element_set_bus (el, bus);
  GstClockTime t = 0;
  for (guint i = 0; i < N_UTT; i++)
    {
      gsize n;
      g_autofree float *wave = fixture_gigaam_utterance (i, &n);
      GstBuffer *buf = gst_buffer_new_memdup (wave, n * sizeof (float));
      GST_BUFFER_PTS (buf) = t;
      GST_BUFFER_DURATION (buf) = gst_util_uint64_scale_int (n, GST_SECOND, RATE);
      t += GST_BUFFER_DURATION (buf);
      fail_unless_equals_int (gst_harness_push (h, buf), GST_FLOW_OK);
      fail_unless (gst_harness_push_event (h, gst_event_new_gap (t, PAUSE)));
      t += PAUSE;
    }
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  for (GstBuffer *buf; (buf = gst_harness_try_pull (h));)
    {
      g_string_append_printf (o.events, "buffer %" G_GUINT64_FORMAT "+%" G_GUINT64_FORMAT "\n",
                              GST_BUFFER_PTS (buf), GST_BUFFER_DURATION (buf));
      GstMapInfo map;
      gst_buffer_map (buf, &map, GST_MAP_READ);
      g_ptr_array_add (o.payloads, g_bytes_new (map.data, map.size));
      gst_buffer_unmap (buf, &map);
      gst_buffer_unref (buf);
    }
  for (GstMessage *msg; (msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ELEMENT));)
    {
      g_autofree char *s = gst_structure_to_string (gst_message_get_structure (msg));
      g_string_append_printf (o.events, "%s\n", s);
      gst_message_unref (msg);
    }
  gst_bus_set_flushing (bus, TRUE);
  gst_element_set_bus (el, NULL);
  gst_object_unref (el);
  gst_object_unref (bus);
  gst_harness_teardown (h);
  return o;
}

/* Largest difference of the floats of two buffers of one size. */
static double
max_float_diff (GBytes *a, GBytes *b)
{
  gsize n;
  const guint8 *x = g_bytes_get_data (a, &n), *y = g_bytes_get_data (b, NULL);
  double d = 0;
  for (gsize i = 0; i + 4 <= n; i += 4)
    {
      float u, v;
      memcpy (&u, x + i, 4);
      memcpy (&v, y + i, 4);
      d = MAX (d, fabs ((double) u - v));
    }
  return d;
}

/* moroktranscriber model=FOLDER gives, for every upstream kind, the words
 * (text, start, duration) and messages (text, word times) that
 * model=<its converted file> gives, and some words. */
GST_START_TEST (test_transcriber_same_words)
{
  g_autofree char *folder = hub_fixture_path (hub_fixtures[__i__].kind);
  g_autofree char *file = fixture_path (hub_fixtures[__i__].file);
  Output a = run_element ("moroktranscriber", folder);
  Output b = run_element ("moroktranscriber", file);
  fail_unless (a.payloads->len > 0, "%s: no words", hub_fixtures[__i__].kind);
  fail_unless_equals_string (a.events->str, b.events->str);
  fail_unless_equals_int (a.payloads->len, b.payloads->len);
  for (guint i = 0; i < a.payloads->len; i++)
    fail_unless (g_bytes_equal (a.payloads->pdata[i], b.payloads->pdata[i]), "%s: word %u differs",
                 hub_fixtures[__i__].kind, i);
  output_clear (&a);
  output_clear (&b);
}
GST_END_TEST;

/* morokencoder model=FOLDER outputs the tensors of model=<its converted
 * file>: bit for bit, since the weights are the same values; within 1e-4
 * where the folder has no front-end buffers and the window and filterbank
 * are made from the config (they differ from torchaudio's by up to 5e-6). */
GST_START_TEST (test_encoder_same_tensors)
{
  g_autofree char *folder = hub_fixture_path (hub_fixtures[__i__].kind);
  g_autofree char *file = fixture_path (hub_fixtures[__i__].file);
  Output a = run_element ("morokencoder", folder);
  Output b = run_element ("morokencoder", file);
  fail_unless_equals_int (a.payloads->len, N_UTT);
  fail_unless_equals_string (a.events->str, b.events->str);
  for (guint i = 0; i < N_UTT; i++)
    {
      GBytes *x = a.payloads->pdata[i], *y = b.payloads->pdata[i];
      fail_unless_equals_uint64 (g_bytes_get_size (x), g_bytes_get_size (y));
      if (!hub_fixtures[__i__].made_frontend)
        fail_unless (g_bytes_equal (x, y), "%s: tensor %u differs", hub_fixtures[__i__].kind, i);
      else
        fail_unless (max_float_diff (x, y) <= 1e-4, "%s: tensor %u differs by %g",
                     hub_fixtures[__i__].kind, i, max_float_diff (x, y));
    }
  output_clear (&a);
  output_clear (&b);
}
GST_END_TEST;

/* A folder that is not a model fails to start with the loader's words. */
GST_START_TEST (test_bad_folder)
{
  g_autofree char *dir = g_dir_make_tmp ("morok-hub-XXXXXX", NULL);
  assert_fails_to_start ("moroktranscriber", dir, "no config.json");
  assert_fails_to_start ("morokencoder", dir, "no config.json");
  g_rmdir (dir);
}
GST_END_TEST;

static Suite *
gigaam_hub_suite (void)
{
  Suite *s = suite_create ("gigaam-hub");
  TCase *tc = tcase_create ("general");
  suite_add_tcase (s, tc);
  tcase_add_loop_test (tc, test_transcriber_same_words, 0, HUB_N_FIXTURES);
  tcase_add_loop_test (tc, test_encoder_same_tensors, 0, HUB_N_FIXTURES);
  tcase_add_test (tc, test_bad_folder);
  return s;
}

GST_CHECK_MAIN (gigaam_hub);
