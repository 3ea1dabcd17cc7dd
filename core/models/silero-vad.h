/* SPDX-License-Identifier: MIT */
/* Silero VAD v4, v5 and v6 from the official ONNX files, as lazy tensors.
 *
 * morok_silero_vad_load () reads an official Silero VAD ONNX file
 * (core/io/onnx-reader.h), recognises the network from the file's structure
 * (not its name) and copies the weights into f32 arrays the model owns; the
 * LSTM rows are put into PyTorch's gate order (i, f, g, o) on the way.
 * morok_silero_vad_forward () builds the graph of one chunk with the tensor
 * API: plan it once with morok_plan_build () and replay it per chunk.
 * docs/silero-models.md is the specification followed here.
 *
 *   g_autoptr (MorokSileroVad) vad = morok_silero_vad_load ("silero_vad_v5.onnx", &error);
 *   guint rate = 16000, n_in = morok_silero_vad_input_len (vad, rate);      // 64 + 512
 *   gsize n_state = morok_silero_vad_state_len (vad);                       // 2 * 1 * 128
 *   MorokGraph *g = morok_graph_new ();
 *   MorokTensor *audio = morok_tensor_input (g, "audio", MOROK_DTYPE_F32, shape_1_n_in, 2);
 *   MorokTensor *state = morok_tensor_input (g, "state", MOROK_DTYPE_F32, shape_n_state, 1);
 *   MorokTensor *out = morok_silero_vad_forward (vad, rate, audio, state, &error);
 *   MorokTensor *ins[] = { audio, state };
 *   g_autoptr (MorokPlan) plan = morok_plan_build (g, &out, 1, ins, 2, &opts, &error);
 *   // per chunk: audio <- context + chunk, state <- out[1 ..], execute, out[0] is the probability
 *
 * Layouts. `audio` is [1, C + N]: C context samples (the last C samples of
 * the previous chunk, zeros before the first) then the N new samples, PCM
 * scaled to [-1, 1). C is 64 (v5, v6 at 16 kHz), 32 (v5, v6 at 8 kHz) or 0
 * (v4); N is 512 at 16 kHz and 256 at 8 kHz. `state` is rank 1,
 * [2 * layers * hidden] = [h | c], each [layers, hidden] row-major (v5/v6:
 * 1 layer of 128, v4: 2 layers of 64; zeros at the start): the same layout
 * as MorokLstmState. The output is rank 1, f32, [1 + 2 * layers * hidden] =
 * [probability | h' | c'], h' and c' laid out exactly as in `state`, so the
 * tail of one step's output is the next step's state.
 *
 * The weights are owned by the model and used in place by every plan built
 * from its graphs: hold a reference for as long as one of those plans lives
 * (a SileroVadJit holds one).
 */
#pragma once

#include <glib.h>

#include "io/morok-io.h"
#include "tensor/morok-tensor.h"

G_BEGIN_DECLS

typedef enum
{
  MOROK_SILERO_VAD_V4,       /* the legacy network (silero_vad_legacy.onnx, v4.0) */
  MOROK_SILERO_VAD_V5,       /* the v5 network with the v5 release's weights */
  MOROK_SILERO_VAD_V6,       /* the same network with the v6 release's weights */
  MOROK_SILERO_VAD_V5_OTHER, /* the v5/v6 network with weights of neither release */
} MorokSileroVadVersion;

typedef struct _MorokSileroVad MorokSileroVad;

/* ---- loading ---- */

/* Reads an official Silero VAD ONNX file. Returns (transfer full) the model,
 * or NULL with a MOROK_IO_ERROR whose message starts with the file's name:
 * the reader's errors (OPEN, TRUNCATED, MALFORMED, UNSUPPORTED), NOT_FOUND
 * when the file is not a Silero VAD network or lacks a tensor (named), and
 * MALFORMED when a tensor has the wrong shape (named, with both shapes). */
MorokSileroVad *morok_silero_vad_load (const char *path, GError **error);

/* The model is reference-counted (atomically): one load serves the plans of
 * both sample rates, each wrapper holding a reference. (transfer full) */
MorokSileroVad *morok_silero_vad_ref (MorokSileroVad *model);
/* Drops a reference; the last frees the model and its weights. NULL is a
 * no-op. */
void morok_silero_vad_unref (MorokSileroVad *model);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (MorokSileroVad, morok_silero_vad_unref)

/* ---- what was loaded ---- */

MorokSileroVadVersion morok_silero_vad_version (const MorokSileroVad *model);
/* "v4", "v5", "v6" or "v5/v6"; static. */
const char *morok_silero_vad_version_name (MorokSileroVadVersion version);
/* The sample rates (Hz) the model has a network for ({16000, 8000} in
 * every official file); (transfer none), valid while the model lives. */
const guint *morok_silero_vad_sample_rates (const MorokSileroVad *model, guint *out_n);
gboolean morok_silero_vad_supports_rate (const MorokSileroVad *model, guint sample_rate);

/* Per-rate sizes; 0 for a rate the model does not support. */
guint morok_silero_vad_chunk_len (const MorokSileroVad *model, guint sample_rate);   /* N */
guint morok_silero_vad_context_len (const MorokSileroVad *model, guint sample_rate); /* C */
guint morok_silero_vad_input_len (const MorokSileroVad *model, guint sample_rate);   /* C + N */

/* LSTM layers and hidden units per layer (v4: 2, 64; v5/v6: 1, 128). */
guint morok_silero_vad_lstm_layers (const MorokSileroVad *model);
guint morok_silero_vad_lstm_hidden (const MorokSileroVad *model);
/* Floats in the state input: 2 * layers * hidden (h, then c). */
gsize morok_silero_vad_state_len (const MorokSileroVad *model);
/* Floats in the forward output: 1 + state_len. */
gsize morok_silero_vad_output_len (const MorokSileroVad *model);

/* ---- the network ---- */

/* One chunk at @sample_rate: @audio f32 [1, input_len], @state f32
 * [state_len] (both of one graph) -> f32 [output_len] = [p | h' | c'].
 * Fails with MOROK_TENSOR_ERROR_ARGUMENT for a rate the model lacks,
 * MOROK_TENSOR_ERROR_SHAPE / _DTYPE when the inputs do not fit, or a NULL
 * source or a set *error (chained, as every tensor op). (transfer none) */
MorokTensor *morok_silero_vad_forward (MorokSileroVad *model, guint sample_rate, MorokTensor *audio,
                                       MorokTensor *state, GError **error);

G_END_DECLS
