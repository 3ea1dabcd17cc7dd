/* SPDX-License-Identifier: MIT */
/* Live transcription's delay, compute and accuracy: a WAV played in real
 * time into a live pipeline, next to the same file transcribed offline.
 * bench/live-latency.sh runs it and makes the table. Not a test.
 *
 *   build/bench/bench-live [--truth JSON] [-v] [--no-queue] [-p PROP=VALUE]... MODEL WAV
 *
 * Two runs in one process, the offline one first:
 *
 *   offline  filesrc location=WAV ! wavparse ! audioconvert ! audioresample !
 *              morokvad remove-silence=true ! moroktranscriber model=MODEL PROPS !
 *              queue ! fakesink sync=false
 *   live     appsrc is-live=true format=time ! (the same) ! queue ! fakesink sync=true
 *
 * The live source pushes the WAV's samples in 20 ms buffers, each when the
 * pipeline clock reaches its end (as a capture source has them), its PTS
 * the running time of its first sample (buffer time is running time: the
 * segment starts at 0), min-latency 20 ms. The queue (unbounded) keeps the
 * syncing sink off moroktranscriber's thread: the sink waits for each GAP
 * event's time plus the latency, which would hold the element back by the
 * whole latency (--no-queue leaves it out, to show that). A word's arrival is the running time
 * (pipeline clock minus base time) at which its buffer leaves moroktranscriber's src pad (a pad
 * probe): what the pipeline delivers, however late; the sink renders it at
 * PTS + latency or then, whichever is later. A run ends when EOS leaves the
 * element. Reported on one line:
 *
 *   RESULT live PROPS audio_s=8.00 latency_ms=33520 sink_latency_ms=33520
 *     words=9 ref_words=9 wer=0.000 truth_words=9 wer_truth=0.111 matched=8
 *     delay_p50_ms=812 delay_p90_ms=1630 delay_max_ms=1702 own_delay_p50_ms=790
 *     own_delay_p90_ms=1610 own_delay_max_ms=1690 late=0 slack_min_ms=1204 interim=0
 *     interim_per_s=0.00 interim_delay_p50_ms=0 finals=3 warnings=0
 *     max_observed_delay_ms=0 cpu_per_s=0.051 offline_cpu_per_s=0.048
 *
 *   latency_ms       the pipeline's LATENCY answer (min) once it is PLAYING
 *   sink_latency_ms  the latency the sink was given, at the end
 *   words            word buffers of the live run; ref_words those offline
 *   wer              word edits from the offline words to the live ones over
 *                    ref_words (order and text; times are not compared)
 *   wer_truth        the same against --truth's words, where given
 *   delay_*_ms       arrival minus the word's true end in the WAV: with
 *                    --truth that word's end there, else the offline word's
 *                    end (each live word matched to one by the alignment;
 *                    matched counts them); nearest-rank percentiles
 *   own_delay_*_ms   arrival minus the end the live word is stamped with
 *                    (less lateness), every live word: where there is no
 *                    truth and words repeat densely (the seeded models'
 *                    meaningless ones), the pairing with offline words
 *                    above can join words up to 1 s apart, this cannot
 *   late             words whose arrival is past PTS + the sink's latency
 *                    (it renders them late)
 *   slack_min_ms     the least of PTS + the sink's latency minus arrival over
 *                    the words: how close the latency came to lying
 *                    (negative: late)
 *   interim          moroktranscriber-interim messages; interim_delay the
 *                    running time each is posted minus its `end`
 *   finals           moroktranscriber messages (utterances)
 *   warnings         WARNINGs whose details are moroktranscriber/excessive-delay
 *   cpu_per_s        the process's CPU seconds (getrusage, all threads) from
 *                    PLAYING to EOS over the audio's seconds: after the
 *                    element prepared; offline_cpu_per_s the same offline
 *
 * --truth JSON: make-digits-audio.py's {"words": [{"word", "start", "end"}]},
 * seconds from the file's start. -v prints each live word. PROPS are set on
 * moroktranscriber in both runs, then mode=offline in the offline one (live
 * words' times less its `lateness` are compared with them); MOROK_THREADS and the other MOROK_*
 * settings of docs/jit-wrapper.md apply. */
