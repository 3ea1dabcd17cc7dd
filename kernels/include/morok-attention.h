/* SPDX-License-Identifier: MIT */
/* Attention for generated kernels, one block of query rows at a time:
 *
 *   out[i, :] = sum_j softmax_j (scale * q[i, :] . k[j, :]) v[j, :]
 *
 * over the keys j whose mask byte is not 0 (all keys when mask is NULL).
 * The keys are taken MOROK_ATT_KB at a time with a running maximum and sum
 * per row (the scores of one block live on the stack, never the whole
 * [Tq, Tk] matrix: at 30 s of GigaAM that matrix is 36 MB per layer, and
 * storing it, then reading it back for the maximum, the exponentials, the
 * sums and the product cost more than the products). Both products go
 * through morok_gemm_f32, so any strides work; the element strides of q, k
 * and v are s*e, the row strides s*r. A row whose keys are all masked gives
 * NaN (0 / 0), as the unfused formula does.
 *
 *   // 64 query rows of one head, keys of an item with 250 valid frames
 *   morok_attention_f32 (64, 250, 48, 48, q, 768, 1, k, 768, 1, v, 768, 1, mask, 1,
 *                        0.144f, out, 48);
 */
#pragma once

#define MOROK_ATT_QB 64  /* most query rows per call */
#define MOROK_ATT_KB 256 /* keys per block */
#define MOROK_ATT_DV 256 /* most value columns (tensor/tensor-nn.c checks) */

static MOROK_VEC512 __attribute__ ((noinline, unused)) void
morok_attention_f32 (int64_t m, int64_t tk, int64_t d, int64_t dv, const float *q, int64_t sqr,
                     int64_t sqe, const float *k, int64_t skr, int64_t ske, const float *v,
                     int64_t svr, int64_t sve, const uint8_t *mask, int64_t smk, float scale,
                     float *out, int64_t sor)
{
  float s[MOROK_ATT_QB * MOROK_ATT_KB] __attribute__ ((aligned (64)));
  float acc[MOROK_ATT_QB * MOROK_ATT_DV] __attribute__ ((aligned (64)));
  float rmax[MOROK_ATT_QB], rsum[MOROK_ATT_QB];
  for (int64_t i = 0; i < m; i++)
    rmax[i] = -__builtin_inff (), rsum[i] = 0.0f;
  for (int64_t i = 0; i < m * dv; i++)
    acc[i] = 0.0f;
  for (int64_t j0 = 0; j0 < tk; j0 += MOROK_ATT_KB)
    {
      int64_t nb = morok_gemm_min (MOROK_ATT_KB, tk - j0);
      morok_gemm_f32 (m, nb, d, q, sqr, sqe, k + j0 * skr, ske, skr, s, MOROK_ATT_KB, 0);
      for (int64_t i = 0; i < m; i++)
        {
          float *row = s + i * MOROK_ATT_KB;
          int32_t top = morok_f32_key (rmax[i]);
          for (int64_t j = 0; j < nb; j++)
            {
              float x = !mask || mask[(j0 + j) * smk] ? row[j] * scale : -__builtin_inff ();
              row[j] = x;
              int32_t kx = morok_f32_key (x);
              top = kx > top ? kx : top;
            }
          float mx = morok_f32_from_key (top);
          if (mx == -__builtin_inff ()) /* no key yet: this block adds nothing */
            {
              for (int64_t j = 0; j < nb; j++)
                row[j] = 0.0f;
              continue;
            }
          /* rescale what the earlier blocks summed to the new maximum */
          float corr = morok_expf (rmax[i] - mx), sum = 0.0f;
          for (int64_t j = 0; j < nb; j++)
            {
              float p = morok_expf (row[j] - mx);
              row[j] = p;
              sum += p;
            }
          rsum[i] = rsum[i] * corr + sum;
          rmax[i] = mx;
          for (int64_t c = 0; c < dv; c++)
            acc[i * dv + c] *= corr;
        }
      morok_gemm_f32 (m, dv, nb, s, MOROK_ATT_KB, 1, v + j0 * svr, svr, sve, acc, dv, 1);
    }
  for (int64_t i = 0; i < m; i++)
    for (int64_t c = 0; c < dv; c++)
      out[i * sor + c] = acc[i * dv + c] / rsum[i];
}
