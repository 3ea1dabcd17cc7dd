/* SPDX-License-Identifier: MIT */
/* Live decoding: the commit rules of models/stream-commit.h on hand-made
 * hypotheses (each expectation worked out from the rules), and
 * models/gigaam-stream.h on the tiny GigaAM fixtures against the PyTorch
 * reference's tokens (tests/fixtures/gigaam-asr-expected.json): a window
 * that covers the whole utterance gives the offline tokens, an RNN-T
 * decode resumed after any token gives the rest of them, the predictor
 * states an RNN-T decoder saved give what stepping gives, and decodes of
 * a growing utterance allocate nothing. */
#include <glib.h>
#include <json-glib/json-glib.h>
#include <string.h>

#include "alloc-counter.h"
#include "fixtures.h"
#include "io/safetensors.h"
#include "models/gigaam-stream.h"

/* ---- the commit rules ---- */

/* Characters: 0 " ", 1 "a", 2 "b", 3 "c"; the blank 4 is not a token. */
static const char *const chars[] = { " ", "a", "b", "c" };

static MorokStreamCommit *
char_commit (gboolean rnnt, gint64 hold)
{
  MorokVocabulary vocab = { chars, G_N_ELEMENTS (chars), FALSE, NULL, NULL, FALSE };
  return morok_stream_commit_new (&vocab, rnnt, 64, hold);
}

/* The ids of the words the last update committed, as "ab|c". */
static char *
committed (MorokStreamCommit *sc)
{
  GString *s = g_string_new (NULL);
  for (guint w = 0; w < morok_stream_commit_n_words (sc); w++)
    {
      guint n;
      const MorokCtcToken *t = morok_stream_commit_word (sc, w, &n);
      if (w > 0)
        g_string_append_c (s, '|');
      for (guint i = 0; i < n; i++)
        g_string_append (s, chars[t[i].id]);
    }
  return g_string_free (s, FALSE);
}

#define TOK(id, frame, n)                                                                          \
  {                                                                                                \
    id, frame, n                                                                                   \
  }

/* A word is committed once two decodes agree on it and something follows
 * it; the word at the edge waits; the CTC run of the last committed token
 * going on is not a new token. */
static void
test_commit_agreement (void)
{
  g_autoptr (MorokStreamCommit) sc = char_commit (FALSE, 100);
  /* "ab c" at frames 0-1, 3, 5 */
  MorokCtcToken first[] = { TOK (1, 0, 1), TOK (2, 1, 2), TOK (0, 3, 1), TOK (3, 5, 1) };
  g_assert_cmpuint (morok_stream_commit_update (sc, first, 4, 8, FALSE), ==, 0);
  /* the same, "c" placed one frame later, and "a" after it */
  MorokCtcToken second[] = { TOK (1, 0, 1), TOK (2, 1, 2), TOK (0, 3, 1),
                             TOK (3, 6, 1), TOK (0, 8, 1), TOK (1, 10, 1) };
  g_assert_cmpuint (morok_stream_commit_update (sc, second, 6, 12, FALSE), ==, 2);
  g_autofree char *words = committed (sc);
  g_assert_cmpstr (words, ==, "ab|c");
  /* CTC: after "c" (frame 6, one frame) the next decode starts at frame 7 */
  g_assert_cmpint (morok_stream_commit_frame (sc), ==, 7);
  guint n;
  const MorokCtcToken *tentative = morok_stream_commit_tentative (sc, &n);
  g_assert_cmpuint (n, ==, 2);
  g_assert_cmpint (tentative[1].frame, ==, 10);
  /* "c"'s run going on at frame 7, then " a" agreed but at the edge */
  MorokCtcToken third[] = { TOK (3, 7, 1), TOK (0, 8, 1), TOK (1, 10, 2) };
  g_assert_cmpuint (morok_stream_commit_update (sc, third, 3, 13, FALSE), ==, 0);
  tentative = morok_stream_commit_tentative (sc, &n);
  g_assert_cmpuint (n, ==, 2);
  g_assert_cmpuint (tentative[0].id, ==, 0);
  /* the utterance's end commits the rest */
  g_assert_cmpuint (morok_stream_commit_update (sc, third, 3, 13, TRUE), ==, 1);
  g_free (words);
  words = committed (sc);
  g_assert_cmpstr (words, ==, "a");
}

/* Decodes that disagree commit nothing until the hold: a word that started
 * @hold frames before the audio's end is committed as it is. */
