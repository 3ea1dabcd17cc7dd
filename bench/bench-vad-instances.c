/* SPDX-License-Identifier: MIT */
/* Many morokvad elements in one process: what each one costs in memory and
 * start-up. One pipeline, audiotestsrc ! tee, then N branches
 * "queue ! ELEMENT ! fakesink"; the pipeline goes to PAUSED (morokvad
 * prepares there), then PLAYING until EOS (100 buffers of 1024 samples
 * through every branch). Prints the time to PAUSED, and the growth of the
 * resident set (VmRSS) and of the heap in use (mallinfo2) from before the
 * pipeline to PAUSED and to EOS. Run it with identity for ELEMENT to
 * subtract what the branches themselves cost (queues, their threads).
 * ELEMENT may carry properties ("morokencoder model=m.safetensors"): any
 * element of the plugin shares its program the same way. Not a test; the
 * plugin comes from GST_PLUGIN_PATH.
 *
 *   GST_PLUGIN_PATH=build/plugin build/bench/bench-vad-instances N [ELEMENT [PROPS]]
 */
#include <gst/gst.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* VmRSS of this process, KiB. */
static gint64
rss_kib (void)
{
  g_autofree char *status = NULL;
  if (!g_file_get_contents ("/proc/self/status", &status, NULL, NULL))
    return -1;
  const char *at = strstr (status, "VmRSS:");
  return at ? g_ascii_strtoll (at + 6, NULL, 10) : -1;
}

/* Heap bytes in use (small blocks and mapped ones), KiB. */
static gint64
heap_kib (void)
{
  struct mallinfo2 m = mallinfo2 ();
  return (gint64) ((m.uordblks + m.hblkhd) / 1024);
}

int
main (int argc, char **argv)
{
  gst_init (&argc, &argv);
  guint n = argc > 1 ? (guint) atoi (argv[1]) : 1;
  const char *element = argc > 2 ? argv[2] : "morokvad";
  GString *desc = g_string_new ("audiotestsrc num-buffers=100 samplesperbuffer=1024 "
                                "wave=pink-noise ! audio/x-raw,rate=16000,channels=1 ! tee name=t");
  for (guint i = 0; i < n; i++)
    g_string_append_printf (desc, " t. ! queue max-size-buffers=4 ! %s ! fakesink", element);
  /* load the plugin and make one element first: neither counts */
  g_autofree char *factory = g_strndup (element, strcspn (element, " "));
  GstElement *probe = gst_element_factory_make (factory, NULL);
  if (!probe)
    {
      fprintf (stderr, "no element %s\n", factory);
      return 1;
    }
  gst_object_unref (probe);
  malloc_trim (0);
  gint64 rss0 = rss_kib (), heap0 = heap_kib ();

  GError *error = NULL;
  GstElement *pipeline = gst_parse_launch (desc->str, &error);
  g_string_free (desc, TRUE);
  if (!pipeline)
    {
      fprintf (stderr, "%s\n", error->message);
      return 1;
    }
  gint64 t0 = g_get_monotonic_time ();
  gst_element_set_state (pipeline, GST_STATE_PAUSED);
  if (gst_element_get_state (pipeline, NULL, NULL, 300 * GST_SECOND) == GST_STATE_CHANGE_FAILURE)
    {
      fprintf (stderr, "the pipeline did not pause\n");
      return 1;
    }
  double paused_ms = (g_get_monotonic_time () - t0) / 1e3;
  gint64 rss1 = rss_kib (), heap1 = heap_kib ();
  gst_element_set_state (pipeline, GST_STATE_PLAYING);
  GstBus *bus = gst_element_get_bus (pipeline);
  GstMessage *msg
      = gst_bus_timed_pop_filtered (bus, 300 * GST_SECOND, GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  if (!msg || GST_MESSAGE_TYPE (msg) != GST_MESSAGE_EOS)
    {
      fprintf (stderr, "no EOS\n");
      return 1;
    }
  gst_message_unref (msg);
  gint64 rss2 = rss_kib (), heap2 = heap_kib ();
  printf ("%s x %u: PAUSED in %.1f ms; at PAUSED: RSS +%" G_GINT64_FORMAT
          " KiB, heap +%" G_GINT64_FORMAT " KiB; at EOS: RSS +%" G_GINT64_FORMAT
          " KiB, heap +%" G_GINT64_FORMAT " KiB\n",
          element, n, paused_ms, rss1 - rss0, heap1 - heap0, rss2 - rss0, heap2 - heap0);
  gst_object_unref (bus);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (pipeline);
  return 0;
}
