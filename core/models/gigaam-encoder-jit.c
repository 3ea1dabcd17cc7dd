/* SPDX-License-Identifier: MIT */
/* The GigaAM wrappers: build functions from the waveform, and the host-side
 * packing of a batch of waveforms into the inputs. */
#define G_LOG_DOMAIN "morok-models"
#include "models/gigaam-encoder-jit.h"

/* wav [B, S + tail] and lengths [B] shrunk to [b, t + tail] and [b] ->
 * encoder [b, T', d] */
static MorokTensor *
encode (MorokGigaAm *model, MorokTensor *wav, MorokTensor *lengths, MorokVariable *b,
        MorokVariable *t, GError **error)
{
  MorokTensor *w = morok_jit_try_shrink (wav, 0, b, error);
  const MorokSym *width = morok_sym_add_c (morok_sym_var (t), morok_gigaam_wave_tail (model));
  w = morok_tensor_slice (w, 1, morok_sym_const (morok_graph_sym_pool (wav->graph), 0), width,
                          error);
  MorokTensor *len = morok_jit_try_shrink (lengths, 0, b, error);
  return morok_gigaam_forward (model, w, len, morok_gigaam_config (model)->n_layers, error);
}

/* -> [b, d, T'] */
static MorokTensor *
encoder_build (MorokGigaAm *model, MorokTensor *wav, MorokTensor *lengths, MorokVariable *b,
               MorokVariable *t, GError **error)
{
  return morok_tensor_transpose (encode (model, wav, lengths, b, t, error), 1, 2, error);
}

MOROK_JIT_DEFINE (GigaAmEncoderJit, gigaam_encoder_jit, MorokGigaAm, GIGAAM_ENCODER_JIT_INPUTS,
                  GIGAAM_ENCODER_JIT_VARS, encoder_build, morok_gigaam_unref)

/* -> [b, T', C] */
static MorokTensor *
ctc_build (MorokGigaAm *model, MorokTensor *wav, MorokTensor *lengths, MorokVariable *b,
           MorokVariable *t, GError **error)
{
  return morok_gigaam_ctc_log_probs (model, encode (model, wav, lengths, b, t, error), error);
}

MOROK_JIT_DEFINE (GigaAmCtcJit, gigaam_ctc_jit, MorokGigaAm, GIGAAM_ENCODER_JIT_INPUTS,
                  GIGAAM_ENCODER_JIT_VARS, ctc_build, morok_gigaam_unref)

/* -> [b, T', J] */
static MorokTensor *
rnnt_build (MorokGigaAm *model, MorokTensor *wav, MorokTensor *lengths, MorokVariable *b,
            MorokVariable *t, GError **error)
{
  return morok_gigaam_rnnt_encoder_proj (model, encode (model, wav, lengths, b, t, error), error);
}

MOROK_JIT_DEFINE (GigaAmRnntJit, gigaam_rnnt_jit, MorokGigaAm, GIGAAM_ENCODER_JIT_INPUTS,
                  GIGAAM_ENCODER_JIT_VARS, rnnt_build, morok_gigaam_unref)

/* ---- shared by the wrappers ---- */

static gboolean
prepare_at_bounds (MorokJit *jit, const MorokPrepareConfig *config, GError **error)
{
  gint64 b_min, b_max, t_min, t_max;
  g_return_val_if_fail (morok_jit_var_bounds (jit, "b", &b_min, &b_max)
                            && morok_jit_var_bounds (jit, "t", &t_min, &t_max),
                        FALSE);
  gint64 tail = morok_gigaam_wave_tail (morok_jit_model (jit));
  g_autoptr (MorokInputSpec) wav = morok_input_spec_f32 (MOROK_SHAPE (b_max, t_max + tail));
  g_autoptr (MorokInputSpec) lengths = morok_input_spec_i64 (MOROK_SHAPE (b_max));
  const MorokInputSpec *specs[] = { wav, lengths };
  if (!morok_jit_prepare (jit, specs, config, error))
    return FALSE;
  /* the packing read the weights from the file, each read mapping its
   * neighbours' pages too (whole large folios on Linux 6.18), those of
   * weights already released among them */
  morok_gigaam_drop_file_pages (morok_jit_model (jit));
  return TRUE;
}