static void
test_commit_hold (void)
{
  g_autoptr (MorokStreamCommit) sc = char_commit (TRUE, 10);
  MorokCtcToken a[] = { TOK (1, 2, 1), TOK (0, 4, 1), TOK (2, 6, 1) };
  MorokCtcToken b[] = { TOK (3, 2, 1), TOK (0, 4, 1), TOK (1, 6, 1) };
  g_assert_cmpuint (morok_stream_commit_update (sc, a, 3, 11, FALSE), ==, 0);
  g_assert_cmpuint (morok_stream_commit_update (sc, b, 3, 12, FALSE), ==, 1);
  g_autofree char *words = committed (sc);
  g_assert_cmpstr (words, ==, "c"); /* started at 2 = 12 - 10 */
  /* RNN-T: the next decode starts at the last committed token's frame */
  g_assert_cmpint (morok_stream_commit_frame (sc), ==, 2);
  guint n;
  const MorokCtcToken *done = morok_stream_commit_tokens (sc, &n);
  g_assert_cmpuint (n, ==, 1);
  g_assert_cmpuint (done[0].id, ==, 3);
  /* past the hold without words: the frames are settled, but not past a
   * tentative word ("a", frame 6); its separator (frame 4) holds nothing */
  morok_stream_commit_settle (sc, 7);
  g_assert_cmpint (morok_stream_commit_settled (sc), ==, 2);
  morok_stream_commit_settle (sc, 5);
  g_assert_cmpint (morok_stream_commit_settled (sc), ==, 5);
  /* settled, the frames are still decoded */
  g_assert_cmpint (morok_stream_commit_frame (sc), ==, 2);
  morok_stream_commit_update (sc, NULL, 0, 30, FALSE);
  morok_stream_commit_settle (sc, 20);
  g_assert_cmpint (morok_stream_commit_settled (sc), ==, 20);
  /* a separator alone at the edge neither commits nor holds the frame:
   * a window that stopped short must move on (it looped forever) */
  MorokCtcToken space[] = { TOK (0, 22, 1) };
  g_assert_cmpuint (morok_stream_commit_update (sc, space, 1, 40, FALSE), ==, 0);
  morok_stream_commit_settle (sc, 30);
  g_assert_cmpint (morok_stream_commit_settled (sc), ==, 30);
}

/* A word a later decode finds in settled frames (a slow word, heard only
 * with more right context) is kept, placed at the settled frame, and held
 * from there. */
static void
test_commit_settled (void)
{
  g_autoptr (MorokStreamCommit) sc = char_commit (FALSE, 10);
  g_assert_cmpuint (morok_stream_commit_update (sc, NULL, 0, 14, FALSE), ==, 0);
  morok_stream_commit_settle (sc, 4);
  g_assert_cmpint (morok_stream_commit_frame (sc), ==, 0);
  /* "ab" at frames 2-5: held from frame 4, not 2 */
  MorokCtcToken late[] = { TOK (1, 2, 2), TOK (2, 4, 2) };
  g_assert_cmpuint (morok_stream_commit_update (sc, late, 2, 13, FALSE), ==, 0);
  g_assert_cmpuint (morok_stream_commit_update (sc, late, 2, 15, FALSE), ==, 1);
  guint n;
  const MorokCtcToken *word = morok_stream_commit_word (sc, 0, &n);
  g_assert_cmpuint (n, ==, 2);
  g_assert_cmpuint (word[0].id, ==, 1);
  g_assert_cmpint (word[0].frame, ==, 4); /* its run 2-3 ends before: one frame */
  g_assert_cmpint (word[0].n_frames, ==, 1);
  g_assert_cmpint (word[1].frame, ==, 4);
  g_assert_cmpint (word[1].n_frames, ==, 2);
  /* the next decode starts after it, as after any committed word */
  g_assert_cmpint (morok_stream_commit_frame (sc), ==, 6);
  g_assert_cmpint (morok_stream_commit_settled (sc), ==, 6);
}

/* SentencePiece: a piece with "▁" begins a word, and the words are whole. */
static void
test_commit_pieces (void)
{
  static const char *const pieces[] = { "\u2581ab", "c", "\u2581d" };
  MorokVocabulary vocab = { pieces, 3, TRUE, NULL, NULL, TRUE };
  g_autoptr (MorokStreamCommit) sc = morok_stream_commit_new (&vocab, TRUE, 16, 100);
  MorokCtcToken t[] = { TOK (0, 1, 1), TOK (1, 3, 1), TOK (2, 6, 1), TOK (1, 7, 1) };
  morok_stream_commit_update (sc, t, 4, 9, FALSE);
  g_assert_cmpuint (morok_stream_commit_update (sc, t, 4, 10, FALSE), ==, 1);
  guint n;
  const MorokCtcToken *w = morok_stream_commit_word (sc, 0, &n);
  g_assert_cmpuint (n, ==, 2); /* "▁ab" "c" */
  g_assert_cmpint (w[1].frame, ==, 3);
}

/* A word without its first piece ("ght" after a space: the model has
 * not written "▁ei" yet) is not committed by two decodes agreeing on it,
 * only by the hold, as its start may still come; a whole word after it
 * waits for it. */
