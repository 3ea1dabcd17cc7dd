/* SPDX-License-Identifier: MIT */
/* Recurrent execution: the LSTM state on the host, and the step loop that
 * packs it in, runs the jit and reads it back out of [head | h | c]. */
#define G_LOG_DOMAIN "morok-jit"
#include "jit/morok-jit-recurrent.h"
#include <string.h>
#include <time.h>

/* ---- LSTM state ---- */

MorokLstmState *
morok_lstm_state_zeros_layers (guint layers, gsize hidden)
{
  g_return_val_if_fail (layers >= 1 && hidden >= 1, NULL);
  g_return_val_if_fail (hidden <= G_MAXSIZE / sizeof (float) / layers, NULL);
  MorokLstmState *s = g_new0 (MorokLstmState, 1);
  s->layers = layers;
  s->hidden = hidden;
  s->len = layers * hidden;
  s->h = g_new0 (float, s->len);
  s->c = g_new0 (float, s->len);
  return s;
}

MorokLstmState *
morok_lstm_state_zeros (gsize hidden)
{
  return morok_lstm_state_zeros_layers (1, hidden);
}

void
morok_lstm_state_reset (MorokLstmState *state)
{
  g_return_if_fail (state != NULL);
  memset (state->h, 0, state->len * sizeof (float));
  memset (state->c, 0, state->len * sizeof (float));
}

static gboolean
check_state_buffer (const MorokLstmState *state, const MorokBuffer *b, const char *which,
                    GError **error)
{
  if (b->dtype == MOROK_DTYPE_F32 && b->bytes == state->len * sizeof (float))
    return TRUE;
  g_set_error (error, MOROK_JIT_ERROR, MOROK_JIT_ERROR_OUTPUT_LAYOUT_MISMATCH,
               "state input '%s' is %s of %" G_GSIZE_FORMAT " bytes; the state needs f32 of %"
               G_GSIZE_FORMAT " bytes ([%u, %" G_GSIZE_FORMAT "])",
               which, morok_dtype_name (b->dtype), b->bytes, state->len * sizeof (float),
               state->layers, state->hidden);
  return FALSE;
}

gboolean
morok_lstm_state_pack (const MorokLstmState *state, MorokBuffer *h, MorokBuffer *c,
                       GError **error)
{
  g_return_val_if_fail (state != NULL && h != NULL && c != NULL, FALSE);
  if (!check_state_buffer (state, h, "h", error) || !check_state_buffer (state, c, "c", error))
    return FALSE;
  memcpy (h->data, state->h, state->len * sizeof (float));
  memcpy (c->data, state->c, state->len * sizeof (float));
  return TRUE;
}

void
morok_lstm_state_free (MorokLstmState *state)
{
  if (!state)
    return;
  g_free (state->h);
  g_free (state->c);
  g_free (state);
}

/* ---- the driver ---- */

struct _MorokJitRecurrent
{
  gpointer jit; /* borrowed */
  MorokRecurrentJit iface;
  guint h_input, c_input;    /* the default pack_state's inputs */
  MorokLstmState *state;
  gsize head_len;
  const MorokBuffer *output; /* [head | h | c], f32; read once at _new */
  float *head;               /* head_len values of the last step */
  MorokJitStepTiming timing;
};

static gint64
now_ns (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (gint64) ts.tv_sec * G_GINT64_CONSTANT (1000000000) + ts.tv_nsec;
}

static gint64
numel (const MorokBuffer *b)
{
  gint64 n = 1;
  for (guint d = 0; d < b->rank; d++)
    n *= b->shape[d];
  return n;
}

/* ---- the defaults, for a MorokJit wrapper ---- */

static gboolean
default_execute (gpointer jit, GError **error)
{
  return morok_jit_execute (jit, error);
}

static const MorokBuffer *
default_output (gpointer jit, GError **error)
{
  return morok_jit_output (jit, error);
}

MorokJitRecurrent *
morok_jit_recurrent_new (gpointer jit, const MorokRecurrentJit *iface, MorokLstmState *state,
                         gsize head_len, GError **error)
{
  g_autoptr (MorokLstmState) owned = state;
  g_return_val_if_fail (jit != NULL && state != NULL, NULL);
  MorokRecurrentJit use = iface ? *iface : (MorokRecurrentJit){ NULL };
  use.execute_step = use.execute_step ? use.execute_step : default_execute;
  use.output_buffer = use.output_buffer ? use.output_buffer : default_output;
  gint h = -1, c = -1;
  if (!use.pack_state)
    {
      h = morok_jit_input_index (jit, "h"), c = morok_jit_input_index (jit, "c");
      if (h < 0 || c < 0)
        {
          g_set_error (error, MOROK_JIT_ERROR, MOROK_JIT_ERROR_INPUT_BUFFER_NOT_FOUND,
                       "%s: no inputs named h and c for the LSTM state; give a pack_state",
                       morok_jit_type_name (jit));
          return NULL;
        }
    }

  const MorokBuffer *out = use.output_buffer (jit, error);
  if (!out)
    return NULL;
  gint64 want = (gint64) (head_len + 2 * state->len);
  if (out->dtype != MOROK_DTYPE_F32 || numel (out) != want)
    {
      g_set_error (error, MOROK_JIT_ERROR, MOROK_JIT_ERROR_OUTPUT_LAYOUT_MISMATCH,
                   "the output holds %" G_GINT64_FORMAT " %s values; [head | h | c] needs %"
                   G_GINT64_FORMAT " f32 (head %" G_GSIZE_FORMAT ", h and c %" G_GSIZE_FORMAT
                   " each)",
                   numel (out), morok_dtype_name (out->dtype), want, head_len, state->len);
      return NULL;
    }
  MorokJitRecurrent *rec = g_new0 (MorokJitRecurrent, 1);
  rec->jit = jit;
  rec->iface = use;
  rec->h_input = (guint) MAX (h, 0), rec->c_input = (guint) MAX (c, 0);
  rec->state = g_steal_pointer (&owned);
  rec->head_len = head_len;
  rec->output = out;
  rec->head = g_new0 (float, MAX (head_len, 1));
  return rec;
}

