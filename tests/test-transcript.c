/* SPDX-License-Identifier: MIT */
/* Text and word times of decoded tokens (models/transcript.h): on
 * hand-made token sequences, the expected words following upstream's
 * timestamps_utils rules as docs/gigaam-model.md states them; and on
 * tests/fixtures/sentencepiece-decode.json (scripts/gigaam/
 * make-transcript-fixture.py), every SentencePiece piece type, its texts
 * those of reference.py, checked there against SentencePiece's own
 * decoder. The fixture models' words are checked against the PyTorch
 * reference in test-gigaam-asr. */
#include <glib.h>
#include <json-glib/json-glib.h>

#include "fixtures.h"
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
  const char *tokens[] = { " ", "a", "b", "c" };
  const MorokVocabulary vocab = { .tokens = tokens, .n_tokens = 4 };
  /* "ab c" at frames 2 3 | 5 | 9, then a trailing space */
  const MorokCtcToken tok[] = { { 1, 2, 1 }, { 2, 3, 2 }, { 0, 5, 1 }, { 3, 9, 1 }, { 0, 11, 1 } };
  g_autoptr (MorokTranscript) tr = morok_transcript_new (tok, G_N_ELEMENTS (tok), &vocab, 0.04);
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
  const char *tokens[] = { "\xe2\x96\x81He", "llo", ",", "\xe2\x96\x81", "world", "." };
  const MorokVocabulary vocab
      = { .tokens = tokens, .n_tokens = 6, .sentencepiece = TRUE, .strip_first_space = TRUE };
  const MorokCtcToken tok[]
      = { { 0, 1, 1 }, { 1, 2, 1 }, { 2, 4, 1 }, { 3, 7, 1 }, { 4, 8, 1 }, { 5, 8, 1 } };
  g_autoptr (MorokTranscript) tr = morok_transcript_new (tok, G_N_ELEMENTS (tok), &vocab, 0.04);
  g_assert_cmpstr (tr->text, ==, "Hello, world.");
  g_assert_cmpuint (tr->n_words, ==, 2);
  assert_word (&tr->words[0], "Hello,", 0.04, 0.20);
  assert_word (&tr->words[1], "world.", 0.28, 0.36);
}

/* SentencePiece with a " " token (a control piece, as the digits model has
 * it): it ends a word, as upstream's chars_to_words has it for any
 * vocabulary, and renders as nothing; a "▁" piece begins a word without
 * it. */
static void
test_pieces_space (void)
{
  const char *tokens[] = { " ", "\xe2\x96\x81ze", "ro", "\xe2\x96\x81on", "e" };
  const MorokPieceType types[] = { MOROK_PIECE_CONTROL, MOROK_PIECE_NORMAL, MOROK_PIECE_NORMAL,
                                   MOROK_PIECE_NORMAL, MOROK_PIECE_NORMAL };
  const MorokVocabulary vocab = { .tokens = tokens,
                                  .n_tokens = 5,
                                  .sentencepiece = TRUE,
                                  .types = types,
                                  .strip_first_space = TRUE };
  /* " zero one" then "ro" after a space, then "one" with no space before it */
  const MorokCtcToken tok[]
      = { { 0, 0, 1 }, { 1, 1, 1 }, { 2, 3, 1 },  { 0, 5, 1 },  { 3, 6, 1 },
          { 4, 8, 1 }, { 0, 9, 1 }, { 2, 10, 1 }, { 3, 12, 1 }, { 4, 13, 1 } };
  g_autoptr (MorokTranscript) tr = morok_transcript_new (tok, G_N_ELEMENTS (tok), &vocab, 0.04);
  g_assert_cmpstr (tr->text, ==, "zero onero one");
  g_assert_cmpuint (tr->n_words, ==, 4);
  assert_word (&tr->words[0], "zero", 0.04, 0.16);
  assert_word (&tr->words[1], "one", 0.24, 0.36);
  assert_word (&tr->words[2], "ro", 0.40, 0.44);
  assert_word (&tr->words[3], "one", 0.48, 0.56);
}

/* No tokens: empty text, no words; ids past the vocabulary are skipped. */
static void
test_empty (void)
{
  const char *tokens[] = { "a" };
  const MorokVocabulary chars = { .tokens = tokens, .n_tokens = 1 };
  const MorokVocabulary pieces = { .tokens = tokens, .n_tokens = 1, .sentencepiece = TRUE };
  const MorokCtcToken tok[] = { { 7, 0, 1 } };
  g_autoptr (MorokTranscript) none = morok_transcript_new (NULL, 0, &chars, 0.04);
  g_autoptr (MorokTranscript) past = morok_transcript_new (tok, 1, &pieces, 0.04);
  g_assert_cmpstr (none->text, ==, "");
  g_assert_cmpuint (none->n_words, ==, 0);
  g_assert_cmpstr (past->text, ==, "");
  g_assert_cmpuint (past->n_words, ==, 0);
}

