/* SPDX-License-Identifier: MIT */
/* GigaAM as prepared plans: waveform in, encoder output or CTC
 * log-probabilities out, for every batch size and length within the bounds.
 *
 * Both wrappers take the same inputs and variables:
 *   wav      f32 [max_batch, max_samples + tail]: item i's row at
 *            i * (max_samples + tail), its samples and their tail
 *            (morok_gigaam_pack_wave); what lies past is ignored
 *   lengths  i64 [max_batch]: samples of each item, at most t
 *   b        batch size, 1 .. max_batch
 *   t        samples of the longest item, min_samples .. max_samples
 * (bounds from morok_gigaam_max_batch () and friends, or the _with_* setters)
 * and one plan computes the log-mel front-end, the encoder and, for
 * GigaAmCtcJit, the head:
 *   GigaAmEncoderJit  output f32 [b, d, T']   (channels first, as upstream)
 *   GigaAmCtcJit      output f32 [b, T', C]   log_softmax over the classes
 *   GigaAmRnntJit     output f32 [b, T', J]   head.joint.enc of every frame
 * with T' = morok_gigaam_encoded_frames (model, t). Item i's valid frames are
 * the first morok_gigaam_encoded_frames (model, lengths[i]): a plan has one
 * output, and the lengths are a closed form of the input, so they are
 * computed on the host.
 *
 *   g_autoptr (MorokGigaAm) model = morok_gigaam_load (path, &error);
 *   morok_gigaam_set_limits (model, 4, 20 * 16000);          // batches of 4, 20 s
 *   g_autoptr (GigaAmCtcJit) jit = gigaam_ctc_jit_new (morok_gigaam_ref (model));
 *   if (!gigaam_ctc_jit_prepare_at_bounds (jit, NULL, &error))  // compiles, once
 *     return FALSE;
 *   const float *waves[] = { a, b };
 *   const gint64 n[] = { n_a, n_b };
 *   if (!gigaam_ctc_jit_run (jit, waves, n, 2, &error))     // packs, executes
 *     return FALSE;
 *   const MorokBuffer *lp = gigaam_ctc_jit_output (jit, &error);  // [2, T', C]
 *   gint64 frames_b = morok_gigaam_encoded_frames (model, n_b);
 */
#pragma once

#include <glib.h>

#include "jit/morok-jit.h"
#include "models/gigaam.h"

G_BEGIN_DECLS

#define GIGAAM_ENCODER_JIT_INPUTS(X) X (wav) X (lengths)
#define GIGAAM_ENCODER_JIT_VARS(X)                                                                 \
  X (b, 1, morok_gigaam_max_batch (model))                                                         \
  X (t, morok_gigaam_min_samples (model), morok_gigaam_max_samples (model))

/* _new takes over one reference of the model (pass morok_gigaam_ref (m) to
 * keep yours). */
MOROK_JIT_DECLARE (GigaAmEncoderJit, gigaam_encoder_jit, MorokGigaAm, GIGAAM_ENCODER_JIT_INPUTS,
                   GIGAAM_ENCODER_JIT_VARS)
MOROK_JIT_DECLARE (GigaAmCtcJit, gigaam_ctc_jit, MorokGigaAm, GIGAAM_ENCODER_JIT_INPUTS,
                   GIGAAM_ENCODER_JIT_VARS)
/* RNN-T models: output f32 [b, T', J], the joint's encoder projection of
 * every frame (models/rnnt-decode.h decodes it). */
MOROK_JIT_DECLARE (GigaAmRnntJit, gigaam_rnnt_jit, MorokGigaAm, GIGAAM_ENCODER_JIT_INPUTS,
                   GIGAAM_ENCODER_JIT_VARS)

/* _prepare with the input specs at the variables' current upper bounds:
 * wav f32 [b max, t max + tail], lengths i64 [b max]; @config NULL: from the
 * environment (morok_prepare_config_from_env). Its precision (f16, bf16,
 * bf16x3) applies to the products with the model's weights
 * (docs/gigaam-model.md). */
gboolean gigaam_encoder_jit_prepare_at_bounds (GigaAmEncoderJit *self,
                                               const MorokPrepareConfig *config, GError **error);
gboolean gigaam_ctc_jit_prepare_at_bounds (GigaAmCtcJit *self, const MorokPrepareConfig *config,
                                           GError **error);
gboolean gigaam_rnnt_jit_prepare_at_bounds (GigaAmRnntJit *self, const MorokPrepareConfig *config,
                                            GError **error);

/* Copies @n waveforms (@n_samples[i] f32 samples each) into the inputs, each
 * with its tail (morok_gigaam_pack_wave), and executes with b = n and t = the
 * longest (at least the smallest t allowed): each item's output is the one
 * it has alone. Fails with MOROK_JIT_ERROR_RUNTIME, touching nothing,
 * if they do not fit the bounds; NOT_PREPARED before prepare. Allocates
 * nothing. */
gboolean gigaam_encoder_jit_run (GigaAmEncoderJit *self, const float *const *waves,
                                 const gint64 *n_samples, guint n, GError **error);
gboolean gigaam_ctc_jit_run (GigaAmCtcJit *self, const float *const *waves, const gint64 *n_samples,
                             guint n, GError **error);
gboolean gigaam_rnnt_jit_run (GigaAmRnntJit *self, const float *const *waves,
                              const gint64 *n_samples, guint n, GError **error);

G_END_DECLS
