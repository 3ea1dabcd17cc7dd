/* SPDX-License-Identifier: MIT */
/* Recurrent execution: a JIT wrapper that computes one step of an LSTM,
 * with its state kept in the wrapper's own state inputs between steps.
 *
 * The wrapper's output must be f32 laid out [head | h | c]: the step's
 * result (head_len values) followed by the new h and c (layers * hidden
 * values each). Its state is either two inputs named h and c, or one input
 * named state holding [h | c]. A step is a plain sequence: the host writes
 * the step's own inputs (an audio chunk, a token...) into the wrapper's
 * input buffers, then morok_jit_recurrent_step () executes, copies the new
 * h and c from the output into the state inputs (the state never leaves the
 * plan's buffers: one copy a step) and returns the head:
 *
 *   g_autoptr (MorokJitRecurrent) rec = morok_jit_recurrent_new (jit, 1, 64, 1, &error);
 *   float *x = cell_jit_x_mut (jit, &error)->data;       // once: the buffer stays put
 *   for (...) { memcpy (x, chunk, sizeof chunk);
 *               const float *prob = morok_jit_recurrent_step (rec, &error); }
 *   const MorokLstmState *s = morok_jit_recurrent_state (rec);  // s->h, s->c: read them
 */
#pragma once

#include "jit/morok-jit.h"

G_BEGIN_DECLS

/* The state as it lies in the wrapper's state inputs: h and c, f32,
 * [layers, hidden] each, row-major. (transfer none) views. */
typedef struct
{
  guint layers;
  gsize hidden; /* per layer */
  gsize len;    /* layers * hidden: floats in h, and in c */
  const float *h;
  const float *c;
} MorokLstmState;

/* Durations of the last step's phases, in ns. */
typedef struct
{
  gint64 execute_ns; /* the plan */
  gint64 read_ns;    /* the new state into the state inputs, the head out */
} MorokJitStepTiming;

typedef struct _MorokJitRecurrent MorokJitRecurrent;

/* Drives @jit (a prepared MorokJit wrapper; borrowed, must outlive the
 * result) as an LSTM of @layers layers of @hidden units with a head of
 * @head_len values, from h = c = 0. Fails with NOT_PREPARED before
 * prepare; INPUT_BUFFER_NOT_FOUND when there are neither inputs h and c nor
 * one input state; OUTPUT_LAYOUT_MISMATCH when the output is not f32 of
 * exactly head_len + 2 * layers * hidden values, or a state input is not
 * f32 of its size. (transfer full) */
MorokJitRecurrent *morok_jit_recurrent_new (gpointer jit, guint layers, gsize hidden,
                                            gsize head_len, GError **error);
/* One step over the inputs the host has written: executes, the new h and c
 * replace the state, returns the head (head_len floats; (transfer none),
 * valid until the next step or free), or NULL with the plan's error, the
 * state unchanged. Allocates nothing. */
const float *morok_jit_recurrent_step (MorokJitRecurrent *rec, GError **error);
/* One step of a batch of @n_rows independent rows: the head is @n_rows equal
 * parts, and each layer of h and c (hidden values) too, row r at
 * r * hidden / n_rows. Runs like _step, but only the rows whose @advance[r]
 * is TRUE take their new head, h and c; the others keep theirs (an RNN-T
 * predictor's rows that emitted no symbol). Returns the head of every row
 * ((transfer none), as _step), or NULL with the state unchanged. */
const float *morok_jit_recurrent_step_rows (MorokJitRecurrent *rec, guint n_rows,
                                            const gboolean *advance, GError **error);
/* The head of the last step (zeros before the first). (transfer none)
 * valid while @rec lives. */
const float *morok_jit_recurrent_head (const MorokJitRecurrent *rec);
/* Floats in one row's state of a batch of @n_rows rows (as _step_rows
 * splits them): its head, then its h and c of every layer. */
gsize morok_jit_recurrent_row_size (const MorokJitRecurrent *rec, guint n_rows);
/* Copies row @r's state out to @out (row_size floats), or back in from
 * @row: a row's decoding can be paused and resumed later from there (an
 * RNN-T predictor after its last committed token). */
void morok_jit_recurrent_save_row (const MorokJitRecurrent *rec, guint n_rows, guint r, float *out);
void morok_jit_recurrent_load_row (MorokJitRecurrent *rec, guint n_rows, guint r, const float *row);
/* Zeroes h and c in the state inputs and the head. */
void morok_jit_recurrent_reset (MorokJitRecurrent *rec);
/* The current state, read in place. (transfer none) valid while @rec lives. */
const MorokLstmState *morok_jit_recurrent_state (const MorokJitRecurrent *rec);
/* Phases of the last successful step (zeros before the first). */
MorokJitStepTiming morok_jit_recurrent_last_timing (const MorokJitRecurrent *rec);
/* Frees the driver, not the jit. NULL is a no-op. */
void morok_jit_recurrent_free (MorokJitRecurrent *rec);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (MorokJitRecurrent, morok_jit_recurrent_free)

G_END_DECLS
