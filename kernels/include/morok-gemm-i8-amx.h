/* SPDX-License-Identifier: MIT */
/* ---- int8 products on AMX (precision int8 where the CPU has AMX-INT8) ----
 *
 * TDPBUSD adds to a 16 x 16 tile of int32 sums the products of a 16 x 64
 * tile of unsigned bytes (A) with a 64 x 16 tile of signed bytes (B, k in
 * quads: 16 rows of 16 columns x 4 bytes): 16384 multiply-adds per
 * instruction, the same products vpdpbusd makes. So this kernel takes
 * exactly morok_gemm_i8_packed's operands (morok-gemm-i8.h): A quantised
 * by morok_gemm_i8_quantize (row stride lda bytes, a multiple of 64: the
 * packing rounds K to 64), B in int8 panels of 64 columns, quad q of column
 * j at b[(q*64 + j)*4 + (k & 3)], so that the tile of 16 columns from j
 * over quads q .. q + 15 is 16 rows of 64 bytes, 256 bytes apart.
 *
 * C is computed in blocks of 32 x 32 (four int32 accumulator tiles; two
 * tiles of A and two of B: all eight tile registers) over all of K, since
 * the sums are exact in int32 below K = 66000; then each block's sums, less
 * 128 times the columns' sums (the corrections of all of K's blocks), times
 * sa[i] sb[j] are stored (=, or += when @accumulate). A block past M reads
 * rows of qa past M (the plan's scratch has them, up to 31), never stored;
 * past N it reads the panel's zeros. Columns run in blocks of
 * MOROK_AMX8_NC (64 KB of B per 256 k), which stay in L2 across the row
 * blocks.
 *
 * The process must have been granted the tile state (arch_prctl; the host
 * does it in morok_cpu_has (MOROK_CPU_AMX_INT8)) before the first call. */
#pragma once

/* (the tile configuration and types of morok-gemm-amx.h: MOROK_AMX_NC) */
#if defined(MOROK_ISA_AVX512) && defined(__AMXINT8__) && defined(__AMXTILE__)                      \
    && defined(MOROK_GEMM8_KC) && defined(MOROK_AMX_NC)
#define MOROK_AMX8_NC 256

typedef int32_t morok_amx8_i32x16 __attribute__ ((ext_vector_type (16)));
typedef int32_t morok_amx8_i32x16u __attribute__ ((ext_vector_type (16), aligned (4)));

/* The int32 sums of the 32 x 32 block: rows of qa from a (stride lda), the
 * 32 columns of the panel at b (k4 quads), into acc [32][32]. Tiles: 0-3
 * C, 4-5 A, 6-7 B. */
static MOROK_VEC512 __attribute__ ((unused)) void
morok_amx8_block (const uint8_t *a, int64_t lda, const int8_t *b, int64_t k4, int32_t *acc)
{
  __builtin_ia32_tilezero (0);
  __builtin_ia32_tilezero (1);
  __builtin_ia32_tilezero (2);
  __builtin_ia32_tilezero (3);
  const size_t as = (size_t) lda;
  for (int64_t q = 0; q < k4; q += 16)
    {
      const uint8_t *at = a + q * 4;
      const int8_t *bt = b + q * 64 * 4;
      __builtin_ia32_tileloadd64 (4, at, as);
      __builtin_ia32_tileloadd64 (5, at + 16 * as, as);
      __builtin_ia32_tileloadd64 (6, bt, 256);
      __builtin_ia32_tileloadd64 (7, bt + 64, 256);
      __builtin_ia32_tdpbusd (0, 4, 6);
      __builtin_ia32_tdpbusd (1, 4, 7);
      __builtin_ia32_tdpbusd (2, 5, 6);
      __builtin_ia32_tdpbusd (3, 5, 7);
    }
  __builtin_ia32_tilestored64 (0, acc, 128);
  __builtin_ia32_tilestored64 (1, acc + 16, 128);
  __builtin_ia32_tilestored64 (2, acc + 16 * 32, 128);
  __builtin_ia32_tilestored64 (3, acc + 16 * 32 + 16, 128);
}

