/* SPDX-License-Identifier: MIT */
/* morok_gemm_f16_packed: the packed-weight product of morok-gemm.h with
 * f16 products and f32 sums, on AVX512-FP16 (MorokPlanOptions.precision =
 * MOROK_PRECISION_F16). It reuses morok-gemm.h's register tile and block
 * sizes, which is pasted before it; a function of the kernel library
 * (MOROK_KERNEL_FN, morok-prelude.h). */
#pragma once

#if defined(MOROK_ISA_AVX512) && defined(__AVX512FP16__)
/* AVX512-FP16 multiplies 32 halves per FMA, twice the lanes of f32. A is
 * rounded to f16 as it is packed, B comes packed in f16 at prepare. Summing
 * a whole dot product in f16 would lose too much, so k is taken in pairs:
 * lane 2j of an accumulator sums B[2q][j] * A[2q] over the pairs q, lane
 * 2j + 1 sums B[2q + 1][j] * A[2q + 1] (A's pair broadcast as one 32-bit
 * word, B's pairs side by side: kernels/weight-pack.h), and every
 * MOROK_GEMM16_KB pairs the two lanes are added and the sum is moved into
 * f32. So at most 2 * KB products are summed in f16. Each row of A is scaled
 * by a power of two into [-1, 1] as it is packed (and the sums scaled back
 * as they move into f32), so that activations of any size neither overflow
 * f16 (65504) nor fall into its subnormals. The tile is 6 x 64 as in f32 (24
 * zmm of halves); its f32 sums wait on the stack (L1). The error this costs
 * is measured in tests/test-nn.c and docs/benchmarks.md. */
typedef _Float16 morok_h16x32 __attribute__ ((ext_vector_type (32)));
typedef _Float16 morok_h16x16 __attribute__ ((ext_vector_type (16)));
typedef uint32_t morok_u32x16 __attribute__ ((ext_vector_type (16)));
typedef uint16_t morok_u16x16 __attribute__ ((ext_vector_type (16)));
#define MOROK_GEMM16_KC 256 /* k per block: a panel is 128 pairs x 64 columns, 32 KB */
#ifndef MOROK_GEMM16_KB
#define MOROK_GEMM16_KB 16 /* pairs summed in f16 between moves into f32 */
#endif

/* The MR x 64 tile at c (=|+=) A-pairs . B-pairs over kq pairs: a[i*ars + q]
 * is row i's pair q, scaled by 1 / scale[i]; b[q*128 + 2j + h] is column j's
 * value at k = 2q + h. */
static MOROK_VEC512 __attribute__ ((noinline, unused)) void
morok_gemm16_tile (int64_t kq, const uint32_t *restrict a, int64_t ars, const float *restrict scale,
                   const uint16_t *restrict b, float *restrict c, int64_t ldc, int64_t mr,
                   int64_t nr, int load_c)
{
  float sum[MOROK_GEMM_MR * 64] __attribute__ ((aligned (64)));
#pragma clang loop unroll(full)
  for (int i = 0; i < MOROK_GEMM_MR * 4; i++)
    *(morok_f32x16 *) (sum + i * 16) = (morok_f32x16) 0.0f;
  for (int64_t q0 = 0; q0 < kq; q0 += MOROK_GEMM16_KB)
    {
      int64_t qe = morok_gemm_min (kq, q0 + MOROK_GEMM16_KB);
      morok_h16x32 acc[MOROK_GEMM_MR][4];
#pragma clang loop unroll(full)
      for (int i = 0; i < MOROK_GEMM_MR; i++)
#pragma clang loop unroll(full)
        for (int v = 0; v < 4; v++)
          acc[i][v] = (morok_h16x32) 0.0f16;
      for (int64_t q = q0; q < qe; q++)
        {
          morok_h16x32 bv[4];
#pragma clang loop unroll(full)
          for (int v = 0; v < 4; v++)
            bv[v] = *(const morok_h16x32 *) (b + q * 128 + v * 32);
#pragma clang loop unroll(full)
          for (int i = 0; i < MOROK_GEMM_MR; i++)
            {
              morok_h16x32 av = (morok_h16x32) (morok_u32x16) a[i * ars + q];
#pragma clang loop unroll(full)
              for (int v = 0; v < 4; v++)
                acc[i][v] += av * bv[v];
            }
        }
        /* lane 2j + 1 onto lane 2j, the even lanes to f32 */
#pragma clang loop unroll(full)
      for (int i = 0; i < MOROK_GEMM_MR; i++)
#pragma clang loop unroll(full)
        for (int v = 0; v < 4; v++)
          {
            morok_h16x32 t = acc[i][v] + (morok_h16x32) ((morok_u32x16) acc[i][v] >> 16);
            morok_u16x16 even = __builtin_convertvector((morok_u32x16) t, morok_u16x16);
            *(morok_f32x16 *) (sum + i * 64 + v * 16)
                += __builtin_convertvector((morok_h16x16) even, morok_f32x16) * scale[i];
          }
    }
  for (int64_t i = 0; i < mr; i++)
    {
      float *row = c + i * ldc;
      int64_t j = 0;
      for (; j + 16 <= nr; j += 16)
        {
          morok_gemm_vecu *p = (morok_gemm_vecu *) (row + j);
          morok_f32x16 s = *(const morok_f32x16 *) (sum + i * 64 + j);
          *p = load_c ? *p + s : s;
        }
      for (; j < nr; j++)
        row[j] = (load_c ? row[j] : 0.0f) + sum[i * 64 + j];
    }
}

