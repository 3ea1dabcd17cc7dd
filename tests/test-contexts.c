/* SPDX-License-Identifier: MIT */
/* Contexts of one program (runtime/morok-runtime.h): each has its own
 * buffers and variables, so several execute at once from different threads,
 * and each result is the one a single-threaded run of the same input gives.
 * Silero VAD v5 streams a different stretch of the fixture WAV per thread,
 * state carried chunk to chunk; the GigaAM v3 tiny encoder runs a different
 * utterance per thread with its own variables. The models come from
 * $MOROK_MODEL_DIR (Silero; skipped when absent) and tests/fixtures. */
#include "fixtures.h"
#include "gigaam-fixture.h"
#include "models/gigaam-encoder-jit.h"
#include "models/silero-vad-jit.h"
#include "onnx-test-util.h"
#include "prepare/morok-prepare.h"
#include "runtime/morok-program-builder.h"

#include <string.h>

#define N_THREADS 4
#define VAD_CHUNKS 60

/* ---- programs and contexts ---- */

/* A program's constants share the block reserved for them (prepare's
 * packed panels and copied weights): 64-byte aligned slices one after the
 * other, zeroed, the block starting on a huge page when it spans one; a
 * constant past the reservation gets memory of its own, as without one. */
static void
test_constants_share_reserved_block (void)
{
  const gsize two_mb = (gsize) 2 << 20;
  g_autoptr (MorokProgramBuilder) b = morok_program_builder_new (4, 0);
  /* room for three constants of 100 + 2 MB + 64 bytes, the fourth past it */
  g_assert_true (morok_program_builder_reserve_constants (b, 100 + two_mb + 64, 3));
  guint8 *c0 = morok_program_builder_buffer_constant (b, 0, 100);
  guint8 *c1 = morok_program_builder_buffer_constant (b, 1, two_mb);
  guint8 *c2 = morok_program_builder_buffer_constant (b, 2, 64);
  guint8 *c3 = morok_program_builder_buffer_constant (b, 3, two_mb / 2);
  g_assert_nonnull (c0);
  g_assert_nonnull (c3);
  g_assert_cmpuint ((guintptr) c0 % two_mb, ==, 0);
  g_assert_true (c1 == c0 + 128 && c2 == c1 + two_mb);
  g_assert_true (c3 < c0 || c3 >= c0 + two_mb + 3 * 64 + 164); /* past what was left */
  g_assert_cmpuint ((guintptr) c3 % 64, ==, 0);
  guint8 *blocks[] = { c0, c1, c2, c3 };
  const gsize sizes[] = { 100, two_mb, 64, two_mb / 2 };
  for (guint i = 0; i < G_N_ELEMENTS (blocks); i++)
    for (gsize j = 0; j < sizes[i]; j += 997)
      g_assert_cmpuint (blocks[i][j], ==, 0);
  memset (c1, 1, two_mb); /* writable, all of it */
}

/* A program outlives its plan while a context holds it, and a context
 * starts with its variables at their upper bounds and its own buffers. */
static void
test_context_holds_program (void)
{
  g_autoptr (GError) error = NULL;
  MorokGraph *g = morok_graph_new ();
  MorokSymPool *pool = morok_graph_sym_pool (g);
  MorokVariable *t = morok_variable_new (pool, "t", 1, 8);
  const MorokSym *shape[] = { morok_sym_var (t) };
  const MorokSym *full[] = { morok_sym_const (pool, 8) };
  MorokTensor *x = morok_tensor_input (g, "x", MOROK_DTYPE_F32, full, 1);
  MorokTensor *y = morok_tensor_mul_scalar (
      morok_tensor_slice (x, 0, morok_sym_const (pool, 0), shape[0], &error), 2.0, &error);
  MorokPlan *plan = morok_plan_build (g, &y, 1, &x, 1, NULL, &error);
  g_assert_no_error (error);
  MorokProgram *program = morok_plan_program (plan);
  g_assert_cmpuint (morok_program_n_vars (program), ==, 1);
  g_assert_cmpint (morok_program_var_slot (program, "t"), ==, 0);
  g_assert_cmpint (morok_program_var_slot (program, "u"), ==, -1);
  g_autoptr (MorokContext) ctx = morok_context_new (program, &error);
  g_assert_no_error (error);
  morok_plan_free (plan);

  g_assert_cmpint (morok_context_output (ctx, 0)->shape[0], ==, 8);
  float *in = morok_context_input (ctx, 0)->data;
  for (guint i = 0; i < 8; i++)
    in[i] = (float) i;
  g_assert_true (morok_context_execute (ctx, (MorokVarValue[]){ { "t", 3 } }, 1, &error));
  g_assert_no_error (error);
  const MorokBuffer *out = morok_context_output (ctx, 0);
  g_assert_cmpint (out->shape[0], ==, 3);
  for (guint i = 0; i < 3; i++)
    g_assert_cmpfloat (((const float *) out->data)[i], ==, 2.0f * i);
  g_assert_false (morok_context_set_var_values (ctx, (gint64[]){ 9 }, 1, &error));
  g_assert_error (error, MOROK_RUNTIME_ERROR, MOROK_RUNTIME_ERROR_VARIABLE);
}

