/* SPDX-License-Identifier: MIT */
/* Greedy RNN-T decoding (rnnt-decode.h): the predictor and joint wrappers,
 * and the frame loop on the host. */
#define G_LOG_DOMAIN "morok-models"
#include "models/rnnt-decode.h"

#include "jit/morok-jit-recurrent.h"

#include <string.h>

static MorokTensor *
predictor_build (MorokGigaAm *model, MorokTensor *gates, MorokTensor *h, MorokTensor *c,
                 GError **error)
{
  return morok_gigaam_rnnt_predictor (model, gates, h, c, error);
}

MOROK_JIT_DEFINE (GigaAmPredictorJit, gigaam_predictor_jit, MorokGigaAm,
                  GIGAAM_PREDICTOR_JIT_INPUTS, GIGAAM_RNNT_JIT_NO_VARS, predictor_build,
                  morok_gigaam_unref)

static MorokTensor *
joint_build (MorokGigaAm *model, MorokTensor *enc, MorokTensor *pred, GError **error)
{
  return morok_gigaam_rnnt_joint (model, enc, pred, error);
}

MOROK_JIT_DEFINE (GigaAmJointJit, gigaam_joint_jit, MorokGigaAm, GIGAAM_JOINT_JIT_INPUTS,
                  GIGAAM_RNNT_JIT_NO_VARS, joint_build, morok_gigaam_unref)

struct _MorokRnntDecoder
{
  MorokGigaAm *model;
  guint rows, H, J, C, blank;
  GigaAmPredictorJit *predictor;
  GigaAmJointJit *joint;
  MorokJitRecurrent *rec; /* the predictor's state, [L, rows, H] */
  /* [C, 4H], the first layer's input term per token
   * (morok_gigaam_rnnt_input_gates): owned, or a context's, borrowed from
   * the decoder it shares the plans of */
  const float *gates;
  float *gates_owned;
  /* per row, for the run in progress */
  gboolean *active, *emitted;
  guint *symbols, *last;
  GArray **tokens; /* MorokCtcToken */
  guint64 steps, joints;
  /* live decoding, row 0: a start state, tokens from it and the state
   * after each (the last _run_from's), which _advance and the next
   * _run_from take instead of stepping through the same tokens again */
  gsize state_size;
  gboolean reuse;      /* morok_rnnt_decoder_set_reuse () */
  gboolean saved_any;  /* saved_start holds a state */
  float *saved_start;  /* [state_size] */
  float *saved_states; /* [saved_room, state_size]: after token i */
  guint *saved_ids;    /* [saved_room] */
  guint saved_len, saved_room;
  gint advanced;      /* the caller's state is saved state advanced - 1 (_advance), or -1 */
  gboolean live;      /* a _run_from in progress: */
  gboolean replaying; /* its tokens so far are the saved ones */
  guint run_at;       /* its tokens so far */
};

/* The input term of the tokens of the rows that emitted into the
 * predictor's gates input; the blank's row, "no token yet" (a zero
 * embedding), for upstream's first step and for the rows that did not emit
 * (their result is not taken). */
static gboolean
write_tokens (MorokRnntDecoder *dec, GError **error)
{
  MorokBuffer *in = gigaam_predictor_jit_gates_mut (dec->predictor, error);
  if (!in)
    return FALSE;
  gsize G = 4 * (gsize) dec->H;
  for (guint r = 0; r < dec->rows; r++)
    {
      guint k = dec->emitted[r] ? dec->last[r] : dec->blank;
      memcpy ((float *) in->data + r * G, dec->gates + k * G, G * sizeof (float));
    }
  return TRUE;
}

/* One predictor step for the rows in dec->emitted; they take the new state. */
static gboolean
predictor_step (MorokRnntDecoder *dec, GError **error)
{
  dec->steps++;
  return write_tokens (dec, error)
         && morok_jit_recurrent_step_rows (dec->rec, dec->rows, dec->emitted, error) != NULL;
}

