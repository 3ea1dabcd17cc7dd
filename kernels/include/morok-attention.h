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
 * NaN (0 / 0), as the unfused formula does. A function of the kernel
 * library (MOROK_KERNEL_FN, morok-prelude.h): units that define
 * MOROK_KERNEL_LIB call libmorok's copy instead of compiling it (most of
 * the clang time of GigaAM's units).
 *
 *   // 64 query rows of one head, keys of an item with 250 valid frames
 *   morok_attention_f32 (64, 250, 48, 48, q, 768, 1, k, 768, 1, v, 768, 1, mask, 1,
 *                        0.144f, out, 48);
 */
#pragma once

#define MOROK_ATT_QB 64  /* most query rows per call */
#define MOROK_ATT_KB 256 /* keys per block */
#define MOROK_ATT_DV 256 /* most value columns (tensor/tensor-nn.c checks) */

/* Both products are computed transposed, with the query rows as the GEMM's
 * columns: the scores as sT = k q^T [keys, queries] and the output as
 * accT += v^T sT [values, queries]. Their M (keys, value columns: 256, 48)
 * then fills the micro-kernel's row tiles and their N (64 queries) its
 * panels, where q k^T and p v left a third of a tile or a quarter of a
 * panel idle, and the
 * softmax runs down the keys with one vector lane per query.
 *
 * Where a panel is MOROK_ATT_QB columns wide (AVX-512) and d fits one k
 * block, the GEMM's blocks run on them directly (morok_gemm_block): q^T is
 * packed once a call, not once a key block, sT is already one B panel
 * (rows of QB floats), and the rows of k and the columns of v are read in
 * place (with one panel of B, the block reads column-major A so): packing
 * sT and v^T for each block took a sixth of the kernel's time. */
#if MOROK_GEMM_NR == MOROK_ATT_QB && MOROK_GEMM_VL > 1
#define MOROK_ATT_TILES 1
#endif

/* the exponential of a vector of the GEMM's width */
#if MOROK_GEMM_VL == 16
#define MOROK_ATT_EXP morok_exp_f32x16
#elif MOROK_GEMM_VL == 8
#define MOROK_ATT_EXP morok_exp_f32x8
#else
#define MOROK_ATT_EXP morok_expf
#endif

MOROK_KERNEL_FN MOROK_VEC512 __attribute__ ((noinline)) void
morok_attention_f32 (int64_t m, int64_t tk, int64_t d, int64_t dv, const float *q, int64_t sqr,
                     int64_t sqe, const float *k, int64_t skr, int64_t ske, const float *v,
                     int64_t svr, int64_t sve, const uint8_t *mask, int64_t smk, float scale,
                     float *out, int64_t sor)
#if defined(MOROK_KERNEL_LIB)
    ;
