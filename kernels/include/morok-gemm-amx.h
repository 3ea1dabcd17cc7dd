/* SPDX-License-Identifier: MIT */
/* ---- bf16 and bf16x3 products on AMX (MorokPlanOptions.precision BF16, BF16X3) ----
 *
 * An AMX tile multiply (TDPBF16PS) takes a 16 x 32 tile of A and a 32 x 16
 * tile of B in bf16 and adds their product to a 16 x 16 tile of f32 sums:
 * 8192 multiply-adds per instruction, about 14 times the core's f32 FMA
 * rate here.
 * bf16 keeps 8 bits of mantissa, too few for a product with the weights, so
 * each operand is split into two bf16 parts, x = hi + lo with hi = bf16 (x)
 * and lo = bf16 (x - hi) (16 bits together), and a.b is computed as
 * hi.hi + hi.lo + lo.hi: three tile multiplies. The part left out,
 * lo.lo, and the rounding of the lo parts are about 2^-16 of each product;
 * the sums are f32. So the result is within about 1e-5 of f32's. Precision
 * bf16 takes hi.hi alone: three times fewer tile products, each operand
 * rounded to bf16 (2^-9).
 *
 * B comes packed at prepare (kernels/weight-pack.h, bf16 or bf16x3): panels
 * of 64 columns, k in pairs, hi (and lo) copies. A is split and laid out
 * here, all of it at once, in the scratch memory the plan gives each
 * thread: 16-row tiles of 32 k contiguous (1 KB each), so that a tile load
 * reads 16 consecutive lines; rows padded to 32, k to a multiple of 32,
 * 2 bytes per element and part. Then C is computed in blocks of 32 x 32 (four
 * accumulator tiles; two tiles of A and two of B for operands: all eight
 * tile registers) over blocks of MOROK_AMX_NC columns and MOROK_AMX_KC k.
 *
 * The process must have been granted the tile state (arch_prctl; the host
 * does it in morok_cpu_has (MOROK_CPU_AMX_BF16)) before the first call. */
#pragma once

#if defined(MOROK_ISA_AVX512) && defined(__AMXBF16__) && defined(__AVX512BF16__)
#ifndef MOROK_AMX_NC
#define MOROK_AMX_NC 256 /* columns of B per block: 256 x 768 x 4 bytes in L2 */
#endif
#ifndef MOROK_AMX_KC
#define MOROK_AMX_KC 768 /* k per block, between loads and stores of the C tiles */
#endif

typedef uint16_t morok_u16x32 __attribute__ ((ext_vector_type (32)));
typedef uint16_t morok_amx_u16x16 __attribute__ ((ext_vector_type (16)));
typedef uint32_t morok_amx_u32x16 __attribute__ ((ext_vector_type (16)));

typedef struct
{
  uint8_t palette, start_row, reserved[14];
  uint16_t colsb[16];
  uint8_t rows[16];
} MorokAmxConfig;

/* Loads the one tile configuration of the AMX kernels (bf16 here, int8 in
 * morok-gemm-i8-amx.h): all eight tiles 16 rows of 64 bytes. */
MOROK_INLINE void
morok_amx_configure (void)
{
  static const MorokAmxConfig config = {
    .palette = 1,
    .colsb = { 64, 64, 64, 64, 64, 64, 64, 64 },
    .rows = { 16, 16, 16, 16, 16, 16, 16, 16 },
  };
  __builtin_ia32_tile_loadconfig (&config);
}

/* Widens bf16 codes to the floats they stand for. */
MOROK_INLINE morok_f32x16
morok_amx_bf16_f32 (morok_amx_u16x16 h)
{
  return (morok_f32x16) (__builtin_convertvector(h, morok_amx_u32x16) << 16);
}

/* 32 floats split into bf16 hi and lo parts (vcvtne2ps2bf16 rounds to
 * nearest even), stored at hi[0..31] and, unless lo is 0, lo[0..31]. */