static gboolean
run (MorokJit *jit, const float *const *waves, const gint64 *n_samples, guint n, GError **error)
{
  g_return_val_if_fail (n == 0 || (waves != NULL && n_samples != NULL), FALSE);
  MorokBuffer *wav = morok_jit_input_mut (jit, gigaam_encoder_jit__in_wav, error);
  MorokBuffer *len = wav ? morok_jit_input_mut (jit, gigaam_encoder_jit__in_lengths, error) : NULL;
  if (!len)
    return FALSE;
  MorokGigaAm *model = morok_jit_model (jit);
  gint64 b_min, b_max, t_min, t_max, longest = 0, tail = morok_gigaam_wave_tail (model);
  morok_jit_var_bounds (jit, "b", &b_min, &b_max);
  morok_jit_var_bounds (jit, "t", &t_min, &t_max);
  gboolean ok = n >= b_min && n <= b_max;
  for (guint i = 0; i < n; i++)
    {
      ok = ok && n_samples[i] >= 0 && (n_samples[i] == 0 || waves[i]);
      longest = MAX (longest, n_samples[i]);
    }
  gint64 t = MAX (longest, t_min);
  if (!ok || t > t_max || wav->rank != 2 || wav->shape[1] < t_max + tail || len->rank != 1)
    {
      g_set_error (error, MOROK_JIT_ERROR, MOROK_JIT_ERROR_RUNTIME,
                   "%s: %u waveforms of up to %" G_GINT64_FORMAT " samples do not fit the bounds"
                   " b [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT "], t [%" G_GINT64_FORMAT
                   ", %" G_GINT64_FORMAT "]",
                   morok_jit_type_name (jit), n, longest, b_min, b_max, t_min, t_max);
      return FALSE;
    }
  /* item i's row starts at i * (the maximal t + tail): its samples and
   * tail, the rest ignored by the plan */
  float *x = wav->data;
  for (guint i = 0; i < n; i++)
    {
      morok_gigaam_pack_wave (model, waves[i], n_samples[i], x + (gsize) i * (gsize) wav->shape[1]);
      if (len->dtype == MOROK_DTYPE_I32)
        ((gint32 *) len->data)[i] = (gint32) n_samples[i];
      else
        ((gint64 *) len->data)[i] = n_samples[i];
    }
  MorokVarValue vars[] = { { "b", n }, { "t", t } };
  return morok_jit_execute_with_vars (jit, vars, G_N_ELEMENTS (vars), error);
}

gboolean
gigaam_encoder_jit_prepare_at_bounds (GigaAmEncoderJit *self, const MorokPrepareConfig *config,
                                      GError **error)
{
  g_return_val_if_fail (self != NULL, FALSE);
  return prepare_at_bounds (gigaam_encoder_jit_jit (self), config, error);
}

gboolean
gigaam_ctc_jit_prepare_at_bounds (GigaAmCtcJit *self, const MorokPrepareConfig *config,
                                  GError **error)
{
  g_return_val_if_fail (self != NULL, FALSE);
  return prepare_at_bounds (gigaam_ctc_jit_jit (self), config, error);
}

gboolean
gigaam_encoder_jit_run (GigaAmEncoderJit *self, const float *const *waves, const gint64 *n_samples,
                        guint n, GError **error)
{
  g_return_val_if_fail (self != NULL, FALSE);
  return run (gigaam_encoder_jit_jit (self), waves, n_samples, n, error);
}

gboolean
gigaam_ctc_jit_run (GigaAmCtcJit *self, const float *const *waves, const gint64 *n_samples, guint n,
                    GError **error)
{
  g_return_val_if_fail (self != NULL, FALSE);
  return run (gigaam_ctc_jit_jit (self), waves, n_samples, n, error);
}

gboolean
gigaam_rnnt_jit_prepare_at_bounds (GigaAmRnntJit *self, const MorokPrepareConfig *config,
                                   GError **error)
{
  g_return_val_if_fail (self != NULL, FALSE);
  return prepare_at_bounds (gigaam_rnnt_jit_jit (self), config, error);
}

gboolean
gigaam_rnnt_jit_run (GigaAmRnntJit *self, const float *const *waves, const gint64 *n_samples,
                     guint n, GError **error)
{
  g_return_val_if_fail (self != NULL, FALSE);
  return run (gigaam_rnnt_jit_jit (self), waves, n_samples, n, error);
}
