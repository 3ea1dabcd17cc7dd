/* SPDX-License-Identifier: MIT */
/* Live decoding of GigaAM (gigaam-stream.h). */
#define G_LOG_DOMAIN "morok-models"
#include "models/gigaam-stream.h"

#include <string.h>

struct _MorokGigaAmStream
{
  MorokGigaAm *model;
  GigaAmCtcJit *ctc; /* or: */
  GigaAmRnntJit *rnnt;
  MorokRnntDecoder *decoder;
  MorokGigaAmStreamSettings settings;
  gint64 frame;       /* samples per encoded frame */
  gint64 min_samples; /* the plan's shortest input */
  guint n_classes, blank;
  float *pad;            /* [min_samples]: a window shorter than that, padded with silence */
  MorokCtcToken *tokens; /* a window's tokens, their frames the utterance's */
  float *state;          /* RNN-T: the predictor after the last committed token */
  MorokStreamCommit *commit;
  gboolean started; /* RNN-T: state holds this utterance's start */
};

MorokGigaAmStream *
morok_gigaam_stream_new (MorokGigaAm *model, GigaAmCtcJit *ctc, GigaAmRnntJit *rnnt,
                         MorokRnntDecoder *decoder, const MorokGigaAmStreamSettings *settings,
                         GError **error)
{
  g_return_val_if_fail (model != NULL && settings != NULL && (ctc || (rnnt && decoder)), NULL);
  const MorokGigaAmConfig *cfg = morok_gigaam_config (model);
  gint64 frame = (gint64) cfg->hop_length * 4;
  if (settings->window > morok_gigaam_max_samples (model) || settings->window < 2 * settings->hold
      || settings->window < 2 * frame)
    {
      g_set_error (error, MOROK_JIT_ERROR, MOROK_JIT_ERROR_RUNTIME,
                   "a live window of %" G_GINT64_FORMAT
                   " samples: it must hold twice the hold (%" G_GINT64_FORMAT
                   ") and fit the plan (%" G_GINT64_FORMAT ")",
                   settings->window, settings->hold, morok_gigaam_max_samples (model));
      return NULL;
    }
  MorokGigaAmStream *st = g_new0 (MorokGigaAmStream, 1);
  st->model = morok_gigaam_ref (model);
  st->ctc = ctc, st->rnnt = rnnt, st->decoder = decoder;
  st->settings = *settings;
  st->frame = frame;
  st->min_samples = morok_gigaam_min_samples (model);
  st->n_classes = cfg->n_classes;
  st->blank = cfg->blank_id;
  st->pad = g_new0 (float, st->min_samples);
  gint64 frames = morok_gigaam_encoded_frames (model, MAX (settings->window, st->min_samples));
  guint max_tokens = (guint) (frames * (rnnt ? MOROK_RNNT_MAX_SYMBOLS : 1));
  st->tokens = g_new (MorokCtcToken, max_tokens);
  if (rnnt)
    st->state = g_new0 (float, morok_rnnt_decoder_state_size (decoder));
  MorokVocabulary vocab;
  morok_gigaam_vocabulary (model, &vocab);
  st->commit = morok_stream_commit_new (&vocab, rnnt != NULL, max_tokens, settings->hold / frame);
  return st;
}

void
morok_gigaam_stream_free (MorokGigaAmStream *st)
{
  if (!st)
    return;
  morok_stream_commit_free (st->commit);
  g_free (st->pad);
  g_free (st->tokens);
  g_free (st->state);
  morok_gigaam_unref (st->model);
  g_free (st);
}

void
morok_gigaam_stream_reset (MorokGigaAmStream *st)
{
  g_return_if_fail (st != NULL);
  morok_stream_commit_reset (st->commit);
  st->started = FALSE;
  /* the last utterance's states are of no use to this one, and a decode
   * timed after a reset (moroktranscriber's) is one with none to take */
  if (st->decoder)
    morok_rnnt_decoder_forget (st->decoder);
}

const MorokStreamCommit *
morok_gigaam_stream_commit (const MorokGigaAmStream *st)
{
  g_return_val_if_fail (st != NULL, NULL);
  return st->commit;
}

/* Runs the plan over @n samples of @wave and decodes frames @from .. of
 * its output into st->tokens, their frames shifted by @shift (RNN-T:
 * @emitted tokens of frame @from are decoded already); the tokens' count,
 * or -1 with @error. */
