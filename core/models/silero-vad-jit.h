/* SPDX-License-Identifier: MIT */
/* SileroVadJit: the Silero VAD forward pass of one chunk as a JIT wrapper
 * (jit/morok-jit.h), and its recurrent driver (jit/morok-jit-recurrent.h).
 *
 * The inputs are `audio` [1, C + N] and `state` [2 * layers * hidden]
 * (models/silero-vad.h); the sample rate is the one whose C + N is the
 * audio spec's length (576 or 288 for v5/v6, 512 or 256 for v4), baked into
 * the plan at prepare. The output is [p | h' | c'] and the state input
 * [h | c], so MorokJitRecurrent with head length 1 carries the state in the
 * plan's own state buffer:
 *
 *   g_autoptr (SileroVadJit) jit = silero_vad_jit_new (vad);         // owns vad now
 *   g_autoptr (MorokInputSpec) a = morok_input_spec_f32 (MOROK_SHAPE (1, 576));
 *   g_autoptr (MorokInputSpec) s = morok_input_spec_f32 (MOROK_SHAPE (256));
 *   if (!silero_vad_jit_prepare (jit, a, s, &error)) ...
 *   g_autoptr (MorokJitRecurrent) rec = silero_vad_jit_recurrent_new (jit, &error);
 *   float *audio = silero_vad_jit_audio_mut (jit, &error)->data;      // [C context | N new]
 *   // per chunk: the N new samples into audio + C, then
 *   const float *p = morok_jit_recurrent_step (rec, &error);
 *   memmove (audio, audio + N, C * sizeof (float));  // the next chunk's context
 */
#pragma once

#include "jit/morok-jit-recurrent.h"
#include "jit/morok-jit.h"
#include "models/silero-vad.h"

G_BEGIN_DECLS

#define SILERO_VAD_JIT_INPUTS(X) X (audio) X (state)
#define SILERO_VAD_JIT_VARS(X)
MOROK_JIT_DECLARE (SileroVadJit, silero_vad_jit, MorokSileroVad, SILERO_VAD_JIT_INPUTS,
                   SILERO_VAD_JIT_VARS)

/* Many streams in one execute (models/silero-vad-batch.h drives it): audio
 * [b, C + N] and state [b, S] (each row a stream's [h | c]) give
 * [b, 1 + S], each row a stream's [p | h' | c']. The bound of b is set with
 * silero_vad_batch_jit_with_b_bound () before prepare. */
#define SILERO_VAD_BATCH_JIT_VARS(X) X (b, 1, 1)
MOROK_JIT_DECLARE (SileroVadBatchJit, silero_vad_batch_jit, MorokSileroVad, SILERO_VAD_JIT_INPUTS,
                   SILERO_VAD_BATCH_JIT_VARS)

/* The sample rate the prepared plan runs (Hz), 0 before prepare. */
guint silero_vad_jit_sample_rate (SileroVadJit *self);

/* The environment's prepare settings (morok_prepare_config_from_env) for
 * a Silero plan, with f32 where MOROK_PRECISION says int8: int8 moves
 * Silero's probabilities by up to 0.36 (docs/morokvad.md, "Precision"),
 * and the setting is the process's, meant for the encoders. (transfer full) */
MorokPrepareConfig *silero_vad_jit_config_from_env (void);

/* A recurrent driver over @jit (prepared; borrowed, must outlive the
 * result) with the model's layers and hidden size, a zero state and a head
 * of 1 (the probability). (transfer full) or NULL with the error of
 * morok_jit_recurrent_new (). */
MorokJitRecurrent *silero_vad_jit_recurrent_new (SileroVadJit *jit, GError **error);

G_END_DECLS
