/* SPDX-License-Identifier: MIT */
/* ---- int8 products, int32 sums (MorokPlanOptions.precision = MOROK_PRECISION_INT8) ----
 *
 * vpdpbusd adds to each 32-bit lane of an accumulator the four products of
 * a quad of unsigned bytes (A) with a quad of signed bytes (B), exactly.
 * The weights come quantised at prepare (kernels/weight-pack.h): column j
 * as round (b / sb[j]) in [-127, 127], sb[j] = max_k |b[k, j]| / 127, in
 * panels of NR columns with k in quads, quad q of column j at
 * b[(q*NR + j)*4 + (k & 3)] (a quad of 16 columns is one zmm), followed by
 * sb and by corr[b][j] = 128 * sum qb[k, j] over the k of block b
 * (MOROK_GEMM8_KC of them). Each call quantises A first
 * (morok_gemm_i8_quantize): row i as round (a / sa[i]) + 128 in [1, 255],
 * sa[i] = max_k |a[i, k]| / 127, so that
 *
 *   sum_k qa[i, k] qb[k, j] - corr[b][j] = sum_k round (a / sa) round (b / sb)
 *
 * over each block, exactly, and C[i, j] += sa[i] sb[j] (that sum), applied
 * as the tile is stored. (One correction over all of K, taken in the first
 * block, measured 1e-6 of the terms' magnitudes off: the blocks' f32 sums
 * then carry 128 times the columns' sums, which cancel.) One
 * scale per row rather than per block of k: see docs/jit-wrapper.md
 * ("Precision") for the error of each. The tile is NR columns as in f32,
 * 6 x 64 zmm on AVX-512, 6 x 16 ymm with AVX-VNNI and 5 x 16 ymm without
 * (MOROK_GEMM8_MR), over blocks of MOROK_GEMM8_KC k. The sums cannot
 * overflow below K = 66000.
 *
 * Without VNNI (AVX2 before AVX-VNNI) a quad's dot product is vpmaddubsw
 * (pairs of u8 x s8 products summed into a saturating int16) then
 * vpmaddwd by ones (pairs of those into int32). Two products of 255 x 127
 * would saturate, so A has 7 bits there: round (a / sa) + 64 in [1, 127]
 * with sa = max |a| / 63, whose pairs sum to at most 2 x 127 x 127 =
 * 32258, every sum exact (the correction is then 64 times the columns'
 * sums: corr / 2). The weights keep their 8 bits and their packing; the
 * price is A's doubled rounding step (docs/jit-wrapper.md, "Precision").
 * Exact 8-bit A (|a| times b with a's sign, vpsignb) costs two more
 * instructions per eight and ran the full encoder markedly slower; AVX-512
 * without VNNI (no vpsignb, no VNNI) is left out. */
#pragma once

#if (defined(MOROK_ISA_AVX512) && defined(__AVX512VNNI__))                                         \
    || (defined(MOROK_ISA_AVX2)                                                                    \
        && (defined(__AVXVNNI__) || (defined(__AVX512VNNI__) && defined(__AVX512VL__))))
#define MOROK_GEMM8_VNNI 1
#endif
/* A's quantisation: round (a / sa) + MOROK_GEMM8_ZERO with sa = max |a| /
 * MOROK_GEMM8_AMAX (the portable build runs no int8 product, only this) */
#if defined(MOROK_GEMM8_VNNI) || !defined(MOROK_ISA_AVX2)
#define MOROK_GEMM8_AMAX 127
#else
#define MOROK_GEMM8_AMAX 63
#endif
#define MOROK_GEMM8_ZERO (MOROK_GEMM8_AMAX + 1)

/* x rounded to the nearest integer, ties to even (|x| < 2^22): vroundps
 * on the AVX ISAs; in the portable build, which may have no SSE4.1 and has
 * no libm, x + 1.5 * 2^23 leaves the integer in the low bits (x passes
 * through memory first, or -ffp-contract=fast would fuse the product that
 * makes it into the add, and round the exact product instead of x). */
MOROK_INLINE int32_t
morok_gemm8_round (float x)
{
#if defined(MOROK_ISA_PORTABLE)
  volatile float v = x;
  return (int32_t) (morok_f32_bits (v + 12582912.0f) - 0x4b400000u);
#else
  return (int32_t) __builtin_rintf (x);
#endif
}

