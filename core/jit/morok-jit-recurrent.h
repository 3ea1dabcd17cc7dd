/* SPDX-License-Identifier: MIT */
/* Recurrent execution: a JIT wrapper that computes one step of an LSTM,
 * with its state kept on the host between calls.
 *
 * The wrapper's output must be f32 laid out [head | h | c]: the step's
 * result (head_len values) followed by the new h and c (state->len values
 * each). Each step packs the step's inputs (a callback), copies h and c into
 * the wrapper's state inputs, executes, copies h and c back from the output
 * and returns the head. A DSL wrapper whose state inputs are named h and c
 * needs nothing more:
 *
 *   g_autoptr (MorokJitRecurrent) rec = morok_jit_recurrent_new (jit, NULL,
 *                                           morok_lstm_state_zeros (64), 1, &error);
 *   const float *prob = morok_jit_recurrent_step (rec, pack_chunk, &chunk, &error);
 *
 * Any other layout of the state (one input holding [h | c], say) gives a
 * MorokRecurrentJit with its own pack_state.
 */
#pragma once

#include "jit/morok-jit.h"

G_BEGIN_DECLS

/* ---- LSTM state ---- */

typedef struct
{
  guint layers;
  gsize hidden; /* per layer */
  gsize len;    /* layers * hidden: floats in h, and in c */
  float *h;     /* [layers, hidden], owned */
  float *c;     /* [layers, hidden], owned */
} MorokLstmState;

/* h = c = 0 for one layer of @hidden units. (transfer full) */
MorokLstmState *morok_lstm_state_zeros (gsize hidden);
/* h = c = 0, [layers, hidden] each. (transfer full) */
MorokLstmState *morok_lstm_state_zeros_layers (guint layers, gsize hidden);
void morok_lstm_state_reset (MorokLstmState *state);
/* Copies h and c into the f32 buffers @h and @c (for pack_state). Fails with
 * MOROK_JIT_ERROR_OUTPUT_LAYOUT_MISMATCH when a buffer is not f32 or not
 * state->len elements long. */
gboolean morok_lstm_state_pack (const MorokLstmState *state, MorokBuffer *h, MorokBuffer *c,
                                GError **error);
void morok_lstm_state_free (MorokLstmState *state);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (MorokLstmState, morok_lstm_state_free)

/* ---- what a wrapper provides ---- */

/* How the driver reaches a wrapper that does not follow the default layout;
 * a NULL function is the default's. */
typedef struct
{
  /* Copies state->h and state->c into the jit's state inputs (default: the
   * inputs named h and c, morok_lstm_state_pack). */
  gboolean (*pack_state) (gpointer jit, const MorokLstmState *state, GError **error);
  /* Runs one step (default: morok_jit_execute). */
  gboolean (*execute_step) (gpointer jit, GError **error);
  /* The wrapper's output (default: morok_jit_output); (transfer none),
   * valid while the jit lives. */
  const MorokBuffer *(*output_buffer) (gpointer jit, GError **error);
} MorokRecurrentJit;

/* Writes the step's own inputs (audio chunk, token...) into the jit's buffers. */
typedef gboolean (*MorokJitPackInputs) (gpointer jit, gpointer user_data, GError **error);

/* Durations of the last step's phases, in ns. */
typedef struct
{
  gint64 pack_ns;    /* pack_inputs + pack_state */
  gint64 execute_ns; /* execute_step */
  gint64 read_ns;    /* splitting the output into head, h and c */
} MorokJitStepTiming;

/* ---- the driver ---- */

typedef struct _MorokJitRecurrent MorokJitRecurrent;

/* Drives @jit (prepared; borrowed, must outlive the result) through @iface
 * (copied; NULL, or NULL members: the defaults, for which @jit is a
 * MorokJit wrapper, and without a pack_state one with inputs h and c, else
 * INPUT_BUFFER_NOT_FOUND). Takes ownership of @state, even on failure. Reads the output
 * buffer once: fails with OUTPUT_LAYOUT_MISMATCH unless it is f32 holding
 * exactly head_len + 2 * state->len values, or with the error of
 * output_buffer (e.g. NOT_PREPARED). (transfer full) */
MorokJitRecurrent *morok_jit_recurrent_new (gpointer jit, const MorokRecurrentJit *iface,
                                            MorokLstmState *state, gsize head_len,
                                            GError **error);
/* One step: pack_inputs (jit, user_data) (may be NULL: no step inputs),
 * pack_state, execute, then h and c from the output replace the state. Returns the head (head_len floats;
 * (transfer none), valid until the next step or free), or NULL with the
 * callback's error, the state unchanged. */
const float *morok_jit_recurrent_step (MorokJitRecurrent *rec, MorokJitPackInputs pack_inputs,
                                       gpointer user_data, GError **error);
/* One step of a batch of @n_rows independent rows: the head is @n_rows equal
 * parts, and each layer of h and c (state->hidden values) too, row r at
 * r * hidden / n_rows. Runs like _step, but only the rows whose @advance[r]
 * is TRUE take their new head, h and c; the others keep theirs (an RNN-T
 * predictor's rows that emitted no symbol). Returns the head of every row
 * ((transfer none), as _step), or NULL with the state unchanged. */
const float *morok_jit_recurrent_step_rows (MorokJitRecurrent *rec, MorokJitPackInputs pack_inputs,
                                            gpointer user_data, guint n_rows,
                                            const gboolean *advance, GError **error);
/* The head of the last step (zeros before the first). (transfer none)
 * valid while @rec lives. */
const float *morok_jit_recurrent_head (const MorokJitRecurrent *rec);
/* Zeroes h and c; the jit is not touched. */
void morok_jit_recurrent_reset (MorokJitRecurrent *rec);
/* (transfer none) valid while @rec lives. */
const MorokLstmState *morok_jit_recurrent_state (const MorokJitRecurrent *rec);
/* Phases of the last successful step (zeros before the first). */
MorokJitStepTiming morok_jit_recurrent_last_timing (const MorokJitRecurrent *rec);
/* Frees the state, not the jit. NULL is a no-op. */
void morok_jit_recurrent_free (MorokJitRecurrent *rec);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (MorokJitRecurrent, morok_jit_recurrent_free)

G_END_DECLS