#include <gst/app/gstappsrc.h>
#include <gst/base/gstbasesink.h>
#include <gst/gst.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#define CHUNK_MS 20
/* a live word matches a reference word of the same text that starts
 * within this of it */
#define MATCH_NS (1 * GST_SECOND)

typedef struct
{
  char *text;
  GstClockTime start, end;    /* file time (the live run's offset and the lateness taken off) */
  GstClockTime arrival;       /* running time at the sink pad; live run only */
  GstClockTime pts, deadline; /* PTS + the sink's latency then; live run only */
} Word;

typedef struct
{
  gboolean live;
  gboolean direct;      /* no queue before the sink */
  GArray *words;        /* Word */
  GstClockTime offset;  /* running time of the WAV's first sample */
  GstClockTime latency; /* LATENCY answer, min */
  GstClockTime sink_latency;
  GArray *interim_delays; /* double, ms */
  guint finals, warnings;
  guint max_observed_delay_ms;
  double cpu_s;
  GstElement *pipeline, *sink;
} Run;

typedef struct
{
  int rate, channels;
  guint8 *data; /* S16LE interleaved */
  gsize frames;
} Wav;

typedef struct
{
  Run *run;
  GstElement *src;
  const Wav *wav;
  volatile gint stop;
} Feeder;

static void
word_clear (gpointer p)
{
  g_free (((Word *) p)->text);
}

static double
cpu_seconds (void)
{
  struct rusage ru;
  getrusage (RUSAGE_SELF, &ru);
  return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec
         + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static GstClockTime
running_time (GstElement *e)
{
  g_autoptr (GstClock) clock = gst_element_get_clock (e);
  return clock ? gst_clock_get_time (clock) - gst_element_get_base_time (e) : 0;
}

/* ---- input ---- */

/* A 16-bit PCM WAV, 1 or 2 channels, found by walking its chunks. */
static gboolean
wav_read (const char *path, Wav *wav, GError **error)
{
  g_autofree guint8 *d = NULL;
  gsize len;
  if (!g_file_get_contents (path, (char **) &d, &len, error))
    return FALSE;
  gboolean have_fmt = FALSE;
  for (gsize at = 12; len >= 12 && memcmp (d, "RIFF", 4) == 0 && at + 8 <= len;)
    {
      gsize size = d[at + 4] | d[at + 5] << 8 | d[at + 6] << 16 | (gsize) d[at + 7] << 24;
      size = MIN (size, len - at - 8);
      const guint8 *c = d + at + 8;
      if (memcmp (d + at, "fmt ", 4) == 0 && size >= 16)
        {
          int format = c[0] | c[1] << 8, bits = c[14] | c[15] << 8;
          wav->channels = c[2] | c[3] << 8;
          wav->rate = c[4] | c[5] << 8 | c[6] << 16 | c[7] << 24;
          if (format != 1 || bits != 16 || wav->channels < 1 || wav->channels > 2 || wav->rate <= 0)
            {
              g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
                           "%s: format %d, %d bits, %d channels: this reads 16-bit PCM, 1 or 2 "
                           "channels",
                           path, format, bits, wav->channels);
              return FALSE;
            }
          have_fmt = TRUE;
        }
      else if (memcmp (d + at, "data", 4) == 0 && have_fmt)
        {
          wav->frames = size / (2 * wav->channels);
          wav->data = g_memdup2 (c, wav->frames * 2 * wav->channels);
          return TRUE;
        }
      at += 8 + size + (size & 1);
    }
  g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "%s: not a WAV with fmt and data chunks",
               path);
  return FALSE;
}

