/* SPDX-License-Identifier: MIT */
/* ---- bf16 and bf16x3 products on AVX512-BF16 without AMX ----
 *
 * Where the CPU has AVX512-BF16 but no AMX (AMD Zen 4 and 5), precisions
 * bf16 and bf16x3 run on vdpbf16ps: each f32 lane of an accumulator adds
 * the dot product of a pair of bf16 (k = 2q, 2q + 1) of A and of B. A's pair
 * is broadcast as one 32-bit word against 16 columns' pairs of B, which is
 * the layout B is packed in for AMX already (kernels/weight-pack.h): panels
 * of 64 columns, pair q of column j at b[(q*64 + j)*2 + h], so a pair of 16
 * columns is one zmm. The tile is 6 x 64 as in f32 (24 zmm of f32 sums,
 * four of B, six broadcasts per pair), over blocks of MOROK_GEMMBF_KC k.
 * A is rounded to bf16 pairs (vcvtne2ps2bf16, to nearest even) once per
 * product by morok_gemm_bf16_round and read in place, or as each MC x KC
 * block is packed. bf16x3 splits A and B into hi = bf16 (x) and lo =
 * bf16 (x - hi) and sums hi.hi + hi.lo + lo.hi (see
 * kernels/include/morok-gemm-amx.h for the error of each): three dot
 * products where bf16 takes one. */
#pragma once

#if defined(MOROK_ISA_AVX512) && defined(__AVX512BF16__)
#define MOROK_GEMMBF_KC 256 /* k per block: 128 pairs x 64 columns, 32 KB of B */

/* what vcvtne2ps2bf16 returns and vdpbf16ps takes (its type differs between
 * clang versions) */
typedef __typeof__ (__builtin_ia32_cvtne2ps2bf16_512 ((morok_f32x16) 0.0f,
                                                      (morok_f32x16) 0.0f)) morok_bf16x32;
typedef uint32_t morok_gemmbf_u32x16 __attribute__ ((ext_vector_type (16)));
typedef uint32_t morok_gemmbf_u32x16u __attribute__ ((ext_vector_type (16), aligned (4)));

/* x0's 16 floats then x1's, rounded to bf16 */
MOROK_INLINE morok_bf16x32
morok_gemmbf_round (morok_f32x16 x0, morok_f32x16 x1)
{
  return __builtin_ia32_cvtne2ps2bf16_512 (x1, x0);
}

/* The floats bf16 codes h[0..31] stand for, the first 16 and the last 16 */
MOROK_INLINE void
morok_gemmbf_widen (morok_bf16x32 h, morok_f32x16 *x0, morok_f32x16 *x1)
{
  morok_gemmbf_u32x16 w = (morok_gemmbf_u32x16) h;
  /* pair q holds element 2q in its low half, 2q + 1 in its high half */
  morok_gemmbf_u32x16 even = w << 16, odd = w & 0xffff0000u;
  *x0 = (morok_f32x16) __builtin_shufflevector (even, odd, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21,
                                                6, 22, 7, 23);
  *x1 = (morok_f32x16) __builtin_shufflevector (even, odd, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13,
                                                29, 14, 30, 15, 31);
}

/* Row a (k stride sak) over kc k into pairs: hi[q] = bf16 of k = 2q, 2q + 1,
 * and, unless lo is 0, lo[q] = bf16 of what hi leaves; zeros up to kq
 * pairs (kc rounded up to 32, / 2). */
MOROK_INLINE MOROK_VEC512 void
morok_gemmbf_pack_row (int64_t kc, const float *a, int64_t sak, uint32_t *hi, uint32_t *lo)
{
  for (int64_t k0 = 0; k0 < kc; k0 += 32)
    {
      int64_t n = morok_gemm_min (32, kc - k0);
      morok_f32x16 x0, x1;
      if (n == 32 && sak == 1)
        x0 = *(const morok_gemm_vecu *) (a + k0), x1 = *(const morok_gemm_vecu *) (a + k0 + 16);
      else
        {
          float x[32] __attribute__ ((aligned (64)));
          for (int64_t k = 0; k < 32; k++)
            x[k] = k < n ? a[(k0 + k) * sak] : 0.0f;
          x0 = *(const morok_f32x16 *) x, x1 = *(const morok_f32x16 *) (x + 16);
        }
      morok_bf16x32 h = morok_gemmbf_round (x0, x1);
      *(morok_gemmbf_u32x16u *) (hi + k0 / 2) = (morok_gemmbf_u32x16) h;
      if (!lo)
        continue;
      morok_f32x16 h0, h1;
      morok_gemmbf_widen (h, &h0, &h1);
      *(morok_gemmbf_u32x16u *) (lo + k0 / 2)
          = (morok_gemmbf_u32x16) morok_gemmbf_round (x0 - h0, x1 - h1);
    }
}