static void
test_commit_headless (void)
{
  static const char *const pieces[] = { " ", "\u2581ei", "ght", "\u2581tw", "o" };
  MorokVocabulary vocab = { pieces, 5, TRUE, NULL, NULL, TRUE };
  g_autoptr (MorokStreamCommit) sc = morok_stream_commit_new (&vocab, FALSE, 16, 10);
  MorokCtcToken t[] = { TOK (0, 1, 1), TOK (2, 3, 1), TOK (0, 5, 1),
                        TOK (3, 6, 1), TOK (4, 8, 1), TOK (0, 9, 1) };
  g_assert_cmpuint (morok_stream_commit_update (sc, t, 6, 11, FALSE), ==, 0);
  g_assert_cmpuint (morok_stream_commit_update (sc, t, 6, 12, FALSE), ==, 0);
  /* the hold: "ght" (frame 3 = 13 - 10), then "▁tw o", agreed */
  g_assert_cmpuint (morok_stream_commit_update (sc, t, 6, 13, FALSE), ==, 2);
  guint n;
  const MorokCtcToken *w = morok_stream_commit_word (sc, 0, &n);
  g_assert_cmpuint (n, ==, 1);
  g_assert_cmpuint (w[0].id, ==, 2);
  w = morok_stream_commit_word (sc, 1, &n);
  g_assert_cmpuint (n, ==, 2);
  g_assert_cmpuint (w[0].id, ==, 3);
}

/* The hold commits no piece that starts in a decode's last frame (the
 * least right context), but one in the frame before it; with a vocabulary
 * that marks words' first pieces, the rest of a word committed so is
 * dropped, not made a word; a " " token separates words there too. */
static void
test_commit_edge (void)
{
  static const char *const pieces[] = { " ", "\u2581ni", "ne", "\u2581on", "e" };
  MorokVocabulary vocab = { pieces, 5, TRUE, NULL, NULL, TRUE };
  g_autoptr (MorokStreamCommit) sc = morok_stream_commit_new (&vocab, FALSE, 16, 10);
  MorokCtcToken a[] = { TOK (1, 2, 1), TOK (2, 11, 1) };
  g_assert_cmpuint (morok_stream_commit_update (sc, a, 2, 12, FALSE), ==, 1);
  guint n;
  const MorokCtcToken *w = morok_stream_commit_word (sc, 0, &n);
  g_assert_cmpuint (n, ==, 1); /* "▁ni": "ne" starts at 11, past 12 - 2 */
  g_assert_cmpuint (w[0].id, ==, 1);
  MorokCtcToken b[] = { TOK (2, 11, 1), TOK (0, 13, 1), TOK (3, 14, 1), TOK (4, 16, 1) };
  g_assert_cmpuint (morok_stream_commit_update (sc, b, 4, 20, FALSE), ==, 0);
  const MorokCtcToken *t = morok_stream_commit_tentative (sc, &n);
  g_assert_cmpuint (n, ==, 3); /* " ▁on e": "ne" is gone */
  g_assert_cmpuint (t[0].id, ==, 0);
  g_assert_cmpuint (morok_stream_commit_update (sc, b, 4, 20, TRUE), ==, 1);
  w = morok_stream_commit_word (sc, 0, &n);
  g_assert_cmpuint (n, ==, 2);
  g_assert_cmpuint (w[0].id, ==, 3);

  /* "ne" in the frame before the last: the word whole */
  morok_stream_commit_reset (sc);
  MorokCtcToken c[] = { TOK (1, 2, 1), TOK (2, 10, 1) };
  g_assert_cmpuint (morok_stream_commit_update (sc, c, 2, 12, FALSE), ==, 1);
  w = morok_stream_commit_word (sc, 0, &n);
  g_assert_cmpuint (n, ==, 2);
  g_assert_cmpuint (w[1].id, ==, 2);
}

/* ---- GigaAM ---- */

static JsonParser *expected;

typedef struct
{
  JsonObject *expect;
  MorokGigaAm *model;
  MorokSafetensors *audio;
} Fixture;

static JsonObject *
utterance (Fixture *f, guint i)
{
  return json_array_get_object_element (json_object_get_array_member (f->expect, "utterances"), i);
}

static void
fixture_load (Fixture *f, const char *name)
{
  GError *e = NULL;
  JsonObject *root = json_node_get_object (json_parser_get_root (expected));
  f->expect = json_object_get_object_member (root, name);
  g_autofree char *path = fixture_path (json_object_get_string_member (f->expect, "model"));
  g_autofree char *audio = fixture_path (json_object_get_string_member (f->expect, "audio"));
  f->model = morok_gigaam_load (path, &e);
  g_assert_no_error (e);
  f->audio = morok_safetensors_open (audio, &e);
  g_assert_no_error (e);
}

static void
fixture_clear (Fixture *f)
{
  morok_safetensors_free (f->audio);
  morok_gigaam_unref (f->model);
}