/* Only <0xNN> spells a byte. */
static void
test_piece_byte (void)
{
  g_assert_cmpint (morok_piece_byte ("<0x41>"), ==, 0x41);
  g_assert_cmpint (morok_piece_byte ("<0xfF>"), ==, 0xFF);
  g_assert_cmpint (morok_piece_byte ("<0x4>"), ==, -1);
  g_assert_cmpint (morok_piece_byte ("<0x4G>"), ==, -1);
  g_assert_cmpint (morok_piece_byte ("0x41"), ==, -1);
  g_assert_cmpint (morok_piece_byte ("<0x411>"), ==, -1);
}

static MorokPieceType
piece_type (const char *name)
{
  static const char *const names[]
      = { "normal", "unknown", "control", "user_defined", "unused", "byte" };
  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    if (g_str_equal (name, names[i]))
      return (MorokPieceType) i;
  g_assert_not_reached ();
}

/* Every case of the fixture: the text SentencePiece decodes (control
 * pieces none, the unknown piece " ⁇ ", byte pieces their UTF-8, invalid
 * bytes U+FFFD each, the first "▁" dropped), and the words by upstream's
 * rules over the pieces' names, token k at frame k. */
static void
test_sentencepiece_fixture (void)
{
  GError *e = NULL;
  g_autofree char *path = fixture_path ("sentencepiece-decode.json");
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_assert_true (json_parser_load_from_file (parser, path, &e));
  g_assert_no_error (e);
  JsonObject *root = json_node_get_object (json_parser_get_root (parser));
  JsonObject *v = json_object_get_object_member (root, "vocabulary");
  JsonArray *pieces = json_object_get_array_member (v, "tokens");
  JsonArray *types = json_object_get_array_member (v, "piece_types");
  guint n_tokens = json_array_get_length (pieces);
  g_assert_cmpuint (json_array_get_length (types), ==, n_tokens);
  g_autofree const char **tokens = g_new (const char *, n_tokens);
  g_autofree MorokPieceType *kinds = g_new (MorokPieceType, n_tokens);
  for (guint i = 0; i < n_tokens; i++)
    {
      tokens[i] = json_array_get_string_element (pieces, i);
      kinds[i] = piece_type (json_array_get_string_element (types, i));
    }
  const MorokVocabulary vocab = {
    tokens,
    n_tokens,
    TRUE,
    kinds,
    json_object_get_string_member (v, "unk_surface"),
    json_object_get_boolean_member (v, "add_dummy_prefix")
        || json_object_get_boolean_member (v, "remove_extra_whitespaces"),
  };
  double s = json_object_get_double_member (root, "frame_seconds");
  JsonArray *cases = json_object_get_array_member (root, "cases");
  for (guint c = 0; c < json_array_get_length (cases); c++)
    {
      JsonObject *k = json_array_get_object_element (cases, c);
      JsonArray *ids = json_object_get_array_member (k, "ids");
      guint n = json_array_get_length (ids);
      g_autofree MorokCtcToken *tok = g_new0 (MorokCtcToken, MAX (n, 1));
      for (guint i = 0; i < n; i++)
        tok[i] = (MorokCtcToken){ (guint) json_array_get_int_element (ids, i), i, 1 };
      g_autoptr (MorokTranscript) tr = morok_transcript_new (tok, n, &vocab, s);
      g_test_message ("%s: \"%s\"", json_object_get_string_member (k, "why"), tr->text);
      g_assert_cmpstr (tr->text, ==, json_object_get_string_member (k, "text"));
      JsonArray *words = json_object_get_array_member (k, "words");
      g_assert_cmpuint (tr->n_words, ==, json_array_get_length (words));
      for (guint w = 0; w < tr->n_words; w++)
        {
          JsonArray *want = json_array_get_array_element (words, w);
          assert_word (&tr->words[w], json_array_get_string_element (want, 0),
                       json_array_get_int_element (want, 1) * s,
                       json_array_get_int_element (want, 2) * s);
        }
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/transcript/chars", test_chars);
  g_test_add_func ("/transcript/sentencepiece", test_pieces);
  g_test_add_func ("/transcript/sentencepiece-space", test_pieces_space);
  g_test_add_func ("/transcript/empty", test_empty);
  g_test_add_func ("/transcript/piece-byte", test_piece_byte);
  g_test_add_func ("/transcript/sentencepiece-fixture", test_sentencepiece_fixture);
  return g_test_run ();
}