/* acc[i][v] += row i's pairs at a[i*ars + q] . the B pairs at b + q*128, over
 * q < kq */
MOROK_INLINE void
morok_gemmbf_dots (morok_f32x16 acc[MOROK_GEMM_MR][4], int64_t kq, const uint32_t *restrict a,
                   int64_t ars, const uint16_t *restrict b)
{
  const uint32_t *row[MOROK_GEMM_MR];
  MOROK_GEMM_ROWS (row, a, ars);
  for (int64_t q = 0; q < kq; q++)
    {
      morok_bf16x32 bv[4];
#pragma clang loop unroll(full)
      for (int v = 0; v < 4; v++)
        bv[v] = *(const morok_bf16x32 *) (b + q * 128 + v * 32);
#pragma clang loop unroll(full)
      for (int i = 0; i < MOROK_GEMM_MR; i++)
        {
          morok_bf16x32 av = (morok_bf16x32) (morok_gemmbf_u32x16) row[i][q];
#pragma clang loop unroll(full)
          for (int v = 0; v < 4; v++)
            acc[i][v] = __builtin_ia32_dpbf16ps_512 (acc[i][v], av, bv[v]);
        }
    }
}

/* The MR x 64 tile at c (=|+=) A . B over kq pairs: A's hi (and lo) pairs
 * of row i at ahi[i*ars + q], B's at bhi + q*128 (and blo); hi.hi alone when
 * blo is 0, else hi.hi + hi.lo + lo.hi. */
static MOROK_VEC512 __attribute__ ((noinline, unused)) void
morok_gemmbf_tile (int64_t kq, const uint32_t *restrict ahi, const uint32_t *restrict alo,
                   int64_t ars, const uint16_t *restrict bhi, const uint16_t *restrict blo,
                   float *restrict c, int64_t ldc, int64_t mr, int64_t nr, int load_c)
{
  morok_f32x16 acc[MOROK_GEMM_MR][4];
#pragma clang loop unroll(full)
  for (int i = 0; i < MOROK_GEMM_MR; i++)
#pragma clang loop unroll(full)
    for (int v = 0; v < 4; v++)
      acc[i][v] = (morok_f32x16) 0.0f;
  morok_gemmbf_dots (acc, kq, ahi, ars, bhi);
  if (blo)
    {
      morok_gemmbf_dots (acc, kq, ahi, ars, blo);
      morok_gemmbf_dots (acc, kq, alo, ars, bhi);
    }
  morok_gemm_store_tile (acc, c, ldc, mr, nr, load_c);
}

/* Rows of A [M, K] (element (i, k) at A[i*sam + k*sak]) rounded into bf16
 * pairs once for all of a product's calls: ahi[i*lda + q] holds k = 2q,
 * 2q + 1, zeros past K up to K rounded up to 32; unless alo is 0 (bf16x3),
 * alo what hi leaves. Rows M to M + MR - 1 are zeros: the tiles read them
 * and never store them. */
MOROK_KERNEL_FN MOROK_VEC512 void morok_gemm_bf16_round (int64_t M, int64_t K, const float *A,
                                                         int64_t sam, int64_t sak, uint32_t *ahi,
                                                         uint32_t *alo, int64_t lda)
#if defined(MOROK_KERNEL_LIB)
    ;
#else
{
  int64_t kq = (K + 31) / 32 * 16;
  for (int64_t i = 0; i < M; i++)
    morok_gemmbf_pack_row (K, A + i * sam, sak, ahi + i * lda, alo ? alo + i * lda : alo);
  for (int64_t i = M; i < M + MOROK_GEMM_MR; i++)
    for (int64_t q = 0; q < kq; q++)
      {
        ahi[i * lda + q] = 0u;
        if (alo)
          alo[i * lda + q] = 0u;
      }
}
#endif

