/* SPDX-License-Identifier: MIT */
/* Magnitude of the DFT of windowed real frames, for generated kernels:
 *
 *   out[r * (L/2 + 1) + k] = | sum_n win[n * sw] frames[r][n * se] e^(-2 pi i k n / L) |
 *
 * for k = 0 .. L/2 and up to MOROK_DFT_LANES frames, L a power of two in
 * [MOROK_DFT_MIN_L, MOROK_DFT_MAX_L]. @tw holds cos (2 pi j / L) for j = 0
 * .. L/2, then sin (2 pi j / L) for the same j (the renderer writes them
 * as constants). A real frame of L samples is the complex sequence z[m] =
 * x[2m] + i x[2m + 1] of M = L/2: one radix-2 FFT of M points, then each
 * bin k from Z[k] and Z[M - k]. The frames are vector lanes, one per frame:
 * 16 frames at a time, each butterfly one vector operation for all of
 * them, the samples and bins transposed in and out 16 x 16 at a time
 * (MOROK_TRANSPOSE16, morok-prelude.h: 16 lanes whatever the ISA, which
 * clang splits where the vectors are narrower).
 * About 5 M log2 M + 14 M flops a frame against the 2 L (L/2 + 1) of the
 * matrix product with a DFT basis (for Silero's 256-point frames, less
 * than half the time of the folded products, the frame folds and the
 * square root). A function of the kernel library
 * (MOROK_KERNEL_FN, morok-prelude.h).
 *
 *   // 4 frames of 256 samples every 128 of a padded chunk, Hann window w
 *   const float *fr[4] = { x, x + 128, x + 256, x + 384 };
 *   morok_dft_mag_f32 (4, 256, fr, 1, w, 1, tw, out);  // out [4, 129]
 */
#pragma once

#define MOROK_DFT_LANES 16
#define MOROK_DFT_MIN_L 32
#define MOROK_DFT_MAX_L 512

typedef float morok_dft_vecu __attribute__ ((ext_vector_type (16), aligned (4)));

/* a, b <- a + w b, a - w b with w = c - i s */
MOROK_INLINE void
morok_dft_butterfly (morok_f32x16 *ar, morok_f32x16 *ai, morok_f32x16 *br, morok_f32x16 *bi,
                     float c, float s)
{
  morok_f32x16 tr = *br * c + *bi * s, ti = *bi * c - *br * s;
  *br = *ar - tr, *bi = *ai - ti;
  *ar += tr, *ai += ti;
}

/* The bit reversal of m < 2^bits over `bits` bits, for every m. */
MOROK_INLINE void
morok_dft_bit_reverse (int64_t count, uint16_t *rev)
{
  int bits = 0;
  while ((1 << bits) < count)
    bits++;
  rev[0] = 0;
  for (int64_t m = 1; m < count; m++)
    rev[m] = (uint16_t) ((rev[m >> 1] >> 1) | ((m & 1) << (bits - 1)));
}

/* Radix-2 FFT of Q >= 8 points in every lane, in place, the input in
 * bit-reversed order: the stages of spans 1, 2 and 4 in registers, 8
 * points at a time, then the others. The twiddle of point q at span h is
 * e^(-2 pi i q / 2h) = W_L^(q L / 2h), whatever Q. */
MOROK_INLINE MOROK_VEC512 void
morok_dft_lanes (morok_f32x16 *re, morok_f32x16 *im, int64_t Q, int64_t L, const float *cs,
                 const float *sn)
{
  for (int64_t s0 = 0; s0 < Q; s0 += 8)
    {
      morok_f32x16 ar[8], ai[8];
#pragma clang loop unroll(full)
      for (int i = 0; i < 8; i++)
        ar[i] = re[s0 + i], ai[i] = im[s0 + i];
#pragma clang loop unroll(full)
      for (int h = 1; h < 8; h *= 2)
#pragma clang loop unroll(full)
        for (int s = 0; s < 8; s += 2 * h)
#pragma clang loop unroll(full)
          for (int q = 0; q < h; q++)
            morok_dft_butterfly (&ar[s + q], &ai[s + q], &ar[s + q + h], &ai[s + q + h],
                                 cs[q * (L / (2 * h))], sn[q * (L / (2 * h))]);
#pragma clang loop unroll(full)
      for (int i = 0; i < 8; i++)
        re[s0 + i] = ar[i], im[s0 + i] = ai[i];
    }
  for (int64_t h = 8; h < Q; h *= 2)
    for (int64_t s = 0; s < Q; s += 2 * h)
      for (int64_t q = 0; q < h; q++)
        morok_dft_butterfly (&re[s + q], &im[s + q], &re[s + q + h], &im[s + q + h],
                             cs[q * (L / (2 * h))], sn[q * (L / (2 * h))]);
}