static gint64
decode_window (MorokGigaAmStream *st, const float *wave, gint64 n, gint64 from, guint emitted,
               gint64 shift, GError **error)
{
  gint64 frames = morok_gigaam_encoded_frames (st->model, n);
  guint count = 0;
  if (st->ctc)
    {
      const MorokBuffer *lp = gigaam_ctc_jit_run (st->ctc, &wave, &n, 1, error)
                                  ? gigaam_ctc_jit_output (st->ctc, error)
                                  : NULL;
      if (!lp)
        return -1;
      if (from < frames)
        count = morok_ctc_greedy_decode ((const float *) lp->data + from * st->n_classes,
                                         frames - from, st->n_classes, st->n_classes, st->blank,
                                         st->tokens);
      shift += from;
    }
  else
    {
      const MorokBuffer *proj = gigaam_rnnt_jit_run (st->rnnt, &wave, &n, 1, error)
                                    ? gigaam_rnnt_jit_output (st->rnnt, error)
                                    : NULL;
      if (!proj
          || !morok_rnnt_decoder_run_from (st->decoder, st->state, proj->data, proj->shape[1], from,
                                           emitted, frames, error))
        return -1;
      const MorokCtcToken *t = morok_rnnt_decoder_tokens (st->decoder, 0, &count);
      memcpy (st->tokens, t, count * sizeof (MorokCtcToken));
    }
  for (guint i = 0; i < count; i++)
    st->tokens[i].frame += shift;
  return count;
}

gboolean
morok_gigaam_stream_decode (MorokGigaAmStream *st, const float *samples, gint64 n, gboolean final,
                            gboolean *out_more, GError **error)
{
  g_return_val_if_fail (st != NULL && samples != NULL && out_more != NULL, FALSE);
  *out_more = FALSE;
  if (st->rnnt && !st->started)
    {
      if (!morok_rnnt_decoder_start_state (st->decoder, st->state, error))
        return FALSE;
      st->started = TRUE;
    }
  gint64 F = st->frame, window = st->settings.window;
  gint64 commit = morok_stream_commit_settled (st->commit) * F;
  gint64 start, end = n;
  if (n - commit > window - window / 4)
    {
      /* behind: a quarter window of left context, the rest of the window
       * (in step, up to hold + interval of audio is unsettled, which a
       * short window must still take in one decode) */
      start = MAX (0, commit - window / 4) / F * F;
      end = MIN (n, start + window);
    }
  else
    start = (MAX (0, n - window) + F - 1) / F * F;
  *out_more = end < n;
  gboolean last = final && end == n;
  const float *wave = samples + start;
  gint64 len = end - start;
  if (len < st->min_samples)
    {
      memset (st->pad, 0, st->min_samples * sizeof (float));
      memcpy (st->pad, wave, len * sizeof (float));
      wave = st->pad;
      len = st->min_samples;
    }
  /* from the frame after the last committed token, or the window's first */
  gint64 first = start / F, from = morok_stream_commit_frame (st->commit);
  guint emitted = from >= first ? morok_stream_commit_frame_tokens (st->commit) : 0;
  gint64 count = decode_window (st, wave, len, MAX (from, first) - first, emitted, first, error);
  if (count < 0)
    return FALSE;
  gint64 end_frame = first + morok_gigaam_encoded_frames (st->model, len);
  morok_stream_commit_update (st->commit, st->tokens, (guint) count, end_frame, last);
  if (st->rnnt)
    {
      guint k;
      const MorokCtcToken *done = morok_stream_commit_tokens (st->commit, &k);
      if (!morok_rnnt_decoder_advance (st->decoder, st->state, done, k, error))
        return FALSE;
    }
  if (!last)
    morok_stream_commit_settle (st->commit, end_frame - st->settings.hold / F);
  /* the hold commits every word that started a hold before the window's
   * end, and the rest is settled, so a window that stopped short always
   * moves the settled frame */
  if (*out_more && morok_stream_commit_settled (st->commit) * F <= commit)
    {
      g_set_error (error, MOROK_JIT_ERROR, MOROK_JIT_ERROR_RUNTIME,
                   "live decoding made no progress at frame %" G_GINT64_FORMAT,
                   morok_stream_commit_settled (st->commit));
      return FALSE;
    }
  return TRUE;
}

gint64
morok_gigaam_stream_hold_delay (const MorokGigaAmStream *st)
{
  g_return_val_if_fail (st != NULL, 0);
  /* the hold commits a word at frame f once the decode's last frame is a
   * hold past it: the fewest samples that encode frame f + hold, past f's
   * start, for an f away from the utterance's start (its padding) */
  gint64 F = st->frame, hold = st->settings.hold / F, f = 100, want = f + hold;
  gint64 n = (want - 2) * F;
  while (n > 0 && morok_gigaam_encoded_frames (st->model, n) >= want)
    n -= F;
  while (morok_gigaam_encoded_frames (st->model, n) < want)
    n++;
  return n - f * F;
}
