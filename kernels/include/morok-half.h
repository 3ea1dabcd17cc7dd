/* SPDX-License-Identifier: MIT */
/* Half-precision storage formats for generated kernels: IEEE binary16 (f16)
 * and bfloat16 (bf16) to and from f32.
 *
 * Integer bit manipulation only, with every case computed and picked by a
 * select rather than a branch, so that a plain loop over an array of codes
 * vectorises (clang turns the selects into masked blends). No F16C or
 * AVX512-BF16 instructions: the same code serves every MOROK_ISA_* path, and
 * a conversion is never the bottleneck next to the arithmetic it feeds.
 * Exact for f16 -> f32 and bf16 -> f32; f32 -> f16 and f32 -> bf16 round to
 * nearest, ties to even, overflow to infinity, and keep NaN a NaN (quiet, with
 * the top payload bits and the sign). tests/test-kernel-half.c checks all
 * 65536 codes and random floats against a double-precision reference.
 *
 *   float x = morok_f16_to_f32 (0x3c00);        // 1.0f
 *   uint16_t h = morok_f32_to_f16 (65520.0f);   // 0x7c00: rounds up to +inf
 */
#pragma once

/* A kernel uses a few of the prelude's functions: the rest must not warn. */
#define MOROK_HALF_FN MOROK_INLINE __attribute__ ((unused))

MOROK_HALF_FN uint32_t
morok_f32_bits (float x)
{
  return __builtin_bit_cast(uint32_t, x);
}

MOROK_HALF_FN float
morok_f32_from_bits (uint32_t u)
{
  return __builtin_bit_cast(float, u);
}

/* Floats as integers of the same order (-0 just below +0, NaN beyond the
 * infinities, a negative NaN below -inf); its own inverse. A max over keys
 * vectorises, a max over floats does not without -ffinite-math-only. */
MOROK_HALF_FN int32_t
morok_f32_key (float x)
{
  int32_t u = (int32_t) morok_f32_bits (x);
  return u ^ ((u >> 31) & 0x7fffffff);
}

MOROK_HALF_FN float
morok_f32_from_key (int32_t k)
{
  return morok_f32_from_bits ((uint32_t) (k ^ ((k >> 31) & 0x7fffffff)));
}

MOROK_HALF_FN float
morok_f16_to_f32 (uint16_t h)
{
  uint32_t sign = (uint32_t) (h & 0x8000u) << 16;
  uint32_t em = h & 0x7fffu; /* exponent and mantissa, 15 bits */
  /* Normal: move the 10-bit mantissa to the top of the 23-bit field and
   * rebias the exponent from 15 to 127. */
  uint32_t normal = (em << 13) + ((127u - 15u) << 23);
  /* Inf/NaN (exponent 31): rebias to 255, which keeps the payload. */
  uint32_t special = (em << 13) | 0x7f800000u;
  /* Subnormal or zero: the value is mantissa * 2^-24; an int -> float
   * conversion and a power-of-two scale are both exact here. */
  uint32_t sub = morok_f32_bits ((float) (int32_t) em * 0x1p-24f);
  uint32_t mag = em >= 0x7c00u ? special : em < 0x0400u ? sub : normal;
  return morok_f32_from_bits (sign | mag);
}

MOROK_HALF_FN uint16_t
morok_f32_to_f16 (float x)
{
  uint32_t u = morok_f32_bits (x);
  uint32_t sign = (u >> 16) & 0x8000u;
  uint32_t a = u & 0x7fffffffu; /* |x| */

  /* Normal range, |x| in [2^-14, 65536): drop 13 mantissa bits, rounding to
   * nearest even by adding 0xfff plus the lowest kept bit; a carry out of the
   * mantissa bumps the exponent, up to 0x7c00 (inf) for x >= 65520. */
  uint32_t odd = (a >> 13) & 1u;
  uint32_t normal = (a - ((127u - 15u) << 23) + 0xfffu + odd) >> 13;

  /* Subnormal range, |x| < 2^-14: the result is |x| / 2^-24 rounded to an
   * integer, i.e. the 24-bit significand shifted right by 126 - exponent
   * (14 or more). Shifts of 25 and up give 0, so clamp at 31. */
  uint32_t e = a >> 23;
  uint32_t sig = (a & 0x7fffffu) | (e != 0 ? 0x800000u : 0u);
  uint32_t shift = e < 95u ? 31u : 126u - e;
  uint32_t q = sig >> shift;
  uint32_t rem = sig & ((1u << shift) - 1u);
  uint32_t half = 1u << (shift - 1u);
  uint32_t sub = q + (rem > half || (rem == half && (q & 1u)) ? 1u : 0u);

  /* NaN stays NaN: force the quiet bit, keep the top of the payload. */
  uint32_t nan = 0x7e00u | ((a >> 13) & 0x3ffu);
  uint32_t mag = a > 0x7f800000u    ? nan
                 : a >= 0x47800000u ? 0x7c00u /* >= 65536: inf */
                 : a < 0x38800000u  ? sub
                                    : normal;
  return (uint16_t) (sign | mag);
}

MOROK_HALF_FN float
morok_bf16_to_f32 (uint16_t h)
{
  return morok_f32_from_bits ((uint32_t) h << 16);
}

MOROK_HALF_FN uint16_t
morok_f32_to_bf16 (float x)
{
  uint32_t u = morok_f32_bits (x);
  /* Round to nearest even on the 16 dropped bits; a carry may reach the
   * exponent and give inf, which is the right rounding of a huge value. */
  uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
  /* Rounding could carry a NaN's payload into inf or flip its sign: keep the
   * top bits and set the quiet bit instead. */
  uint32_t nan = (u >> 16) | 0x0040u;
  return (uint16_t) ((u & 0x7fffffffu) > 0x7f800000u ? nan : rounded);
}
