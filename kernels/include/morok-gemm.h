/* SPDX-License-Identifier: MIT */
/* Single-threaded f32 matrix multiply for generated kernels:
 *
 *   C[m*ldc + n] (= or +=) sum_k A[m*sam + k*sak] * B[k*sbk + n*sbn]
 *
 * for any strides (transposed operands, stride 0 for broadcast). The caller
 * splits M (or N) across threads and calls this on its share.
 *
 * Over 800 lines on purpose: the f32 GEMM is one unit — micro-kernels per
 * ISA, the small-product paths, packing of A and B, the blocked driver and
 * the packed-weight entry points share its register tile and block sizes,
 * and the whole header is pasted into every generated translation unit, so
 * splitting it would only add headers that must always come together (the
 * reduced precisions have their own: morok-gemm-f16.h, -bf16.h, -i8.h,
 * -amx.h).
 *
 * GotoBLAS/BLIS structure, in C with clang vector extensions: B is packed by
 * blocks of KC x NC into panels NR columns wide (kept in L2; one panel, KC x NR
 * floats, in L1 while the micro-kernel walks down M), and an MR x NR register
 * tile of C accumulates over KC. A needs no packing when its rows are
 * contiguous in k (sak == 1, the layout of activations): the micro-kernel
 * broadcasts straight from MR rows, which measured faster than packing;
 * nor when its columns are contiguous in m (sam == 1) and B is one panel
 * (each tile then reads them once, as packing would); other strides, and a
 * last partial panel of rows, are packed MR-interleaved.
 * B packing from k-contiguous storage (sbk == 1, PyTorch's [out, in] weights)
 * transposes 16x16 (8x8) blocks in registers. Buffers are on the stack, no
 * malloc. When M or N is at most MOROK_GEMM_SMALL (8) and the other operand
 * has a unit stride, nothing is packed: dot products along k for a
 * k-contiguous B, broadcasts of A against B's rows for an n-contiguous one
 * (N small: the same on C^T = B^T A^T). Otherwise M == 1 and N == 1 take a
 * matrix-vector path that streams the matrix once.
 *
 * The entry points (MOROK_KERNEL_FN: morok_gemm_f32, _f32_packed) belong
 * to the kernel library (morok-prelude.h): where the renderer defines
 * MOROK_KERNEL_LIB, a unit gets their declarations and calls libmorok's
 * copy, compiled once at build time from this text; everything else here
 * stays static and is compiled only where called.
 *
 *   ISA               tile              vectors
 *   MOROK_ISA_AVX512  6 x 64 (24 zmm)   16 x f32
 *   MOROK_ISA_AVX2    6 x 16 (12 ymm)    8 x f32
 *   portable          4 x 4             scalar
 *
 * Against OpenBLAS: kernels/bench-gemm.c, and its table in docs/benchmarks.md.
 *
 *   // C[250 x 768] = X[250 x 3072] . W^T, W stored [768 x 3072]
 *   morok_gemm_f32 (250, 768, 3072, x, 3072, 1, w, 1, 3072, c, 768, 0);
 */
#pragma once

#ifndef MOROK_VEC512
#define MOROK_VEC512 __attribute__ ((min_vector_width (512)))
#endif

/* Tiles and blocks, picked by measurement on this machine (SPR, 48 KB L1d,
 * 2 MB L2; kernels/bench-gemm.c): on AVX-512, 6 x 64 (24 zmm accumulators, 4
 * loads and 6 broadcasts per 24 FMAs) beat 12 x 32, 14 x 32, 8 x 48 and
 * 8 x 32 on average over the encoder shapes, with KC = 128 so that
 * the B panel (KC x 64 floats, 32 KB) stays in L1d. MC x KC of A and the
 * KC x NC packed block of B stay in L2. AVX2 keeps the usual 6 x 16 (12 of its
 * 16 ymm registers). Stack use is about MOROK_GEMM_STACK_BYTES: 169 KB on
 * AVX-512, 338 KB on AVX2, 311 KB portable. */
#if defined(MOROK_ISA_AVX512)
typedef morok_f32x16 morok_gemm_vec;
typedef float morok_gemm_vecu __attribute__ ((ext_vector_type (16), aligned (4)));
#define MOROK_GEMM_VL 16
#define MOROK_GEMM_MR 6
#define MOROK_GEMM_NR 64
#define MOROK_GEMM_KC 128
#elif defined(MOROK_ISA_AVX2)
typedef morok_f32x8 morok_gemm_vec;
typedef float morok_gemm_vecu __attribute__ ((ext_vector_type (8), aligned (4)));
#define MOROK_GEMM_VL 8
#define MOROK_GEMM_MR 6
#define MOROK_GEMM_NR 16
#define MOROK_GEMM_KC 256
#else
typedef float morok_gemm_vec;
typedef float morok_gemm_vecu;
#define MOROK_GEMM_VL 1
#define MOROK_GEMM_MR 4
#define MOROK_GEMM_NR 4
#define MOROK_GEMM_KC 256
#endif
#define MOROK_GEMM_NV (MOROK_GEMM_NR / MOROK_GEMM_VL)
#define MOROK_GEMM_NC 256
/* the most k in a block: KC, stretched by an eighth where that saves a
 * short last block (morok_gemm_packed_kc) */
#define MOROK_GEMM_KC_MAX (MOROK_GEMM_KC + MOROK_GEMM_KC / 8)
#define MOROK_GEMM_MC (12 * MOROK_GEMM_MR)
#define MOROK_GEMM_STACK_BYTES                                                                     \
  (4 * (MOROK_GEMM_KC * MOROK_GEMM_NC + MOROK_GEMM_MC * MOROK_GEMM_KC_MAX + MOROK_GEMM_KC))

MOROK_INLINE int64_t
morok_gemm_min (int64_t a, int64_t b)
{
  return a < b ? a : b;
}

/* row[i] = a + i * ars for the MR rows of a tile's A, each pointer opaque
 * to the compiler: from a[i*ars] it derives every row's address from the
 * last one, a chain of dependent adds in each step that measured
 * slower (operands in L1). */
#define MOROK_GEMM_ROWS(row, a, ars)                                                               \
  _Pragma ("clang loop unroll(full)") for (int i_ = 0; i_ < MOROK_GEMM_MR; i_++)                   \
  {                                                                                                \
    row[i_] = (a) + i_ * (ars);                                                                    \
    __asm__("" : "+r"(row[i_]));                                                                   \
  }

