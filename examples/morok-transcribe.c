/* SPDX-License-Identifier: MIT */
/* Speech to text from a file or a microphone, with the GStreamer API:
 *
 *   filesrc ! decodebin ! audioconvert ! audioresample !       (or autoaudiosrc)
 *     morokvad remove-silence=true ! moroktranscriber model=MODEL ! fakesink
 *
 * reading the elements' messages on the bus as they come: morokvad's
 * speech-start and speech-end (the segments), then moroktranscriber's
 * transcript of each (its text and words with their times).
 *
 *   morok-transcribe MODEL FILE     # a recording, to its end
 *   morok-transcribe MODEL --live   # the default audio source, until Ctrl-C
 *
 * From the source tree: GST_PLUGIN_PATH=build/plugin build/examples/morok-transcribe ...
 */
#include <glib-unix.h>
#include <gst/gst.h>
#include <stdio.h>
#include <string.h>

static double
seconds (guint64 ns)
{
  return (double) ns / GST_SECOND;
}

static void
print_segment (const GstStructure *s)
{
  guint64 t;
  if (gst_structure_get_uint64 (s, "timestamp", &t))
    printf ("%s %.3f\n", gst_structure_get_string (s, "type"), seconds (t));
}

static void
print_transcript (const GstStructure *s)
{
  guint64 start, end;
  if (!gst_structure_get_uint64 (s, "start", &start) || !gst_structure_get_uint64 (s, "end", &end))
    return;
  printf ("transcript %.3f %.3f %s\n", seconds (start), seconds (end),
          gst_structure_get_string (s, "text"));
  const GValue *words = gst_structure_get_value (s, "words");
  for (guint i = 0; words && i < gst_value_array_get_size (words); i++)
    {
      const GstStructure *w = gst_value_get_structure (gst_value_array_get_value (words, i));
      gst_structure_get_uint64 (w, "start", &start);
      gst_structure_get_uint64 (w, "end", &end);
      printf ("  word %.3f %.3f %s\n", seconds (start), seconds (end),
              gst_structure_get_string (w, "word"));
    }
}

/* Ctrl-C: EOS, so that the last utterance is transcribed before the end. */
static gboolean
on_interrupt (gpointer pipeline)
{
  gst_element_send_event (pipeline, gst_event_new_eos ());
  return G_SOURCE_REMOVE;
}

int
main (int argc, char **argv)
{
  gst_init (&argc, &argv);
  if (argc != 3)
    {
      fprintf (stderr, "usage: %s MODEL FILE | %s MODEL --live\n", argv[0], argv[0]);
      return 2;
    }
  gboolean live = strcmp (argv[2], "--live") == 0;
  const char *source = live ? "autoaudiosrc" : "filesrc name=src ! decodebin";
  g_autofree char *desc = g_strdup_printf ("%s ! audioconvert ! audioresample ! "
                                           "morokvad remove-silence=true ! "
                                           "moroktranscriber name=asr ! fakesink", source);
  g_autoptr (GError) error = NULL;
  /* fatal errors: a missing element (the plugin not on GST_PLUGIN_PATH)
   * gives no pipeline rather than one with a hole */
  GstElement *pipeline
      = gst_parse_launch_full (desc, NULL, GST_PARSE_FLAG_FATAL_ERRORS, &error);
  if (!pipeline)
    {
      fprintf (stderr, "%s\n", error->message);
      return 1;
    }
  /* paths set as properties, not in the description: no quoting */
  GstElement *asr = gst_bin_get_by_name (GST_BIN (pipeline), "asr");
  g_object_set (asr, "model", argv[1], NULL);
  gst_object_unref (asr);
  if (!live)
    {
      GstElement *src = gst_bin_get_by_name (GST_BIN (pipeline), "src");
      g_object_set (src, "location", argv[2], NULL);
      gst_object_unref (src);
    }
  guint sigint = g_unix_signal_add (SIGINT, on_interrupt, pipeline);
  int rc = 0;
  if (gst_element_set_state (pipeline, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE)
    rc = 1; /* the error message on the bus says why */
  GstBus *bus = gst_element_get_bus (pipeline);
  for (gboolean done = FALSE; !done;)
    {
      /* the main context turns between messages, for Ctrl-C */
      g_main_context_iteration (NULL, FALSE);
      GstMessage *msg = gst_bus_timed_pop_filtered (
          bus, 100 * GST_MSECOND, GST_MESSAGE_ELEMENT | GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
      if (!msg)
        continue;
      const GstStructure *s = gst_message_get_structure (msg);
      if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR)
        {
          g_autoptr (GError) err = NULL;
          g_autofree char *debug = NULL;
          gst_message_parse_error (msg, &err, &debug);
          fprintf (stderr, "error: %s\n%s\n", err->message, debug ? debug : "");
          rc = 1;
          done = TRUE;
        }
      else if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_EOS)
        done = TRUE;
      else if (gst_structure_has_name (s, "morokvad"))
        print_segment (s);
      else if (gst_structure_has_name (s, "moroktranscriber"))
        print_transcript (s);
      fflush (stdout);
      gst_message_unref (msg);
    }
  g_source_remove (sigint);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (bus);
  gst_object_unref (pipeline);
  return rc;
}