#if defined(MOROK_ISA_AVX512) || defined(MOROK_ISA_AVX2)
typedef uint32_t morok_gemm8_uvec __attribute__ ((ext_vector_type (MOROK_GEMM_VL)));
typedef uint32_t morok_gemm8_uvecu __attribute__ ((ext_vector_type (MOROK_GEMM_VL), aligned (4)));
typedef int32_t morok_gemm8_svec __attribute__ ((ext_vector_type (MOROK_GEMM_VL)));
typedef uint8_t morok_gemm8_qvec __attribute__ ((ext_vector_type (MOROK_GEMM_VL)));
typedef uint8_t morok_gemm8_qvecu __attribute__ ((ext_vector_type (MOROK_GEMM_VL), aligned (1)));

/* A contiguous row's largest magnitude as bits (the loop over a strided
 * row vectorises as gathers, and its rounding not at all: vroundss; in the
 * full encoder's int8 plan on AMX the quantisation took a markedly larger
 * share of the products' time that way, perf) */
MOROK_INLINE uint32_t
morok_gemm8_row_max (int64_t K, const float *a)
{
  morok_gemm8_uvec m = 0;
  int64_t k = 0;
  for (; k + MOROK_GEMM_VL <= K; k += MOROK_GEMM_VL)
    m = __builtin_elementwise_max (m, *(const morok_gemm8_uvecu *) (a + k) & 0x7fffffffu);
  uint32_t r = 0;
  for (int l = 0; l < MOROK_GEMM_VL; l++)
    r = m[l] > r ? m[l] : r;
  for (; k < K; k++)
    {
      uint32_t u = morok_f32_bits (a[k]) & 0x7fffffffu;
      r = u > r ? u : r;
    }
  return r;
}

/* q[k] = round (a[k] * inv) + ZERO, to nearest even (vrndscaleps), as the
 * scalar loop below rounds */
MOROK_INLINE void
morok_gemm8_row_quantize (int64_t K, const float *a, float inv, uint8_t *q)
{
  int64_t k = 0;
  for (; k + MOROK_GEMM_VL <= K; k += MOROK_GEMM_VL)
    {
      morok_gemm_vec x = __builtin_elementwise_roundeven (*(const morok_gemm_vecu *) (a + k) * inv);
      morok_gemm8_svec v = __builtin_convertvector(x, morok_gemm8_svec) + MOROK_GEMM8_ZERO;
      *(morok_gemm8_qvecu *) (q + k) = __builtin_convertvector(v, morok_gemm8_qvec);
    }
  for (; k < K; k++)
    q[k] = (uint8_t) (morok_gemm8_round (a[k] * inv) + MOROK_GEMM8_ZERO);
}
#endif

/* On every ISA (the kernel tests hold it to a reference everywhere):
 * rows of A [M, K] (element (i, k) at A[i*sam + k*sak]) quantised: qa[i*lda
 * + k] = round (a / sa[i]) + ZERO, to nearest even, ZERO past K up to lda
 * (K rounded up to 4); sa[i] = max_k |a[i, k]| / AMAX (0 for a row of
 * zeros; inf or NaN for a row that holds one, which the products carry);
 * AMAX 127 and ZERO 128, or 63 and 64 on AVX2 without VNNI. */
MOROK_KERNEL_FN MOROK_VEC512 void morok_gemm_i8_quantize (int64_t M, int64_t K, const float *A,
                                                          int64_t sam, int64_t sak, uint8_t *qa,
                                                          float *sa, int64_t lda)
#if defined(MOROK_KERNEL_LIB)
    ;