/* The mr x nr corner of an MR x NR tile of sums into c (row stride ldc), =,
 * or += when load_c: whole vectors, then the columns left of a row. */
MOROK_INLINE void
morok_gemm_store_tile (morok_gemm_vec acc[MOROK_GEMM_MR][MOROK_GEMM_NV], float *restrict c,
                       int64_t ldc, int64_t mr, int64_t nr, int load_c)
{
#pragma clang loop unroll(full)
  for (int i = 0; i < MOROK_GEMM_MR; i++)
#pragma clang loop unroll(full)
    for (int j = 0; j < MOROK_GEMM_NV; j++)
      {
        float *p = c + i * ldc + j * MOROK_GEMM_VL;
        int64_t left = nr - j * MOROK_GEMM_VL;
        if (i >= mr || left <= 0)
          continue;
        if (left >= MOROK_GEMM_VL)
          {
            morok_gemm_vecu *pv = (morok_gemm_vecu *) p;
            *pv = load_c ? *pv + acc[i][j] : acc[i][j];
            continue;
          }
        float lanes[MOROK_GEMM_VL];
        *(morok_gemm_vecu *) lanes = acc[i][j];
        for (int64_t l = 0; l < left; l++)
          p[l] = (load_c ? p[l] : 0.0f) + lanes[l];
      }
}

/* The MR x NR tile at c += or = A-sliver . B-panel over kc, with A read at
 * a[i*ars + k*aks] (packed: ars = 1, aks = MR; direct rows: ars = sam, aks = 1)
 * and the packed B panel at b[k*NR + j]; only its first nv vectors of
 * columns are summed. Only the top-left mr x nr part of the tile is stored. */
MOROK_INLINE MOROK_VEC512 void
morok_gemm_tile_nv (const int nv, int64_t kc, const float *restrict a, int64_t ars, int64_t aks,
                    const float *restrict b, float *restrict c, int64_t ldc, int64_t mr, int64_t nr,
                    int load_c)
{
  /* The accumulators live in registers only if every loop over i and j is
   * unrolled; clang's own heuristics stop short at 12 x 2. */
  morok_gemm_vec acc[MOROK_GEMM_MR][MOROK_GEMM_NV];
#pragma clang loop unroll(full)
  for (int i = 0; i < MOROK_GEMM_MR; i++)
#pragma clang loop unroll(full)
    for (int j = 0; j < MOROK_GEMM_NV; j++)
      acc[i][j] = (morok_gemm_vec) 0.0f;

  const float *row[MOROK_GEMM_MR];
  MOROK_GEMM_ROWS (row, a, ars);
  for (int64_t k = 0; k < kc; k++)
    {
      morok_gemm_vec bv[MOROK_GEMM_NV];
#pragma clang loop unroll(full)
      for (int j = 0; j < nv; j++)
        bv[j] = *(const morok_gemm_vec *) (b + j * MOROK_GEMM_VL);
#pragma clang loop unroll(full)
      for (int i = 0; i < MOROK_GEMM_MR; i++)
        {
          morok_gemm_vec av = (morok_gemm_vec) row[i][k * aks];
#pragma clang loop unroll(full)
          for (int j = 0; j < nv; j++)
            acc[i][j] += av * bv[j];
        }
      b += MOROK_GEMM_NR;
    }

  morok_gemm_store_tile (acc, c, ldc, mr, nr, load_c);
}

/* The whole tile. One out-of-line copy serves both kinds of A: inlined at
 * each call site it measured no faster and cost more compile time. */
static MOROK_VEC512 __attribute__ ((noinline, unused)) void
morok_gemm_tile (int64_t kc, const float *restrict a, int64_t ars, int64_t aks,
                 const float *restrict b, float *restrict c, int64_t ldc, int64_t mr, int64_t nr,
                 int load_c)
{
  morok_gemm_tile_nv (MOROK_GEMM_NV, kc, a, ars, aks, b, c, ldc, mr, nr, load_c);
}

/* The tile of a last panel of at most VL columns, one vector wide: N = 129
 * (Silero's STFT cosines, 2 panels and 1 column) otherwise spends a third of
 * its FMAs on the zeros of a whole panel. */
static MOROK_VEC512 __attribute__ ((noinline, unused)) void
morok_gemm_tile_narrow (int64_t kc, const float *restrict a, int64_t ars, int64_t aks,
                        const float *restrict b, float *restrict c, int64_t ldc, int64_t mr,
                        int64_t nr, int load_c)
{
  morok_gemm_tile_nv (1, kc, a, ars, aks, b, c, ldc, mr, nr, load_c);
}

/* Packs rows [0, mr) of A (row stride sam, k stride sak) over kc into one
 * MR-interleaved panel, dst[k*MR + i], rows mr..MR-1 zero. */
MOROK_INLINE void
morok_gemm_pack_a (int64_t mr, int64_t kc, const float *a, int64_t sam, int64_t sak, float *dst)
{
  if (mr == MOROK_GEMM_MR && sam == 1) /* column-major A: MR floats per k */
    {
      for (int64_t k = 0; k < kc; k++)
#pragma clang loop unroll(full)
        for (int i = 0; i < MOROK_GEMM_MR; i++)
          dst[k * MOROK_GEMM_MR + i] = a[k * sak + i];
      return;
    }
  for (int64_t k = 0; k < kc; k++)
    for (int64_t i = 0; i < MOROK_GEMM_MR; i++)
      dst[k * MOROK_GEMM_MR + i] = i < mr ? a[i * sam + k * sak] : 0.0f;
}

#if MOROK_GEMM_VL > 1
/* In-register transpose of VL x VL floats (morok-prelude.h). */
#if MOROK_GEMM_VL == 16
#define MOROK_GEMM_TRANSPOSE(r) MOROK_TRANSPOSE16 (r)
#else
#define MOROK_GEMM_TRANSPOSE(r) MOROK_TRANSPOSE8 (r)
#endif

/* Packs full VL x VL blocks of a k-contiguous B (b[n*sbn + k]) into one
 * panel: dst[k*NR + j] for k < kc - kc % VL, j < NR. */
