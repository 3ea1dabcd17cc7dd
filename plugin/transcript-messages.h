/* SPDX-License-Identifier: MIT */
/* What moroktranscriber says of its words, offline and live alike: text
 * buffers, and the structures of its element messages (docs/moroktranscriber.md,
 * "Output" and "Interim results").
 *
 *   GstBuffer *buf = morok_text_buffer ("seven", start, end);
 *   GstStructure *s = morok_transcript_structure (text, words, n, start, end);
 *   gst_element_post_message (element, gst_message_new_element (GST_OBJECT (element), s));
 */
#pragma once

#include <gst/gst.h>

G_BEGIN_DECLS

/* A word as the messages carry it. */
typedef struct
{
  char *text;
  GstClockTime start, end; /* buffer time */
} MorokTimedWord;

/* @seconds into the utterance starting at @start. */
GstClockTime morok_time_in (GstClockTime start, double seconds);
/* A buffer of @text's bytes (no NUL), PTS @pts, lasting until @end. */
GstBuffer *morok_text_buffer (const char *text, GstClockTime pts, GstClockTime end);
/* @n words' texts joined by spaces. (transfer full) */
char *morok_timed_words_join (const MorokTimedWord *words, guint n);
/* The final message of an utterance [@start, @end): `moroktranscriber`
 * with text, start, end and words. (transfer full) */
GstStructure *morok_transcript_structure (const char *text, const MorokTimedWord *words, guint n,
                                          GstClockTime start, GstClockTime end);
/* The interim message of an utterance from @start decoded up to @end:
 * `moroktranscriber-interim`, the @n_done committed words and the
 * @n_tentative others, @tentative their text. (transfer full) */
GstStructure *morok_interim_structure (const MorokTimedWord *done, guint n_done,
                                       const MorokTimedWord *tentative, guint n_tentative,
                                       const char *tentative_text, GstClockTime start,
                                       GstClockTime end);

G_END_DECLS