/* A decoder of @rows rows for @model, without its plans. */
static MorokRnntDecoder *
decoder_alloc (MorokGigaAm *model, guint rows)
{
  const MorokGigaAmConfig *cfg = morok_gigaam_config (model);
  MorokRnntDecoder *dec = g_new0 (MorokRnntDecoder, 1);
  dec->model = morok_gigaam_ref (model);
  dec->rows = rows;
  dec->H = cfg->pred_hidden, dec->J = cfg->joint_hidden, dec->C = cfg->n_classes;
  dec->blank = cfg->blank_id;
  dec->active = g_new0 (gboolean, rows);
  dec->emitted = g_new0 (gboolean, rows);
  dec->symbols = g_new0 (guint, rows);
  dec->last = g_new0 (guint, rows);
  dec->tokens = g_new0 (GArray *, rows);
  for (guint r = 0; r < rows; r++)
    dec->tokens[r] = g_array_new (FALSE, FALSE, sizeof (MorokCtcToken));
  dec->reuse = TRUE;
  dec->advanced = -1;
  return dec;
}

/* The predictor's state driver over dec->predictor. */
static gboolean
decoder_open_state (MorokRnntDecoder *dec, GError **error)
{
  guint L = morok_gigaam_config (dec->model)->pred_layers;
  dec->rec = morok_jit_recurrent_new (gigaam_predictor_jit_jit (dec->predictor), L,
                                      dec->rows * dec->H, dec->rows * dec->J, error);
  if (!dec->rec)
    return FALSE;
  dec->state_size = morok_jit_recurrent_row_size (dec->rec, dec->rows);
  return TRUE;
}

MorokRnntDecoder *
morok_rnnt_decoder_new (MorokGigaAm *model, guint rows, const MorokPrepareConfig *config,
                        GError **error)
{
  g_return_val_if_fail (model != NULL && rows > 0, NULL);
  const MorokGigaAmConfig *cfg = morok_gigaam_config (model);
  if (cfg->head != MOROK_GIGAAM_HEAD_RNNT)
    {
      g_set_error (error, MOROK_JIT_ERROR, MOROK_JIT_ERROR_BUILD,
                   "%s: not an RNN-T model (model_class ctc)", morok_gigaam_path (model));
      return NULL;
    }
  g_autoptr (MorokRnntDecoder) dec = decoder_alloc (model, rows);
  if (!(dec->gates = dec->gates_owned = morok_gigaam_rnnt_input_gates (model, error)))
    return NULL;
  guint L = cfg->pred_layers;
  g_autoptr (MorokInputSpec) gates = morok_input_spec_f32 (MOROK_SHAPE (rows, 4 * dec->H));
  g_autoptr (MorokInputSpec) state = morok_input_spec_f32 (MOROK_SHAPE (L, rows, dec->H));
  g_autoptr (MorokInputSpec) jrow = morok_input_spec_f32 (MOROK_SHAPE (rows, dec->J));
  dec->predictor = gigaam_predictor_jit_new (morok_gigaam_ref (model));
  dec->joint = gigaam_joint_jit_new (morok_gigaam_ref (model));
  if (!gigaam_predictor_jit_prepare_with_config (dec->predictor, gates, state, state, config, error)
      || !gigaam_joint_jit_prepare_with_config (dec->joint, jrow, jrow, config, error)
      || !decoder_open_state (dec, error))
    return NULL;
  return g_steal_pointer (&dec);
}

MorokRnntDecoder *
morok_rnnt_decoder_new_context (MorokRnntDecoder *prepared, GError **error)
{
  g_return_val_if_fail (prepared != NULL, NULL);
  g_autoptr (MorokRnntDecoder) dec = decoder_alloc (prepared->model, prepared->rows);
  dec->gates = prepared->gates;
  if (!(dec->predictor = gigaam_predictor_jit_new_context (prepared->predictor, error))
      || !(dec->joint = gigaam_joint_jit_new_context (prepared->joint, error))
      || !decoder_open_state (dec, error))
    return NULL;
  return g_steal_pointer (&dec);
}

/* The joint of every active row's frame @t and its predictor output; the
 * best class of each active row (first of equals, as argmax) into dec->last,
 * dec->emitted set where it is not the blank. */