MOROK_INLINE MOROK_VEC512 void
morok_gemm_pack_b_kmajor (int64_t kc, const float *b, int64_t sbn, float *dst)
{
  for (int jb = 0; jb < MOROK_GEMM_NR; jb += MOROK_GEMM_VL)
    for (int64_t k0 = 0; k0 + MOROK_GEMM_VL <= kc; k0 += MOROK_GEMM_VL)
      {
        /* Fully unrolled, or r[] stays in memory. */
        morok_gemm_vec r[MOROK_GEMM_VL];
#pragma clang loop unroll(full)
        for (int R = 0; R < MOROK_GEMM_VL; R++)
          r[R] = *(const morok_gemm_vecu *) (b + (jb + R) * sbn + k0);
        MOROK_GEMM_TRANSPOSE (r)
#pragma clang loop unroll(full)
        for (int R = 0; R < MOROK_GEMM_VL; R++)
          *(morok_gemm_vec *) (dst + (k0 + R) * MOROK_GEMM_NR + jb) = r[R];
      }
}
#endif

/* Packs a kc x nc block of B into NR-wide panels, dst[p*kc*NR + k*NR + j] for
 * column p*NR + j, zero beyond nc. Row-major B is read row by row across all
 * full panels, so that the reads stream (panel by panel, every panel would
 * touch kc rows, a page apart); k-contiguous B is transposed by blocks. */
MOROK_INLINE MOROK_VEC512 void
morok_gemm_pack_b (int64_t kc, int64_t nc, const float *b, int64_t sbk, int64_t sbn, float *dst)
{
  int64_t full = nc / MOROK_GEMM_NR, p = 0;
  if (sbn == 1)
    {
      for (int64_t k = 0; k < kc; k++)
        for (int64_t q = 0; q < full; q++)
#pragma clang loop unroll(full)
          for (int j = 0; j < MOROK_GEMM_NV; j++)
            *(morok_gemm_vec *) (dst + q * kc * MOROK_GEMM_NR + k * MOROK_GEMM_NR
                                 + j * MOROK_GEMM_VL)
                = *(const morok_gemm_vecu *) (b + k * sbk + q * MOROK_GEMM_NR + j * MOROK_GEMM_VL);
      p = full;
    }
  for (; p * MOROK_GEMM_NR < nc; p++)
    {
      int64_t n0 = p * MOROK_GEMM_NR, nr = morok_gemm_min (MOROK_GEMM_NR, nc - n0);
      const float *bp = b + n0 * sbn;
      float *dp = dst + p * kc * MOROK_GEMM_NR;
      int64_t k = 0;
#if MOROK_GEMM_VL > 1
      if (nr == MOROK_GEMM_NR && sbk == 1)
        {
          morok_gemm_pack_b_kmajor (kc, bp, sbn, dp);
          k = kc - kc % MOROK_GEMM_VL;
        }
      else if (sbn == 1) /* a last, partial panel of row-major B: whole vectors, then the rest */
        {
          int64_t nv = nr / MOROK_GEMM_VL * MOROK_GEMM_VL;
          for (; k < kc; k++)
            {
              float *d = dp + k * MOROK_GEMM_NR;
              const float *s = bp + k * sbk;
              for (int64_t j = 0; j < nv; j += MOROK_GEMM_VL)
                *(morok_gemm_vec *) (d + j) = *(const morok_gemm_vecu *) (s + j);
              for (int64_t j = nv; j < MOROK_GEMM_NR; j++)
                d[j] = j < nr ? s[j] : 0.0f;
            }
        }
#endif
      for (; k < kc; k++)
        for (int64_t j = 0; j < MOROK_GEMM_NR; j++)
          dp[k * MOROK_GEMM_NR + j] = j < nr ? bp[k * sbk + j * sbn] : 0.0f;
    }
}

/* Matrix-vector: y[j*incy] (=|+=) sum_k x[k*incx] W[k*swk + j*swj], j < n.
 * M == 1 is this with x = A's row, W = B; N == 1 with x = B's column and
 * W = A seen transposed. Each element of W is read once, straight from its
 * storage, which is the whole cost: packing would read it twice. */
static MOROK_VEC512 __attribute__ ((noinline, unused)) void
morok_gemv_f32 (int64_t K, int64_t n, const float *x, int64_t incx, const float *W, int64_t swk,
                int64_t swj, float *y, int64_t incy, int accumulate)
{
  /* W rows contiguous in j: 64 floats of y (a cache line's worth per vector
   * on AVX-512) stay in registers while W streams by rows. */
  enum
  {
    JB = 64,
    GV = JB / MOROK_GEMM_VL
  };
  int64_t j = 0;
  if (swj == 1)
    for (; j + JB <= n; j += JB)
      {
        morok_gemm_vec acc[GV];
#pragma clang loop unroll(full)
        for (int v = 0; v < GV; v++)
          acc[v] = (morok_gemm_vec) 0.0f;
        for (int64_t k = 0; k < K; k++)
          {
            morok_gemm_vec xk = (morok_gemm_vec) x[k * incx];
#pragma clang loop unroll(full)
            for (int v = 0; v < GV; v++)
              acc[v] += xk * *(const morok_gemm_vecu *) (W + k * swk + j + v * MOROK_GEMM_VL);
          }
        float out[JB];
#pragma clang loop unroll(full)
        for (int v = 0; v < GV; v++)
          *(morok_gemm_vecu *) (out + v * MOROK_GEMM_VL) = acc[v];
        for (int64_t t = 0; t < JB; t++)
          y[(j + t) * incy] = (accumulate ? y[(j + t) * incy] : 0.0f) + out[t];
      }

  /* W columns contiguous in k: 4 dot products at a time, x copied by chunks
   * into a contiguous buffer so that any incx works. */
  if (swk == 1 && n - j >= 4)
    {
      float xb[MOROK_GEMM_KC] __attribute__ ((aligned (64)));
      for (int64_t k0 = 0; k0 < K; k0 += MOROK_GEMM_KC)
        {
          int64_t kc = morok_gemm_min (MOROK_GEMM_KC, K - k0);
          int64_t kv = kc - kc % MOROK_GEMM_VL;
          for (int64_t k = 0; k < kc; k++)
            xb[k] = x[(k0 + k) * incx];
          int64_t jj = j;
          for (; jj + 4 <= n; jj += 4)
            {
              const float *w = W + k0 + jj * swj;
              morok_gemm_vec acc[4];
              for (int v = 0; v < 4; v++)
                acc[v] = (morok_gemm_vec) 0.0f;
              for (int64_t k = 0; k < kv; k += MOROK_GEMM_VL)
                {
                  morok_gemm_vec xv = *(const morok_gemm_vec *) (xb + k);
                  for (int v = 0; v < 4; v++)
                    acc[v] += xv * *(const morok_gemm_vecu *) (w + v * swj + k);
                }
              for (int v = 0; v < 4; v++)
                {
                  float s = 0.0f;
                  float lanes[MOROK_GEMM_VL];
                  *(morok_gemm_vecu *) lanes = acc[v];
                  for (int l = 0; l < MOROK_GEMM_VL; l++)
                    s += lanes[l];
                  for (int64_t k = kv; k < kc; k++)
                    s += xb[k] * w[v * swj + k];
                  float *yp = y + (jj + v) * incy;
                  *yp = (accumulate || k0 > 0 ? *yp : 0.0f) + s;
                }
            }
        }
      j = n - (n - j) % 4;
    }

  for (; j < n; j++)
    {
      float s = 0.0f;
      for (int64_t k = 0; k < K; k++)
        s += x[k * incx] * W[k * swk + j * swj];
      y[j * incy] = (accumulate ? y[j * incy] : 0.0f) + s;
    }
}

