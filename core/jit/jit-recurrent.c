/* SPDX-License-Identifier: MIT */
/* Recurrent execution: the step loop over a wrapper whose output is
 * [head | h | c] and whose state inputs hold the state between steps. */
#define G_LOG_DOMAIN "morok-jit"
#include "jit/morok-jit-recurrent.h"
#include <string.h>
#include <time.h>

struct _MorokJitRecurrent
{
  MorokJit *jit;       /* borrowed */
  float *h, *c;        /* the state inputs' data: [layers, hidden] each */
  MorokLstmState view; /* h and c as the host reads them */
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

/* The data of the input @name, f32 of @floats values; NULL with an error. */
static float *
state_input (MorokJit *jit, gint input, const char *name, gsize floats, guint layers, gsize hidden,
             GError **error)
{
  MorokBuffer *b = morok_jit_input_mut (jit, (guint) input, error);
  if (!b)
    return NULL;
  if (b->dtype == MOROK_DTYPE_F32 && b->bytes == floats * sizeof (float))
    return b->data;
  g_set_error (error, MOROK_JIT_ERROR, MOROK_JIT_ERROR_OUTPUT_LAYOUT_MISMATCH,
               "%s: state input '%s' is %s of %" G_GSIZE_FORMAT
               " bytes; it needs f32 of %" G_GSIZE_FORMAT " bytes (%u layers of %" G_GSIZE_FORMAT
               ")",
               morok_jit_type_name (jit), name, morok_dtype_name (b->dtype), b->bytes,
               floats * sizeof (float), layers, hidden);
  return NULL;
}

MorokJitRecurrent *
morok_jit_recurrent_new (gpointer jit, guint layers, gsize hidden, gsize head_len, GError **error)
{
  g_return_val_if_fail (jit != NULL && layers >= 1 && hidden >= 1, NULL);
  g_return_val_if_fail (hidden <= G_MAXSIZE / sizeof (float) / 2 / layers, NULL);
  const MorokBuffer *out = morok_jit_output (jit, error);
  if (!out)
    return NULL;
  gsize len = layers * hidden;
  gint hi = morok_jit_input_index (jit, "h"), ci = morok_jit_input_index (jit, "c");
  gint si = morok_jit_input_index (jit, "state");
  float *h, *c;
  if (hi >= 0 && ci >= 0)
    {
      h = state_input (jit, hi, "h", len, layers, hidden, error);
      c = h ? state_input (jit, ci, "c", len, layers, hidden, error) : NULL;
    }
  else if (si >= 0)
    {
      h = state_input (jit, si, "state", 2 * len, layers, hidden, error);
      c = h ? h + len : NULL;
    }
  else
    {
      g_set_error (error, MOROK_JIT_ERROR, MOROK_JIT_ERROR_INPUT_BUFFER_NOT_FOUND,
                   "%s: no inputs named h and c, nor one named state, for the LSTM state",
                   morok_jit_type_name (jit));
      return NULL;
    }
  if (!c)
    return NULL;
  gint64 want = (gint64) (head_len + 2 * len);
  if (out->dtype != MOROK_DTYPE_F32 || numel (out) != want)
    {
      g_set_error (error, MOROK_JIT_ERROR, MOROK_JIT_ERROR_OUTPUT_LAYOUT_MISMATCH,
                   "%s: the output holds %" G_GINT64_FORMAT
                   " %s values; [head | h | c] needs %" G_GINT64_FORMAT
                   " f32 (head %" G_GSIZE_FORMAT ", h and c %" G_GSIZE_FORMAT " each)",
                   morok_jit_type_name (jit), numel (out), morok_dtype_name (out->dtype), want,
                   head_len, len);
      return NULL;
    }
  MorokJitRecurrent *rec = g_new0 (MorokJitRecurrent, 1);
  rec->jit = jit;
  rec->h = h, rec->c = c;
  rec->view = (MorokLstmState){ layers, hidden, len, h, c };
  rec->head_len = head_len;
  rec->output = out;
  rec->head = g_new0 (float, MAX (head_len, 1));
  morok_jit_recurrent_reset (rec);
  return rec;
}

const float *
morok_jit_recurrent_step (MorokJitRecurrent *rec, GError **error)
{
  g_return_val_if_fail (rec != NULL, NULL);
  gint64 t0 = now_ns ();
  if (!morok_jit_execute (rec->jit, error))
    return NULL;
  gint64 t1 = now_ns ();
  const float *out = rec->output->data;
  gsize len = rec->view.len;
  memcpy (rec->head, out, rec->head_len * sizeof (float));
  if (rec->c == rec->h + len) /* one state input: [h | c] as in the output */
    memcpy (rec->h, out + rec->head_len, 2 * len * sizeof (float));
  else
    {
      memcpy (rec->h, out + rec->head_len, len * sizeof (float));
      memcpy (rec->c, out + rec->head_len + len, len * sizeof (float));
    }
  rec->timing = (MorokJitStepTiming){ t1 - t0, now_ns () - t1 };
  return rec->head;
}

const float *
morok_jit_recurrent_step_rows (MorokJitRecurrent *rec, guint n_rows, const gboolean *advance,
                               GError **error)
{
  g_return_val_if_fail (rec != NULL && advance != NULL && n_rows > 0, NULL);
  const MorokLstmState *s = &rec->view;
  g_return_val_if_fail (rec->head_len % n_rows == 0 && s->hidden % n_rows == 0, NULL);
  gint64 t0 = now_ns ();
  if (!morok_jit_execute (rec->jit, error))
    return NULL;
  gint64 t1 = now_ns ();
  const float *out = rec->output->data;
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
          memcpy (rec->h + at, h + at, state_row * sizeof (float));
          memcpy (rec->c + at, c + at, state_row * sizeof (float));
        }
    }
  rec->timing = (MorokJitStepTiming){ t1 - t0, now_ns () - t1 };
  return rec->head;
}