/* Utterance @i's samples (transfer full). */
static float *
samples (Fixture *f, guint i, gint64 *out_n)
{
  GError *e = NULL;
  const char *name = json_object_get_string_member (utterance (f, i), "audio");
  const MorokSafetensor *t = morok_safetensors_get (f->audio, name, &e);
  g_assert_no_error (e);
  *out_n = t->n_elements;
  float *wave = morok_safetensor_dup_f32 (t, &e);
  g_assert_no_error (e);
  return wave;
}

/* The plans of @f's head, prepared for @seconds. */
typedef struct
{
  GigaAmCtcJit *ctc;
  GigaAmRnntJit *rnnt;
  MorokRnntDecoder *decoder;
} Plans;

static void
plans_prepare (Fixture *f, Plans *p, double seconds)
{
  GError *e = NULL;
  memset (p, 0, sizeof *p);
  morok_gigaam_set_limits (f->model, 1, (gint64) (seconds * 16000));
  if (morok_gigaam_config (f->model)->head == MOROK_GIGAAM_HEAD_RNNT)
    {
      p->rnnt = gigaam_rnnt_jit_new (morok_gigaam_ref (f->model));
      g_assert_true (gigaam_rnnt_jit_prepare_at_bounds (p->rnnt, NULL, &e));
      p->decoder = morok_rnnt_decoder_new (f->model, 1, NULL, &e);
    }
  else
    {
      p->ctc = gigaam_ctc_jit_new (morok_gigaam_ref (f->model));
      g_assert_true (gigaam_ctc_jit_prepare_at_bounds (p->ctc, NULL, &e));
    }
  g_assert_no_error (e);
}

static void
plans_clear (Plans *p)
{
  g_clear_pointer (&p->decoder, morok_rnnt_decoder_free);
  g_clear_pointer (&p->ctc, gigaam_ctc_jit_free);
  g_clear_pointer (&p->rnnt, gigaam_rnnt_jit_free);
}

/* @name's fixture loaded into @f, its plans for @seconds into @p, and a
 * stream of @window and @hold samples on them. (transfer full) */
static MorokGigaAmStream *
stream_open (Fixture *f, Plans *p, const char *name, double seconds, gint64 window, gint64 hold)
{
  GError *e = NULL;
  fixture_load (f, name);
  plans_prepare (f, p, seconds);
  MorokGigaAmStreamSettings settings = { window, hold };
  MorokGigaAmStream *st
      = morok_gigaam_stream_new (f->model, p->ctc, p->rnnt, p->decoder, &settings, &e);
  g_assert_no_error (e);
  return st;
}

/* @n tokens equal utterance @i's reference tokens from index @from on. */
static void
assert_reference_tokens (Fixture *f, guint i, guint from, const MorokCtcToken *tokens, guint n)
{
  JsonArray *ids = json_object_get_array_member (utterance (f, i), "tokens");
  JsonArray *frames = json_object_get_array_member (utterance (f, i), "token_frames");
  g_assert_cmpuint (from + n, ==, json_array_get_length (ids));
  for (guint k = 0; k < n; k++)
    {
      g_assert_cmpuint (tokens[k].id, ==, json_array_get_int_element (ids, from + k));
      g_assert_cmpint (tokens[k].frame, ==, json_array_get_int_element (frames, from + k));
    }
}

/* A window as long as the utterance, decoded once at its end: the tokens
 * the stream commits are the reference's. */
static void
test_whole_window (gconstpointer name)
{
  Fixture f;
  Plans p;
  GError *e = NULL;
  g_autoptr (MorokGigaAmStream) st = stream_open (&f, &p, name, 3.0, 3 * 16000, 8000);
  for (guint i = 0; i < 3; i++)
    {
      gint64 n;
      g_autofree float *wave = samples (&f, i, &n);
      morok_gigaam_stream_reset (st);
      gboolean more;
      g_assert_true (morok_gigaam_stream_decode (st, wave, n, TRUE, &more, &e));
      g_assert_no_error (e);
      g_assert_false (more);
      guint k;
      const MorokCtcToken *t = morok_stream_commit_tokens (morok_gigaam_stream_commit (st), &k);
      assert_reference_tokens (&f, i, 0, t, k);
    }
  g_clear_pointer (&st, morok_gigaam_stream_free);
  plans_clear (&p);
  fixture_clear (&f);
}

/* RNN-T: the predictor's state after the reference's first k tokens, and a
 * decode resumed from it at token k - 1's frame (with the tokens that
 * frame emitted already: v2's hit the limit of ten), give the reference's
 * other tokens, for every k. */