/* Bin k of the real frame from Z = FFT (z): X[k] = E + W_L^k O with E =
 * (Z[k] + conj Z[M - k]) / 2 and O = (Z[k] - conj Z[M - k]) / 2i, both
 * halved once in the magnitude; (a, b) is Z[k], (c, d) Z[M - k]. */
#define MOROK_DFT_BIN(a, b, c, d, cs, sn)                                                          \
  ({                                                                                               \
    __typeof__ (a) er_ = (a) + (c), ei_ = (b) - (d), or_ = (b) + (d), oi_ = (c) - (a);             \
    __typeof__ (a) xr_ = er_ + (cs) *or_ + (sn) *oi_, xi_ = ei_ + (cs) *oi_ - (sn) *or_;           \
    xr_ *xr_ + xi_ *xi_;                                                                           \
  })

/* The windowed samples of morok_dft_mag_parts in its lanes, m in
 * bit-reversed order: lane r S + p of re[rev[m]] (im) is sample 2 (S m + p)
 * (+ 1) of frame r. Lane l's real part is element 2 l of the rows' runs of
 * 2 S samples at m laid end to end (32 floats: two vectors), so for runs
 * of 8, 16 or 32 samples (S = 4, 8, 16) the lanes are two shuffles of
 * whole loads; rows past the last repeat it (lanes no bin reads). Other
 * parts or strides: one element at a time. */
typedef float morok_dft_vec8u __attribute__ ((ext_vector_type (8), aligned (4)));
MOROK_INLINE MOROK_VEC512 void
morok_dft_parts_in (int64_t rows, int64_t S, int64_t Q, const float *const *frames, int64_t se,
                    const float *win, int64_t sw, const uint16_t *rev, morok_f32x16 *re,
                    morok_f32x16 *im)
{
  if (se == 1 && sw == 1 && (S == 4 || S == 8 || S == 16))
    {
      const float *f[4];
      for (int r = 0; r < 4; r++)
        f[r] = frames[r < rows ? r : rows - 1];
      for (int64_t m = 0; m < Q; m++)
        {
          const int64_t n = 2 * S * m;
          morok_f32x16 z0, z1;
          if (S == 4)
            {
              morok_dft_vec8u w = *(const morok_dft_vec8u *) (win + n);
              morok_f32x8 y0 = *(const morok_dft_vec8u *) (f[0] + n) * w;
              morok_f32x8 y1 = *(const morok_dft_vec8u *) (f[1] + n) * w;
              morok_f32x8 y2 = *(const morok_dft_vec8u *) (f[2] + n) * w;
              morok_f32x8 y3 = *(const morok_dft_vec8u *) (f[3] + n) * w;
              z0 = __builtin_shufflevector (y0, y1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13,
                                            14, 15);
              z1 = __builtin_shufflevector (y2, y3, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13,
                                            14, 15);
            }
          else if (S == 8)
            {
              morok_f32x16 w = *(const morok_dft_vecu *) (win + n);
              z0 = *(const morok_dft_vecu *) (f[0] + n) * w;
              z1 = *(const morok_dft_vecu *) (f[1] + n) * w;
            }
          else
            {
              z0 = *(const morok_dft_vecu *) (f[0] + n) * *(const morok_dft_vecu *) (win + n);
              z1 = *(const morok_dft_vecu *) (f[0] + n + 16)
                   * *(const morok_dft_vecu *) (win + n + 16);
            }
          re[rev[m]] = __builtin_shufflevector (z0, z1, 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22,
                                                24, 26, 28, 30);
          im[rev[m]] = __builtin_shufflevector (z0, z1, 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23,
                                                25, 27, 29, 31);
        }
      return;
    }
  float *rf = (float *) re, *jf = (float *) im;
  for (int64_t m = 0; m < Q; m++)
    re[m] = 0.0f, im[m] = 0.0f;
  for (int64_t m = 0; m < Q; m++)
    for (int64_t r = 0; r < rows; r++)
      for (int64_t p = 0; p < S; p++)
        {
          int64_t n = 2 * (S * m + p), l = rev[m] * MOROK_DFT_LANES + r * S + p;
          rf[l] = frames[r][n * se] * win[n * sw];
          jf[l] = frames[r][(n + 1) * se] * win[(n + 1) * sw];
        }
}

/* Up to 4 frames: each frame's M points split into S sub-sequences
 * z[S m + p] of Q = M / S points, a lane each (frame r, part p in lane
 * r S + p), so that rows S lanes of 16 work where one frame a lane would
 * leave most idle (Silero's 4 frames a chunk). The lanes' Q-point FFTs are the first
 * log2 Q stages of the frame's own, in the block of p's bit reversal: the
 * lanes go back to points by 16 x 16 transposes, each frame finishes its
 * last log2 S stages and its bins 16 points at a time (the samples into
 * the lanes, the points out of them and the bins one at a time were most
 * of a call). */