/* --truth's words, in file time. */
static GArray *
truth_read (const char *path, GError **error)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  if (!json_parser_load_from_file (parser, path, error))
    return NULL;
  JsonNode *root = json_parser_get_root (parser);
  JsonObject *o = JSON_NODE_HOLDS_OBJECT (root) ? json_node_get_object (root) : NULL;
  JsonArray *a
      = o && json_object_has_member (o, "words") ? json_object_get_array_member (o, "words") : NULL;
  if (!a)
    {
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "%s: no \"words\" array", path);
      return NULL;
    }
  GArray *words = g_array_new (FALSE, TRUE, sizeof (Word));
  g_array_set_clear_func (words, word_clear);
  for (guint i = 0; i < json_array_get_length (a); i++)
    {
      JsonObject *w = json_array_get_object_element (a, i);
      Word word = { 0 };
      word.text = g_strdup (json_object_get_string_member_with_default (w, "word", ""));
      word.start = json_object_get_double_member_with_default (w, "start", 0) * GST_SECOND;
      word.end = json_object_get_double_member_with_default (w, "end", 0) * GST_SECOND;
      g_array_append_val (words, word);
    }
  return words;
}

/* ---- the pipelines ---- */

/* The pipeline's LATENCY answer, min; 0 where it has none. */
static GstClockTime
query_latency (GstElement *pipeline)
{
  g_autoptr (GstQuery) q = gst_query_new_latency ();
  GstClockTime min = 0;
  if (gst_element_query (pipeline, q))
    gst_query_parse_latency (q, NULL, &min, NULL);
  return min;
}

/* The element's `lateness` in ns (live words' PTS are this much late), 0
 * where it has none. */
static GstClockTime
element_lateness (GstElement *pipeline)
{
  g_autoptr (GstElement) asr = gst_bin_get_by_name (GST_BIN (pipeline), "asr");
  guint ms = 0;
  if (g_object_class_find_property (G_OBJECT_GET_CLASS (asr), "lateness"))
    g_object_get (asr, "lateness", &ms, NULL);
  return ms * GST_MSECOND;
}

/* On moroktranscriber's src pad: each word as it leaves, and EOS. */
static GstPadProbeReturn
on_output (GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
  Run *run = data;
  if (info->type & GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM)
    {
      /* the element's output is complete: no need to wait while the sink
       * renders the rest at its times */
      if (GST_EVENT_TYPE (GST_PAD_PROBE_INFO_EVENT (info)) == GST_EVENT_EOS)
        gst_element_post_message (run->pipeline,
                                  gst_message_new_application (GST_OBJECT (run->pipeline),
                                                               gst_structure_new_empty ("done")));
      return GST_PAD_PROBE_OK;
    }
  GstBuffer *buf = GST_PAD_PROBE_INFO_BUFFER (info);
  Word w = { 0 };
  w.arrival = running_time (run->sink);
  w.pts = GST_BUFFER_PTS (buf);
  w.deadline = w.pts + gst_base_sink_get_latency (GST_BASE_SINK (run->sink));
  w.start = w.pts;
  w.end = w.pts + (GST_BUFFER_DURATION_IS_VALID (buf) ? GST_BUFFER_DURATION (buf) : 0);
  GstMapInfo map;
  if (gst_buffer_map (buf, &map, GST_MAP_READ))
    {
      w.text = g_strndup ((const char *) map.data, map.size);
      gst_buffer_unmap (buf, &map);
    }
  g_array_append_val (run->words, w); /* the streaming thread only */
  return GST_PAD_PROBE_OK;
}

/* In the posting thread: the interim's delay is its posting time. */
static GstBusSyncReply
on_message_sync (GstBus *bus, GstMessage *msg, gpointer data)
{
  Run *run = data;
  const GstStructure *s = gst_message_get_structure (msg);
  guint64 end;
  if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ELEMENT
      && gst_structure_has_name (s, "moroktranscriber-interim")
      && gst_structure_get_uint64 (s, "end", &end))
    {
      double ms = ((double) running_time (run->pipeline) - (double) end) / GST_MSECOND;
      g_array_append_val (run->interim_delays, ms);
    }
  return GST_BUS_PASS;
}

