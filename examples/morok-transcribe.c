/* SPDX-License-Identifier: MIT */
/* Speech to text from a file or a microphone, with the GStreamer API:
 *
 *   filesrc ! decodebin ! audioconvert ! audioresample !       (or a live source)
 *     morokvad remove-silence=true ! moroktranscriber model=MODEL ! fakesink
 *
 * reading the elements' messages on the bus as they come. From a file:
 * morokvad's speech-start and speech-end (the segments), then
 * moroktranscriber's transcript of each (its text and words with their
 * times). Live: a caption line, rewritten at each moroktranscriber-interim
 * message (the committed words, then the tentative rest, dim on a terminal
 * and in brackets otherwise), then the final text of each utterance (the
 * moroktranscriber message) on a line of its own.
 *
 *   morok-transcribe MODEL FILE          # a recording, to its end
 *   morok-transcribe MODEL --live        # captions of the default audio source, until Ctrl-C
 *   morok-transcribe MODEL FILE --live   # captions of a recording played in real time
 *
 * Output that is not a terminal gets one line per update, for scripts:
 * `interim COMMITTED [TENTATIVE]` and `final TEXT`.
 *
 * From the source tree: GST_PLUGIN_PATH=build/plugin build/examples/morok-transcribe ...
 */
#include <glib-unix.h>
#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <gst/gst.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

/* what a file played live is decoded to, and pushed in pieces of 20 ms */
#define LIVE_CAPS "audio/x-raw,format=S16LE,rate=16000,channels=1,layout=interleaved"
#define LIVE_RATE 16000
#define LIVE_CHUNK (LIVE_RATE / 50)

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

/* ---- live captions ---- */

static gboolean on_terminal;

/* The caption line: the committed words, then the tentative rest. On a
 * terminal the line is rewritten in place (carriage return, erase line),
 * the tentative part dim, and only its last columns shown: a line that
 * wrapped could no longer be rewritten. */