static void
test_rnnt_resume (gconstpointer name)
{
  Fixture f;
  Plans p;
  GError *e = NULL;
  fixture_load (&f, name);
  plans_prepare (&f, &p, 3.0);
  g_autofree float *state = g_new (float, morok_rnnt_decoder_state_size (p.decoder));
  for (guint i = 0; i < 3; i++)
    {
      gint64 n;
      g_autofree float *wave = samples (&f, i, &n);
      const float *w = wave;
      g_assert_true (gigaam_rnnt_jit_run (p.rnnt, &w, &n, 1, &e));
      const MorokBuffer *proj = gigaam_rnnt_jit_output (p.rnnt, &e);
      g_assert_no_error (e);
      gint64 frames = morok_gigaam_encoded_frames (f.model, n);
      JsonArray *ids = json_object_get_array_member (utterance (&f, i), "tokens");
      JsonArray *at = json_object_get_array_member (utterance (&f, i), "token_frames");
      guint total = json_array_get_length (ids);
      g_autofree MorokCtcToken *ref = g_new (MorokCtcToken, total);
      for (guint k = 0; k < total; k++)
        ref[k] = (MorokCtcToken){ json_array_get_int_element (ids, k),
                                  json_array_get_int_element (at, k), 1 };
      for (guint k = 0; k <= total; k++)
        {
          g_assert_true (morok_rnnt_decoder_start_state (p.decoder, state, &e));
          g_assert_true (morok_rnnt_decoder_advance (p.decoder, state, ref, k, &e));
          gint64 from = k > 0 ? ref[k - 1].frame : 0;
          guint emitted = 0;
          for (guint j = 0; j < k; j++)
            emitted += ref[j].frame == from;
          g_assert_true (morok_rnnt_decoder_run_from (p.decoder, state, proj->data, proj->shape[1],
                                                      from, emitted, frames, &e));
          g_assert_no_error (e);
          guint got;
          const MorokCtcToken *t = morok_rnnt_decoder_tokens (p.decoder, 0, &got);
          assert_reference_tokens (&f, i, k, t, got);
        }
    }
  plans_clear (&p);
  fixture_clear (&f);
}

/* Whether a decode of the first @end samples left a word tentative that
 * starts (placed) at or before @end - @delay: one the hold's delay says is
 * committed by then. */
static gboolean
word_past_delay (const MorokGigaAm *model, MorokGigaAmStream *st, gint64 end, gint64 delay)
{
  MorokVocabulary vocab;
  morok_gigaam_vocabulary (model, &vocab);
  const MorokStreamCommit *sc = morok_gigaam_stream_commit (st);
  gint64 F = (gint64) (morok_gigaam_frame_seconds (model) * 16000 + 0.5);
  guint k;
  const MorokCtcToken *t = morok_stream_commit_tentative (sc, &k);
  for (guint i = 0; i < k; i++)
    if (strcmp (vocab.tokens[t[i].id], " ") != 0) /* a space begins no word */
      return MAX (t[i].frame, morok_stream_commit_settled (sc)) * F + delay <= end;
  return FALSE;
}

/* A growing utterance decoded every 0.1 s, windows shorter than it: once
 * the first decodes have run, the decodes build, compile and allocate
 * nothing, and what they commit is in order, never before the commit
 * frame. */
static void
test_growing (gconstpointer name)
{
  Fixture f;
  Plans p;
  GError *e = NULL;
  g_autoptr (MorokGigaAmStream) st = stream_open (&f, &p, name, 3.0, 16000, 4800);
  gint64 n;
  g_autofree float *wave = samples (&f, 2, &n);
  gint allocations = -1;
  gint64 last_frame = -1;
  guint64 builds = 0, compiles = 0;
  for (int pass = 0; pass < 2; pass++)
    {
      morok_gigaam_stream_reset (st);
      builds = morok_plan_build_count ();
      compiles = morok_compile_count_invocations ();
      if (pass == 1 && alloc_counter_works ())
        alloc_counter_start ();
      for (gint64 end = 1600; end <= n; end = end == n ? n + 1 : MIN (end + 1600, n))
        {
          gboolean more = TRUE;
          while (more)
            {
              gint64 before = morok_stream_commit_frame (morok_gigaam_stream_commit (st));
              g_assert_true (morok_gigaam_stream_decode (st, wave, end, end == n, &more, &e));
              g_assert_no_error (e);
              guint k;
              const MorokCtcToken *t
                  = morok_stream_commit_tokens (morok_gigaam_stream_commit (st), &k);
              for (guint j = 0; j < k && pass == 0; j++)
                {
                  g_assert_cmpint (t[j].frame, >=, before);
                  g_assert_cmpint (t[j].frame, >=, last_frame);
                  last_frame = t[j].frame;
                }
            }
        }
      if (pass == 1 && alloc_counter_works ())
        allocations = alloc_counter_stop ();
    }
  g_assert_cmpuint (morok_plan_build_count (), ==, builds);
  g_assert_cmpuint (morok_compile_count_invocations (), ==, compiles);
  if (allocations >= 0)
    g_assert_cmpint (allocations, ==, 0);
  else
    g_test_message ("allocation counting does not work in this build: not counted");
  g_clear_pointer (&st, morok_gigaam_stream_free);
  plans_clear (&p);
  fixture_clear (&f);
}

/* The tokens of the last update of @st: committed, then tentative. */
typedef struct
{
  guint n_done, n_tentative;
  MorokCtcToken tokens[4096];
  gint64 frame;
} Hypothesis;