static gpointer
feed (gpointer data)
{
  Feeder *f = data;
  g_autoptr (GstClock) clock = gst_element_get_clock (f->run->pipeline);
  GstClockTime base = gst_element_get_base_time (f->run->pipeline);
  gsize chunk = (gsize) f->wav->rate * CHUNK_MS / 1000, bpf = 2 * f->wav->channels;
  f->run->offset = gst_clock_get_time (clock) - base;
  for (gsize at = 0; at < f->wav->frames && !g_atomic_int_get (&f->stop); at += chunk)
    {
      gsize n = MIN (chunk, f->wav->frames - at);
      GstClockTime pts = f->run->offset + gst_util_uint64_scale (at, GST_SECOND, f->wav->rate);
      GstClockTime end = f->run->offset + gst_util_uint64_scale (at + n, GST_SECOND, f->wav->rate);
      GstClockID id = gst_clock_new_single_shot_id (clock, base + end);
      gst_clock_id_wait (id, NULL);
      gst_clock_id_unref (id);
      GstBuffer *buf = gst_buffer_new_memdup (f->wav->data + at * bpf, n * bpf);
      GST_BUFFER_PTS (buf) = pts;
      GST_BUFFER_DURATION (buf) = end - pts;
      if (gst_app_src_push_buffer (GST_APP_SRC (f->src), buf) != GST_FLOW_OK)
        break;
    }
  gst_app_src_end_of_stream (GST_APP_SRC (f->src));
  return NULL;
}

static gboolean
set_props (GstElement *asr, char **props, GError **error)
{
  for (char **p = props; p && *p; p++)
    {
      g_auto (GStrv) kv = g_strsplit (*p, "=", 2);
      if (!kv[1] || !g_object_class_find_property (G_OBJECT_GET_CLASS (asr), kv[0]))
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                       "-p %s: moroktranscriber has no property '%s' (want -p NAME=VALUE)", *p,
                       kv[0]);
          return FALSE;
        }
      gst_util_set_object_arg (G_OBJECT (asr), kv[0], kv[1]);
    }
  return TRUE;
}