MOROK_INLINE MOROK_VEC512 void
morok_dft_mag_parts (int64_t rows, int64_t L, int64_t S, const float *const *frames, int64_t se,
                     const float *win, int64_t sw, const float *cs, const float *sn, float *out)
{
  morok_f32x16 re[MOROK_DFT_MAX_L / 4], im[MOROK_DFT_MAX_L / 4];
  /* a frame's points, and Z[M] = Z[0] past them for the bins' Z[M - k] */
  float zr[4][MOROK_DFT_MAX_L / 2 + 1], zi[4][MOROK_DFT_MAX_L / 2 + 1];
  float tc[MOROK_DFT_MAX_L / 2], ts[MOROK_DFT_MAX_L / 2];
  uint16_t rev[MOROK_DFT_MAX_L / 4], revs[16];
  const int64_t M = L / 2, F = M + 1, Q = M / S;
  morok_dft_bit_reverse (Q, rev);
  morok_dft_bit_reverse (S, revs);
  morok_dft_parts_in (rows, S, Q, frames, se, win, sw, rev, re, im);
  morok_dft_lanes (re, im, Q, L, cs, sn);
  for (int64_t k0 = 0; k0 < Q; k0 += 16)
    {
      const int64_t n = Q - k0 < 16 ? Q - k0 : 16;
      morok_f32x16 vr[16], vi[16];
#pragma clang loop unroll(full)
      for (int i = 0; i < 16; i++)
        vr[i] = i < n ? re[k0 + i] : 0.0f, vi[i] = i < n ? im[k0 + i] : 0.0f;
      MOROK_TRANSPOSE16 (vr)
      MOROK_TRANSPOSE16 (vi)
      for (int64_t r = 0; r < rows; r++)
        for (int64_t p = 0; p < S; p++)
          {
            float *dr = zr[r] + revs[p] * Q + k0, *di = zi[r] + revs[p] * Q + k0;
            if (n == 16)
              *(morok_dft_vecu *) dr = vr[r * S + p], *(morok_dft_vecu *) di = vi[r * S + p];
            else
              for (int64_t i = 0; i < n; i++)
                dr[i] = vr[r * S + p][i], di[i] = vi[r * S + p][i];
          }
    }
  for (int64_t h = Q, o = 0; h < M; o += h, h *= 2) /* the last stages' twiddles, in a row */
    for (int64_t q = 0; q < h; q++)
      tc[o + q] = cs[q * (L / (2 * h))], ts[o + q] = sn[q * (L / (2 * h))];
  for (int64_t r = 0; r < rows; r++)
    {
      float *xr = zr[r], *xi = zi[r];
      for (int64_t h = Q, o = 0; h < M; o += h, h *= 2)
        for (int64_t s = 0; s < M; s += 2 * h)
          for (int64_t q = 0; q < h; q += 16)
            {
              float *ar = xr + s + q, *ai = xi + s + q, *br = ar + h, *bi = ai + h;
              if (h < 16) /* Q = 8: the stage of span 8 */
                {
                  for (int64_t j = 0; j < h; j++)
                    {
                      float c = tc[o + q + j], sv = ts[o + q + j];
                      float tr = br[j] * c + bi[j] * sv, ti = bi[j] * c - br[j] * sv;
                      br[j] = ar[j] - tr, bi[j] = ai[j] - ti;
                      ar[j] += tr, ai[j] += ti;
                    }
                  continue;
                }
              morok_f32x16 c = *(const morok_dft_vecu *) (tc + o + q);
              morok_f32x16 sv = *(const morok_dft_vecu *) (ts + o + q);
              morok_f32x16 a = *(morok_dft_vecu *) ar, b = *(morok_dft_vecu *) ai;
              morok_f32x16 u = *(morok_dft_vecu *) br, v = *(morok_dft_vecu *) bi;
              morok_f32x16 tr = u * c + v * sv, ti = v * c - u * sv;
              *(morok_dft_vecu *) br = a - tr, *(morok_dft_vecu *) bi = b - ti;
              *(morok_dft_vecu *) ar = a + tr, *(morok_dft_vecu *) ai = b + ti;
            }
      xr[M] = xr[0], xi[M] = xi[0];
      float *dst = out + r * F;
      for (int64_t k0 = 0; k0 < M; k0 += 16) /* bins k0 .. k0 + 15 from Z[M - k0 - 15 .. M - k0] */
        {
          morok_f32x16 a = *(const morok_dft_vecu *) (xr + k0),
                       b = *(const morok_dft_vecu *) (xi + k0);
          morok_f32x16 c = *(const morok_dft_vecu *) (xr + M - k0 - 15);
          morok_f32x16 d = *(const morok_dft_vecu *) (xi + M - k0 - 15);
          c = __builtin_shufflevector (c, c, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
          d = __builtin_shufflevector (d, d, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
          morok_f32x16 p = MOROK_DFT_BIN (a, b, c, d, *(const morok_dft_vecu *) (cs + k0),
                                          *(const morok_dft_vecu *) (sn + k0));
#pragma clang loop unroll(full)
          for (int l = 0; l < 16; l++)
            p[l] = __builtin_sqrtf (p[l]);
          *(morok_dft_vecu *) (dst + k0) = 0.5f * p;
        }
      dst[M] = 0.5f * __builtin_sqrtf (MOROK_DFT_BIN (xr[0], xi[0], xr[0], xi[0], cs[M], sn[M]));
    }
}

MOROK_KERNEL_FN MOROK_VEC512 __attribute__ ((noinline)) void
morok_dft_mag_f32 (int64_t rows, int64_t L, const float *const *frames, int64_t se,
                   const float *win, int64_t sw, const float *tw, float *out)
#if defined(MOROK_KERNEL_LIB)
    ;
#else
{
  const int64_t M = L / 2, F = M + 1;
  const float *cs = tw, *sn = tw + F;
  /* parts of a frame: as many as fill the lanes, 8 points each at least;
   * only for up to 4 frames (8 frames in two parts each ran no faster than
   * a frame a lane) */
  int64_t S = 1;
  while (rows <= 4 && rows * S * 2 <= MOROK_DFT_LANES && M / (S * 2) >= 8)
    S *= 2;
  if (S > 1)
    {
      morok_dft_mag_parts (rows, L, S, frames, se, win, sw, cs, sn, out);
      return;
    }
  morok_f32x16 re[MOROK_DFT_MAX_L / 2], im[MOROK_DFT_MAX_L / 2], mag[MOROK_DFT_MAX_L / 2 + 16];
  uint16_t rev[MOROK_DFT_MAX_L / 2];
  morok_dft_bit_reverse (M, rev);
  const float *f[MOROK_DFT_LANES]; /* lanes past rows repeat the last frame */
  for (int l = 0; l < MOROK_DFT_LANES; l++)
    f[l] = frames[l < rows ? l : rows - 1];
  /* windowed samples 16 at a time, transposed to one vector a sample, in
   * bit-reversed order of m */
  for (int64_t j = 0; j < L; j += 16)
    {
      morok_f32x16 v[16];
      if (se == 1)
#pragma clang loop unroll(full)
        for (int l = 0; l < 16; l++)
          v[l] = *(const morok_dft_vecu *) (f[l] + j);
      else
        for (int l = 0; l < 16; l++)
          for (int i = 0; i < 16; i++)
            v[l][i] = f[l][(j + i) * se];
      MOROK_TRANSPOSE16 (v)
#pragma clang loop unroll(full)
      for (int i = 0; i < 16; i += 2)
        {
          int64_t m = rev[(j + i) / 2];
          re[m] = v[i] * win[(j + i) * sw], im[m] = v[i + 1] * win[(j + i + 1) * sw];
        }
    }
  morok_dft_lanes (re, im, M, L, cs, sn);
  for (int64_t k = 0; k <= M; k++)
    {
      /* Z[k] and Z[M - k], both mod M, without dividing: two divisions a
       * bin were a measurable share of Silero's batched dft_mag */
      const int64_t ka = k == M ? 0 : k, kb = k == 0 ? 0 : M - k;
      morok_f32x16 p = MOROK_DFT_BIN (re[ka], im[ka], re[kb], im[kb], cs[k], sn[k]);
#pragma clang loop unroll(full)
      for (int l = 0; l < 16; l++)
        p[l] = __builtin_sqrtf (p[l]);
      mag[k] = 0.5f * p;
    }
  for (int64_t k = F; k < (F + 15) / 16 * 16; k++) /* the last block's rows past the bins */
    mag[k] = 0.0f;
  for (int64_t k0 = 0; k0 < F; k0 += 16)
    {
      morok_f32x16 v[16];
#pragma clang loop unroll(full)
      for (int i = 0; i < 16; i++)
        v[i] = mag[k0 + i];
      MOROK_TRANSPOSE16 (v)
      if (k0 + 16 <= F)
        for (int64_t l = 0; l < rows; l++)
          *(morok_dft_vecu *) (out + l * F + k0) = v[l];
      else
        for (int64_t l = 0; l < rows; l++)
          for (int64_t k = k0; k < F; k++)
            out[l * F + k] = v[l][k - k0];
    }
}
#endif