static gboolean
joint_step (MorokRnntDecoder *dec, const float *enc_proj, gint64 max_frames, gint64 t,
            GError **error)
{
  MorokBuffer *enc = gigaam_joint_jit_enc_mut (dec->joint, error);
  MorokBuffer *pred = enc ? gigaam_joint_jit_pred_mut (dec->joint, error) : NULL;
  if (!pred)
    return FALSE;
  const float *g = morok_jit_recurrent_head (dec->rec);
  gsize row = dec->J * sizeof (float);
  for (guint r = 0; r < dec->rows; r++)
    if (dec->active[r])
      memcpy ((float *) enc->data + r * dec->J, enc_proj + ((gsize) r * max_frames + t) * dec->J,
              row);
  memcpy (pred->data, g, dec->rows * row);
  dec->joints++;
  if (!gigaam_joint_jit_execute (dec->joint, error))
    return FALSE;
  const MorokBuffer *out = gigaam_joint_jit_output (dec->joint, error);
  if (!out)
    return FALSE;
  for (guint r = 0; r < dec->rows; r++)
    {
      dec->emitted[r] = FALSE;
      if (!dec->active[r])
        continue;
      guint best = morok_best_class ((const float *) out->data + (gsize) r * dec->C, dec->C);
      if (best == dec->blank)
        {
          dec->active[r] = FALSE;
          continue;
        }
      MorokCtcToken tok = { best, t, 1 };
      g_array_append_val (dec->tokens[r], tok);
      dec->last[r] = best;
      dec->emitted[r] = TRUE;
      if (++dec->symbols[r] == MOROK_RNNT_MAX_SYMBOLS)
        dec->active[r] = FALSE;
    }
  return TRUE;
}

/* Room for every token the rows can emit in @frames frames each (row 0
 * only with @one): no allocation per step. */
static void
reserve_tokens (MorokRnntDecoder *dec, const gint64 *frames, guint n)
{
  for (guint r = 0; r < dec->rows; r++)
    {
      g_array_set_size (dec->tokens[r], r < n ? frames[r] * MOROK_RNNT_MAX_SYMBOLS : 0);
      g_array_set_size (dec->tokens[r], 0);
    }
}

/* ---- live decoding: the states of the last run, taken again ----
 *
 * The predictor's state after a token depends on the state it started from
 * and the tokens alone, not on the frames that emitted them: a state
 * saved after the same tokens from a bit-identical start is what stepping
 * through them again would give, bit for bit. */

static float *
saved_state (MorokRnntDecoder *dec, guint i)
{
  return dec->saved_states + (gsize) i * dec->state_size;
}

/* How many saved tokens lead to @state: 0 for the saved start, the tokens
 * _advance went through for the state it left; -1 for any other state. */
static gint
saved_position (MorokRnntDecoder *dec, const float *state)
{
  gsize bytes = dec->state_size * sizeof (float);
  if (!dec->reuse || !dec->saved_any)
    return -1;
  if (memcmp (state, dec->saved_start, bytes) == 0)
    return 0;
  if (dec->advanced > 0 && memcmp (state, saved_state (dec, dec->advanced - 1), bytes) == 0)
    return dec->advanced;
  return -1;
}

/* Before a _run_from from @state that emits at most @most tokens: the
 * saved tokens start at @state (those before it dropped; none if it is
 * not among them), with room for @most. Allocates only when the room
 * grows. */
static void
saved_rebase (MorokRnntDecoder *dec, const float *state, guint most)
{
  gsize S = dec->state_size;
  gint at = saved_position (dec, state);
  if (at < 0)
    dec->saved_len = 0;
  else if (at > 0)
    {
      dec->saved_len -= (guint) at;
      memmove (dec->saved_ids, dec->saved_ids + at, dec->saved_len * sizeof (guint));
      memmove (dec->saved_states, saved_state (dec, (guint) at),
               dec->saved_len * S * sizeof (float));
    }
  dec->saved_len = MIN (dec->saved_len, most);
  if (!dec->saved_start)
    dec->saved_start = g_new (float, S);
  if (most > dec->saved_room)
    {
      dec->saved_states = g_renew (float, dec->saved_states, (gsize) most *S);
      dec->saved_ids = g_renew (guint, dec->saved_ids, most);
      dec->saved_room = most;
    }
  memcpy (dec->saved_start, state, S * sizeof (float));
  dec->saved_any = TRUE;
  dec->advanced = -1;
  dec->replaying = TRUE;
  dec->run_at = 0;
}

/* Row 0's predictor step in a _run_from (it decodes row 0 alone): while its
 * tokens are the saved ones, the saved state after this one; else a step,
 * its state saved in place of the rest. */
static gboolean
live_step (MorokRnntDecoder *dec, GError **error)
{
  guint at = dec->run_at; /* < saved_room: saved_rebase made room for every token it can emit */
  if (dec->replaying && at < dec->saved_len && dec->saved_ids[at] == dec->last[0])
    morok_jit_recurrent_load_row (dec->rec, dec->rows, 0, saved_state (dec, at));
  else
    {
      dec->replaying = FALSE;
      if (!predictor_step (dec, error))
        return FALSE;
      dec->saved_ids[at] = dec->last[0];
      morok_jit_recurrent_save_row (dec->rec, dec->rows, 0, saved_state (dec, at));
      dec->saved_len = at + 1;
    }
  dec->run_at = at + 1;
  return TRUE;
}