static void
hypothesis_read (MorokGigaAmStream *st, Hypothesis *h)
{
  const MorokStreamCommit *sc = morok_gigaam_stream_commit (st);
  const MorokCtcToken *done = morok_stream_commit_tokens (sc, &h->n_done);
  const MorokCtcToken *rest = morok_stream_commit_tentative (sc, &h->n_tentative);
  g_assert_cmpuint (h->n_done + h->n_tentative, <=, G_N_ELEMENTS (h->tokens));
  memcpy (h->tokens, done, h->n_done * sizeof (MorokCtcToken));
  memcpy (h->tokens + h->n_done, rest, h->n_tentative * sizeof (MorokCtcToken));
  h->frame = morok_stream_commit_frame (sc);
}

static void
assert_same_hypothesis (const Hypothesis *a, const Hypothesis *b)
{
  g_assert_cmpuint (a->n_done, ==, b->n_done);
  g_assert_cmpuint (a->n_tentative, ==, b->n_tentative);
  g_assert_cmpint (a->frame, ==, b->frame);
  for (guint k = 0; k < a->n_done + a->n_tentative; k++)
    {
      g_assert_cmpuint (a->tokens[k].id, ==, b->tokens[k].id);
      g_assert_cmpint (a->tokens[k].frame, ==, b->tokens[k].frame);
    }
}

/* RNN-T: a growing utterance decoded every 0.1 s with the states the
 * decoder saved commits and proposes, decode by decode, exactly what
 * stepping through every token does, and steps the predictor fewer times. */
static void
test_rnnt_reuse_growing (gconstpointer name)
{
  Fixture f;
  Plans p;
  GError *e = NULL;
  fixture_load (&f, name);
  plans_prepare (&f, &p, 3.0);
  g_autoptr (MorokRnntDecoder) stepping = morok_rnnt_decoder_new_context (p.decoder, &e);
  g_assert_no_error (e);
  morok_rnnt_decoder_set_reuse (stepping, FALSE);
  MorokGigaAmStreamSettings settings = { 16000, 4800 };
  g_autoptr (MorokGigaAmStream) st
      = morok_gigaam_stream_new (f.model, NULL, p.rnnt, p.decoder, &settings, &e);
  g_autoptr (MorokGigaAmStream) ref
      = morok_gigaam_stream_new (f.model, NULL, p.rnnt, stepping, &settings, &e);
  g_assert_no_error (e);
  g_autofree Hypothesis *got = g_new0 (Hypothesis, 1), *want = g_new0 (Hypothesis, 1);
  guint64 steps = 0, ref_steps = 0, s;
  guint decodes = 0;
  for (guint i = 0; i < 3; i++)
    {
      gint64 n;
      g_autofree float *wave = samples (&f, i, &n);
      morok_gigaam_stream_reset (st);
      morok_gigaam_stream_reset (ref);
      for (gint64 end = 1600; end <= n; end = end == n ? n + 1 : MIN (end + 1600, n))
        {
          gboolean more = TRUE, ref_more = TRUE;
          while (more)
            {
              g_assert_true (morok_gigaam_stream_decode (st, wave, end, end == n, &more, &e));
              morok_rnnt_decoder_counts (p.decoder, &s, NULL);
              steps += s;
              g_assert_true (morok_gigaam_stream_decode (ref, wave, end, end == n, &ref_more, &e));
              morok_rnnt_decoder_counts (stepping, &s, NULL);
              ref_steps += s;
              g_assert_no_error (e);
              g_assert_cmpint (more, ==, ref_more);
              hypothesis_read (st, got);
              hypothesis_read (ref, want);
              assert_same_hypothesis (got, want);
              decodes++;
            }
        }
    }
  g_test_message ("%u decodes: %" G_GUINT64_FORMAT " predictor steps, %" G_GUINT64_FORMAT
                  " stepping every token",
                  decodes, steps, ref_steps);
  g_assert_cmpuint (steps, <, ref_steps);
  g_clear_pointer (&st, morok_gigaam_stream_free);
  g_clear_pointer (&ref, morok_gigaam_stream_free);
  g_clear_pointer (&stepping, morok_rnnt_decoder_free);
  plans_clear (&p);
  fixture_clear (&f);
}

/* RNN-T: after a run, _advance through its tokens takes no predictor step
 * and leaves the state stepping gives, bit for bit; a run from there that
 * emits the first run's other tokens takes none either; tokens that leave
 * the run's after j of them take the saved state after j, then step; a
 * run again from a run's start takes none, and after _forget every one. */