/* Row i of A over kc (<= MOROK_GEMM16_KC) in f16, divided by scale, the
 * power of two just above its largest magnitude (1 for a row of zeros or
 * one that is not finite), zero-padded to an even length: dst[k], read by
 * the tile as pairs. */
MOROK_INLINE void
morok_gemm16_pack_row (int64_t kc, const float *a, int64_t sak, _Float16 *dst, float *scale)
{
  /* the largest magnitude as bits (an integer max vectorises; a float one
   * does not, for NaN's sake); NaN and inf come out above every number */
  uint32_t m = 0;
  if (sak == 1)
    for (int64_t k = 0; k < kc; k++)
      {
        uint32_t u = morok_f32_bits (a[k]) & 0x7fffffffu;
        m = u > m ? u : m;
      }
  else
    for (int64_t k = 0; k < kc; k++)
      {
        uint32_t u = morok_f32_bits (a[k * sak]) & 0x7fffffffu;
        m = u > m ? u : m;
      }
  /* 2^(e + 1) for m = f * 2^e, 1 <= f < 2: the exponent field plus one */
  uint32_t e = m >> 23;
  int usable = m != 0 && e < 253u;
  float inv = usable ? morok_f32_from_bits ((253u - e) << 23) : 1.0f;
  *scale = usable ? morok_f32_from_bits ((e + 1u) << 23) : 1.0f;
  if (sak == 1)
    for (int64_t k = 0; k < kc; k++)
      dst[k] = (_Float16) (a[k] * inv);
  else
    for (int64_t k = 0; k < kc; k++)
      dst[k] = (_Float16) (a[k * sak] * inv);
  if (kc & 1)
    dst[kc] = 0.0f16;
}

/* morok_gemm_f32_packed in f16: bp holds B's pairs in panels of 64
 * columns, bp[((p*K2 + q)*64 + j)*2 + h], K2 = ceil (K / 2)
 * (kernels/weight-pack.h). */
MOROK_KERNEL_FN MOROK_VEC512 void
morok_gemm_f16_packed (int64_t M, int64_t N, int64_t K, const float *A, int64_t sam, int64_t sak,
                       const uint16_t *bp, float *C, int64_t ldc, int accumulate)
#if defined(MOROK_KERNEL_LIB)
    ;
#else
{
  if (M <= 0 || N <= 0 || K <= 0)
    return;
  /* rows of A in f16 pairs, an MR-row panel's rows kq apart */
  uint32_t apack[MOROK_GEMM_MC * MOROK_GEMM16_KC / 2] __attribute__ ((aligned (64)));
  float ascale[MOROK_GEMM_MC];
  int64_t k2 = (K + 1) / 2;
  for (int64_t jc = 0; jc < N; jc += MOROK_GEMM_NC)
    {
      int64_t nc = morok_gemm_min (MOROK_GEMM_NC, N - jc);
      for (int64_t pc = 0; pc < K; pc += MOROK_GEMM16_KC)
        {
          int64_t kc = morok_gemm_min (MOROK_GEMM16_KC, K - pc), kq = (kc + 1) / 2;
          int load_c = accumulate || pc > 0;
          /* a panel: k2 pairs of 64 columns, 128 bytes per k */
          MorokGemmPrefetch pf = morok_gemm_next_block (bp, 64, k2 * 256, 128, jc, MOROK_GEMM_NC,
                                                        pc, MOROK_GEMM16_KC, N, K);
          int64_t tiles = (M + MOROK_GEMM_MR - 1) / MOROK_GEMM_MR * ((nc + 63) / 64), t = 0;
          for (int64_t ic = 0; ic < M; ic += MOROK_GEMM_MC)
            {
              int64_t mc = morok_gemm_min (MOROK_GEMM_MC, M - ic);
              int64_t panels = (mc + MOROK_GEMM_MR - 1) / MOROK_GEMM_MR * MOROK_GEMM_MR;
              for (int64_t i = 0; i < panels; i++)
                if (i < mc)
                  morok_gemm16_pack_row (kc, A + (ic + i) * sam + pc * sak, sak,
                                         (_Float16 *) (apack + i * kq), ascale + i);
                else /* rows past M: zeros, never stored */
                  for (int64_t q = 0; q < kq; q++)
                    apack[i * kq + q] = 0u, ascale[i] = 1.0f;
              for (int64_t jr = 0; jr < nc; jr += 64)
                {
                  const uint16_t *b = bp + ((jc + jr) / 64 * k2 + pc / 2) * 128;
                  for (int64_t ir = 0; ir < mc; ir += MOROK_GEMM_MR, t++)
                    {
                      morok_gemm_prefetch_part (pf, t, tiles);
                      morok_gemm16_tile (kq, apack + ir * kq, kq, ascale + ir, b,
                                         C + (ic + ir) * ldc + jc + jr, ldc,
                                         morok_gemm_min (MOROK_GEMM_MR, mc - ir),
                                         morok_gemm_min (64, nc - jr), load_c);
                    }
                }
            }
        }
    }
}
#endif
#endif
