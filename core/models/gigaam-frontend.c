/* SPDX-License-Identifier: MIT */
/* The GigaAM log-mel front-end as tensor operations, so that one plan goes
 * from the waveform to the log-probabilities:
 *
 *   x      = wav, zero past each item's length + tail    [b, t + tail]
 *   x      = reflect-pad by n_fft / 2 on the left        (centred frames, v2)
 *   frames = window (x, n_fft, hop)                      [b, T, n_fft]  a view
 *   spec   = frames · dft                                [b, T, 2Q]     re | im
 *   mel    = spec² · [fb; fb]                            [b, T, F]
 *   feat   = ln (clamp (mel, lo, hi))
 *
 * The DFT is a matmul with a basis that has the window folded in (made at
 * load, gigaam.c). For the encoder the features come with the
 * subsampling's zero padding made here, by padding mel with ones (whose log
 * is exactly 0): the padded features are then a computed node, stored
 * once, whose windows the first convolution reads in place.
 *
 * Accuracy. A quiet bin next to loud ones (a low band between harmonics)
 * is a sum of n_fft products that cancels to 1e-3 of its terms, and f32
 * accumulation then leaves errors of 2e-3 in its log power (measured on the
 * v2 fixture; PyTorch's f32 FFT: 3e-4). So the DFT is split so that its big
 * part is exact: x = x1 + x2 with x1 = trunc (128 x) / 128 (8 bits when
 * |x| <= 1) and dft = dft_hi + dft_lo with dft_hi a multiple of 2^-7; every
 * product x1 · dft_hi is a multiple of 2^-14 below 1 in magnitude, so their
 * sum over up to 1024 taps is exact in f32, whatever the order. The rest,
 * x1 · dft_lo + x2 · dft, is 128 times smaller and so are its rounding
 * errors. Three matmuls instead of one; the fixtures' features are then
 * within 2.4e-5 of the float64 reference. For the same reason they stay
 * f32 in every precision (morok_tensor_matmul_exact). */
#define G_LOG_DOMAIN "morok-models"
#include "models/gigaam-private.h"

#include <string.h>

static gboolean
check_inputs (MorokGigaAm *m, MorokTensor *wav, MorokTensor *lengths, GError **error)
{
  if (wav->rank == 2 && wav->dtype == MOROK_DTYPE_F32 && lengths->rank == 1
      && !morok_dtype_is_float (lengths->dtype) && lengths->dtype != MOROK_DTYPE_BOOL
      && lengths->shape[0] == wav->shape[0])
    return TRUE;
  g_autofree char *sw = morok_node_shape_string (wav);
  g_autofree char *sl = morok_node_shape_string (lengths);
  g_set_error (error, MOROK_TENSOR_ERROR, MOROK_TENSOR_ERROR_SHAPE,
               "%s: features: expected wav f32 [b, t] and integer lengths [b], got %s %s and %s %s",
               m->file, morok_dtype_name (wav->dtype), sw, morok_dtype_name (lengths->dtype), sl);
  return FALSE;
}

/* [b, t + tail] -> [b, T, n_fft] frames. Centred frames reflect at both
 * ends; at the right end, each item at its own: the host wrote that
 * reflection after its samples (morok_gigaam_pack_wave), as a length is a
 * per-row value and a plan has no gather. The left end is the same for
 * every row, a reflect padding here. */
static MorokTensor *
frames (MorokGigaAm *m, MorokTensor *x, GError **error)
{
  const MorokGigaAmConfig *c = &m->config;
  if (c->center)
    {
      gint64 half = c->n_fft / 2;
      x = morok_tensor_pad_reflect (x, (gint64[]){ 0, half }, (gint64[]){ 0, 0 }, error);
    }
  return morok_tensor_window (x, 1, c->n_fft, c->hop_length, 1, error);
}

