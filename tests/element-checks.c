/* SPDX-License-Identifier: MIT */
#include "element-checks.h"
#include "broken-compilers.h"
#include "fixtures.h"
#include "jit/morok-jit-registry.h"
#include <glib/gstdio.h>
#include <string.h>
#include <gst/check/gstcheck.h>

/* The leaks tracer (GST_TRACERS=leaks, set by meson), or NULL. */
static GstTracer *
leaks_tracer (void)
{
  GList *tracers = gst_tracing_get_active_tracers ();
  GstTracer *found = NULL;
  for (GList *l = tracers; l; l = l->next)
    if (!found && g_str_equal (G_OBJECT_TYPE_NAME (l->data), "GstLeaksTracer"))
      found = gst_object_ref (l->data);
  g_list_free_full (tracers, gst_object_unref);
  return found;
}

static void
cycle (GstElement *pipe)
{
  fail_unless (gst_element_set_state (pipe, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
  /* a wait limit, not a timing claim: the first cycle may compile the model */
  fail_unless (gst_element_get_state (pipe, NULL, NULL, 60 * GST_SECOND)
               == GST_STATE_CHANGE_SUCCESS);
  fail_unless_equals_int (gst_element_set_state (pipe, GST_STATE_NULL), GST_STATE_CHANGE_SUCCESS);
  GstBus *bus = gst_element_get_bus (pipe);
  gst_bus_set_flushing (bus, TRUE);
  gst_bus_set_flushing (bus, FALSE);
  gst_object_unref (bus);
}

void
assert_cycles_leak_nothing (const char *pipeline, guint cycles)
{
  GstElement *pipe = gst_parse_launch (pipeline, NULL);
  fail_unless (pipe != NULL);
  cycle (pipe); /* the first cycle makes the types and caches that live on */
  GstTracer *leaks = leaks_tracer ();
  fail_unless (leaks != NULL, "run with GST_TRACERS=leaks");
  g_signal_emit_by_name (leaks, "activity-start-tracking");
  for (guint i = 0; i < cycles; i++)
    cycle (pipe);
  /* streaming threads give their GstTask back asynchronously: join them
   * first, or a busy machine shows a task still alive */
  gst_task_cleanup_all ();
  GstStructure *cp = NULL;
  g_signal_emit_by_name (leaks, "activity-get-checkpoint", &cp);
  /* every object made during the cycles must also have been removed */
  const GValue *created = gst_structure_get_value (cp, "objects-created-list");
  const GValue *removed = gst_structure_get_value (cp, "objects-removed-list");
  GHashTable *gone = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint i = 0; i < gst_value_list_get_size (removed); i++)
    g_hash_table_add (
        gone, (gpointer) gst_structure_get_string (
                  gst_value_get_structure (gst_value_list_get_value (removed, i)), "address"));
  guint n_alive = 0;
  for (guint i = 0; i < gst_value_list_get_size (created); i++)
    {
      const GstStructure *o = gst_value_get_structure (gst_value_list_get_value (created, i));
      if (g_hash_table_contains (gone, gst_structure_get_string (o, "address")))
        continue;
      g_printerr ("alive after the cycles: %s\n", gst_structure_get_string (o, "type-name"));
      n_alive++;
    }
  g_hash_table_unref (gone);
  fail_unless_equals_int (n_alive, 0);
  gst_structure_free (cp);
  g_signal_emit_by_name (leaks, "activity-stop-tracking");
  gst_object_unref (leaks);
  gst_object_unref (pipe);
}

typedef struct
{
  const char *pipeline;
  guint cycles;
} Cycles;

/* One thread's runs of run_parallel_cycles: TRUE if each reached EOS. */
static gpointer
cycle_runs (gpointer data)
{
  const Cycles *c = data;
  for (guint i = 0; i < c->cycles; i++)
    {
      GstElement *p = gst_parse_launch (c->pipeline, NULL);
      if (!p || gst_element_set_state (p, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE)
        return GINT_TO_POINTER (FALSE);
      GstBus *bus = gst_element_get_bus (p);
      GstMessage *m
          = gst_bus_timed_pop_filtered (bus, 60 * GST_SECOND, GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
      gboolean eos = m && GST_MESSAGE_TYPE (m) == GST_MESSAGE_EOS;
      g_clear_pointer (&m, gst_message_unref);
      gst_object_unref (bus);
      gst_element_set_state (p, GST_STATE_NULL);
      gst_object_unref (p);
      if (!eos)
        return GINT_TO_POINTER (FALSE);
    }
  return GINT_TO_POINTER (TRUE);
}

guint64
run_parallel_cycles (const char *pipeline, guint threads, guint cycles)
{
  guint64 before = morok_jit_registry_prepare_count ();
  Cycles c = { pipeline, cycles };
  GThread **t = g_new (GThread *, threads);
  for (guint i = 0; i < threads; i++)
    t[i] = g_thread_new ("cycles", cycle_runs, &c);
  guint failed = 0;
  for (guint i = 0; i < threads; i++)
    failed += !GPOINTER_TO_INT (g_thread_join (t[i]));
  g_free (t);
  fail_unless_equals_int (failed, 0);
  return morok_jit_registry_prepare_count () - before;
}

void
assert_fails_to_start (const char *factory, const char *model, const char *expect)
{
  assert_fails_to_start_with (factory, model, NULL, NULL, expect);
}

void
assert_fails_to_start_with (const char *factory, const char *model, const char *prop,
                            const char *value, const char *expect)
{
  GstElement *element = gst_element_factory_make (factory, NULL);
  GstBus *bus = gst_bus_new ();
  gst_element_set_bus (element, bus);
  if (model)
    g_object_set (element, "model", model, NULL);
  if (prop)
    gst_util_set_object_arg (G_OBJECT (element), prop, value);
  fail_unless_equals_int (gst_element_set_state (element, GST_STATE_PAUSED),
                          GST_STATE_CHANGE_FAILURE);
  GstMessage *msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
  fail_unless (msg != NULL);
  GError *err = NULL;
  gchar *dbg = NULL;
  gst_message_parse_error (msg, &err, &dbg);
  g_autofree char *all = g_strdup_printf ("%s %s", err->message, dbg);
  fail_unless (strstr (all, expect) != NULL, "error '%s' does not mention '%s'", all, expect);
  g_error_free (err);
  g_free (dbg);
  gst_message_unref (msg);
  gst_element_set_state (element, GST_STATE_NULL);
  gst_bus_set_flushing (bus, TRUE);
  gst_element_set_bus (element, NULL);
  gst_object_unref (bus);
  gst_object_unref (element);
}

void
assert_broken_compilers_fail_to_start (const char *factory, const char *model)
{
  g_autofree char *dir = g_dir_make_tmp ("morok-cc-XXXXXX", NULL);
  BrokenCompiler *broken = broken_compilers_new (dir);

  /* no cache: the element must run the compiler to prepare */
  g_setenv ("MOROK_CACHE", "0", TRUE);
  for (guint i = 0; broken[i].path != NULL; i++)
    {
      g_setenv ("MOROK_CC", broken[i].path, TRUE);
      assert_fails_to_start (factory, model, broken[i].path);
      assert_fails_to_start (factory, model, broken[i].expect);
    }
  g_unsetenv ("MOROK_CC");
  g_unsetenv ("MOROK_CACHE");
  g_unlink (broken[2].path);
  g_rmdir (dir);
  broken_compilers_free (broken);
}

guint
pop_non_finite_warnings (GstBus *bus, guint64 *samples, GstClockTime *pts, char **pad)
{
  guint count = 0;
  GstMessage *msg;
  while ((msg = gst_bus_pop_filtered (bus, GST_MESSAGE_WARNING)))
    {
      const GstStructure *details = NULL;
      gst_message_parse_warning_details (msg, &details);
      guint64 n, t;
      if (details && gst_structure_has_name (details, "morok/non-finite-input"))
        {
          g_assert_true (gst_structure_get_uint64 (details, "samples", &n));
          g_assert_true (gst_structure_get_uint64 (details, "pts", &t));
          if (count++ == 0 && samples)
            *samples = n;
          if (count == 1 && pts)
            *pts = t;
          if (count == 1 && pad)
            *pad = g_strdup (gst_structure_get_string (details, "pad"));
        }
      gst_message_unref (msg);
    }
  return count;
}

gboolean
latency_at_least (GstHarness *h, GstClockTime min)
{
  GstClockTime latency = gst_harness_query_latency (h);
  return GST_CLOCK_TIME_IS_VALID (latency) && latency >= min;
}

static void
keep_ignored_warning_category (GstDebugCategory *category, GstDebugLevel level, const gchar *file,
                               const gchar *function, gint line, GObject *object,
                               GstDebugMessage *message, gpointer user_data)
{
  char **out = user_data;
  const char *text = gst_debug_message_get (message);
  if (level == GST_LEVEL_WARNING && !*out && text
      && strstr (text, "can only be set in NULL or READY"))
    *out = g_strdup (gst_debug_category_get_name (category));
}

char *
set_property_warning_category (GstElement *element, const char *prop, const char *value)
{
  char *category = NULL;
  GstDebugLevel was = gst_debug_get_default_threshold ();
  gboolean active = gst_debug_is_active ();
  gst_debug_set_active (TRUE);
  gst_debug_set_default_threshold (GST_LEVEL_WARNING);
  gst_debug_add_log_function (keep_ignored_warning_category, &category, NULL);
  gst_util_set_object_arg (G_OBJECT (element), prop, value);
  gst_debug_remove_log_function (keep_ignored_warning_category);
  gst_debug_set_default_threshold (was);
  gst_debug_set_active (active);
  return category;
}

static GstPadProbeReturn
record_timeline (GstPad *pad, GstPadProbeInfo *info, gpointer user_data)
{
  GString *out = user_data;
  GstClockTime ts, duration;
  char kind;
  GstEvent *event = info->type & GST_PAD_PROBE_TYPE_BUFFER ? NULL : GST_PAD_PROBE_INFO_EVENT (info);
  if (!event)
    {
      kind = 'B';
      ts = GST_BUFFER_PTS (GST_PAD_PROBE_INFO_BUFFER (info));
      duration = GST_BUFFER_DURATION (GST_PAD_PROBE_INFO_BUFFER (info));
    }
  else if (GST_EVENT_TYPE (event) == GST_EVENT_GAP)
    {
      kind = 'G';
      gst_event_parse_gap (event, &ts, &duration);
    }
  else
    {
      if (gst_event_has_name (event, "rstranscribe/final-transcript"))
        g_string_append (out, out->len ? " F" : "F");
      return GST_PAD_PROBE_OK;
    }
  g_string_append_printf (out, "%s%c%" G_GINT64_FORMAT "+%" G_GINT64_FORMAT, out->len ? " " : "",
                          kind, GST_CLOCK_TIME_IS_VALID (ts) ? (gint64) (ts / GST_MSECOND) : -1,
                          GST_CLOCK_TIME_IS_VALID (duration) ? (gint64) (duration / GST_MSECOND)
                                                             : -1);
  return GST_PAD_PROBE_OK;
}

void
timeline_record (GstElement *element, GString *timeline)
{
  GstPad *src = gst_element_get_static_pad (element, "src");
  gst_pad_add_probe (src, GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM,
                     record_timeline, timeline, NULL);
  gst_object_unref (src);
}

static GstPadProbeReturn
count_buffer (GstPad *pad, GstPadProbeInfo *info, gpointer user_data)
{
  g_atomic_int_inc ((gint *) user_data);
  return GST_PAD_PROBE_OK;
}

GstElement *
parse_with_probe (const char *desc, const char *pad_name, GstPadProbeCallback probe, gpointer data,
                  GstElement **el)
{
  GstElement *pipe = gst_parse_launch (desc, NULL);
  fail_unless (pipe != NULL);
  *el = gst_bin_get_by_name (GST_BIN (pipe), "el");
  fail_unless (*el != NULL);
  GstPad *pad = gst_element_get_static_pad (*el, pad_name);
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, probe, data, NULL);
  gst_object_unref (pad);
  return pipe;
}

guint
assert_tee_prerolls (const char *wav, const char *branch)
{
  g_autofree char *path = fixture_path (wav);
  g_autofree char *desc
      = g_strdup_printf ("filesrc location=%s ! wavparse ! audioconvert ! tee name=t "
                         "t. ! queue ! %s ! fakesink t. ! queue ! fakesink",
                         path, branch);
  gint buffers = 0;
  GstElement *el, *pipe = parse_with_probe (desc, "src", count_buffer, &buffers, &el);
  fail_unless (gst_element_set_state (pipe, GST_STATE_PAUSED) != GST_STATE_CHANGE_FAILURE);
  /* a wait limit, not a timing claim: preparing may compile the model */
  fail_unless_equals_int (gst_element_get_state (pipe, NULL, NULL, 60 * GST_SECOND),
                          GST_STATE_CHANGE_SUCCESS);
  fail_unless (gst_element_set_state (pipe, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
  GstBus *bus = gst_element_get_bus (pipe);
  GstMessage *msg
      = gst_bus_timed_pop_filtered (bus, 60 * GST_SECOND, GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  fail_unless (msg != NULL, "no EOS within 60 s");
  fail_unless_equals_int (GST_MESSAGE_TYPE (msg), GST_MESSAGE_EOS);
  gst_message_unref (msg);
  fail_unless_equals_int (gst_element_set_state (pipe, GST_STATE_NULL), GST_STATE_CHANGE_SUCCESS);
  gst_object_unref (bus);
  gst_object_unref (el);
  gst_object_unref (pipe);
  return (guint) g_atomic_int_get (&buffers);
}
