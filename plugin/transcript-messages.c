/* SPDX-License-Identifier: MIT */
#include "transcript-messages.h"
#include <math.h>
#include <string.h>

GstClockTime
morok_time_in (GstClockTime start, double seconds)
{
  return start + (GstClockTime) llround (seconds * GST_SECOND);
}

GstBuffer *
morok_text_buffer (const char *text, GstClockTime pts, GstClockTime end)
{
  GstBuffer *buf = gst_buffer_new_memdup (text, strlen (text));
  GST_BUFFER_PTS (buf) = pts;
  GST_BUFFER_DURATION (buf) = end - pts;
  return buf;
}

char *
morok_timed_words_join (const MorokTimedWord *words, guint n)
{
  GString *text = g_string_new (NULL);
  for (guint k = 0; k < n; k++)
    {
      if (k > 0)
        g_string_append_c (text, ' ');
      g_string_append (text, words[k].text);
    }
  return g_string_free (text, FALSE);
}

/* Appends @n words to the GST_TYPE_ARRAY @array as `word` structures,
 * with a `committed` field unless @committed is -1. */
static void
append_words (GValue *array, const MorokTimedWord *words, guint n, int committed)
{
  for (guint k = 0; k < n; k++)
    {
      GValue word = G_VALUE_INIT;
      g_value_init (&word, GST_TYPE_STRUCTURE);
      GstStructure *w
          = gst_structure_new ("word", "word", G_TYPE_STRING, words[k].text, "start", G_TYPE_UINT64,
                               words[k].start, "end", G_TYPE_UINT64, words[k].end, NULL);
      if (committed >= 0)
        gst_structure_set (w, "committed", G_TYPE_BOOLEAN, committed, NULL);
      g_value_take_boxed (&word, w);
      gst_value_array_append_and_take_value (array, &word);
    }
}

GstStructure *
morok_transcript_structure (const char *text, const MorokTimedWord *words, guint n,
                            GstClockTime start, GstClockTime end)
{
  GValue array = G_VALUE_INIT;
  g_value_init (&array, GST_TYPE_ARRAY);
  append_words (&array, words, n, -1);
  GstStructure *s = gst_structure_new ("moroktranscriber", "text", G_TYPE_STRING, text, "start",
                                       G_TYPE_UINT64, start, "end", G_TYPE_UINT64, end, NULL);
  gst_structure_take_value (s, "words", &array);
  return s;
}

GstStructure *
morok_interim_structure (const MorokTimedWord *done, guint n_done, const MorokTimedWord *tentative,
                         guint n_tentative, const char *tentative_text, GstClockTime start,
                         GstClockTime end)
{
  GValue array = G_VALUE_INIT;
  g_value_init (&array, GST_TYPE_ARRAY);
  append_words (&array, done, n_done, TRUE);
  append_words (&array, tentative, n_tentative, FALSE);
  g_autofree char *committed = morok_timed_words_join (done, n_done);
  GstStructure *s = gst_structure_new (
      "moroktranscriber-interim", "committed", G_TYPE_STRING, committed, "tentative", G_TYPE_STRING,
      tentative_text, "start", G_TYPE_UINT64, start, "end", G_TYPE_UINT64, end, NULL);
  gst_structure_take_value (s, "words", &array);
  return s;
}