#else
{
  for (int64_t i = 0; i < M; i++)
    {
      const float *a = A + i * sam;
      uint8_t *q = qa + i * lda;
      /* the largest magnitude as bits: an integer max vectorises */
      uint32_t m = 0;
#if defined(MOROK_ISA_AVX512) || defined(MOROK_ISA_AVX2)
      if (sak == 1)
        m = morok_gemm8_row_max (K, a);
      else
#endif
        for (int64_t k = 0; k < K; k++)
          {
            uint32_t u = morok_f32_bits (a[k * sak]) & 0x7fffffffu;
            m = u > m ? u : m;
          }
      float amax = morok_f32_from_bits (m), inv = m ? (float) MOROK_GEMM8_AMAX / amax : 0.0f;
      sa[i] = amax / (float) MOROK_GEMM8_AMAX;
#if defined(MOROK_ISA_AVX512) || defined(MOROK_ISA_AVX2)
      if (sak == 1)
        morok_gemm8_row_quantize (K, a, inv, q);
      else
#endif
        for (int64_t k = 0; k < K; k++)
          q[k] = (uint8_t) (morok_gemm8_round (a[k * sak] * inv) + MOROK_GEMM8_ZERO);
      for (int64_t k = K; k < lda; k++)
        q[k] = MOROK_GEMM8_ZERO;
    }
}
#endif

#if defined(MOROK_GEMM8_VNNI) || defined(MOROK_ISA_AVX2)
/* k per block (weight-pack.h's MOROK_WEIGHT_PACK_INT8_KC): 256 quads x 64
 * columns, 64 KB of B, which the tile streams from L2 at 4 lines per 24
 * vpdpbusd. 1024 rather than 512 on the encoder's products (250 rows;
 * 3072 x 768, 768 x 3072, 768 x 768, 1536 x 768): fewer tile starts and
 * stores, K = 768 being one block, not 512 + 256; 2048 is no faster. */
#define MOROK_GEMM8_KC 1024
typedef int32_t morok_gemm8_ivec __attribute__ ((ext_vector_type (MOROK_GEMM_VL)));
typedef int32_t morok_gemm8_ivecu __attribute__ ((ext_vector_type (MOROK_GEMM_VL), aligned (4)));
#if defined(MOROK_GEMM8_VNNI) && defined(MOROK_ISA_AVX512)
#define MOROK_GEMM8_DOT(acc, a, b) __builtin_ia32_vpdpbusd512 ((acc), (a), (b))
#elif defined(MOROK_GEMM8_VNNI)
#define MOROK_GEMM8_DOT(acc, a, b) __builtin_ia32_vpdpbusd256 ((acc), (a), (b))
#else
/* the byte and int16 lanes of one ymm, as the builtins take them */
typedef char morok_gemm8_bytes __attribute__ ((vector_size (32)));
typedef short morok_gemm8_shorts __attribute__ ((vector_size (32)));
#define MOROK_GEMM8_DOT(acc, a, b)                                                                 \
  ((acc)                                                                                           \
   + (morok_gemm8_ivec) __builtin_ia32_pmaddwd256 (                                                \
       __builtin_ia32_pmaddubsw256 ((morok_gemm8_bytes) (a), (morok_gemm8_bytes) (b)),             \
       (morok_gemm8_shorts) ((morok_gemm8_ivec) 0x00010001)))
#endif

/* The MOROK_GEMM8_MR x NR tile at c (=|+=) sa[i] sb[j] (sum over kq quads
 * of qa . qb - corr[j]): row i's quads at a[i*ars + q], B's at b +
 * q*NR*4. With VNNI the tile is f32's MR rows. Without it a quad's product
 * needs two multiplier uops and a register more, and AVX2 has 16
 * registers: 5 rows of 2 ymm accumulators fit (6 spilled about one in
 * two), and GigaAM's rows, 25 frames a second, come in fives, so a window
 * of whole seconds has no partial tile. */