MOROK_INLINE void
morok_amx_split (morok_f32x16 x0, morok_f32x16 x1, uint16_t *hi, uint16_t *lo)
{
  morok_u16x32 h = (morok_u16x32) __builtin_ia32_cvtne2ps2bf16_512 (x1, x0);
  *(morok_u16x32 *) hi = h;
  if (!lo)
    return;
  morok_f32x16 h0 = morok_amx_bf16_f32 (
      __builtin_shufflevector (h, h, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
  morok_f32x16 h1 = morok_amx_bf16_f32 (__builtin_shufflevector (
      h, h, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31));
  *(morok_u16x32 *) lo = (morok_u16x32) __builtin_ia32_cvtne2ps2bf16_512 (x1 - h1, x0 - h0);
}

/* A [M, K] (element (i, k) at A[i*sam + k*sak]) into tiles: rows padded with
 * zeros to a multiple of 32, k to ks steps of 32; tile (row / 16, step) at
 * hi + (row/16 * ks + step) * 512, its row r at + r * 32; lo (unless 0)
 * likewise. */
static MOROK_VEC512 __attribute__ ((unused)) void
morok_amx_pack_a (int64_t M, int64_t K, const float *A, int64_t sam, int64_t sak, int64_t ks,
                  uint16_t *hi, uint16_t *lo)
{
  int64_t mp = (M + 31) / 32 * 32;
  for (int64_t i = 0; i < mp; i++)
    for (int64_t s = 0; s < ks; s++)
      {
        int64_t k0 = s * 32, n = i < M ? morok_gemm_min (32, K - k0) : 0;
        const float *a = A + i * sam + k0 * sak;
        morok_f32x16 x0, x1;
        if (n == 32 && sak == 1)
          x0 = *(const morok_gemm_vecu *) a, x1 = *(const morok_gemm_vecu *) (a + 16);
        else
          {
            float x[32] __attribute__ ((aligned (64)));
            for (int64_t k = 0; k < 32; k++)
              x[k] = k < n ? a[k * sak] : 0.0f;
            x0 = *(const morok_f32x16 *) x, x1 = *(const morok_f32x16 *) (x + 16);
          }
        int64_t at = ((i / 16 * ks + s) * 16 + i % 16) * 32;
        morok_amx_split (x0, x1, hi + at, lo ? lo + at : lo);
      }
}

/* tiles t and t + 1 from p and q, rows stride bytes apart */
#define MOROK_AMX_LOAD2(t, p, q, stride)                                                           \
  (__builtin_ia32_tileloadd64 ((t), (p), (stride)),                                                \
   __builtin_ia32_tileloadd64 ((t) + 1, (q), (stride)))
#define MOROK_AMX_PRODUCTS()                                                                       \
  (__builtin_ia32_tdpbf16ps (0, 4, 6), __builtin_ia32_tdpbf16ps (1, 4, 7),                         \
   __builtin_ia32_tdpbf16ps (2, 5, 6), __builtin_ia32_tdpbf16ps (3, 5, 7))

/* The 32 x 32 block of C at c (row stride ldc floats) += or = rows r0 ..
 * r0 + 31 of the packed A times 32 columns of the panels at bhi / blo, over
 * k steps s0 .. s1 - 1; hi.hi alone when blo is 0. Tiles: 0-3 C, 4-5 A,
 * 6-7 B. On the way it asks for the pf_lines cache lines from pf into L2, a
 * few per step. */
static MOROK_VEC512 __attribute__ ((unused)) void
morok_amx_block (const uint16_t *ahi, const uint16_t *alo, int64_t ks, int64_t r0,
                 const uint16_t *bhi, const uint16_t *blo, int64_t s0, int64_t s1, float *c,
                 int64_t ldc, int load_c, const char *pf, int64_t pf_lines)
{
  int64_t pf_step = (pf_lines + (s1 - s0) - 1) / (s1 - s0);
  size_t cs = (size_t) ldc * 4;
  if (load_c)
    {
      __builtin_ia32_tileloadd64 (0, c, cs);
      __builtin_ia32_tileloadd64 (1, c + 16, cs);
      __builtin_ia32_tileloadd64 (2, c + 16 * ldc, cs);
      __builtin_ia32_tileloadd64 (3, c + 16 * ldc + 16, cs);
    }
  else
    {
      __builtin_ia32_tilezero (0);
      __builtin_ia32_tilezero (1);
      __builtin_ia32_tilezero (2);
      __builtin_ia32_tilezero (3);
    }
  const int64_t a1 = ks * 512; /* the second 16 rows */
  for (int64_t s = s0; s < s1; s++)
    {
      const int64_t as = (r0 / 16 * ks + s) * 512, bs = s * 16 * 128;
      const uint16_t *ah = ahi + as, *bh = bhi + bs;
      for (int64_t l = 0; l < pf_step && pf_lines > 0; l++, pf_lines--, pf += 64)
        __builtin_prefetch (pf, 0, 2);
      /* hi.hi, hi.lo, lo.hi: each C tile += its A tile (4, 5) x B tile (6, 7) */
      MOROK_AMX_LOAD2 (4, ah, ah + a1, 64);
      MOROK_AMX_LOAD2 (6, bh, bh + 32, 256);
      MOROK_AMX_PRODUCTS ();
      if (!blo)
        continue;
      const uint16_t *al = alo + as, *bl = blo + bs;
      MOROK_AMX_LOAD2 (6, bl, bl + 32, 256);
      MOROK_AMX_PRODUCTS ();
      MOROK_AMX_LOAD2 (4, al, al + a1, 64);
      MOROK_AMX_LOAD2 (6, bh, bh + 32, 256);
      MOROK_AMX_PRODUCTS ();
    }
  __builtin_ia32_tilestored64 (0, c, cs);
  __builtin_ia32_tilestored64 (1, c + 16, cs);
  __builtin_ia32_tilestored64 (2, c + 16 * ldc, cs);
  __builtin_ia32_tilestored64 (3, c + 16 * ldc + 16, cs);
}

/* C [M, N] (row stride ldc) =, or += when @accumulate, A [M, K] . B, B
 * packed in bf16x3 panels from the panel of column 0: bhi, blo (K2 pairs
 * per panel, a multiple of 16), or in bf16 panels (bhi; blo 0); scratch:
 * round32 (M) x round32 (K) x 2 bytes per part (2 parts in bf16x3, 1 in
 * bf16), 64-byte aligned. */
MOROK_KERNEL_FN MOROK_VEC512 void
morok_gemm_amx_packed (int64_t M, int64_t N, int64_t K, const float *A, int64_t sam, int64_t sak,
                       const uint16_t *bhi, const uint16_t *blo, int64_t k2, float *C, int64_t ldc,
                       int accumulate, uint16_t *scratch)
#if defined(MOROK_KERNEL_LIB)
    ;
#else
{
  if (M <= 0 || N <= 0 || K <= 0)
    return;
  int64_t ks = (K + 31) / 32, mp = (M + 31) / 32 * 32;
  uint16_t *ahi = scratch, *alo = blo ? scratch + mp / 16 * ks * 512 : (uint16_t *) 0;
  morok_amx_pack_a (M, K, A, sam, sak, ks, ahi, alo);
  morok_amx_configure ();
  float part[32 * 32] __attribute__ ((aligned (64))); /* blocks past M or N */
  const int64_t kcs = MOROK_AMX_KC / 32;
  for (int64_t jc = 0; jc < N; jc += MOROK_AMX_NC)
    for (int64_t s0 = 0; s0 < ks; s0 += kcs)
      {
        int64_t s1 = morok_gemm_min (ks, s0 + kcs), j1 = morok_gemm_min (N, jc + MOROK_AMX_NC);
        int load_c = accumulate || s0 > 0;
        /* B's next block, which the first rows' pass would otherwise wait
         * for from memory: per panel a run of pairs in hi (and one in lo),
         * each split over the calls of this block (ranges x parts) */
        int64_t njc = s1 < ks ? jc : jc + MOROK_AMX_NC, ns0 = s1 < ks ? s1 : 0,
                copies = blo ? 2 : 1;
        int64_t ranges
            = njc < N ? copies * ((morok_gemm_min (N, njc + MOROK_AMX_NC) - njc + 63) / 64) : 0;
        int64_t run = (morok_gemm_min (ks, ns0 + kcs) - ns0) * 16 * 128 * 2 / 64; /* lines */
        int64_t calls = mp / 32 * ((j1 - jc + 31) / 32), t = 0;
        int64_t parts = ranges ? (calls + ranges - 1) / ranges : 1;
        for (int64_t i0 = 0; i0 < mp; i0 += 32)
          for (int64_t j0 = jc; j0 < j1; j0 += 32, t++)
            {
              /* column j0 is at j0 % 64 of its panel; k2 pairs of 64 columns per panel */
              int64_t at = (j0 / 64 * k2 * 64 + j0 % 64) * 2;
              const uint16_t *bl = blo ? blo + at : blo;
              float *c = C + i0 * ldc + j0;
              int64_t mr = morok_gemm_min (32, M - i0), nr = morok_gemm_min (32, N - j0);
              const char *pf = (const char *) bhi;
              int64_t pf_lines = 0;
              if (t < ranges * parts)
                {
                  int64_t r = t % ranges, q = t / ranges;
                  const uint16_t *b = r % copies ? blo : bhi;
                  pf = (const char *) (b + ((njc / 64 + r / copies) * k2 + ns0 * 16) * 128)
                       + run * q / parts * 64;
                  pf_lines = run * (q + 1) / parts - run * q / parts;
                }
              if (mr == 32 && nr == 32)
                {
                  morok_amx_block (ahi, alo, ks, i0, bhi + at, bl, s0, s1, c, ldc, load_c, pf,
                                   pf_lines);
                  continue;
                }
              for (int64_t i = 0; i < 32; i++)
                for (int64_t j = 0; j < 32; j++)
                  part[i * 32 + j] = load_c && i < mr && j < nr ? c[i * ldc + j] : 0.0f;
              morok_amx_block (ahi, alo, ks, i0, bhi + at, bl, s0, s1, part, 32, 1, pf, pf_lines);
              for (int64_t i = 0; i < mr; i++)
                for (int64_t j = 0; j < nr; j++)
                  c[i * ldc + j] = part[i * 32 + j];
            }
      }
  __builtin_ia32_tilerelease ();
}
#endif
#endif