/* ---- Silero VAD: a stream per thread ---- */

typedef struct
{
  MorokContext *ctx;
  const float *audio; /* this stream's samples */
  guint chunk, context;
  float probs[VAD_CHUNKS];
} VadStream;

/* Runs VAD_CHUNKS chunks through @s->ctx: window [context | chunk] into
 * the audio input, the state output back into the state input. */
static gpointer
run_vad_stream (gpointer data)
{
  VadStream *s = data;
  MorokBuffer *audio = morok_context_input (s->ctx, 0);
  MorokBuffer *state = morok_context_input (s->ctx, 1);
  memset (state->data, 0, state->bytes);
  float *window = audio->data;
  memset (window, 0, audio->bytes);
  for (guint c = 0; c < VAD_CHUNKS; c++)
    {
      memmove (window, window + s->chunk, s->context * sizeof (float));
      memcpy (window + s->context, s->audio + (gsize) c * s->chunk, s->chunk * sizeof (float));
      if (!morok_context_execute (s->ctx, NULL, 0, NULL))
        return GINT_TO_POINTER (FALSE);
      const float *out = morok_context_output (s->ctx, 0)->data; /* [p | h | c] */
      s->probs[c] = out[0];
      memcpy (state->data, out + 1, state->bytes);
    }
  return GINT_TO_POINTER (TRUE);
}

/* Silero VAD v5 prepared at 16 kHz, chunks of 512 samples after
 * *@out_context samples of context; NULL (the test skips) without the model. */
static SileroVadJit *
silero_prepared (guint *out_context)
{
  g_autofree char *path = silero_path ("v5");
  if (!path)
    return NULL;
  g_autoptr (GError) error = NULL;
  MorokSileroVad *vad = morok_silero_vad_load (path, &error);
  g_assert_no_error (error);
  SileroVadJit *jit = silero_vad_jit_new (vad);
  *out_context = morok_silero_vad_input_len (vad, 16000) - 512;
  g_autoptr (MorokInputSpec) a = morok_input_spec_f32 (MOROK_SHAPE (1, *out_context + 512));
  g_autoptr (MorokInputSpec) st
      = morok_input_spec_f32 (MOROK_SHAPE ((gint64) morok_silero_vad_state_len (vad)));
  g_assert_true (silero_vad_jit_prepare (jit, a, st, &error));
  g_assert_no_error (error);
  return jit;
}

/* Four threads, a context each, a different stretch of speech each: every
 * probability equals the one the same stream gave alone on one thread. */
static void
test_vad_streams_in_threads (void)
{
  guint chunk = 512, context;
  g_autoptr (SileroVadJit) jit = silero_prepared (&context);
  if (!jit)
    return;
  g_autoptr (GError) error = NULL;
  MorokProgram *program = morok_plan_program (morok_jit_plan (silero_vad_jit_jit (jit)));

  guint rate;
  gsize n;
  g_autofree gint16 *pcm = fixture_read_wav ("speech-16k.wav", &rate, &n);
  g_assert_cmpuint (n, >=, (N_THREADS + 1) * (gsize) VAD_CHUNKS * chunk / 2);
  g_autofree float *samples = g_new (float, n);
  for (gsize i = 0; i < n; i++)
    samples[i] = pcm[i] / 32768.0f;

  VadStream alone[N_THREADS], together[N_THREADS];
  GThread *threads[N_THREADS];
  for (guint i = 0; i < N_THREADS; i++)
    {
      /* streams overlap by half, so no two are the same */
      const float *audio = samples + (gsize) i * VAD_CHUNKS * chunk / 2;
      alone[i] = (VadStream){ .ctx = morok_context_new (program, &error),
                              .audio = audio,
                              .chunk = chunk,
                              .context = context };
      g_assert_no_error (error);
      morok_context_set_threads (alone[i].ctx, 1);
      g_assert_true (GPOINTER_TO_INT (run_vad_stream (&alone[i])));
      together[i] = (VadStream){ .ctx = morok_context_new (program, &error),
                                 .audio = audio,
                                 .chunk = chunk,
                                 .context = context };
      g_assert_no_error (error);
    }
  for (guint i = 0; i < N_THREADS; i++)
    threads[i] = g_thread_new ("vad-stream", run_vad_stream, &together[i]);
  for (guint i = 0; i < N_THREADS; i++)
    g_assert_true (GPOINTER_TO_INT (g_thread_join (threads[i])));
  for (guint i = 0; i < N_THREADS; i++)
    {
      g_assert_cmpmem (together[i].probs, sizeof together[i].probs, alone[i].probs,
                       sizeof alone[i].probs);
      if (i > 0)
        g_assert_true (memcmp (together[i].probs, together[0].probs, sizeof together[0].probs));
      morok_context_free (alone[i].ctx);
      morok_context_free (together[i].ctx);
    }
}