MorokTensor *
gigaam_log_mel (MorokGigaAm *model, MorokTensor *wav, MorokTensor *lengths, gint64 pad_t,
                gint64 pad_f, GError **error)
{
  if ((error && *error) || !wav || !lengths || !check_inputs (model, wav, lengths, error))
    return NULL;
  const MorokGigaAmConfig *c = &model->config;
  MorokGraph *g = wav->graph;
  MorokSymPool *pool = morok_graph_sym_pool (g);
  const MorokSym *b = wav->shape[0], *t = wav->shape[1];
  if (morok_sym_hi (t) >= (1 << 24))
    {
      g_set_error (error, MOROK_TENSOR_ERROR, MOROK_TENSOR_ERROR_SHAPE,
                   "%s: features: at most 2^24 samples per call", model->file);
      return NULL;
    }

  /* zero past each length and tail: positions [1, t] < lengths [b, 1] +
   * tail, as f32 (exact below 2^24), from a table as long as t can be */
  gint64 t_max = morok_sym_hi (t);
  gboolean fill;
  float *pos = gigaam_table (model, "positions", (gsize) t_max, &fill);
  for (gint64 i = 0; fill && i < t_max; i++)
    pos[i] = (float) i;
  MorokTensor *p
      = morok_tensor_weight (g, "gigaam.positions", MOROK_DTYPE_F32, pos, (gint64[]){ t_max }, 1);
  const MorokSym *one = morok_sym_const (pool, 1);
  p = morok_tensor_reshape (morok_tensor_slice (p, 0, morok_sym_const (pool, 0), t, error),
                            (const MorokSym *[]){ one, t }, 2, error);
  MorokTensor *len = morok_tensor_add_scalar (morok_tensor_cast (lengths, MOROK_DTYPE_F32, error),
                                              (double) morok_gigaam_wave_tail (model), error);
  len = morok_tensor_reshape (len, (const MorokSym *[]){ b, one }, 2, error);
  MorokTensor *x = morok_tensor_where (morok_tensor_lt (p, len, error), wav,
                                       morok_tensor_scalar_like (wav, 0.0), error);
  /* x = x1 + x2 with x1 = trunc (128 x) / 128: the DFT as x1 · dft_hi +
   * (x1 · dft_lo + x2 · dft) (see the top of this file) */
  MorokTensor *x1 = morok_tensor_cast (
      morok_tensor_cast (morok_tensor_mul_scalar (x, 128.0, error), MOROK_DTYPE_I32, error),
      MOROK_DTYPE_F32, error);
  x1 = morok_tensor_mul_scalar (x1, 1.0 / 128.0, error);
  MorokTensor *x2 = morok_tensor_sub (x, x1, error);
  MorokTensor *f1 = frames (model, x1, error), *f2 = frames (model, x2, error);
  gint64 q2 = 2 * (c->n_fft / 2 + 1);
  const gint64 dims[] = { c->n_fft, q2 };
  MorokTensor *hi
      = morok_tensor_weight (g, "gigaam.dft_hi", MOROK_DTYPE_F32, model->dft_hi, dims, 2);
  MorokTensor *lo
      = morok_tensor_weight (g, "gigaam.dft_lo", MOROK_DTYPE_F32, model->dft_lo, dims, 2);
  MorokTensor *dft = morok_tensor_weight (g, "gigaam.dft", MOROK_DTYPE_F32, model->dft, dims, 2);
  MorokTensor *small = morok_tensor_add (morok_tensor_matmul_exact (f2, dft, error),
                                         morok_tensor_matmul_exact (f1, lo, error), error);
  MorokTensor *spec = morok_tensor_add (small, morok_tensor_matmul_exact (f1, hi, error), error);

  /* (re | im)² · [fb; fb], padded with ones (whose log is exactly 0), clamped, log */
  MorokTensor *fb = morok_tensor_weight (g, "gigaam.mel_fb2", MOROK_DTYPE_F32, model->mel_fb2,
                                         (gint64[]){ q2, c->n_mels }, 2);
  MorokTensor *mel = morok_tensor_matmul_exact (morok_tensor_mul (spec, spec, error), fb, error);
  mel = morok_tensor_pad (mel, (gint64[]){ 0, pad_t, pad_f }, (gint64[]){ 0, pad_t, pad_f }, 1.0,
                          error);
  mel = morok_tensor_maximum (mel, morok_tensor_scalar_like (wav, c->log_clamp[0]), error);
  mel = morok_tensor_minimum (mel, morok_tensor_scalar_like (wav, c->log_clamp[1]), error);
  MorokTensor *feat = morok_tensor_log (mel, error);
  if (!feat)
    g_prefix_error (error, "%s: features: ", model->file);
  return feat;
}

MorokTensor *
morok_gigaam_features (MorokGigaAm *model, MorokTensor *wav, MorokTensor *lengths, GError **error)
{
  g_return_val_if_fail (model != NULL, NULL);
  return gigaam_log_mel (model, wav, lengths, 0, 0, error);
}

gint64
morok_gigaam_wave_tail (const MorokGigaAm *model)
{
  g_return_val_if_fail (model != NULL, 0);
  return model->config.center ? model->config.n_fft / 2 : 0;
}

void
morok_gigaam_pack_wave (const MorokGigaAm *model, const float *wave, gint64 n, float *row)
{
  g_return_if_fail (model != NULL && n >= 0 && (n == 0 || wave != NULL) && row != NULL);
  if (n)
    memcpy (row, wave, sizeof (float) * (gsize) n);
  /* torch's reflect padding: the samples before the last, mirrored */
  gint64 tail = morok_gigaam_wave_tail (model);
  for (gint64 j = 0; j < tail; j++)
    row[n + j] = n - 2 - j >= 0 ? wave[n - 2 - j] : 0.0f;
}