/* Runs to EOS; FALSE with the pipeline's error. */
static gboolean
run_pipeline (Run *run, const char *model, const char *path, const Wav *wav, char **props,
              GError **error)
{
  g_autofree char *desc = g_strdup_printf (
      "%s ! audioconvert ! audioresample ! morokvad remove-silence=true ! "
      "moroktranscriber name=asr ! %s fakesink name=sink sync=%s",
      run->live ? "appsrc name=src is-live=true format=time" : "filesrc name=src ! wavparse",
      run->direct ? "" : "queue max-size-buffers=0 max-size-bytes=0 max-size-time=0 !",
      run->live ? "true" : "false");
  run->pipeline = gst_parse_launch_full (desc, NULL, GST_PARSE_FLAG_FATAL_ERRORS, error);
  if (!run->pipeline)
    return FALSE;
  g_autoptr (GstElement) src = gst_bin_get_by_name (GST_BIN (run->pipeline), "src");
  g_autoptr (GstElement) asr = gst_bin_get_by_name (GST_BIN (run->pipeline), "asr");
  run->sink = gst_bin_get_by_name (GST_BIN (run->pipeline), "sink");
  g_object_set (asr, "model", model, NULL);
  if (!set_props (asr, props, error))
    return FALSE;
  /* the offline run is the reference, whatever PROPS say */
  if (!run->live && g_object_class_find_property (G_OBJECT_GET_CLASS (asr), "mode"))
    gst_util_set_object_arg (G_OBJECT (asr), "mode", "offline");
  if (run->live)
    {
      g_autoptr (GstCaps) caps = gst_caps_new_simple (
          "audio/x-raw", "format", G_TYPE_STRING, "S16LE", "layout", G_TYPE_STRING, "interleaved",
          "rate", G_TYPE_INT, wav->rate, "channels", G_TYPE_INT, wav->channels, NULL);
      g_object_set (src, "caps", caps, "min-latency", (gint64) CHUNK_MS * GST_MSECOND, NULL);
    }
  else
    g_object_set (src, "location", path, NULL);
  g_autoptr (GstPad) pad = gst_element_get_static_pad (asr, "src");
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM,
                     on_output, run, NULL);
  g_autoptr (GstBus) bus = gst_element_get_bus (run->pipeline);
  gst_bus_set_sync_handler (bus, on_message_sync, run, NULL);

  if (gst_element_set_state (run->pipeline, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE)
    {
      g_autoptr (GstMessage) msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
      if (msg)
        gst_message_parse_error (msg, error, NULL);
      else
        g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "the pipeline did not start");
      return FALSE;
    }
  double cpu0 = cpu_seconds ();
  Feeder feeder = { run, src, wav, 0 };
  GThread *thread = run->live ? g_thread_new ("feed", feed, &feeder) : NULL;
  gboolean ok = TRUE;
  for (gboolean done = FALSE; !done;)
    {
      g_autoptr (GstMessage) msg = gst_bus_timed_pop (bus, GST_CLOCK_TIME_NONE);
      const GstStructure *s = gst_message_get_structure (msg);
      switch (GST_MESSAGE_TYPE (msg))
        {
        case GST_MESSAGE_ERROR:
          gst_message_parse_error (msg, error, NULL);
          ok = FALSE;
          done = TRUE;
          break;
        case GST_MESSAGE_EOS:
        case GST_MESSAGE_APPLICATION: done = TRUE; break;
        case GST_MESSAGE_LATENCY: gst_bin_recalculate_latency (GST_BIN (run->pipeline)); break;
        case GST_MESSAGE_ASYNC_DONE:
          if (GST_MESSAGE_SRC (msg) == GST_OBJECT (run->pipeline) && run->latency == 0)
            run->latency = query_latency (run->pipeline);
          break;
        case GST_MESSAGE_WARNING:
          {
            const GstStructure *details = NULL;
            gst_message_parse_warning_details (msg, &details);
            if (details && gst_structure_has_name (details, "moroktranscriber/excessive-delay"))
              run->warnings++;
            else
              {
                g_autoptr (GError) w = NULL;
                gst_message_parse_warning (msg, &w, NULL);
                fprintf (stderr, "bench-live: warning: %s\n", w->message);
              }
            break;
          }
        case GST_MESSAGE_ELEMENT:
          if (gst_structure_has_name (s, "moroktranscriber"))
            run->finals++;
          break;
        default: break;
        }
    }
  run->cpu_s = cpu_seconds () - cpu0;
  if (run->latency == 0)
    run->latency = query_latency (run->pipeline);
  run->sink_latency = gst_base_sink_get_latency (GST_BASE_SINK (run->sink));
  if (g_object_class_find_property (G_OBJECT_GET_CLASS (asr), "max-observed-delay"))
    g_object_get (asr, "max-observed-delay", &run->max_observed_delay_ms, NULL);
  GstClockTime shift = run->live ? run->offset + element_lateness (run->pipeline) : 0;
  for (guint i = 0; i < run->words->len; i++)
    {
      Word *w = &g_array_index (run->words, Word, i);
      w->start -= MIN (w->start, shift);
      w->end -= MIN (w->end, shift);
    }
  g_atomic_int_set (&feeder.stop, 1);
  if (thread)
    g_thread_join (thread);
  gst_element_set_state (run->pipeline, GST_STATE_NULL);
  return ok;
}

static void
run_clear (Run *run)
{
  g_clear_pointer (&run->words, g_array_unref);
  g_clear_pointer (&run->interim_delays, g_array_unref);
  gst_clear_object (&run->sink);
  gst_clear_object (&run->pipeline);
}

static void
run_init (Run *run, gboolean live)
{
  memset (run, 0, sizeof *run);
  run->live = live;
  run->words = g_array_new (FALSE, TRUE, sizeof (Word));
  g_array_set_clear_func (run->words, word_clear);
  run->interim_delays = g_array_new (FALSE, FALSE, sizeof (double));
}

/* ---- scores ---- */

