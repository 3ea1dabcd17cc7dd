/* SPDX-License-Identifier: MIT */
/* Text and word times of decoded tokens (models/transcript.h) on hand-made
 * token sequences; the expected words follow upstream's timestamps_utils
 * rules as docs/gigaam-model.md states them. The fixture models' words are
 * checked against the PyTorch reference in test-gigaam-asr. */
#include <glib.h>

#include "models/transcript.h"

static void
assert_word (const MorokWord *w, const char *text, double start, double end)
{
  g_assert_cmpstr (w->text, ==, text);
  g_assert_cmpfloat_with_epsilon (w->start, start, 1e-9);
  g_assert_cmpfloat_with_epsilon (w->end, end, 1e-9);
}

/* Characters: a space token ends a word and belongs to none; a word spans
 * its first token's frame to the end of its last one's (40 ms frames). */
static void
test_chars (void)
{
  const char *vocab[] = { " ", "a", "b", "c" };
  /* "ab c" at frames 2 3 | 5 | 9, then a trailing space */
  const MorokCtcToken tok[] = { { 1, 2, 1 }, { 2, 3, 2 }, { 0, 5, 1 }, { 3, 9, 1 }, { 0, 11, 1 } };
  g_autoptr (MorokTranscript) tr = morok_transcript_new (tok, G_N_ELEMENTS (tok), vocab, 4,
                                                         FALSE, 0.04);
  g_assert_cmpstr (tr->text, ==, "ab c ");
  g_assert_cmpuint (tr->n_words, ==, 2);
  assert_word (&tr->words[0], "ab", 0.08, 0.16);
  assert_word (&tr->words[1], "c", 0.36, 0.40);
}

/* SentencePiece: "▁" starts a word and is dropped; a lone "▁" piece opens
 * a word whose start is its frame; punctuation and capitals stay as the
 * pieces carry them. */
static void
test_pieces (void)
{
  const char *vocab[] = { "\xe2\x96\x81He", "llo", ",", "\xe2\x96\x81", "world", "." };
  const MorokCtcToken tok[]
      = { { 0, 1, 1 }, { 1, 2, 1 }, { 2, 4, 1 }, { 3, 7, 1 }, { 4, 8, 1 }, { 5, 8, 1 } };
  g_autoptr (MorokTranscript) tr = morok_transcript_new (tok, G_N_ELEMENTS (tok), vocab, 6,
                                                         TRUE, 0.04);
  g_assert_cmpstr (tr->text, ==, "Hello, world.");
  g_assert_cmpuint (tr->n_words, ==, 2);
  assert_word (&tr->words[0], "Hello,", 0.04, 0.20);
  assert_word (&tr->words[1], "world.", 0.28, 0.36);
}

/* No tokens: empty text, no words; ids past the vocabulary are skipped. */
static void
test_empty (void)
{
  const char *vocab[] = { "a" };
  const MorokCtcToken tok[] = { { 7, 0, 1 } };
  g_autoptr (MorokTranscript) none = morok_transcript_new (NULL, 0, vocab, 1, FALSE, 0.04);
  g_autoptr (MorokTranscript) past = morok_transcript_new (tok, 1, vocab, 1, TRUE, 0.04);
  g_assert_cmpstr (none->text, ==, "");
  g_assert_cmpuint (none->n_words, ==, 0);
  g_assert_cmpuint (past->n_words, ==, 0);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/transcript/chars", test_chars);
  g_test_add_func ("/transcript/sentencepiece", test_pieces);
  g_test_add_func ("/transcript/empty", test_empty);
  return g_test_run ();
}