#if defined(MOROK_GEMM8_VNNI)
#define MOROK_GEMM8_MR MOROK_GEMM_MR
#define MOROK_GEMM8_Q_LOOP
#else
#define MOROK_GEMM8_MR 5
#define MOROK_GEMM8_Q_LOOP _Pragma ("clang loop unroll_count(2)")
#endif
#define MOROK_GEMM8_MC (12 * MOROK_GEMM8_MR)
static MOROK_VEC512 __attribute__ ((noinline, unused)) void
morok_gemm8_tile (int64_t kq, const uint32_t *restrict a, int64_t ars, const float *restrict sa,
                  const int8_t *restrict b, const float *restrict sb, const int32_t *restrict corr,
                  float *restrict c, int64_t ldc, int64_t mr, int64_t nr, int load_c)
{
  const uint32_t *row[MOROK_GEMM_MR];
  MOROK_GEMM_ROWS (row, a, ars);
  morok_gemm8_ivec acc[MOROK_GEMM8_MR][MOROK_GEMM_NV];
#pragma clang loop unroll(full)
  for (int v = 0; v < MOROK_GEMM_NV; v++)
    {
      /* -ZERO times the columns' sums (what A's offset added), of which
       * the packing holds 128 times */
      morok_gemm8_ivec init = -(*(const morok_gemm8_ivecu *) (corr + v * MOROK_GEMM_VL)
                                >> (MOROK_GEMM8_ZERO == 128 ? 0 : 1));
#pragma clang loop unroll(full)
      for (int i = 0; i < MOROK_GEMM8_MR; i++)
        acc[i][v] = init;
    }
  MOROK_GEMM8_Q_LOOP
  for (int64_t q = 0; q < kq; q++)
    {
      morok_gemm8_ivec bv[MOROK_GEMM_NV];
#pragma clang loop unroll(full)
      for (int v = 0; v < MOROK_GEMM_NV; v++)
        bv[v] = *(const morok_gemm8_ivec *) (b + (q * MOROK_GEMM_NR + v * MOROK_GEMM_VL) * 4);
#pragma clang loop unroll(full)
      for (int i = 0; i < MOROK_GEMM8_MR; i++)
        {
          morok_gemm8_ivec av = (morok_gemm8_ivec) (int32_t) row[i][q];
#pragma clang loop unroll(full)
          for (int v = 0; v < MOROK_GEMM_NV; v++)
            acc[i][v] = MOROK_GEMM8_DOT (acc[i][v], av, bv[v]);
        }
    }
  morok_gemm_vec out[MOROK_GEMM_MR][MOROK_GEMM_NV];
#pragma clang loop unroll(full)
  for (int v = 0; v < MOROK_GEMM_NV; v++)
    {
      morok_gemm_vec s = *(const morok_gemm_vecu *) (sb + v * MOROK_GEMM_VL);
#pragma clang loop unroll(full)
      for (int i = 0; i < MOROK_GEMM8_MR; i++)
        out[i][v] = __builtin_convertvector(acc[i][v], morok_gemm_vec) * (s * sa[i]);
#pragma clang loop unroll(full)
      for (int i = MOROK_GEMM8_MR; i < MOROK_GEMM_MR; i++)
        out[i][v] = 0; /* never stored: mr <= MOROK_GEMM8_MR */
    }
  morok_gemm_store_tile (out, c, ldc, mr, nr, load_c);
}

/* morok_gemm8_tile's one-row case (mr = 1: an RNN-T predictor step or
 * joint, one token at a time): the full tile would make MR rows of dot
 * products for one. Two sets of accumulators, even and odd quads, so that
 * 2 NV dot products are in flight rather than NV. */
static MOROK_VEC512 __attribute__ ((noinline, unused)) void
morok_gemm8_row (int64_t kq, const uint32_t *restrict a, const float *restrict sa,
                 const int8_t *restrict b, const float *restrict sb, const int32_t *restrict corr,
                 float *restrict c, int64_t nr, int load_c)
{
  morok_gemm8_ivec acc[2][MOROK_GEMM_NV];
#pragma clang loop unroll(full)
  for (int v = 0; v < MOROK_GEMM_NV; v++)
    {
      acc[0][v] = -(*(const morok_gemm8_ivecu *) (corr + v * MOROK_GEMM_VL)
                    >> (MOROK_GEMM8_ZERO == 128 ? 0 : 1));
      acc[1][v] = 0;
    }
  /* kq is even: a row of qa is whole tiles of 64 bytes (16 quads) */
  for (int64_t q = 0; q < kq; q += 2)
#pragma clang loop unroll(full)
    for (int h = 0; h < 2; h++)
      {
        morok_gemm8_ivec av = (morok_gemm8_ivec) (int32_t) a[q + h];
#pragma clang loop unroll(full)
        for (int v = 0; v < MOROK_GEMM_NV; v++)
          acc[h][v] = MOROK_GEMM8_DOT (
              acc[h][v], av,
              *(const morok_gemm8_ivec *) (b + ((q + h) * MOROK_GEMM_NR + v * MOROK_GEMM_VL) * 4));
      }
  morok_gemm_vec out[MOROK_GEMM_MR][MOROK_GEMM_NV];
#pragma clang loop unroll(full)
  for (int v = 0; v < MOROK_GEMM_NV; v++)
    out[0][v] = __builtin_convertvector(acc[0][v] + acc[1][v], morok_gemm_vec)
                * (*(const morok_gemm_vecu *) (sb + v * MOROK_GEMM_VL) * sa[0]);
  morok_gemm_store_tile (out, c, 0, 1, nr, load_c);
}