/* The greedy loop over frames @from .. of the first @n rows, item r ending
 * at @n_frames[r], from the predictor state the rows have now; each row has
 * emitted @emitted tokens at frame @from already. */
static gboolean
decode_frames (MorokRnntDecoder *dec, const float *enc_proj, gint64 max_frames, gint64 from,
               guint emitted, const gint64 *n_frames, guint n, GError **error)
{
  gint64 longest = 0;
  for (guint i = 0; i < n; i++)
    longest = MAX (longest, n_frames[i]);
  for (gint64 t = from; t < longest; t++)
    {
      gboolean any = FALSE;
      for (guint r = 0; r < dec->rows; r++)
        {
          dec->symbols[r] = t == from ? emitted : 0;
          dec->active[r] = r < n && t < n_frames[r] && dec->symbols[r] < MOROK_RNNT_MAX_SYMBOLS;
          any |= dec->active[r];
        }
      while (any)
        {
          if (!joint_step (dec, enc_proj, max_frames, t, error))
            return FALSE;
          any = FALSE;
          gboolean emitted = FALSE;
          for (guint r = 0; r < dec->rows; r++)
            {
              emitted |= dec->emitted[r];
              any |= dec->active[r];
            }
          if (emitted && !(dec->live ? live_step (dec, error) : predictor_step (dec, error)))
            return FALSE;
        }
    }
  return TRUE;
}

static gboolean
check_items (MorokRnntDecoder *dec, gint64 max_frames, const gint64 *n_frames, guint n,
             GError **error)
{
  gint64 longest = 0;
  for (guint i = 0; i < n; i++)
    longest = MAX (longest, n_frames[i]);
  if (n <= dec->rows && longest <= max_frames)
    return TRUE;
  g_set_error (error, MOROK_JIT_ERROR, MOROK_JIT_ERROR_RUNTIME,
               "RNN-T decoder of %u rows: %u items of up to %" G_GINT64_FORMAT
               " frames (at most %" G_GINT64_FORMAT ")",
               dec->rows, n, longest, max_frames);
  return FALSE;
}

gboolean
morok_rnnt_decoder_run (MorokRnntDecoder *dec, const float *enc_proj, gint64 max_frames,
                        const gint64 *n_frames, guint n, GError **error)
{
  g_return_val_if_fail (dec != NULL && (n == 0 || (enc_proj && n_frames)), FALSE);
  if (!check_items (dec, max_frames, n_frames, n, error))
    return FALSE;
  dec->steps = dec->joints = 0;
  reserve_tokens (dec, n_frames, n);
  for (guint r = 0; r < dec->rows; r++)
    {
      dec->emitted[r] = TRUE; /* the first step: no token yet, zero state */
      dec->last[r] = dec->blank;
    }
  morok_jit_recurrent_reset (dec->rec);
  return predictor_step (dec, error)
         && decode_frames (dec, enc_proj, max_frames, 0, 0, n_frames, n, error);
}

gsize
morok_rnnt_decoder_state_size (MorokRnntDecoder *dec)
{
  g_return_val_if_fail (dec != NULL, 0);
  return dec->state_size;
}

/* Row 0 alone takes the next predictor step. */
static void
only_first_row (MorokRnntDecoder *dec)
{
  for (guint r = 0; r < dec->rows; r++)
    dec->emitted[r] = r == 0;
}

gboolean
morok_rnnt_decoder_start_state (MorokRnntDecoder *dec, float *state, GError **error)
{
  g_return_val_if_fail (dec != NULL && state != NULL, FALSE);
  morok_jit_recurrent_reset (dec->rec);
  only_first_row (dec);
  dec->last[0] = dec->blank;
  if (!predictor_step (dec, error))
    return FALSE;
  morok_jit_recurrent_save_row (dec->rec, dec->rows, 0, state);
  return TRUE;
}