static void
print_caption (const char *committed, const char *tentative)
{
  const char *sep = *committed && *tentative ? " " : "";
  if (!on_terminal)
    {
      printf ("interim %s%s[%s]\n", committed, sep, tentative);
      return;
    }
  struct winsize ws;
  glong cols = ioctl (STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1 ? ws.ws_col : 80;
  glong nc = g_utf8_strlen (committed, -1) + (*sep != 0);
  glong skip = MAX (0, nc + g_utf8_strlen (tentative, -1) - (cols - 1));
  g_autofree char *line = g_strconcat (committed, sep, NULL);
  const char *rest = skip > nc ? g_utf8_offset_to_pointer (tentative, skip - nc) : tentative;
  printf ("\r\033[K%s\033[2m%s\033[0m", g_utf8_offset_to_pointer (line, MIN (skip, nc)), rest);
}

static const char *
field (const GstStructure *s, const char *name)
{
  const char *v = gst_structure_get_string (s, name);
  return v ? v : "";
}

/* Captions only: an interim rewrites the line, an utterance's final text
 * gets a line of its own. */
static void
print_live (const GstStructure *s)
{
  if (gst_structure_has_name (s, "moroktranscriber-interim"))
    print_caption (field (s, "committed"), field (s, "tentative"));
  else if (gst_structure_has_name (s, "moroktranscriber"))
    printf (on_terminal ? "\r\033[K%s\n" : "final %s\n", field (s, "text"));
}

/* A file played in real time: its samples, decoded by @decoder into an
 * appsink, go to the live pipeline's appsrc in 20 ms buffers, each when the
 * pipeline clock reaches its end (as a capture source has them), stamped
 * with the running time of its first sample. */
typedef struct
{
  GstElement *decoder; /* filesrc ! decodebin ! … ! appsink name=out */
  GstElement *pipeline, *src;
} Player;

/* The decoder's next samples; NULL at its end, or at its error, which is
 * then posted on the live pipeline (and ends it). */
static GstSample *
pull (Player *p, GstAppSink *out)
{
  g_autoptr (GstBus) bus = gst_element_get_bus (p->decoder);
  for (;;)
    {
      GstSample *sample = gst_app_sink_try_pull_sample (out, 100 * GST_MSECOND);
      if (sample || gst_app_sink_is_eos (out))
        return sample;
      GstMessage *error = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
      if (error)
        {
          gst_element_post_message (p->pipeline, error);
          return NULL;
        }
    }
}

static gpointer
play (gpointer data)
{
  Player *p = data;
  g_autoptr (GstElement) out = gst_bin_get_by_name (GST_BIN (p->decoder), "out");
  g_autoptr (GstClock) clock = gst_element_get_clock (p->pipeline);
  GstClockTime base = gst_element_get_base_time (p->pipeline);
  GstClockTime t0 = gst_clock_get_time (clock) - base;
  guint64 samples = 0;
  GstSample *sample;
  GstFlowReturn flow = GST_FLOW_OK;
  while (flow == GST_FLOW_OK && (sample = pull (p, GST_APP_SINK (out))))
    {
      GstBuffer *buf = gst_sample_get_buffer (sample);
      gsize size = gst_buffer_get_size (buf);
      for (gsize at = 0; at < size && flow == GST_FLOW_OK; at += 2 * LIVE_CHUNK)
        {
          gsize n = MIN (2 * LIVE_CHUNK, size - at) / 2;
          GstBuffer *chunk = gst_buffer_copy_region (buf, GST_BUFFER_COPY_MEMORY, at, 2 * n);
          GST_BUFFER_PTS (chunk) = t0 + gst_util_uint64_scale (samples, GST_SECOND, LIVE_RATE);
          samples += n;
          GstClockTime end = t0 + gst_util_uint64_scale (samples, GST_SECOND, LIVE_RATE);
          GST_BUFFER_DURATION (chunk) = end - GST_BUFFER_PTS (chunk);
          GstClockID id = gst_clock_new_single_shot_id (clock, base + end);
          gst_clock_id_wait (id, NULL);
          gst_clock_id_unref (id);
          flow = gst_app_src_push_buffer (GST_APP_SRC (p->src), chunk);
        }
      gst_sample_unref (sample);
    }
  gst_app_src_end_of_stream (GST_APP_SRC (p->src));
  return NULL;
}

/* The decoding half of a file played live, or NULL with the error printed. */
static GstElement *
decoder_new (const char *path)
{
  g_autoptr (GError) error = NULL;
  GstElement *decoder = gst_parse_launch_full (
      "filesrc name=file ! decodebin ! audioconvert ! audioresample ! " LIVE_CAPS " ! "
      "appsink name=out sync=false max-buffers=8",
      NULL, GST_PARSE_FLAG_FATAL_ERRORS, &error);
  if (!decoder)
    {
      fprintf (stderr, "%s\n", error->message);
      return NULL;
    }
  GstElement *file = gst_bin_get_by_name (GST_BIN (decoder), "file");
  g_object_set (file, "location", path, NULL);
  gst_object_unref (file);
  if (gst_element_set_state (decoder, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE)
    {
      g_autoptr (GstBus) bus = gst_element_get_bus (decoder);
      g_autoptr (GstMessage) msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
      if (msg)
        gst_message_parse_error (msg, &error, NULL);
      fprintf (stderr, "error: %s: %s\n", path, error ? error->message : "cannot be read");
      gst_element_set_state (decoder, GST_STATE_NULL);
      gst_object_unref (decoder);
      return NULL;
    }
  return decoder;
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
  gboolean live = argc == 4 && strcmp (argv[3], "--live") == 0;
  const char *file = argc == 3 && strcmp (argv[2], "--live") == 0 ? NULL : argv[2];
  live = live || (argc == 3 && !file);
  if (argc != 3 && !live)
    {
      fprintf (stderr, "usage: %s MODEL FILE | %s MODEL --live | %s MODEL FILE --live\n", argv[0],
               argv[0], argv[0]);
      return 2;
    }
  on_terminal = isatty (STDOUT_FILENO);
  const char *source = !live  ? "filesrc name=src ! decodebin"
                       : file ? "appsrc name=src is-live=true format=time caps=" LIVE_CAPS
                              : "autoaudiosrc";
  g_autofree char *desc = g_strdup_printf ("%s ! audioconvert ! audioresample ! "
                                           "morokvad remove-silence=true ! "
                                           "moroktranscriber name=asr ! fakesink",
                                           source);
  g_autoptr (GError) error = NULL;
  /* fatal errors: a missing element (the plugin not on GST_PLUGIN_PATH)
   * gives no pipeline rather than one with a hole */
  GstElement *pipeline = gst_parse_launch_full (desc, NULL, GST_PARSE_FLAG_FATAL_ERRORS, &error);
  if (!pipeline)
    {
      fprintf (stderr, "%s\n", error->message);
      return 1;
    }
  /* paths set as properties, not in the description: no quoting */
  GstElement *asr = gst_bin_get_by_name (GST_BIN (pipeline), "asr");
  g_object_set (asr, "model", argv[1], NULL);
  gst_object_unref (asr);
  Player player = { NULL, pipeline, NULL };
  if (file)
    {
      player.src = gst_bin_get_by_name (GST_BIN (pipeline), "src");
      if (!live)
        g_object_set (player.src, "location", file, NULL);
      else if (!(player.decoder = decoder_new (file)))
        return 1;
    }
  guint sigint = g_unix_signal_add (SIGINT, on_interrupt, pipeline);
  int rc = 0;
  GThread *player_thread = NULL;
  if (gst_element_set_state (pipeline, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE)
    rc = 1; /* the error message on the bus says why */
  else if (player.decoder)
    player_thread = g_thread_new ("play", play, &player);
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
      else if (live)
        print_live (s);
      else if (gst_structure_has_name (s, "morokvad"))
        print_segment (s);
      else if (gst_structure_has_name (s, "moroktranscriber"))
        print_transcript (s);
      fflush (stdout);
      gst_message_unref (msg);
    }
  g_source_remove (sigint);
  /* the decoder first: a player waiting for its samples then sees none */
  if (player.decoder)
    gst_element_set_state (player.decoder, GST_STATE_NULL);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  if (player_thread)
    g_thread_join (player_thread);
  gst_clear_object (&player.decoder);
  gst_clear_object (&player.src);
  gst_object_unref (bus);
  gst_object_unref (pipeline);
  return rc;
}