#if MOROK_GEMM_VL > 1
/* ---- small M or N: no packing ----
 *
 * With M (or, transposed, N) at most MOROK_GEMM_SMALL, packing the wide
 * operand costs as much as the product itself: these paths read it once,
 * straight from its storage, with the few rows of the narrow side in
 * registers (Silero VAD: every contraction of a chunk). */
/* The k loops of these paths are not unrolled with 512-bit vectors: clang
 * unrolled them by 4 to 8, more B vectors live than the 32 registers hold
 * beside the accumulators, and the loops spilled to the stack (Silero's
 * small products ran faster rolled; the one-row products over 512 columns
 * as fast). With 256-bit vectors the unrolled loops ran as fast or
 * faster. */
#if defined(MOROK_ISA_AVX512)
#define MOROK_GEMM_K_LOOP _Pragma ("clang loop unroll(disable)")
#else
#define MOROK_GEMM_K_LOOP
#endif
#ifndef MOROK_GEMM_SMALL /* the renderer defines it (kernels/weight-pack.h) */
#define MOROK_GEMM_SMALL 8
#endif
#define MOROK_GEMM_DOT_KC 1024 /* k per packed block of the narrow operand */

#if defined(MOROK_ISA_AVX512)
typedef int32_t morok_gemm_ivec __attribute__ ((ext_vector_type (16)));
#define MOROK_GEMM_HLO_8 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23
#define MOROK_GEMM_HHI_8 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31
#define MOROK_GEMM_HLO_4 0, 1, 2, 3, 16, 17, 18, 19, 8, 9, 10, 11, 24, 25, 26, 27
#define MOROK_GEMM_HHI_4 4, 5, 6, 7, 20, 21, 22, 23, 12, 13, 14, 15, 28, 29, 30, 31
#define MOROK_GEMM_HLO_2 0, 1, 16, 17, 4, 5, 20, 21, 8, 9, 24, 25, 12, 13, 28, 29
#define MOROK_GEMM_HHI_2 2, 3, 18, 19, 6, 7, 22, 23, 10, 11, 26, 27, 14, 15, 30, 31
#define MOROK_GEMM_HLO_1 0, 16, 2, 18, 4, 20, 6, 22, 8, 24, 10, 26, 12, 28, 14, 30
#define MOROK_GEMM_HHI_1 1, 17, 3, 19, 5, 21, 7, 23, 9, 25, 11, 27, 13, 29, 15, 31
#else
typedef int32_t morok_gemm_ivec __attribute__ ((ext_vector_type (8)));
#define MOROK_GEMM_HLO_4 0, 1, 2, 3, 8, 9, 10, 11
#define MOROK_GEMM_HHI_4 4, 5, 6, 7, 12, 13, 14, 15
#define MOROK_GEMM_HLO_2 0, 1, 8, 9, 4, 5, 12, 13
#define MOROK_GEMM_HHI_2 2, 3, 10, 11, 6, 7, 14, 15
#define MOROK_GEMM_HLO_1 0, 8, 2, 10, 4, 12, 6, 14
#define MOROK_GEMM_HHI_1 1, 9, 3, 11, 5, 13, 7, 15
#endif

/* p[0 .. n-1], 0 <= n <= VL, zeros above, reading nothing past p[n-1]. */
MOROK_INLINE morok_gemm_vec
morok_gemm_load_part (const float *p, int64_t n)
{
#if defined(MOROK_ISA_AVX512)
  return __builtin_ia32_loadups512_mask (p, (morok_gemm_vec) 0.0f,
                                         (unsigned short) ((1u << n) - 1));
#else
  const morok_gemm_ivec lane = { 0, 1, 2, 3, 4, 5, 6, 7 };
  return __builtin_ia32_maskloadps256 ((const morok_gemm_vec *) p, lane < (int32_t) n);
#endif
}

/* One stage of the horizontal-sum tree: in each block of 2H lanes, x's
 * partial sums fold into the low H lanes and y's into the high H. A lane's
 * label (the accumulator it sums) is the low half's, carried alongside. */
