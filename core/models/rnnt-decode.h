/* SPDX-License-Identifier: MIT */
/* Greedy RNN-T decoding of GigaAM (upstream's rule): per encoded frame, the
 * joint of that frame and the predictor's last output picks a class; the
 * blank (the last class) moves on to the next frame, any other class is a
 * token of this frame, and the predictor takes one step with it (its state
 * advances only then); at most 10 tokens a frame. The predictor and the
 * joint are two small prepared plans (one LSTM step; one frame's joint) for
 * a fixed number of rows, the batch: every item of a batch is decoded in
 * the same loop, row by row exactly as alone, through
 * morok_jit_recurrent_step_rows (). The first LSTM layer's input term
 * depends on the token alone: the decoder makes it for every class once
 * (morok_gigaam_rnnt_input_gates) and a step copies its row, so a step
 * reads the recurrent and projection weights only. Nothing is compiled or
 * allocated per step.
 *
 *   g_autoptr (GigaAmRnntJit) enc = gigaam_rnnt_jit_new (morok_gigaam_ref (model));
 *   gigaam_rnnt_jit_prepare_at_bounds (enc, NULL, &error);
 *   g_autoptr (MorokRnntDecoder) dec = morok_rnnt_decoder_new (model, 1, NULL, &error);
 *   gigaam_rnnt_jit_run (enc, &wave, &n_samples, 1, &error);
 *   const MorokBuffer *proj = gigaam_rnnt_jit_output (enc, &error);   // [1, T', J]
 *   gint64 frames = morok_gigaam_encoded_frames (model, n_samples);
 *   if (!morok_rnnt_decoder_run (dec, proj->data, proj->shape[1], &frames, 1, &error))
 *     return FALSE;
 *   guint n;
 *   const MorokCtcToken *tokens = morok_rnnt_decoder_tokens (dec, 0, &n);  // id, frame
 */
#pragma once

#include "jit/morok-jit.h"
#include "models/ctc-decode.h"
#include "models/gigaam.h"

G_BEGIN_DECLS

/* One predictor step: gates [B, 4H] (each row the first layer's input
 * term of a token: a row of morok_rnnt_decoder_input_gates), h [L, B, H],
 * c [L, B, H] -> [joint.pred (g) [B, J] | h' | c']
 * (morok_gigaam_rnnt_predictor ()). */
#define GIGAAM_PREDICTOR_JIT_INPUTS(X) X (gates) X (h) X (c)
#define GIGAAM_RNNT_JIT_NO_VARS(X)
MOROK_JIT_DECLARE (GigaAmPredictorJit, gigaam_predictor_jit, MorokGigaAm,
                   GIGAAM_PREDICTOR_JIT_INPUTS, GIGAAM_RNNT_JIT_NO_VARS)
/* One frame's joint: enc [B, J], pred [B, J] -> log-probabilities [B, C]. */
#define GIGAAM_JOINT_JIT_INPUTS(X) X (enc) X (pred)
MOROK_JIT_DECLARE (GigaAmJointJit, gigaam_joint_jit, MorokGigaAm, GIGAAM_JOINT_JIT_INPUTS,
                   GIGAAM_RNNT_JIT_NO_VARS)

typedef struct _MorokRnntDecoder MorokRnntDecoder;

/* Prepares the predictor and the joint of @model (an RNN-T model; a
 * reference is taken) for @rows rows, the largest batch it will decode,
 * and makes the predictor's input table ([C, 4H] floats). @config NULL:
 * from the environment. (transfer full) or NULL with the prepare's error
 * (MOROK_JIT_ERROR_BUILD for a CTC model). */
MorokRnntDecoder *morok_rnnt_decoder_new (MorokGigaAm *model, guint rows,
                                          const MorokPrepareConfig *config, GError **error);
/* Another decoder running @prepared's two programs in contexts of its own
 * (morok_jit_new_context): it decodes independently of @prepared (on
 * another thread, too), reads @prepared's input table and must not outlive
 * it. (transfer full) or NULL
 * with the contexts' error. */