/* The default: h and c into the inputs of those names. */
static gboolean
pack_state (MorokJitRecurrent *rec, GError **error)
{
  MorokBuffer *h = morok_jit_input_mut (rec->jit, rec->h_input, error);
  MorokBuffer *c = h ? morok_jit_input_mut (rec->jit, rec->c_input, error) : NULL;
  return c && morok_lstm_state_pack (rec->state, h, c, error);
}

/* Packs the inputs and the state, executes: the output, or NULL. */
static const float *
run_step (MorokJitRecurrent *rec, MorokJitPackInputs pack_inputs, gpointer user_data,
          GError **error)
{
  gint64 t0 = now_ns ();
  if (pack_inputs && !pack_inputs (rec->jit, user_data, error))
    return NULL;
  if (rec->iface.pack_state ? !rec->iface.pack_state (rec->jit, rec->state, error)
                             : !pack_state (rec, error))
    return NULL;
  gint64 t1 = now_ns ();
  if (!rec->iface.execute_step (rec->jit, error))
    return NULL;
  rec->timing = (MorokJitStepTiming){ t1 - t0, now_ns () - t1, 0 };
  return rec->output->data; /* [head | h | c] */
}

const float *
morok_jit_recurrent_step (MorokJitRecurrent *rec, MorokJitPackInputs pack_inputs,
                          gpointer user_data, GError **error)
{
  g_return_val_if_fail (rec != NULL, NULL);
  const float *out = run_step (rec, pack_inputs, user_data, error);
  if (!out)
    return NULL;
  gint64 t0 = now_ns ();
  gsize len = rec->state->len;
  memcpy (rec->head, out, rec->head_len * sizeof (float));
  memcpy (rec->state->h, out + rec->head_len, len * sizeof (float));
  memcpy (rec->state->c, out + rec->head_len + len, len * sizeof (float));
  rec->timing.read_ns = now_ns () - t0;
  return rec->head;
}

const float *
morok_jit_recurrent_step_rows (MorokJitRecurrent *rec, MorokJitPackInputs pack_inputs,
                               gpointer user_data, guint n_rows, const gboolean *advance,
                               GError **error)
{
  g_return_val_if_fail (rec != NULL && advance != NULL && n_rows > 0, NULL);
  const MorokLstmState *s = rec->state;
  g_return_val_if_fail (rec->head_len % n_rows == 0 && s->hidden % n_rows == 0, NULL);
  const float *out = run_step (rec, pack_inputs, user_data, error);
  if (!out)
    return NULL;
  gint64 t0 = now_ns ();
  gsize head_row = rec->head_len / n_rows, state_row = s->hidden / n_rows;
  const float *h = out + rec->head_len, *c = h + s->len;
  for (guint r = 0; r < n_rows; r++)
    {
      if (!advance[r])
        continue;
      memcpy (rec->head + r * head_row, out + r * head_row, head_row * sizeof (float));
      for (guint l = 0; l < s->layers; l++)
        {
          gsize at = l * s->hidden + r * state_row;
          memcpy (s->h + at, h + at, state_row * sizeof (float));
          memcpy (s->c + at, c + at, state_row * sizeof (float));
        }
    }
  rec->timing.read_ns = now_ns () - t0;
  return rec->head;
}

const float *
morok_jit_recurrent_head (const MorokJitRecurrent *rec)
{
  g_return_val_if_fail (rec != NULL, NULL);
  return rec->head;
}

void
morok_jit_recurrent_reset (MorokJitRecurrent *rec)
{
  g_return_if_fail (rec != NULL);
  morok_lstm_state_reset (rec->state);
}

const MorokLstmState *
morok_jit_recurrent_state (const MorokJitRecurrent *rec)
{
  g_return_val_if_fail (rec != NULL, NULL);
  return rec->state;
}

MorokJitStepTiming
morok_jit_recurrent_last_timing (const MorokJitRecurrent *rec)
{
  g_return_val_if_fail (rec != NULL, (MorokJitStepTiming){ 0 });
  return rec->timing;
}

void
morok_jit_recurrent_free (MorokJitRecurrent *rec)
{
  if (!rec)
    return;
  morok_lstm_state_free (rec->state);
  g_free (rec->head);
  g_free (rec);
}