static gboolean
same_word (const Word *ref, const Word *hyp, gboolean timed)
{
  if (strcmp (ref->text, hyp->text) != 0)
    return FALSE;
  GstClockTimeDiff d = GST_CLOCK_DIFF (ref->start, hyp->start);
  return !timed || ABS (d) < (GstClockTimeDiff) MATCH_NS;
}

/* Edits from @ref to @hyp (words of the same text, started within
 * MATCH_NS when @timed, match); out_match[j]: the index of the reference
 * word hyp[j] matches in one minimal edit script, or -1. */
static guint
align (GArray *ref, GArray *hyp, gboolean timed, int *out_match)
{
  guint n = ref->len, m = hyp->len;
  g_autofree guint *d = g_new (guint, (n + 1) * (m + 1));
#define D(i, j) d[(i) * (m + 1) + (j)]
  for (guint i = 0; i <= n; i++)
    for (guint j = 0; j <= m; j++)
      {
        if (i == 0 || j == 0)
          {
            D (i, j) = i + j;
            continue;
          }
        gboolean eq = same_word (&g_array_index (ref, Word, i - 1),
                                 &g_array_index (hyp, Word, j - 1), timed);
        D (i, j) = MIN (MIN (D (i - 1, j), D (i, j - 1)) + 1, D (i - 1, j - 1) + !eq);
      }
  for (guint j = 0; j < m; j++)
    out_match[j] = -1;
  for (guint i = n, j = m; i && j;)
    {
      gboolean eq
          = same_word (&g_array_index (ref, Word, i - 1), &g_array_index (hyp, Word, j - 1), timed);
      if (D (i, j) == D (i - 1, j - 1) + !eq)
        {
          if (eq)
            out_match[j - 1] = (int) i - 1;
          i--, j--;
        }
      else if (D (i, j) == D (i - 1, j) + 1)
        i--;
      else
        j--;
    }
  guint edits = D (n, m);
#undef D
  return edits;
}

static double
wer (guint edits, guint n)
{
  return n ? (double) edits / n : edits ? 1 : 0;
}

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

/* Nearest rank; 0 of nothing. Sorts @v. */
static double
percentile (GArray *v, double p)
{
  if (v->len == 0)
    return 0;
  qsort (v->data, v->len, sizeof (double), cmp_double);
  guint k = (guint) ceil (p * v->len);
  return g_array_index (v, double, MAX (k, 1) - 1);
}

static void
report (Run *live, Run *offline, GArray *truth, double audio_s, char **props, gboolean verbose)
{
  GArray *ref = truth ? truth : offline->words;
  g_autofree int *match = g_new (int, MAX (MAX (live->words->len, offline->words->len), 1));
  guint edits_ref = align (offline->words, live->words, FALSE, match);
  guint edits_truth = truth ? align (truth, live->words, TRUE, match) : 0;
  if (!truth)
    align (offline->words, live->words, TRUE, match);
  g_autoptr (GArray) delays = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr (GArray) own = g_array_new (FALSE, FALSE, sizeof (double));
  guint late = 0;
  double slack_min = NAN;
  for (guint j = 0; j < live->words->len; j++)
    {
      Word *w = &g_array_index (live->words, Word, j);
      late += w->arrival > w->deadline;
      double slack = ((double) w->deadline - (double) w->arrival) / GST_MSECOND;
      slack_min = j == 0 ? slack : MIN (slack_min, slack);
      double own_delay = ((double) w->arrival - (double) (w->end + live->offset)) / GST_MSECOND;
      g_array_append_val (own, own_delay);
      double delay = NAN;
      if (match[j] >= 0)
        {
          GstClockTime end = g_array_index (ref, Word, match[j]).end + live->offset;
          delay = ((double) w->arrival - (double) end) / GST_MSECOND;
          g_array_append_val (delays, delay);
        }
      if (verbose)
        printf ("word %-12s pts %.3f end %.3f arrival %.3f deadline %.3f delay_ms %.0f\n", w->text,
                (double) w->pts / GST_SECOND, (double) (w->end + live->offset) / GST_SECOND,
                (double) w->arrival / GST_SECOND, (double) w->deadline / GST_SECOND, delay);
    }
  guint matched = delays->len;
  printf ("RESULT live");
  for (char **p = props; p && *p; p++)
    printf (" %s", *p);
  printf (" audio_s=%.2f latency_ms=%" G_GUINT64_FORMAT " sink_latency_ms=%" G_GUINT64_FORMAT
          " words=%u ref_words=%u wer=%.3f",
          audio_s, live->latency / GST_MSECOND, live->sink_latency / GST_MSECOND, live->words->len,
          offline->words->len, wer (edits_ref, offline->words->len));
  if (truth)
    printf (" truth_words=%u wer_truth=%.3f offline_wer_truth=%.3f", truth->len,
            wer (edits_truth, truth->len),
            wer (align (truth, offline->words, TRUE, match), truth->len));
  printf (" matched=%u delay_p50_ms=%.0f delay_p90_ms=%.0f delay_max_ms=%.0f"
          " own_delay_p50_ms=%.0f own_delay_p90_ms=%.0f own_delay_max_ms=%.0f late=%u"
          " slack_min_ms=%.0f interim=%u interim_per_s=%.2f interim_delay_p50_ms=%.0f finals=%u "
          "warnings=%u"
          " max_observed_delay_ms=%u cpu_per_s=%.3f offline_cpu_per_s=%.3f\n",
          matched, percentile (delays, 0.5), percentile (delays, 0.9), percentile (delays, 1.0),
          percentile (own, 0.5), percentile (own, 0.9), percentile (own, 1.0), late, slack_min,
          live->interim_delays->len, live->interim_delays->len / audio_s,
          percentile (live->interim_delays, 0.5), live->finals, live->warnings,
          live->max_observed_delay_ms, live->cpu_s / audio_s, offline->cpu_s / audio_s);
}