/* C [M, N] (row stride ldc) =, or += when @accumulate, A . B: A as
 * morok_gemm_bf16_round left it (ahi, and alo for bf16x3; lda words a
 * row) or, where ahi is 0, A [M, K] in f32 (element (i, k) at A[i*sam +
 * k*sak]), rounded here a block of MC rows x KC k at a time; B packed in
 * bf16 pairs from the panel of column 0 (bhi; K2 pairs per panel,
 * kernels/weight-pack.h), and for bf16x3 its lo copy (blo; 0 for bf16).
 * A plan that calls this for several blocks of 128 columns of the same A
 * rounds it once: rounding it in every call took a tenth of the product's
 * time (250 x 3072 x 768 in 128-column calls). With one call the block
 * rounded here is faster (its pairs contiguous, just written) than A
 * rounded first. */
MOROK_KERNEL_FN MOROK_VEC512 void
morok_gemm_bf16_packed (int64_t M, int64_t N, int64_t K, const float *A, int64_t sam, int64_t sak,
                        const uint32_t *ahi, const uint32_t *alo, int64_t lda, const uint16_t *bhi,
                        const uint16_t *blo, int64_t k2, float *C, int64_t ldc, int accumulate)
#if defined(MOROK_KERNEL_LIB)
    ;
#else
{
  if (M <= 0 || N <= 0 || K <= 0)
    return;
  /* a block of A rounded here: rows of pairs, kq apart */
  uint32_t hi_block[MOROK_GEMM_MC * MOROK_GEMMBF_KC / 2] __attribute__ ((aligned (64)));
  uint32_t lo_block[MOROK_GEMM_MC * MOROK_GEMMBF_KC / 2] __attribute__ ((aligned (64)));
  for (int64_t jc = 0; jc < N; jc += MOROK_GEMM_NC)
    {
      int64_t nc = morok_gemm_min (MOROK_GEMM_NC, N - jc);
      for (int64_t pc = 0; pc < K; pc += MOROK_GEMMBF_KC)
        {
          int64_t kc = morok_gemm_min (MOROK_GEMMBF_KC, K - pc), kq = (kc + 31) / 32 * 16;
          int load_c = accumulate || pc > 0;
          /* a panel: k2 pairs of 64 columns, 128 bytes per k */
          MorokGemmPrefetch pf = morok_gemm_next_block (bhi, 64, k2 * 256, 128, jc, MOROK_GEMM_NC,
                                                        pc, MOROK_GEMMBF_KC, N, K);
          int64_t tiles = (M + MOROK_GEMM_MR - 1) / MOROK_GEMM_MR * ((nc + 63) / 64), t = 0;
          for (int64_t ic = 0; ic < M; ic += MOROK_GEMM_MC)
            {
              int64_t mc = morok_gemm_min (MOROK_GEMM_MC, M - ic), ars = lda;
              const uint32_t *hi = ahi + ic * lda + pc / 2;
              const uint32_t *lo = blo ? alo + ic * lda + pc / 2 : (const uint32_t *) 0;
              if (!ahi)
                {
                  hi = hi_block, lo = blo ? lo_block : lo, ars = kq;
                  int64_t rows = (mc + MOROK_GEMM_MR - 1) / MOROK_GEMM_MR * MOROK_GEMM_MR;
                  for (int64_t i = 0; i < rows; i++)
                    if (i < mc)
                      morok_gemmbf_pack_row (kc, A + (ic + i) * sam + pc * sak, sak,
                                             hi_block + i * kq,
                                             blo ? lo_block + i * kq : (uint32_t *) 0);
                    else /* rows past M: zeros, never stored */
                      for (int64_t q = 0; q < kq; q++)
                        hi_block[i * kq + q] = lo_block[i * kq + q] = 0u;
                }
              for (int64_t jr = 0; jr < nc; jr += 64)
                {
                  int64_t at = ((jc + jr) / 64 * k2 + pc / 2) * 128;
                  for (int64_t ir = 0; ir < mc; ir += MOROK_GEMM_MR, t++)
                    {
                      morok_gemm_prefetch_part (pf, t, tiles);
                      morok_gemmbf_tile (kq, hi + ir * ars, lo ? lo + ir * ars : lo, ars, bhi + at,
                                         blo ? blo + at : blo, C + (ic + ir) * ldc + jc + jr, ldc,
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
