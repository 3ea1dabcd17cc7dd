/* SPDX-License-Identifier: MIT */
/* The Silero VAD JIT wrappers, one stream and a batch: the build function
 * picks the rate from the audio input's length and calls
 * morok_silero_vad_forward (). */
#define G_LOG_DOMAIN "morok-models"
#include "models/silero-vad-jit.h"
#include <string.h>

/* The rate whose context + chunk is @audio's length, 0 if none. */
static guint
rate_of (MorokSileroVad *model, MorokTensor *audio)
{
  guint n;
  gint64 len;
  const guint *rates = morok_silero_vad_sample_rates (model, &n);
  if (audio->rank != 2 || !morok_sym_is_const (audio->shape[1], &len))
    return 0;
  for (guint i = 0; i < n; i++)
    if (morok_silero_vad_input_len (model, rates[i]) == len)
      return rates[i];
  return 0;
}

static MorokTensor *
build (MorokSileroVad *model, MorokTensor *audio, MorokTensor *state, GError **error)
{
  guint rate = rate_of (model, audio);
  if (rate == 0)
    {
      g_autofree char *s = morok_node_shape_string (audio);
      g_set_error (error, MOROK_TENSOR_ERROR, MOROK_TENSOR_ERROR_SHAPE,
                   "audio %s is [B, C + N] of no rate: [B, %u] at 16 kHz, [B, %u] at 8 kHz", s,
                   morok_silero_vad_input_len (model, 16000),
                   morok_silero_vad_input_len (model, 8000));
      return NULL;
    }
  return morok_silero_vad_forward (model, rate, audio, state, error);
}

MOROK_JIT_DEFINE (SileroVadJit, silero_vad_jit, MorokSileroVad, SILERO_VAD_JIT_INPUTS,
                  SILERO_VAD_JIT_VARS, build, morok_silero_vad_unref)

/* The batch: the first b rows of audio [max, C + N] and state [max, S]. */
static MorokTensor *
build_batch (MorokSileroVad *model, MorokTensor *audio, MorokTensor *state, MorokVariable *b,
             GError **error)
{
  audio = morok_jit_try_shrink (audio, 0, b, error);
  state = morok_jit_try_shrink (state, 0, b, error);
  return audio && state ? build (model, audio, state, error) : NULL;
}

MOROK_JIT_DEFINE (SileroVadBatchJit, silero_vad_batch_jit, MorokSileroVad, SILERO_VAD_JIT_INPUTS,
                  SILERO_VAD_BATCH_JIT_VARS, build_batch, morok_silero_vad_unref)

MorokPrepareConfig *
silero_vad_jit_config_from_env (void)
{
  MorokPrepareConfig *config = morok_prepare_config_from_env ();
  if (morok_prepare_config_precision (config) == MOROK_PRECISION_INT8)
    {
      g_debug ("MOROK_PRECISION=int8: Silero's plans run in f32");
      morok_prepare_config_set_precision (config, MOROK_PRECISION_F32);
    }
  return config;
}

guint
silero_vad_jit_sample_rate (SileroVadJit *self)
{
  g_return_val_if_fail (self != NULL, 0);
  MorokBuffer *audio = silero_vad_jit_audio_mut (self, NULL);
  if (audio == NULL || audio->rank != 2)
    return 0;
  MorokSileroVad *model = silero_vad_jit_model (self);
  guint n;
  const guint *rates = morok_silero_vad_sample_rates (model, &n);
  for (guint i = 0; i < n; i++)
    if (morok_silero_vad_input_len (model, rates[i]) == audio->shape[1])
      return rates[i];
  return 0;
}

/* ---- recurrent ---- */

MorokJitRecurrent *
silero_vad_jit_recurrent_new (SileroVadJit *jit, GError **error)
{
  g_return_val_if_fail (jit != NULL, NULL);
  MorokSileroVad *model = silero_vad_jit_model (jit);
  return morok_jit_recurrent_new (jit, morok_silero_vad_lstm_layers (model),
                                  morok_silero_vad_lstm_hidden (model), 1, error);
}