/* The lines of the 32-column block of B at b (k4 quads: two lines each)
 * asked into L2. While the first row block runs, each block of columns
 * asks for the next one's: in a plan B comes from memory (GigaAM's int8
 * weights are 113 MB), and the plan's 128-column calls on cold copies of
 * B ran faster with it in the slow and fast tile states alike (250 x 768 x
 * 768 gains most); with B in cache the prefetches cost a little. */
static __attribute__ ((unused)) void
morok_amx8_prefetch (const int8_t *b, int64_t k4)
{
  for (int64_t q = 0; q < k4; q++)
    {
      __builtin_prefetch (b + q * 256, 0, 2);
      __builtin_prefetch (b + q * 256 + 64, 0, 2);
    }
}

/* C [M, N] (row stride ldc) =, or += when @accumulate, A . B: the
 * arguments of morok_gemm_i8_packed (morok-gemm-i8.h), lda a multiple of
 * 64; the corrections of the K / MOROK_GEMM8_KC blocks are cs apart. */
MOROK_KERNEL_FN MOROK_VEC512 void
morok_gemm_i8_amx_packed (int64_t M, int64_t N, const uint8_t *qa, const float *sa, int64_t lda,
                          const int8_t *bq, const float *sb, const int32_t *corr, int64_t cs,
                          float *C, int64_t ldc, int accumulate)
#if defined(MOROK_KERNEL_LIB)
    ;
#else
{
  int64_t k4 = lda / 4, blocks = (lda + MOROK_GEMM8_KC - 1) / MOROK_GEMM8_KC;
  if (M <= 0 || N <= 0 || k4 <= 0)
    return;
  /* one row (an RNN-T step): vpdpbusd's row kernel reads B once without
   * making 32 rows of sums, nor configuring and releasing the tiles */
  if (M == 1)
    {
      morok_gemm_i8_packed (M, N, qa, sa, lda, bq, sb, corr, cs, C, ldc, accumulate);
      return;
    }
  morok_amx_configure ();
  int32_t acc[32 * 32] __attribute__ ((aligned (64)));
  int32_t ctot[32] __attribute__ ((aligned (64)));
  for (int64_t jc = 0; jc < N; jc += MOROK_AMX8_NC)
    {
      int64_t j1 = morok_gemm_min (N, jc + MOROK_AMX8_NC);
      for (int64_t i0 = 0; i0 < M; i0 += 32)
        for (int64_t j0 = jc; j0 < j1; j0 += 32)
          {
            int64_t mr = morok_gemm_min (32, M - i0), nr = morok_gemm_min (32, N - j0);
            if (i0 == 0) /* past N: the next call's columns, or nothing (a hint) */
              morok_amx8_prefetch (bq + ((j0 + 32) / 64 * k4 * 64 + (j0 + 32) % 64) * 4, k4);
            morok_amx8_block (qa + i0 * lda, lda, bq + (j0 / 64 * k4 * 64 + j0 % 64) * 4, k4, acc);
            for (int v = 0; v < 2; v++)
              {
                morok_amx8_i32x16 t = 0;
                for (int64_t blk = 0; blk < blocks; blk++)
                  t += *(const morok_amx8_i32x16u *) (corr + blk * cs + j0 + v * 16);
                *(morok_amx8_i32x16 *) (ctot + v * 16) = t;
              }
            for (int64_t i = 0; i < mr; i++)
              {
                float *c = C + (i0 + i) * ldc + j0;
                for (int v = 0; v < 2 && v * 16 < nr; v++)
                  {
                    morok_amx8_i32x16 s = *(const morok_amx8_i32x16 *) (acc + i * 32 + v * 16)
                                          - *(const morok_amx8_i32x16 *) (ctot + v * 16);
                    morok_gemm_vec x
                        = __builtin_convertvector(s, morok_gemm_vec)
                          * (*(const morok_gemm_vecu *) (sb + j0 + v * 16) * sa[i0 + i]);
                    morok_gemm_vecu *cv = (morok_gemm_vecu *) (c + v * 16);
                    int64_t n = morok_gemm_min (16, nr - v * 16);
                    if (n == 16)
                      *cv = accumulate ? *cv + x : x;
                    else
                      for (int64_t j = 0; j < n; j++)
                        c[v * 16 + j] = accumulate ? c[v * 16 + j] + x[j] : x[j];
                  }
              }
          }
    }
  __builtin_ia32_tilerelease ();
}
#endif
#endif