/* ---- Silero VAD: wrappers of one program ---- */

/* Runs VAD_CHUNKS chunks of @audio, from @first on, through @rec, whose
 * wrapper's audio input is @window: probabilities into @probs. */
static void
step_vad (MorokJitRecurrent *rec, float *window, const float *audio, guint chunk, guint context,
          guint first, guint n, float *probs)
{
  for (guint c = first; c < first + n; c++)
    {
      memmove (window, window + chunk, context * sizeof (float));
      memcpy (window + context, audio + (gsize) c * chunk, chunk * sizeof (float));
      g_autoptr (GError) error = NULL;
      const float *p = morok_jit_recurrent_step (rec, &error);
      g_assert_no_error (error);
      probs[c] = p[0];
    }
}

/* Two wrappers made by silero_vad_jit_new_context from one prepared
 * wrapper run two streams interleaved, ten chunks at a time, with the
 * prepared one running a third in between: each stream's probabilities
 * equal, bit for bit, those of the prepared wrapper running it alone. The
 * new wrappers share the program (no recompile, the same steps) and keep
 * their own buffers. */
static void
test_jit_new_context_streams (void)
{
  guint chunk = 512, context;
  g_autoptr (SileroVadJit) jit = silero_prepared (&context);
  if (!jit)
    return;
  g_autoptr (GError) error = NULL;
  g_autoptr (SileroVadJit) unprepared
      = silero_vad_jit_new (morok_silero_vad_ref (silero_vad_jit_model (jit)));
  g_assert_null (silero_vad_jit_new_context (unprepared, &error));
  g_assert_error (error, MOROK_JIT_ERROR, MOROK_JIT_ERROR_NOT_PREPARED);
  g_clear_error (&error);

  guint rate;
  gsize n;
  g_autofree gint16 *pcm = fixture_read_wav ("speech-16k.wav", &rate, &n);
  g_assert_cmpuint (n, >=, 3 * (gsize) VAD_CHUNKS * chunk);
  g_autofree float *samples = g_new (float, n);
  for (gsize i = 0; i < n; i++)
    samples[i] = pcm[i] / 32768.0f;
  const float *streams[3]
      = { samples, samples + VAD_CHUNKS * chunk, samples + 2 * VAD_CHUNKS * chunk };

  /* alone: the prepared wrapper, one stream after the other */
  float alone[3][VAD_CHUNKS];
  g_autoptr (MorokJitRecurrent) rec = silero_vad_jit_recurrent_new (jit, &error);
  g_assert_no_error (error);
  float *window = silero_vad_jit_audio_mut (jit, &error)->data;
  for (guint s = 0; s < 3; s++)
    {
      morok_jit_recurrent_reset (rec);
      memset (window, 0, (context + chunk) * sizeof (float));
      step_vad (rec, window, streams[s], chunk, context, 0, VAD_CHUNKS, alone[s]);
    }
  morok_jit_recurrent_reset (rec);
  memset (window, 0, (context + chunk) * sizeof (float));

  guint64 builds = morok_plan_build_count ();
  SileroVadJit *ctx[2];
  MorokJitRecurrent *ctx_rec[2];
  float *ctx_window[2];
  for (guint k = 0; k < 2; k++)
    {
      ctx[k] = silero_vad_jit_new_context (jit, &error);
      g_assert_no_error (error);
      ctx_rec[k] = silero_vad_jit_recurrent_new (ctx[k], &error);
      g_assert_no_error (error);
      ctx_window[k] = silero_vad_jit_audio_mut (ctx[k], &error)->data;
      g_assert_true (ctx_window[k] != window);
      g_assert_true (morok_plan_program (morok_jit_plan (silero_vad_jit_jit (ctx[k])))
                     == morok_plan_program (morok_jit_plan (silero_vad_jit_jit (jit))));
    }
  float together[3][VAD_CHUNKS];
  for (guint c = 0; c < VAD_CHUNKS; c += 10)
    {
      step_vad (ctx_rec[0], ctx_window[0], streams[0], chunk, context, c, 10, together[0]);
      step_vad (rec, window, streams[2], chunk, context, c, 10, together[2]);
      step_vad (ctx_rec[1], ctx_window[1], streams[1], chunk, context, c, 10, together[1]);
    }
  g_assert_cmpuint (morok_plan_build_count (), ==, builds);
  for (guint s = 0; s < 3; s++)
    g_assert_cmpmem (together[s], sizeof together[s], alone[s], sizeof alone[s]);
  g_assert_true (memcmp (together[0], together[1], sizeof together[0]) != 0);
  for (guint k = 0; k < 2; k++)
    {
      morok_jit_recurrent_free (ctx_rec[k]);
      silero_vad_jit_free (ctx[k]);
    }
}