static void
test_rnnt_advance_reuses (gconstpointer name)
{
  Fixture f;
  Plans p;
  GError *e = NULL;
  fixture_load (&f, name);
  plans_prepare (&f, &p, 3.0);
  MorokRnntDecoder *dec = p.decoder;
  g_autoptr (MorokRnntDecoder) stepping = morok_rnnt_decoder_new_context (dec, &e);
  g_assert_no_error (e);
  morok_rnnt_decoder_set_reuse (stepping, FALSE);
  gsize size = morok_rnnt_decoder_state_size (dec);
  g_autofree float *start = g_new (float, size);
  g_autofree float *state = g_new (float, size);
  g_autofree float *want = g_new (float, size);
  gint64 n;
  g_autofree float *wave = samples (&f, 2, &n);
  const float *w = wave;
  g_assert_true (gigaam_rnnt_jit_run (p.rnnt, &w, &n, 1, &e));
  const MorokBuffer *proj = gigaam_rnnt_jit_output (p.rnnt, &e);
  g_assert_no_error (e);
  gint64 frames = morok_gigaam_encoded_frames (f.model, n);
  g_assert_true (morok_rnnt_decoder_start_state (dec, start, &e));
  g_assert_true (
      morok_rnnt_decoder_run_from (dec, start, proj->data, proj->shape[1], 0, 0, frames, &e));
  g_assert_no_error (e);
  guint total;
  const MorokCtcToken *t = morok_rnnt_decoder_tokens (dec, 0, &total);
  g_assert_cmpuint (total, >=, 4);
  g_autofree MorokCtcToken *run = g_memdup2 (t, total * sizeof (MorokCtcToken));
  guint64 steps, after_run;
  morok_rnnt_decoder_counts (dec, &after_run, NULL);
  g_assert_cmpuint (after_run, ==, total);
  /* half of the run's tokens: no step, the stepped state */
  guint k = total / 2;
  memcpy (state, start, size * sizeof (float));
  g_assert_true (morok_rnnt_decoder_advance (dec, state, run, k, &e));
  morok_rnnt_decoder_counts (dec, &steps, NULL);
  g_assert_cmpuint (steps, ==, after_run);
  memcpy (want, start, size * sizeof (float));
  g_assert_true (morok_rnnt_decoder_advance (stepping, want, run, k, &e));
  g_assert_no_error (e);
  g_assert_cmpmem (state, size * sizeof (float), want, size * sizeof (float));
  /* the rest, from there: the same tokens and frames, no step */
  gint64 from = run[k - 1].frame;
  guint emitted = 0;
  for (guint j = 0; j < k; j++)
    emitted += run[j].frame == from;
  g_assert_true (morok_rnnt_decoder_run_from (dec, state, proj->data, proj->shape[1], from, emitted,
                                              frames, &e));
  g_assert_no_error (e);
  guint rest;
  t = morok_rnnt_decoder_tokens (dec, 0, &rest);
  g_assert_cmpuint (rest, ==, total - k);
  for (guint j = 0; j < rest; j++)
    {
      g_assert_cmpuint (t[j].id, ==, run[k + j].id);
      g_assert_cmpint (t[j].frame, ==, run[k + j].frame);
    }
  morok_rnnt_decoder_counts (dec, &steps, NULL);
  g_assert_cmpuint (steps, ==, 0);
  /* the tokens of that run with its third changed: two taken, the rest stepped */
  MorokCtcToken *other = run + k;
  other[2].id = (other[2].id + 1) % morok_gigaam_config (f.model)->blank_id;
  guint64 before;
  morok_rnnt_decoder_counts (dec, &before, NULL);
  memcpy (want, state, size * sizeof (float));
  g_assert_true (morok_rnnt_decoder_advance (dec, state, other, rest, &e));
  morok_rnnt_decoder_counts (dec, &steps, NULL);
  g_assert_cmpuint (steps - before, ==, rest - 2);
  g_assert_true (morok_rnnt_decoder_advance (stepping, want, other, rest, &e));
  g_assert_no_error (e);
  g_assert_cmpmem (state, size * sizeof (float), want, size * sizeof (float));
  /* the whole run again from the start: no step; once forgotten, every one */
  for (int forget = 0; forget < 3; forget++)
    {
      if (forget == 2)
        morok_rnnt_decoder_forget (dec);
      g_assert_true (
          morok_rnnt_decoder_run_from (dec, start, proj->data, proj->shape[1], 0, 0, frames, &e));
      g_assert_no_error (e);
      morok_rnnt_decoder_counts (dec, &steps, NULL);
      g_assert_cmpuint (steps, ==, forget == 1 ? 0 : total);
    }
  g_clear_pointer (&stepping, morok_rnnt_decoder_free);
  plans_clear (&p);
  fixture_clear (&f);
}

/* A growing utterance decoded every 10 ms with a short hold (3 frames, so
 * that most words are committed by it): no decode leaves a word tentative
 * that starts the hold's delay or more before its end, which the live
 * latency counts on. (A delay half a frame short fails here.) */
