/* SPDX-License-Identifier: MIT */
/* Many streams, one plan: each run copies the ready streams' context,
 * chunk and state into the first n rows of the batched plan's inputs,
 * executes it with b = n and copies each row's probability and new state
 * back. */
#define G_LOG_DOMAIN "morok-models"
#include "models/silero-vad-batch.h"
#include "models/silero-vad-jit.h"
#include <string.h>

struct _MorokVadBatch
{
  SileroVadBatchJit *jit;
  guint max_streams;
  guint C, N;             /* context and chunk samples */
  gsize S;                /* state floats: [h | c] */
  float *audio;           /* the plan's input [max, C + N] */
  float *state;           /* the plan's input [max, S] */
  const MorokBuffer *out; /* [b, 1 + S] */
};

struct _MorokVadStream
{
  guint C;
  gsize S;
  float *context; /* the last C samples of the stream */
  float *state;   /* [h | c] */
};

/* The plan's inputs and output, which runs fill and read in place. */
static gboolean
batch_open_buffers (MorokVadBatch *batch, GError **error)
{
  MorokBuffer *audio = silero_vad_batch_jit_audio_mut (batch->jit, error);
  MorokBuffer *state = audio ? silero_vad_batch_jit_state_mut (batch->jit, error) : NULL;
  batch->out = state ? silero_vad_batch_jit_output (batch->jit, error) : NULL;
  if (!batch->out)
    return FALSE;
  batch->audio = audio->data;
  batch->state = state->data;
  return TRUE;
}

MorokVadBatch *
morok_vad_batch_new (MorokSileroVad *model, guint sample_rate, guint max_streams,
                     const MorokPrepareConfig *config, GError **error)
{
  g_return_val_if_fail (model != NULL && max_streams >= 1, NULL);
  g_autoptr (MorokVadBatch) batch = g_new0 (MorokVadBatch, 1);
  batch->max_streams = max_streams;
  batch->C = morok_silero_vad_context_len (model, sample_rate);
  batch->N = morok_silero_vad_chunk_len (model, sample_rate);
  batch->S = morok_silero_vad_state_len (model);
  batch->jit = silero_vad_batch_jit_with_b_bound (
      silero_vad_batch_jit_new (morok_silero_vad_ref (model)), max_streams);
  gint64 n_in = morok_silero_vad_input_len (model, sample_rate);
  g_autoptr (MorokInputSpec) a = morok_input_spec_f32 (MOROK_SHAPE (max_streams, n_in ? n_in : 1));
  g_autoptr (MorokInputSpec) s = morok_input_spec_f32 (MOROK_SHAPE (max_streams, batch->S));
  if (!silero_vad_batch_jit_prepare_with_config (batch->jit, a, s, config, error)
      || !batch_open_buffers (batch, error))
    return NULL;
  return g_steal_pointer (&batch);
}

MorokVadBatch *
morok_vad_batch_new_context (MorokVadBatch *prepared, GError **error)
{
  g_return_val_if_fail (prepared != NULL, NULL);
  g_autoptr (MorokVadBatch) batch = g_memdup2 (prepared, sizeof *prepared);
  if (!(batch->jit = silero_vad_batch_jit_new_context (prepared->jit, error))
      || !batch_open_buffers (batch, error))
    return NULL;
  return g_steal_pointer (&batch);
}

void
morok_vad_batch_free (MorokVadBatch *batch)
{
  if (!batch)
    return;
  g_clear_pointer (&batch->jit, silero_vad_batch_jit_free);
  g_free (batch);
}

guint
morok_vad_batch_max_streams (const MorokVadBatch *batch)
{
  g_return_val_if_fail (batch != NULL, 0);
  return batch->max_streams;
}

guint
morok_vad_batch_chunk_len (const MorokVadBatch *batch)
{
  g_return_val_if_fail (batch != NULL, 0);
  return batch->N;
}

MorokVadStream *
morok_vad_stream_new (const MorokVadBatch *batch)
{
  g_return_val_if_fail (batch != NULL, NULL);
  MorokVadStream *stream = g_new0 (MorokVadStream, 1);
  stream->C = batch->C;
  stream->S = batch->S;
  stream->context = g_new0 (float, MAX (batch->C, 1));
  stream->state = g_new0 (float, batch->S);
  return stream;
}

void
morok_vad_stream_reset (MorokVadStream *stream)
{
  g_return_if_fail (stream != NULL);
  memset (stream->context, 0, stream->C * sizeof (float));
  memset (stream->state, 0, stream->S * sizeof (float));
}

void
morok_vad_stream_free (MorokVadStream *stream)
{
  if (!stream)
    return;
  g_free (stream->context);
  g_free (stream->state);
  g_free (stream);
}

gboolean
morok_vad_batch_run (MorokVadBatch *batch, guint n, MorokVadStream *const *streams,
                     const float *const *chunks, float *probs, GError **error)
{
  g_return_val_if_fail (batch != NULL && (n == 0 || (streams && chunks && probs)), FALSE);
  if (n < 1 || n > batch->max_streams)
    {
      g_set_error (error, MOROK_JIT_ERROR, MOROK_JIT_ERROR_RUNTIME,
                   "MorokVadBatch: %u streams in a run, the batch takes 1 to %u", n,
                   batch->max_streams);
      return FALSE;
    }
  const guint C = batch->C, N = batch->N;
  const gsize S = batch->S;
  for (guint r = 0; r < n; r++)
    {
      g_return_val_if_fail (streams[r]->C == C && streams[r]->S == S, FALSE);
      float *row = batch->audio + (gsize) r * (C + N);
      memcpy (row, streams[r]->context, C * sizeof (float));
      memcpy (row + C, chunks[r], N * sizeof (float));
      memcpy (batch->state + r * S, streams[r]->state, S * sizeof (float));
    }
  MorokVarValue b = { "b", n };
  if (!silero_vad_batch_jit_execute_with_vars (batch->jit, &b, 1, error))
    return FALSE;
  const float *out = batch->out->data;
  for (guint r = 0; r < n; r++)
    {
      const float *row = out + r * (1 + S);
      probs[r] = row[0];
      memcpy (streams[r]->state, row + 1, S * sizeof (float));
      memcpy (streams[r]->context, chunks[r] + N - C, C * sizeof (float));
    }
  return TRUE;
}