gsize
morok_jit_recurrent_row_size (const MorokJitRecurrent *rec, guint n_rows)
{
  g_return_val_if_fail (rec != NULL && n_rows > 0, 0);
  return (rec->head_len + 2 * rec->view.len) / n_rows;
}

/* Copies row @r of the head, h and c to (@save) or from @row, laid out
 * [head | h of each layer | c of each layer]. */
static void
copy_row (MorokJitRecurrent *rec, guint n_rows, guint r, float *row, gboolean save)
{
  const MorokLstmState *s = &rec->view;
  gsize head_row = rec->head_len / n_rows, state_row = s->hidden / n_rows;
  for (gsize at = 0, k = 0; k < 1 + 2 * s->layers; k++)
    {
      gsize n = k == 0 ? head_row : state_row;
      float *mine = k == 0           ? rec->head + r * head_row
                    : k <= s->layers ? rec->h + (k - 1) * s->hidden + r * state_row
                                     : rec->c + (k - 1 - s->layers) * s->hidden + r * state_row;
      if (save)
        memcpy (row + at, mine, n * sizeof (float));
      else
        memcpy (mine, row + at, n * sizeof (float));
      at += n;
    }
}

void
morok_jit_recurrent_save_row (const MorokJitRecurrent *rec, guint n_rows, guint r, float *out)
{
  g_return_if_fail (rec != NULL && n_rows > 0 && r < n_rows && out != NULL);
  copy_row ((MorokJitRecurrent *) rec, n_rows, r, out, TRUE);
}

void
morok_jit_recurrent_load_row (MorokJitRecurrent *rec, guint n_rows, guint r, const float *row)
{
  g_return_if_fail (rec != NULL && n_rows > 0 && r < n_rows && row != NULL);
  copy_row (rec, n_rows, r, (float *) row, FALSE);
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
  memset (rec->h, 0, rec->view.len * sizeof (float));
  memset (rec->c, 0, rec->view.len * sizeof (float));
  memset (rec->head, 0, MAX (rec->head_len, 1) * sizeof (float));
}

const MorokLstmState *
morok_jit_recurrent_state (const MorokJitRecurrent *rec)
{
  g_return_val_if_fail (rec != NULL, NULL);
  return &rec->view;
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
  g_free (rec->head);
  g_free (rec);
}