int
main (int argc, char **argv)
{
  g_autofree char *truth_path = NULL;
  g_auto (GStrv) props = NULL;
  gboolean verbose = FALSE, direct = FALSE;
  GOptionEntry entries[]
      = { { "truth", 0, 0, G_OPTION_ARG_FILENAME, &truth_path, "words with true times", "JSON" },
          { "prop", 'p', 0, G_OPTION_ARG_STRING_ARRAY, &props, "moroktranscriber property",
            "NAME=VALUE" },
          { "verbose", 'v', 0, G_OPTION_ARG_NONE, &verbose, "print each live word", NULL },
          { "no-queue", 0, 0, G_OPTION_ARG_NONE, &direct, "the sink straight after the element",
            NULL },
          { NULL } };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("MODEL WAV");
  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_add_group (ctx, gst_init_get_option_group ());
  g_autoptr (GError) error = NULL;
  if (!g_option_context_parse (ctx, &argc, &argv, &error) || argc != 3)
    {
      fprintf (stderr,
               "bench-live: %s\nusage: bench-live [--truth JSON] [-v] [--no-queue] "
               "[-p PROP=VALUE]... MODEL WAV\n",
               error ? error->message : "want MODEL and WAV");
      return 2;
    }
  Wav wav = { 0 };
  g_autoptr (GArray) truth = NULL;
  if (!wav_read (argv[2], &wav, &error)
      || (truth_path && !(truth = truth_read (truth_path, &error))))
    {
      fprintf (stderr, "bench-live: %s\n", error->message);
      return 1;
    }
  double audio_s = (double) wav.frames / wav.rate;
  Run offline, live;
  run_init (&offline, FALSE);
  run_init (&live, TRUE);
  live.direct = direct;
  const char *which = "offline";
  gboolean ok = run_pipeline (&offline, argv[1], argv[2], &wav, props, &error);
  if (ok)
    {
      which = "live";
      ok = run_pipeline (&live, argv[1], argv[2], &wav, props, &error);
    }
  if (ok)
    report (&live, &offline, truth, audio_s, props, verbose);
  else
    fprintf (stderr, "bench-live: the %s run: %s\n", which, error ? error->message : "failed");
  run_clear (&offline);
  run_clear (&live);
  g_free (wav.data);
  return ok ? 0 : 1;
}