// clang-format off
#define MOROK_GEMM_HSTAGE(H)                                                                       \
  if (MOROK_GEMM_VL >= 2 * (H))                                                                    \
    {                                                                                              \
      int half = cnt > 1 ? cnt / 2 : 1;                                                            \
      _Pragma ("clang loop unroll(full)")                                                          \
      for (int i = 0; i < half; i++)                                                               \
        {                                                                                          \
          int x = cnt > 1 ? 2 * i : 0, y = cnt > 1 ? 2 * i + 1 : 0;                                \
          v[i] = __builtin_shufflevector (v[x], v[y], MOROK_GEMM_HLO_##H)                          \
                 + __builtin_shufflevector (v[x], v[y], MOROK_GEMM_HHI_##H);                       \
          lab[i] = __builtin_shufflevector (lab[x], lab[y], MOROK_GEMM_HLO_##H);                   \
        }                                                                                          \
      cnt = half;                                                                                  \
    }
// clang-format on

/* out[t] = the sum of v[t]'s lanes, t < nt (a power of two <= VL), in
 * log2 (VL) stages of shuffles: 15 shuffle pairs for 16 vectors where a
 * transpose takes 64. */
MOROK_INLINE MOROK_VEC512 void
morok_gemm_hsum (const int nt, morok_gemm_vec *v, float *out)
{
  morok_gemm_ivec lab[MOROK_GEMM_VL];
#pragma clang loop unroll(full)
  for (int t = 0; t < nt; t++)
    lab[t] = (morok_gemm_ivec) t;
  int cnt = nt;
#if MOROK_GEMM_VL == 16
  MOROK_GEMM_HSTAGE (8)
#endif
  MOROK_GEMM_HSTAGE (4)
  MOROK_GEMM_HSTAGE (2)
  MOROK_GEMM_HSTAGE (1)
#pragma clang loop unroll(full)
  for (int l = 0; l < MOROK_GEMM_VL; l++)
    out[lab[0][l]] = v[0][l];
}

/* Dot-product form, B k-contiguous (sbk == 1: PyTorch's [out, in] weights):
 * C[i*csm + n*csn] (=|+=) sum_k ab[i*lda + k] B[n*sbn + k], i < mr <= mb,
 * over kc. ab holds mb rows of A packed k-contiguous, zero from kc to the
 * next multiple of VL. A tile is mb rows x VL/mb columns of B, one vector
 * accumulator per dot product, summed by morok_gemm_hsum. */
MOROK_INLINE MOROK_VEC512 void
morok_gemm_dot_rows (const int mb, int64_t N, int64_t kc, const float *ab, int64_t lda,
                     const float *B, int64_t sbn, float *C, int64_t csm, int64_t csn, int64_t mr,
                     int load_c)
{
  const int nb = MOROK_GEMM_VL / mb;
  const int64_t kv = kc - kc % MOROK_GEMM_VL;
  for (int64_t n0 = 0; n0 < N; n0 += nb)
    {
      /* a last partial group repeats column N - 1, whose sums are dropped */
      const float *w[MOROK_GEMM_VL];
#pragma clang loop unroll(full)
      for (int j = 0; j < nb; j++)
        w[j] = B + morok_gemm_min (n0 + j, N - 1) * sbn;
      morok_gemm_vec acc[MOROK_GEMM_VL];
#pragma clang loop unroll(full)
      for (int t = 0; t < mb * nb; t++)
        acc[t] = (morok_gemm_vec) 0.0f;
      MOROK_GEMM_K_LOOP
      for (int64_t k = 0; k < kv; k += MOROK_GEMM_VL)
#pragma clang loop unroll(full)
        for (int j = 0; j < nb; j++)
          {
            morok_gemm_vec wv = *(const morok_gemm_vecu *) (w[j] + k);
#pragma clang loop unroll(full)
            for (int i = 0; i < mb; i++)
              acc[i * nb + j] += *(const morok_gemm_vec *) (ab + i * lda + k) * wv;
          }
      if (kv < kc)
#pragma clang loop unroll(full)
        for (int j = 0; j < nb; j++)
          {
            morok_gemm_vec wv = morok_gemm_load_part (w[j] + kv, kc - kv);
#pragma clang loop unroll(full)
            for (int i = 0; i < mb; i++)
              acc[i * nb + j] += *(const morok_gemm_vec *) (ab + i * lda + kv) * wv;
          }
      float out[MOROK_GEMM_VL];
      morok_gemm_hsum (mb * nb, acc, out);
      int64_t nr = morok_gemm_min (nb, N - n0);
      for (int64_t i = 0; i < mr; i++)
        for (int64_t j = 0; j < nr; j++)
          {
            float *c = C + i * csm + (n0 + j) * csn;
            *c = (load_c ? *c : 0.0f) + out[i * nb + j];
          }
    }
}

static MOROK_VEC512 __attribute__ ((noinline, unused)) void
morok_gemm_dot_f32 (int64_t M, int64_t N, int64_t K, const float *A, int64_t sam, int64_t sak,
                    const float *B, int64_t sbn, float *C, int64_t csm, int64_t csn, int accumulate)
{
  enum
  {
    LDA = MOROK_GEMM_DOT_KC + MOROK_GEMM_VL
  };
  float ab[4 * LDA] __attribute__ ((aligned (64)));
  for (int64_t m0 = 0; m0 < M; m0 += 4)
    {
      int64_t mr = morok_gemm_min (4, M - m0);
      for (int64_t k0 = 0; k0 < K; k0 += MOROK_GEMM_DOT_KC)
        {
          int64_t kc = morok_gemm_min (MOROK_GEMM_DOT_KC, K - k0);
          int64_t kp = (kc + MOROK_GEMM_VL - 1) / MOROK_GEMM_VL * MOROK_GEMM_VL;
          for (int64_t i = 0; i < mr; i++)
            {
              const float *a = A + (m0 + i) * sam + k0 * sak;
              for (int64_t k = 0; k < kc; k++)
                ab[i * LDA + k] = a[k * sak];
              for (int64_t k = kc; k < kp; k++)
                ab[i * LDA + k] = 0.0f;
            }
          for (int64_t i = mr; i < (mr == 3 ? 4 : mr); i++)
            for (int64_t k = 0; k < kp; k++)
              ab[i * LDA + k] = 0.0f;
          const float *b = B + k0;
          float *c = C + m0 * csm;
          int load_c = accumulate || k0 > 0;
          if (mr == 1)
            morok_gemm_dot_rows (1, N, kc, ab, LDA, b, sbn, c, csm, csn, mr, load_c);
          else if (mr == 2)
            morok_gemm_dot_rows (2, N, kc, ab, LDA, b, sbn, c, csm, csn, mr, load_c);
          else
            morok_gemm_dot_rows (4, N, kc, ab, LDA, b, sbn, c, csm, csn, mr, load_c);
        }
    }
}

/* Broadcast form, B n-contiguous (sbn == 1): C[i*csm + n*csn] (=|+=)
 * sum_k a[i][k*sak] B[k*sbk + n] for i < mr <= mb, n < N, a tile of mb rows
 * x nv vectors (MOROK_GEMM_BACC accumulators) over all of K, A broadcast
 * from its rows, B read by rows straight from storage, a last partial panel
 * by masked loads. */
#if defined(MOROK_ISA_AVX512)
#define MOROK_GEMM_BACC 16 /* of 32 zmm */
#else
#define MOROK_GEMM_BACC 8 /* of 16 ymm */
#endif
/* One block of nr <= nv * VL columns of C, from b and to c. */
MOROK_INLINE MOROK_VEC512 void
morok_gemm_bcast_block (const int mb, const int nv, int64_t nr, int64_t K, const float *const *a,
                        int64_t sak, const float *b, int64_t sbk, float *C, int64_t csm,
                        int64_t csn, int64_t mr, int accumulate)
{
  const int64_t nr_max = (int64_t) nv * MOROK_GEMM_VL;
  morok_gemm_vec acc[MOROK_GEMM_BACC];
#pragma clang loop unroll(full)
  for (int t = 0; t < mb * nv; t++)
    acc[t] = (morok_gemm_vec) 0.0f;
  if (nr == nr_max)
    MOROK_GEMM_K_LOOP
  for (int64_t k = 0; k < K; k++)
    {
      morok_gemm_vec bv[MOROK_GEMM_BACC];
#pragma clang loop unroll(full)
      for (int j = 0; j < nv; j++)
        bv[j] = *(const morok_gemm_vecu *) (b + k * sbk + j * MOROK_GEMM_VL);
#pragma clang loop unroll(full)
      for (int i = 0; i < mb; i++)
        {
          morok_gemm_vec av = (morok_gemm_vec) a[i][k * sak];
#pragma clang loop unroll(full)
          for (int j = 0; j < nv; j++)
            acc[i * nv + j] += av * bv[j];
        }
    }
  else
  {
    int64_t lanes[MOROK_GEMM_BACC];
#pragma clang loop unroll(full)
    for (int j = 0; j < nv; j++)
      lanes[j] = nr - j * MOROK_GEMM_VL < 0               ? 0
                 : nr - j * MOROK_GEMM_VL > MOROK_GEMM_VL ? MOROK_GEMM_VL
                                                          : nr - j * MOROK_GEMM_VL;
    MOROK_GEMM_K_LOOP
    for (int64_t k = 0; k < K; k++)
      {
        morok_gemm_vec bv[MOROK_GEMM_BACC];
#pragma clang loop unroll(full)
        for (int j = 0; j < nv; j++)
          bv[j] = morok_gemm_load_part (b + k * sbk + j * MOROK_GEMM_VL, lanes[j]);
#pragma clang loop unroll(full)
        for (int i = 0; i < mb; i++)
          {
            morok_gemm_vec av = (morok_gemm_vec) a[i][k * sak];
#pragma clang loop unroll(full)
            for (int j = 0; j < nv; j++)
              acc[i * nv + j] += av * bv[j];
          }
      }
  }
  if (csn == 1 && nr == nr_max)
    {
#pragma clang loop unroll(full)
      for (int i = 0; i < mb; i++)
        if (i < mr)
#pragma clang loop unroll(full)
          for (int j = 0; j < nv; j++)
            {
              morok_gemm_vecu *p = (morok_gemm_vecu *) (C + i * csm + j * MOROK_GEMM_VL);
              *p = accumulate ? *p + acc[i * nv + j] : acc[i * nv + j];
            }
      return;
    }
  float tile[MOROK_GEMM_BACC * MOROK_GEMM_VL];
#pragma clang loop unroll(full)
  for (int t = 0; t < mb * nv; t++)
    *(morok_gemm_vecu *) (tile + t * MOROK_GEMM_VL) = acc[t];
  for (int64_t i = 0; i < mr; i++)
    for (int64_t j = 0; j < nr; j++)
      {
        float *c = C + i * csm + j * csn;
        *c = (accumulate ? *c : 0.0f) + tile[i * nr_max + j];
      }
}

/* All N columns for mb rows: blocks of BACC / mb vectors, then of 4, then
 * what is left: one masked block of 4 vectors when it spans more than one
 * (single vectors leave too few FMA chains to hide their latency), else
 * single vectors, the last one masked. */
MOROK_INLINE MOROK_VEC512 void
morok_gemm_bcast_rows (const int mb, int64_t N, int64_t K, const float *const *a, int64_t sak,
                       const float *B, int64_t sbk, float *C, int64_t csm, int64_t csn, int64_t mr,
                       int accumulate)
{
  const int nv = MOROK_GEMM_BACC / mb;
  int64_t n0 = 0;
  /* 4 rows over 4k + 1 vectors (the STFT cosines, 129 columns = 9): blocks
   * of 3, the last one masked, not 4-vector blocks and one vector of 4
   * FMA chains, which measured slower */
  int64_t vectors = (N + MOROK_GEMM_VL - 1) / MOROK_GEMM_VL;
  if (nv == 4 && vectors > 1 && vectors % 4 == 1)
    {
      for (; n0 < N; n0 += 3 * MOROK_GEMM_VL)
        morok_gemm_bcast_block (mb, 3, morok_gemm_min (3 * MOROK_GEMM_VL, N - n0), K, a, sak,
                                B + n0, sbk, C + n0 * csn, csm, csn, mr, accumulate);
      return;
    }
  for (; n0 + nv * MOROK_GEMM_VL <= N; n0 += nv * MOROK_GEMM_VL)
    morok_gemm_bcast_block (mb, nv, nv * MOROK_GEMM_VL, K, a, sak, B + n0, sbk, C + n0 * csn, csm,
                            csn, mr, accumulate);
  /* narrower blocks keep several accumulator chains going past the wide ones */
  if (nv > 4)
    for (; n0 + 4 * MOROK_GEMM_VL <= N; n0 += 4 * MOROK_GEMM_VL)
      morok_gemm_bcast_block (mb, 4, 4 * MOROK_GEMM_VL, K, a, sak, B + n0, sbk, C + n0 * csn, csm,
                              csn, mr, accumulate);
  if (nv >= 4 && N - n0 > MOROK_GEMM_VL)
    {
      morok_gemm_bcast_block (mb, 4, N - n0, K, a, sak, B + n0, sbk, C + n0 * csn, csm, csn, mr,
                              accumulate);
      return;
    }
  for (; n0 < N; n0 += MOROK_GEMM_VL)
    morok_gemm_bcast_block (mb, 1, morok_gemm_min (MOROK_GEMM_VL, N - n0), K, a, sak, B + n0, sbk,
                            C + n0 * csn, csm, csn, mr, accumulate);
}

static MOROK_VEC512 __attribute__ ((noinline, unused)) void
morok_gemm_bcast_f32 (int64_t M, int64_t N, int64_t K, const float *A, int64_t sam, int64_t sak,
                      const float *B, int64_t sbk, float *C, int64_t csm, int64_t csn,
                      int accumulate)
{
  for (int64_t m0 = 0; m0 < M; m0 += 4)
    {
      /* rows past M repeat the last one, their sums dropped */
      int64_t mr = morok_gemm_min (4, M - m0);
      const float *a[4];
      for (int i = 0; i < 4; i++)
        a[i] = A + (m0 + morok_gemm_min (i, mr - 1)) * sam;
      float *c = C + m0 * csm;
      if (mr == 1)
        morok_gemm_bcast_rows (1, N, K, a, sak, B, sbk, c, csm, csn, mr, accumulate);
      else if (mr == 2)
        morok_gemm_bcast_rows (2, N, K, a, sak, B, sbk, c, csm, csn, mr, accumulate);
      else
        morok_gemm_bcast_rows (4, N, K, a, sak, B, sbk, c, csm, csn, mr, accumulate);
    }
}

/* C[m*csm + n*csn] (=|+=) A B through the paths above when M is small and B
 * has a unit stride; FALSE (nothing done) otherwise. */
MOROK_INLINE int
morok_gemm_small (int64_t M, int64_t N, int64_t K, const float *A, int64_t sam, int64_t sak,
                  const float *B, int64_t sbk, int64_t sbn, float *C, int64_t csm, int64_t csn,
                  int accumulate)
{
  if (M > MOROK_GEMM_SMALL)
    return 0;
  if (sbn == 1)
    morok_gemm_bcast_f32 (M, N, K, A, sam, sak, B, sbk, C, csm, csn, accumulate);
  else if (sbk == 1)
    morok_gemm_dot_f32 (M, N, K, A, sam, sak, B, sbn, C, csm, csn, accumulate);
  else
    return 0;
  return 1;
}
#endif

/* Memory to ask into L2 while a block runs: `runs` runs of `lines` cache
 * lines, `stride` bytes apart from `base` (none when runs is 0). */
typedef struct
{
  const char *base;
  int64_t stride, runs, lines;
} MorokGemmPrefetch;

/* Part t of @parts of @pf's lines, each asked into L2 (prefetcht1). The
 * run and line are stepped, not divided out of each line's number: two
 * 64-bit divisions a line were a measurable share of Silero's batched LSTM
 * product (64 x 256 x 512, about 90 lines a tile). */
MOROK_INLINE void
morok_gemm_prefetch_part (MorokGemmPrefetch pf, int64_t t, int64_t parts)
{
  int64_t lines = pf.runs * pf.lines;
  int64_t l = lines * t / parts, end = lines * (t + 1) / parts;
  if (l >= end)
    return;
  const char *run = pf.base + l / pf.lines * pf.stride;
  for (int64_t line = l % pf.lines; l < end; l++)
    {
      __builtin_prefetch (run + line * 64, 0, 2);
      if (++line == pf.lines)
        line = 0, run += pf.stride;
    }
}

/* The block of a packed B that follows the one of columns jc .. jc + nc - 1
 * and k k0 .. k0 + kc - 1: the next kc of the same columns or, after the
 * last, the next nc columns' first kc (none past N). B is in panels of @nr
 * columns, @panel_bytes apart, @k_bytes per k within a panel; nc and kc
 * are the caller's block sizes. The weights of a model come from memory:
 * a product asks for its next block while it works on this one. The AMX
 * kernel walks its own: its k steps are a few hundred cycles, too short for
 * the divisions of morok_gemm_prefetch_part at each. A B of at most
 * MOROK_GEMM_PREFETCH_MIN bytes is not asked for: it fits in L2 (1 MB on
 * Zen 4 and 5, 2 MB on Sapphire Rapids), and the requests only took issue
 * slots from the tiles (Silero's batched plan; GigaAM's products, every B
 * above 2 MB, keep them). */
#define MOROK_GEMM_PREFETCH_MIN (1 << 20)
MOROK_INLINE MorokGemmPrefetch
morok_gemm_next_block (const void *bp, int64_t nr, int64_t panel_bytes, int64_t k_bytes, int64_t jc,
                       int64_t nc, int64_t k0, int64_t kc, int64_t N, int64_t K)
{
  if ((N + nr - 1) / nr * panel_bytes <= MOROK_GEMM_PREFETCH_MIN)
    return (MorokGemmPrefetch){ 0, 0, 0, 0 };
  int last = k0 + kc >= K;
  int64_t njc = last ? jc + nc : jc, nk = last ? 0 : k0 + kc;
  int64_t cols = morok_gemm_min (N, njc + nc) - njc;
  MorokGemmPrefetch pf = {
    (const char *) bp + njc / nr * panel_bytes + nk * k_bytes,
    panel_bytes,
    cols > 0 ? (cols + nr - 1) / nr : 0,
    morok_gemm_min (kc, K - nk) * k_bytes / 64,
  };
  return pf;
}

/* C[M x nc] (=|+=) A[M x kc] B-panels: the panel of columns jr .. jr + NR - 1
 * at bp + jr / NR * panel_stride, read as b[k*NR + j]. A's rows are walked in
 * MC blocks, each panel of the block once per MR rows. The lines of @pf are
 * spread over the tiles, a few before each. */
static MOROK_VEC512 __attribute__ ((noinline, unused)) void
morok_gemm_block (int64_t M, int64_t nc, int64_t kc, const float *A, int64_t sam, int64_t sak,
                  const float *bp, int64_t panel_stride, float *C, int64_t ldc, int load_c,
                  MorokGemmPrefetch pf)
{
  float apack[MOROK_GEMM_MC * MOROK_GEMM_KC_MAX] __attribute__ ((aligned (64)));
  int64_t tiles
      = (M + MOROK_GEMM_MR - 1) / MOROK_GEMM_MR * ((nc + MOROK_GEMM_NR - 1) / MOROK_GEMM_NR);
  int64_t t = 0;
  for (int64_t ic = 0; ic < M; ic += MOROK_GEMM_MC)
    {
      int64_t mc = morok_gemm_min (MOROK_GEMM_MC, M - ic);
      const float *a = A + ic * sam;
      /* Rows contiguous in k are read in place, and so are columns
       * contiguous in m when one panel of B is all there is (each tile
       * reads them once, as packing would: attention's v^T), except a
       * last partial panel, which is packed (zero rows) so as never to
       * read past A's last row. */
      int direct = sak == 1 || (sam == 1 && nc <= MOROK_GEMM_NR);
      int64_t full = direct ? mc - mc % MOROK_GEMM_MR : 0;
      for (int64_t ir = full; ir < mc; ir += MOROK_GEMM_MR)
        morok_gemm_pack_a (morok_gemm_min (MOROK_GEMM_MR, mc - ir), kc, a + ir * sam, sam, sak,
                           apack + ir * kc);
      for (int64_t jr = 0; jr < nc; jr += MOROK_GEMM_NR)
        {
          const float *b = bp + jr / MOROK_GEMM_NR * panel_stride;
          int64_t nr = morok_gemm_min (MOROK_GEMM_NR, nc - jr);
          float *c = C + ic * ldc + jr;
          for (int64_t ir = 0; ir < mc; ir += MOROK_GEMM_MR, t++)
            {
              morok_gemm_prefetch_part (pf, t, tiles);
              void (*tile) (int64_t, const float *, int64_t, int64_t, const float *, float *,
                            int64_t, int64_t, int64_t, int)
                  = nr <= MOROK_GEMM_VL && MOROK_GEMM_NV > 1 ? morok_gemm_tile_narrow
                                                             : morok_gemm_tile;
              if (ir < full)
                tile (kc, a + ir * sam, sam, sak, b, c + ir * ldc, ldc, MOROK_GEMM_MR, nr, load_c);
              else
                tile (kc, apack + ir * kc, 1, MOROK_GEMM_MR, b, c + ir * ldc, ldc,
                      morok_gemm_min (MOROK_GEMM_MR, mc - ir), nr, load_c);
            }
        }
    }
}

MOROK_KERNEL_FN MOROK_VEC512 void
morok_gemm_f32 (int64_t M, int64_t N, int64_t K, const float *A, int64_t sam, int64_t sak,
                const float *B, int64_t sbk, int64_t sbn, float *C, int64_t ldc, int accumulate)
#if defined(MOROK_KERNEL_LIB)
    ;
#else
{
  if (M <= 0 || N <= 0)
    return;
  if (K <= 0)
    {
      for (int64_t m = 0; m < M && !accumulate; m++)
        for (int64_t n = 0; n < N; n++)
          C[m * ldc + n] = 0.0f;
      return;
    }
#if MOROK_GEMM_VL > 1
  /* C^T = B^T A^T when N is the small side */
  if (morok_gemm_small (M, N, K, A, sam, sak, B, sbk, sbn, C, ldc, 1, accumulate)
      || morok_gemm_small (N, M, K, B, sbn, sbk, A, sak, sam, C, 1, ldc, accumulate))
    return;
#endif
  if (M == 1)
    {
      morok_gemv_f32 (K, N, A, sak, B, sbk, sbn, C, 1, accumulate);
      return;
    }
  if (N == 1)
    {
      morok_gemv_f32 (K, M, B, sbk, A, sak, sam, C, ldc, accumulate);
      return;
    }

  float bpack[MOROK_GEMM_KC * MOROK_GEMM_NC] __attribute__ ((aligned (64)));
  for (int64_t jc = 0; jc < N; jc += MOROK_GEMM_NC)
    {
      int64_t nc = morok_gemm_min (MOROK_GEMM_NC, N - jc);
      for (int64_t pc = 0; pc < K; pc += MOROK_GEMM_KC)
        {
          int64_t kc = morok_gemm_min (MOROK_GEMM_KC, K - pc);
          morok_gemm_pack_b (kc, nc, B + pc * sbk + jc * sbn, sbk, sbn, bpack);
          morok_gemm_block (M, nc, kc, A + pc * sak, sam, sak, bpack, kc * MOROK_GEMM_NR, C + jc,
                            ldc, accumulate || pc > 0, (MorokGemmPrefetch){ 0 });
        }
    }
}
#endif

/* k per block of a packed product: K in even blocks of at most KC, or
 * of at most KC_MAX where that saves a short last block, whose pass over
 * every tile of C costs its loads and stores for a few FMAs (Silero's
 * K = 129, 258 and 387: blocks of 129, not 128 + 1, ...). */
MOROK_INLINE int64_t
morok_gemm_packed_kc (int64_t K)
{
  int64_t blocks = K / MOROK_GEMM_KC;
  if (blocks == 0 || K - blocks * MOROK_GEMM_KC > MOROK_GEMM_KC_MAX - MOROK_GEMM_KC)
    blocks++;
  return (K + blocks - 1) / blocks;
}

/* morok_gemm_f32 with B packed beforehand (at prepare, for a constant B):
 * panel p holds columns p*NR .. p*NR + NR - 1 as bp[(p*K + k)*NR + j], zero
 * beyond N (morok_weight_pack, kernels/weight-pack.c). N is a multiple of NR
 * or B's last columns. Every panel is read in place, in order, each block
 * asking for the next (morok_gemm_next_block). */
MOROK_KERNEL_FN MOROK_VEC512 void
morok_gemm_f32_packed (int64_t M, int64_t N, int64_t K, const float *A, int64_t sam, int64_t sak,
                       const float *bp, float *C, int64_t ldc, int accumulate)
#if defined(MOROK_KERNEL_LIB)
    ;
#else
{
  if (M <= 0 || N <= 0 || K <= 0)
    return;
  const int64_t kb = morok_gemm_packed_kc (K);
  for (int64_t jc = 0; jc < N; jc += MOROK_GEMM_NC)
    for (int64_t pc = 0; pc < K; pc += kb)
      {
        MorokGemmPrefetch pf
            = morok_gemm_next_block (bp, MOROK_GEMM_NR, K * MOROK_GEMM_NR * 4, MOROK_GEMM_NR * 4,
                                     jc, MOROK_GEMM_NC, pc, kb, N, K);
        morok_gemm_block (M, morok_gemm_min (MOROK_GEMM_NC, N - jc), morok_gemm_min (kb, K - pc),
                          A + pc * sak, sam, sak, bp + (jc * K + pc * MOROK_GEMM_NR),
                          K * MOROK_GEMM_NR, C + jc, ldc, accumulate || pc > 0, pf);
      }
}
#endif