/* C [M, N] (row stride ldc) =, or += when @accumulate, A . B with A
 * quantised by morok_gemm_i8_quantize (qa, row stride lda bytes, scales
 * sa) and B packed in int8 (kernels/weight-pack.h) from the panel of column
 * 0: bq (K4 = lda / 4 quads per panel), its scales sb and its first
 * block's corrections corr from column 0 (the next block's cs further);
 * bq 64-byte aligned. */
MOROK_KERNEL_FN MOROK_VEC512 void
morok_gemm_i8_packed (int64_t M, int64_t N, const uint8_t *qa, const float *sa, int64_t lda,
                      const int8_t *bq, const float *sb, const int32_t *corr, int64_t cs, float *C,
                      int64_t ldc, int accumulate)
#if defined(MOROK_KERNEL_LIB)
    ;
#else
{
  int64_t k4 = lda / 4;
  if (M <= 0 || N <= 0 || k4 <= 0)
    return;
  const int64_t panel = k4 * MOROK_GEMM_NR * 4, qc = MOROK_GEMM8_KC / 4;
  for (int64_t jc = 0; jc < N; jc += MOROK_GEMM_NC)
    {
      int64_t nc = morok_gemm_min (MOROK_GEMM_NC, N - jc);
      for (int64_t q0 = 0; q0 < k4; q0 += qc)
        {
          int64_t kq = morok_gemm_min (qc, k4 - q0);
          int load_c = accumulate || q0 > 0;
          /* a panel: k4 quads of NR columns, NR bytes per k */
          MorokGemmPrefetch pf
              = morok_gemm_next_block (bq, MOROK_GEMM_NR, panel, MOROK_GEMM_NR, jc, MOROK_GEMM_NC,
                                       q0 * 4, MOROK_GEMM8_KC, N, k4 * 4);
          int64_t tiles = (M + MOROK_GEMM8_MR - 1) / MOROK_GEMM8_MR
                          * ((nc + MOROK_GEMM_NR - 1) / MOROK_GEMM_NR),
                  t = 0;
          for (int64_t ic = 0; ic < M; ic += MOROK_GEMM8_MC)
            {
              int64_t mc = morok_gemm_min (MOROK_GEMM8_MC, M - ic);
              for (int64_t jr = 0; jr < nc; jr += MOROK_GEMM_NR)
                {
                  int64_t j0 = jc + jr;
                  const int8_t *b = bq + j0 / MOROK_GEMM_NR * panel + q0 * MOROK_GEMM_NR * 4;
                  for (int64_t ir = 0; ir < mc; ir += MOROK_GEMM8_MR, t++)
                    {
                      /* a last panel of fewer than MR rows reads rows past
                       * M of qa: the scratch has them, never stored */
                      morok_gemm_prefetch_part (pf, t, tiles);
                      if (M == 1)
                        morok_gemm8_row (kq, (const uint32_t *) qa + q0, sa, b, sb + j0,
                                         corr + q0 / qc * cs + j0, C + j0,
                                         morok_gemm_min (MOROK_GEMM_NR, nc - jr), load_c);
                      else
                        morok_gemm8_tile (kq, (const uint32_t *) (qa + (ic + ir) * lda) + q0, k4,
                                          sa + ic + ir, b, sb + j0, corr + q0 / qc * cs + j0,
                                          C + (ic + ir) * ldc + j0, ldc,
                                          morok_gemm_min (MOROK_GEMM8_MR, mc - ir),
                                          morok_gemm_min (MOROK_GEMM_NR, nc - jr), load_c);
                    }
                }
            }
        }
    }
}
#endif
#endif