static void
test_hold_commits_by_delay (gconstpointer name)
{
  Fixture f;
  Plans p;
  GError *e = NULL;
  g_autoptr (MorokGigaAmStream) st = stream_open (&f, &p, name, 3.0, 16000, 1920);
  gint64 n;
  g_autofree float *wave = samples (&f, 2, &n);
  gint64 delay = morok_gigaam_stream_hold_delay (st);
  for (gint64 end = 160; end < n; end += 160)
    {
      gboolean more;
      g_assert_true (morok_gigaam_stream_decode (st, wave, end, FALSE, &more, &e));
      g_assert_no_error (e);
      g_assert_false (more);
      g_assert_false (word_past_delay (f.model, st, end, delay));
    }
  g_clear_pointer (&st, morok_gigaam_stream_free);
  plans_clear (&p);
  fixture_clear (&f);
}

/* The hold's delay, worked out from the front-ends (40 ms frames of 640
 * samples; a hold of 4800 samples is 7 whole frames, so a word at frame f
 * is committed once frame f + 6 is encoded): v3 encodes frame j once the
 * audio reaches j + 1/2 frames (a 320-sample window, no centring), so
 * 6.5 x 640 = 4160 samples; v2's centred frames once it reaches j frames,
 * 6 x 640 = 3840. */
static void
test_hold_delay (void)
{
  static const struct
  {
    const char *name;
    gint64 delay;
  } cases[] = { { "gigaam-v3-e2e-ctc-tiny", 4160 }, { "gigaam-v2-rnnt-tiny", 3840 } };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      Fixture f;
      Plans p;
      g_autoptr (MorokGigaAmStream) st = stream_open (&f, &p, cases[i].name, 1.0, 16000, 4800);
      g_assert_cmpint (morok_gigaam_stream_hold_delay (st), ==, cases[i].delay);
      g_clear_pointer (&st, morok_gigaam_stream_free);
      plans_clear (&p);
      fixture_clear (&f);
    }
}

/* A window shorter than twice the hold is refused, naming both. */
static void
test_window_too_short (void)
{
  Fixture f;
  Plans p;
  GError *e = NULL;
  fixture_load (&f, "gigaam-v3-e2e-ctc-tiny");
  plans_prepare (&f, &p, 1.0);
  MorokGigaAmStreamSettings settings = { 8000, 6000 };
  g_assert_null (morok_gigaam_stream_new (f.model, p.ctc, NULL, NULL, &settings, &e));
  g_assert_error (e, MOROK_JIT_ERROR, MOROK_JIT_ERROR_RUNTIME);
  g_assert_nonnull (strstr (e->message, "twice the hold"));
  g_clear_error (&e);
  plans_clear (&p);
  fixture_clear (&f);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_autofree char *path = fixture_path ("gigaam-asr-expected.json");
  GError *e = NULL;
  expected = json_parser_new ();
  g_assert_true (json_parser_load_from_file (expected, path, &e));
  g_test_add_func ("/stream-commit/agreement", test_commit_agreement);
  g_test_add_func ("/stream-commit/hold", test_commit_hold);
  g_test_add_func ("/stream-commit/settled", test_commit_settled);
  g_test_add_func ("/stream-commit/pieces", test_commit_pieces);
  g_test_add_func ("/stream-commit/edge", test_commit_edge);
  g_test_add_func ("/stream-commit/headless", test_commit_headless);
  static const char *const models[]
      = { "gigaam-v3-e2e-ctc-tiny", "gigaam-v3-e2e-rnnt-tiny", "gigaam-v2-rnnt-tiny" };
  for (guint m = 0; m < G_N_ELEMENTS (models); m++)
    {
      g_autofree char *whole = g_strdup_printf ("/gigaam-stream/whole-window/%s", models[m]);
      g_autofree char *grow = g_strdup_printf ("/gigaam-stream/growing/%s", models[m]);
      g_autofree char *by_delay
          = g_strdup_printf ("/gigaam-stream/hold-commits-by-delay/%s", models[m]);
      g_test_add_data_func (whole, models[m], test_whole_window);
      g_test_add_data_func (grow, models[m], test_growing);
      g_test_add_data_func (by_delay, models[m], test_hold_commits_by_delay);
      if (m > 0)
        {
          g_autofree char *resume = g_strdup_printf ("/gigaam-stream/rnnt-resume/%s", models[m]);
          g_autofree char *reuse
              = g_strdup_printf ("/gigaam-stream/rnnt-reuse-growing/%s", models[m]);
          g_autofree char *advance
              = g_strdup_printf ("/gigaam-stream/rnnt-advance-reuses/%s", models[m]);
          g_test_add_data_func (resume, models[m], test_rnnt_resume);
          g_test_add_data_func (reuse, models[m], test_rnnt_reuse_growing);
          g_test_add_data_func (advance, models[m], test_rnnt_advance_reuses);
        }
    }
  g_test_add_func ("/gigaam-stream/window-too-short", test_window_too_short);
  g_test_add_func ("/gigaam-stream/hold-delay", test_hold_delay);
  int rc = g_test_run ();
  g_object_unref (expected);
  return rc;
}