gboolean
morok_rnnt_decoder_advance (MorokRnntDecoder *dec, float *state, const MorokCtcToken *tokens,
                            guint n, GError **error)
{
  g_return_val_if_fail (dec != NULL && state != NULL && (n == 0 || tokens != NULL), FALSE);
  if (n == 0)
    return TRUE;
  gint at = saved_position (dec, state);
  guint same = 0;
  while (at >= 0 && same < n && (guint) at + same < dec->saved_len
         && dec->saved_ids[at + same] == tokens[same].id)
    same++;
  dec->advanced = -1;
  if (same > 0)
    memcpy (state, saved_state (dec, at + same - 1), dec->state_size * sizeof (float));
  if (same == n)
    {
      dec->advanced = at + (gint) same;
      return TRUE;
    }
  morok_jit_recurrent_load_row (dec->rec, dec->rows, 0, state);
  only_first_row (dec);
  for (guint i = same; i < n; i++)
    {
      dec->last[0] = tokens[i].id;
      if (!predictor_step (dec, error))
        return FALSE;
    }
  morok_jit_recurrent_save_row (dec->rec, dec->rows, 0, state);
  return TRUE;
}

gboolean
morok_rnnt_decoder_run_from (MorokRnntDecoder *dec, const float *state, const float *enc_proj,
                             gint64 max_frames, gint64 from, guint emitted, gint64 n_frames,
                             GError **error)
{
  g_return_val_if_fail (dec != NULL && state != NULL && enc_proj != NULL, FALSE);
  if (!check_items (dec, max_frames, &n_frames, 1, error))
    return FALSE;
  from = MAX (from, 0);
  dec->steps = dec->joints = 0;
  reserve_tokens (dec, &n_frames, 1);
  saved_rebase (dec, state, (guint) (MAX (n_frames - from, 0) * MOROK_RNNT_MAX_SYMBOLS));
  morok_jit_recurrent_load_row (dec->rec, dec->rows, 0, state);
  dec->live = TRUE;
  gboolean ok = decode_frames (dec, enc_proj, max_frames, from, emitted, &n_frames, 1, error);
  dec->live = FALSE;
  /* what it replayed past its last token is an earlier run's */
  dec->saved_len = MIN (dec->saved_len, dec->run_at);
  return ok;
}

void
morok_rnnt_decoder_set_reuse (MorokRnntDecoder *dec, gboolean reuse)
{
  g_return_if_fail (dec != NULL);
  dec->reuse = reuse;
}

void
morok_rnnt_decoder_forget (MorokRnntDecoder *dec)
{
  g_return_if_fail (dec != NULL);
  dec->saved_any = FALSE;
  dec->saved_len = 0;
  dec->advanced = -1;
}

const MorokCtcToken *
morok_rnnt_decoder_tokens (MorokRnntDecoder *dec, guint i, guint *out_n)
{
  g_return_val_if_fail (dec != NULL && i < dec->rows && out_n != NULL, NULL);
  *out_n = dec->tokens[i]->len;
  return (const MorokCtcToken *) dec->tokens[i]->data;
}

void
morok_rnnt_decoder_counts (MorokRnntDecoder *dec, guint64 *out_steps, guint64 *out_joints)
{
  g_return_if_fail (dec != NULL);
  if (out_steps)
    *out_steps = dec->steps;
  if (out_joints)
    *out_joints = dec->joints;
}

GigaAmPredictorJit *
morok_rnnt_decoder_predictor (MorokRnntDecoder *dec)
{
  g_return_val_if_fail (dec != NULL, NULL);
  return dec->predictor;
}

GigaAmJointJit *
morok_rnnt_decoder_joint (MorokRnntDecoder *dec)
{
  g_return_val_if_fail (dec != NULL, NULL);
  return dec->joint;
}

const float *
morok_rnnt_decoder_input_gates (MorokRnntDecoder *dec)
{
  g_return_val_if_fail (dec != NULL, NULL);
  return dec->gates;
}

void
morok_rnnt_decoder_free (MorokRnntDecoder *dec)
{
  if (!dec)
    return;
  morok_jit_recurrent_free (dec->rec);
  g_clear_pointer (&dec->predictor, gigaam_predictor_jit_free);
  g_clear_pointer (&dec->joint, gigaam_joint_jit_free);
  for (guint r = 0; r < dec->rows && dec->tokens; r++)
    g_array_unref (dec->tokens[r]);
  g_free (dec->tokens);
  g_free (dec->active);
  g_free (dec->emitted);
  g_free (dec->symbols);
  g_free (dec->last);
  g_free (dec->gates_owned);
  g_free (dec->saved_start);
  g_free (dec->saved_states);
  g_free (dec->saved_ids);
  morok_gigaam_unref (dec->model);
  g_free (dec);
}