#else
{
  float st[MOROK_ATT_KB * MOROK_ATT_QB] __attribute__ ((aligned (64)));
  float acct[MOROK_ATT_DV * MOROK_ATT_QB] __attribute__ ((aligned (64)));
  float rmax[MOROK_ATT_QB] __attribute__ ((aligned (64)));
  float rsum[MOROK_ATT_QB] __attribute__ ((aligned (64)));
  float mx[MOROK_ATT_QB] __attribute__ ((aligned (64)));
  float corr[MOROK_ATT_QB] __attribute__ ((aligned (64)));
  for (int64_t i = 0; i < MOROK_ATT_QB; i++)
    rmax[i] = -__builtin_inff (), rsum[i] = 0.0f;
  for (int64_t i = 0; i < dv * MOROK_ATT_QB; i++)
    acct[i] = 0.0f;
#if defined(MOROK_ATT_TILES)
  float qt[MOROK_GEMM_KC * MOROK_ATT_QB] __attribute__ ((aligned (64)));
  int tiles = d <= MOROK_GEMM_KC;
  if (tiles) /* q^T as one panel, zero columns past m */
    morok_gemm_pack_b (d, m, q, sqe, sqr, qt);
#else
  const int tiles = 0;
#endif
  /* the lanes of queries past m are computed too, from zeros, and dropped */
  if (m < MOROK_ATT_QB && !tiles)
    for (int64_t i = 0; i < MOROK_ATT_KB * MOROK_ATT_QB; i++)
      st[i] = 0.0f;
  for (int64_t j0 = 0; j0 < tk; j0 += MOROK_ATT_KB)
    {
      int64_t nb = morok_gemm_min (MOROK_ATT_KB, tk - j0);
#if defined(MOROK_ATT_TILES)
      if (tiles)
        morok_gemm_block (nb, MOROK_ATT_QB, d, k + j0 * skr, skr, ske, qt, 0, st, MOROK_ATT_QB, 0,
                          (MorokGemmPrefetch){ 0 });
      else
#endif
        morok_gemm_f32 (nb, m, d, k + j0 * skr, skr, ske, q, sqe, sqr, st, MOROK_ATT_QB, 0);
      /* the running maximum of the scaled scores, a lane per query (the
       * scores stay unscaled: the exponentials' pass scales them) */
      for (int64_t i = 0; i < MOROK_ATT_QB; i++)
        mx[i] = rmax[i];
      for (int64_t j = 0; j < nb; j++)
        {
          const float *row = st + j * MOROK_ATT_QB;
          if (mask && !mask[(j0 + j) * smk])
            continue;
          for (int64_t i = 0; i < MOROK_ATT_QB; i++)
            {
              float x = row[i] * scale;
              mx[i] = x > mx[i] ? x : mx[i];
            }
        }
      /* a query with no key yet (mx = -inf) adds nothing: exp (-inf - 0) */
      for (int64_t i = 0; i < MOROK_ATT_QB; i++)
        {
          int none = mx[i] == -__builtin_inff ();
          corr[i] = none ? 1.0f : morok_expf (rmax[i] - mx[i]);
          rmax[i] = mx[i];
          mx[i] = none ? 0.0f : mx[i];
        }
      /* the exponentials and their sums, a vector of queries at a time
       * down the keys, the scale applied here (one pass over sT less) and
       * the sums kept in a register */
      for (int64_t i0 = 0; i0 < MOROK_ATT_QB; i0 += MOROK_GEMM_VL)
        {
          const morok_gemm_vec mv = *(const morok_gemm_vec *) (mx + i0);
          morok_gemm_vec sum = (morok_gemm_vec) 0.0f;
          for (int64_t j = 0; j < nb; j++)
            {
              morok_gemm_vec *row = (morok_gemm_vec *) (st + j * MOROK_ATT_QB + i0);
              if (mask && !mask[(j0 + j) * smk])
                {
                  *row = (morok_gemm_vec) 0.0f;
                  continue;
                }
              morok_gemm_vec p = MOROK_ATT_EXP (*row * scale - mv);
              *row = p;
              sum += p;
            }
          morok_gemm_vec *rs = (morok_gemm_vec *) (rsum + i0);
          *rs = *rs * *(const morok_gemm_vec *) (corr + i0) + sum;
        }
      for (int64_t c = 0; c < dv; c++)
        for (int64_t i = 0; i < MOROK_ATT_QB; i++)
          acct[c * MOROK_ATT_QB + i] *= corr[i];
#if defined(MOROK_ATT_TILES)
      for (int64_t k0 = 0; k0 < nb; k0 += MOROK_GEMM_KC)
        morok_gemm_block (dv, MOROK_ATT_QB, morok_gemm_min (MOROK_GEMM_KC, nb - k0),
                          v + (j0 + k0) * svr, sve, svr, st + k0 * MOROK_ATT_QB, 0, acct,
                          MOROK_ATT_QB, 1, (MorokGemmPrefetch){ 0 });
#else
      morok_gemm_f32 (dv, m, nb, v + j0 * svr, sve, svr, st, MOROK_ATT_QB, 1, acct, MOROK_ATT_QB,
                      1);
#endif
    }
  for (int64_t i = 0; i < m; i++)
    for (int64_t c = 0; c < dv; c++)
      out[i * sor + c] = acct[c * MOROK_ATT_QB + i] / rsum[i];
}
#endif