/* ---- GigaAM: an utterance per thread ---- */

typedef struct
{
  MorokContext *ctx;
  const float *audio;
  gint64 n, t_min;
  float *out; /* the first item's [d, T'], copied */
  gsize bytes;
} EncoderRun;

static gpointer
run_encoder (gpointer data)
{
  EncoderRun *r = data;
  MorokBuffer *wav = morok_context_input (r->ctx, 0); /* [b, t] */
  MorokBuffer *len = morok_context_input (r->ctx, 1); /* [b] */
  memset (wav->data, 0, wav->bytes);
  memcpy (wav->data, r->audio, (gsize) r->n * sizeof (float));
  ((gint64 *) len->data)[0] = r->n;
  MorokVarValue vars[] = { { "b", 1 }, { "t", MAX (r->n, r->t_min) } };
  if (!morok_context_execute (r->ctx, vars, G_N_ELEMENTS (vars), NULL))
    return GINT_TO_POINTER (FALSE);
  const MorokBuffer *out = morok_context_output (r->ctx, 0);
  r->bytes = (gsize) (out->shape[1] * out->shape[2]) * sizeof (float);
  r->out = g_memdup2 (out->data, r->bytes);
  return GINT_TO_POINTER (TRUE);
}

/* Four threads, a context each, the utterances in turn: each encoder
 * output equals the single-threaded run of the same utterance. */
static void
test_encoder_runs_in_threads (void)
{
  g_autoptr (GError) error = NULL;
  GigaAmFixture f;
  gigaam_fixture_load (&f, "v3");
  g_autoptr (GigaAmEncoderJit) jit = gigaam_encoder_jit_new (morok_gigaam_ref (f.model));
  g_assert_true (gigaam_encoder_jit_prepare_at_bounds (jit, NULL, &error));
  g_assert_no_error (error);
  MorokJit *base = gigaam_encoder_jit_jit (jit);
  MorokProgram *program = morok_plan_program (morok_jit_plan (base));
  gint64 t_min;
  morok_jit_var_bounds (base, "t", &t_min, NULL);

  EncoderRun alone[N_THREADS], together[N_THREADS];
  GThread *threads[N_THREADS];
  for (guint i = 0; i < N_THREADS; i++)
    {
      guint u = i % GIGAAM_FIXTURE_UTTERANCES;
      alone[i] = (EncoderRun){
        .ctx = morok_context_new (program, &error), .audio = f.audio[u], .n = f.n[u], .t_min = t_min
      };
      g_assert_no_error (error);
      morok_context_set_threads (alone[i].ctx, 1);
      g_assert_true (GPOINTER_TO_INT (run_encoder (&alone[i])));
      together[i] = (EncoderRun){
        .ctx = morok_context_new (program, &error), .audio = f.audio[u], .n = f.n[u], .t_min = t_min
      };
      g_assert_no_error (error);
    }
  for (guint i = 0; i < N_THREADS; i++)
    threads[i] = g_thread_new ("encoder", run_encoder, &together[i]);
  for (guint i = 0; i < N_THREADS; i++)
    g_assert_true (GPOINTER_TO_INT (g_thread_join (threads[i])));
  for (guint i = 0; i < N_THREADS; i++)
    {
      g_assert_cmpmem (together[i].out, together[i].bytes, alone[i].out, alone[i].bytes);
      g_free (alone[i].out);
      g_free (together[i].out);
      morok_context_free (alone[i].ctx);
      morok_context_free (together[i].ctx);
    }
  gigaam_fixture_clear (&f);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/context/program/outlives-its-plan", test_context_holds_program);
  g_test_add_func ("/context/program/constants-share-reserved-block",
                   test_constants_share_reserved_block);
  g_test_add_func ("/context/execute/vad-streams-in-threads", test_vad_streams_in_threads);
  g_test_add_func ("/context/execute/encoder-runs-in-threads", test_encoder_runs_in_threads);
  g_test_add_func ("/context/jit/new-context-streams-independent", test_jit_new_context_streams);
  return g_test_run ();
}