MorokRnntDecoder *morok_rnnt_decoder_new_context (MorokRnntDecoder *prepared, GError **error);
/* Decodes @n items: item i's frames are the first @n_frames[i] rows of J
 * floats at @enc_proj + i * @max_frames * J (GigaAmRnntJit's output). The
 * tokens replace those of the last run. Fails (MOROK_JIT_ERROR_RUNTIME)
 * when @n exceeds the rows or a length exceeds @max_frames. */
gboolean morok_rnnt_decoder_run (MorokRnntDecoder *dec, const float *enc_proj, gint64 max_frames,
                                 const gint64 *n_frames, guint n, GError **error);
/* Resuming a decode (live decoding, which decodes an utterance again as it
 * grows and keeps what it has committed): row 0's state — the predictor's
 * output, h and c after the tokens so far — is state_size floats that the
 * caller keeps. _start_state writes the state before any token (what _run
 * starts from); _advance steps it through @n tokens (@state in and out);
 * _run_from decodes frames @from .. @n_frames - 1 of one item (rows of J
 * floats at @enc_proj) from @state, @emitted tokens of frame @from already
 * out: exactly as _run goes on after the token that led to @state. Its
 * tokens (frames counted from the item's first) are item 0's.
 *
 * _run_from keeps the state after each token it emitted. _advance from the
 * state it started from (or from the state the last _advance left), through
 * tokens that begin as its did, takes those states instead of stepping; so
 * does the next _run_from from such a state while it emits the tokens the
 * last one did (the frames may differ: the state depends on the tokens
 * alone). The results are bit for bit those of stepping. Allocate nothing
 * once the tokens of the longest item have had room. */
gsize morok_rnnt_decoder_state_size (MorokRnntDecoder *dec);
gboolean morok_rnnt_decoder_start_state (MorokRnntDecoder *dec, float *state, GError **error);
gboolean morok_rnnt_decoder_advance (MorokRnntDecoder *dec, float *state,
                                     const MorokCtcToken *tokens, guint n, GError **error);
gboolean morok_rnnt_decoder_run_from (MorokRnntDecoder *dec, const float *state,
                                      const float *enc_proj, gint64 max_frames, gint64 from,
                                      guint emitted, gint64 n_frames, GError **error);
/* TRUE (the default): _advance and _run_from take the saved states where
 * they can; FALSE: they step through every token (what tests compare). */
void morok_rnnt_decoder_set_reuse (MorokRnntDecoder *dec, gboolean reuse);
/* Drops the saved states (another utterance): the next _run_from steps
 * through every token it emits. */
void morok_rnnt_decoder_forget (MorokRnntDecoder *dec);
/* Item @i's tokens of the last run, each with the frame that emitted it
 * (n_frames is 1). (transfer none) valid until the next run. */
const MorokCtcToken *morok_rnnt_decoder_tokens (MorokRnntDecoder *dec, guint i, guint *out_n);
/* Predictor steps (plan executions: a saved state taken is none) and joint
 * evaluations since the last run began (an _advance after it adds its
 * steps). */
void morok_rnnt_decoder_counts (MorokRnntDecoder *dec, guint64 *out_steps, guint64 *out_joints);
/* The two plans, for tests and profiles. (transfer none) */
GigaAmPredictorJit *morok_rnnt_decoder_predictor (MorokRnntDecoder *dec);
GigaAmJointJit *morok_rnnt_decoder_joint (MorokRnntDecoder *dec);
/* The predictor's gates input of each token, [C, 4H]
 * (morok_gigaam_rnnt_input_gates; the blank's row: no token yet).
 * (transfer none) valid while the decoder it was prepared by lives. */
const float *morok_rnnt_decoder_input_gates (MorokRnntDecoder *dec);
void morok_rnnt_decoder_free (MorokRnntDecoder *dec);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (MorokRnntDecoder, morok_rnnt_decoder_free)

G_END_DECLS
