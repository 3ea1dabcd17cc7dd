/* SPDX-License-Identifier: MIT */
/* Vector math for generated kernels: exp, log, tanh, sigmoid (scalar, 8- and
 * 16-wide), pow, sqrt and erf (scalar), without libm.
 *
 * Every function is branch-free (all cases computed, the answer picked by
 * selects) and uses no tables, so a plain loop calling the scalar version
 * vectorises as well as the explicit vector versions. One body per function is
 * stamped out for float, morok_f32x8 and morok_f32x16 by a macro: clang's
 * vector extensions give scalars and vectors the same operators, ternaries
 * and __builtin_bit_cast, so the three cannot drift apart.
 *
 * The kernels are compiled with -fassociative-math; each body turns
 * reassociation off (`#pragma clang fp reassociate`): measured without it,
 * exp returns inf for x in (88.0, 88.72) because (p * 2^a) * 2^b becomes
 * p * (2^a * 2^b) = p * inf, log's error grows to 1.6 ulp and sigmoid's to
 * 4.4. Contraction to FMA stays on and only helps.
 *
 * Errors against double-precision libm, maxima over every float of the range
 * (MOROK_TEST_EXHAUSTIVE=1 tests/test-kernel-vmath; pow: 105 M random pairs,
 * x in 60 binades, y in [-40, 40], a quarter negative x with integer y), the
 * same for the scalar loop and the 8- and 16-wide versions on every ISA; in
 * parentheses where the portable build (no FMA) differs. ulp are of the exact
 * result; tests/test-kernel-vmath.c asserts these bounds on every 211th float:
 *
 *   function  range                     max ulp        max abs
 *   exp       [-104, 89]                1.08 (1.05)    -
 *   log       (0, FLT_MAX], subnormals  0.83 (0.84)    -
 *   tanh      [-20, 20]                 1.33           7.9e-8
 *   sigmoid   [-100, 100]               2.40           8.9e-8
 *   erf       [-6, 6]                   1.18 (1.39)    7.1e-8 (8.3e-8)
 *   sqrt      [0, FLT_MAX]              0.50           -
 *   pow       see above                 0.50           -
 *
 * Special values follow C: exp(-inf) = 0, exp(x > 88.73) = inf, log(0) = -inf,
 * log(x < 0) = NaN, log(inf) = inf, tanh and sigmoid saturate to exactly +-1 /
 * 0 and 1, NaN in gives NaN out, subnormal inputs and results are handled.
 *
 *   for (int64_t i = 0; i < n; i++)   // vectorises (8-wide: clang's choice
 *     y[i] = morok_sigmoidf (x[i]);    // on AVX-512 unless -mprefer-vector-width=512)
 *   morok_f32x16 v = morok_exp_f32x16 (*(const morok_f32x16 *) p);
 */
#pragma once

typedef int32_t morok_i32x8 __attribute__ ((ext_vector_type (8)));

/* Functions on 512-bit vectors need this: for -march=native on AVX-512 CPUs
 * clang prefers 256-bit vectors and splits any 512-bit operation of a
 * function not marked otherwise into two ymm halves. Inlining carries the
 * mark over to the caller. */
#ifndef MOROK_VEC512
#define MOROK_VEC512 __attribute__ ((min_vector_width (512)))
#endif

/* A kernel uses a few of the prelude's functions: the rest must not warn. */
#define MOROK_VMATH_FN MOROK_INLINE MOROK_VEC512 __attribute__ ((unused))

/* The vector versions exist under every MOROK_ISA_* so that code using them
 * always compiles; without AVX clang warns that 256/512-bit arguments change
 * the calling convention, which cannot matter for always-inline functions. */
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wpsabi"

/* Bits of |x| and sign of x; copysign (m, x) for m >= 0. */
#define MOROK_VMATH_ABS(F, I, x) __builtin_bit_cast(F, __builtin_bit_cast(I, x) & 0x7fffffff)
#define MOROK_VMATH_COPYSIGN(F, I, m, x)                                                           \
  __builtin_bit_cast(F, __builtin_bit_cast(I, m)                                                   \
                            | (__builtin_bit_cast(I, x) & (I) (-0x7fffffff - 1)))

/* exp: x = n ln2 + r, |r| <= ln2/2, with ln2 split in two so that n * hi is
 * exact (hi has 15 significant bits, |n| <= 150); e^r = 1 + r + r^2 Q(r).
 * The 2^n scale is applied as 2^(n/2) * 2^(n - n/2) so that subnormal results
 * (n down to -150) and 2^128 * p < 1 round once, correctly. Clamping x to
 * [-104, 89] saturates to 0 and inf and keeps NaN (a compare-select, not a
 * min/max, which would drop it). n is turned into integer exponent bits by
 * adding 1.5 * 2^23, which also rounds it to nearest even (no float -> int
 * conversion, undefined on NaN, and no roundeven, a libm call without SSE4.1;
 * the add-subtract survives because reassociation is off). */
#define MOROK_VMATH_DEFINE_EXP(NAME, F, I)                                                         \
  MOROK_VMATH_FN F NAME (F x)                                                                      \
  {                                                                                                \
    _Pragma ("clang fp reassociate (off)");                                                        \
    F xc = x > 89.0f ? (F) 89.0f : x;                                                              \
    xc = xc < -104.0f ? (F) -104.0f : xc;                                                          \
    F t = xc * 1.44269504f + 0x1.8p23f;                                                            \
    F n = t - 0x1.8p23f;                                                                           \
    F r = xc - n * 0.693145752f;                                                                   \
    r = r - n * 1.42860682e-6f;                                                                    \
    F q = 0.00139261759f;                                                                          \
    q = q * r + 0.00836317334f;                                                                    \
    q = q * r + 0.0416665561f;                                                                     \
    q = q * r + 0.166665778f;                                                                      \
    q = q * r + 0.5f;                                                                              \
    F p = (r * r) * q + r + 1.0f;                                                                  \
    I ni = __builtin_bit_cast(I, t) - 0x4b400000;                                                  \
    I k1 = ni >> 1;                                                                                \
    I k2 = ni - k1;                                                                                \
    F s1 = __builtin_bit_cast(F, (k1 + 127) << 23);                                                \
    F s2 = __builtin_bit_cast(F, (k2 + 127) << 23);                                                \
    return (p * s1) * s2;                                                                          \
  }

/* log: x = 2^e m, m in [sqrt(1/2), sqrt(2)) (subnormals prescaled by 2^23),
 * f = m - 1, s = f / (2 + f); log(1 + f) = f - f^2/2 + s (f^2/2 + z P(z)),
 * z = s^2, summed small terms first so that the error stays near 1 ulp even
 * where log(x) is close to 0. */
#define MOROK_VMATH_DEFINE_LOG(NAME, F, I)                                                         \
  MOROK_VMATH_FN F NAME (F x)                                                                      \
  {                                                                                                \
    _Pragma ("clang fp reassociate (off)");                                                        \
    F xs = x < 0x1p-126f ? x * 0x1p23f : x;                                                        \
    I u = __builtin_bit_cast(I, xs) - 0x3f3504f3;                                                  \
    I e = (u >> 23) - (x < 0x1p-126f ? (I) 23 : (I) 0);                                            \
    F m = __builtin_bit_cast(F, (u & 0x7fffff) + 0x3f3504f3);                                      \
    F ef = __builtin_bit_cast(F, e + 0x4b400000) - 0x1.8p23f;                                      \
    F f = m - 1.0f;                                                                                \
    F s = f / (f + 2.0f);                                                                          \
    F z = s * s;                                                                                   \
    F pz = 0.233304679f;                                                                           \
    pz = pz * z + 0.285508215f;                                                                    \
    pz = pz * z + 0.400001228f;                                                                    \
    pz = pz * z + 0.666666687f;                                                                    \
    F hfsq = 0.5f * f * f;                                                                         \
    F lo = s * (hfsq + z * pz) + ef * 1.42860682e-6f;                                              \
    F r = ef * 0.693145752f - ((hfsq - lo) - f);                                                   \
    r = x > 0.0f ? r : x == 0.0f ? (F) (-__builtin_inff ()) : (F) __builtin_nanf ("");             \
    return x == __builtin_inff () ? x : r;                                                         \
  }

/* tanh: for |x| < 0.625, x + x^3 P(x^2) keeps full relative accuracy near 0;
 * above, 1 - 2 / (e^2|x| + 1), which saturates to exactly 1 once e^2|x|
 * overflows and has an absolute error of a few 1e-8. */
#define MOROK_VMATH_DEFINE_TANH(NAME, EXP, F, I)                                                   \
  MOROK_VMATH_FN F NAME (F x)                                                                      \
  {                                                                                                \
    _Pragma ("clang fp reassociate (off)");                                                        \
    F a = MOROK_VMATH_ABS (F, I, x);                                                               \
    F z = x * x;                                                                                   \
    F p = 0.00229274482f;                                                                          \
    p = p * z - 0.00834394526f;                                                                    \
    p = p * z + 0.0217689183f;                                                                     \
    p = p * z - 0.0539592579f;                                                                     \
    p = p * z + 0.133333042f;                                                                      \
    p = p * z - 0.333333343f;                                                                      \
    F small = x + (x * z) * p;                                                                     \
    F big = 1.0f - 2.0f / (EXP (a + a) + 1.0f);                                                    \
    return a < 0.625f ? small : MOROK_VMATH_COPYSIGN (F, I, big, x);                               \
  }

/* sigmoid: with e = e^-|x| (never overflows), 1 / (1 + e) for x >= 0 and
 * e / (1 + e) below, so that the left tail keeps its relative accuracy down
 * to the subnormals instead of flushing to 0 once e^-x overflows; both tails
 * saturate exactly (0 at -inf, 1 at +inf). */
#define MOROK_VMATH_DEFINE_SIGMOID(NAME, EXP, F, I)                                                \
  MOROK_VMATH_FN F NAME (F x)                                                                      \
  {                                                                                                \
    F e = EXP (-MOROK_VMATH_ABS (F, I, x));                                                        \
    return (x >= 0.0f ? (F) 1.0f : e) / (1.0f + e);                                                \
  }

MOROK_VMATH_DEFINE_EXP (morok_expf, float, int32_t)
MOROK_VMATH_DEFINE_EXP (morok_exp_f32x8, morok_f32x8, morok_i32x8)
MOROK_VMATH_DEFINE_EXP (morok_exp_f32x16, morok_f32x16, morok_i32x16)
MOROK_VMATH_DEFINE_LOG (morok_logf, float, int32_t)
MOROK_VMATH_DEFINE_LOG (morok_log_f32x8, morok_f32x8, morok_i32x8)
MOROK_VMATH_DEFINE_LOG (morok_log_f32x16, morok_f32x16, morok_i32x16)
MOROK_VMATH_DEFINE_TANH (morok_tanhf, morok_expf, float, int32_t)
MOROK_VMATH_DEFINE_TANH (morok_tanh_f32x8, morok_exp_f32x8, morok_f32x8, morok_i32x8)
MOROK_VMATH_DEFINE_TANH (morok_tanh_f32x16, morok_exp_f32x16, morok_f32x16, morok_i32x16)
MOROK_VMATH_DEFINE_SIGMOID (morok_sigmoidf, morok_expf, float, int32_t)
MOROK_VMATH_DEFINE_SIGMOID (morok_sigmoid_f32x8, morok_exp_f32x8, morok_f32x8, morok_i32x8)
MOROK_VMATH_DEFINE_SIGMOID (morok_sigmoid_f32x16, morok_exp_f32x16, morok_f32x16, morok_i32x16)

#pragma clang diagnostic pop

/* sqrt: -fno-math-errno makes this one instruction, no libm call. */
MOROK_VMATH_FN float
morok_sqrtf (float x)
{
  return __builtin_sqrtf (x);
}

/* erf: x + x P(x^2) for |x| < 1; above, 1 - e^-x^2 G(s) with G fitted in
 * s = (1/(1+|x|) - 0.35) / 0.15, a variable in which erfc(x) e^x^2 is nearly
 * linear on [1, 4]; from |x| >= 4 on erf is 1 to within half an ulp. */
MOROK_VMATH_FN float
morok_erff (float x)
{
#pragma clang fp reassociate(off)
  float a = MOROK_VMATH_ABS (float, int32_t, x);
  float z = x * x;
  float p = 7.87587487e-05f;
  p = p * z - 0.00080168643f;
  p = p * z + 0.00518908724f;
  p = p * z - 0.0268542115f;
  p = p * z + 0.112835944f;
  p = p * z - 0.37612626f;
  p = p * z + 0.128379166f;
  float small = x + x * p;
  float s = 6.66666667f / (1.0f + a) - 2.33333333f;
  float g = -1.02543277e-06f;
  g = g * s - 1.99994088e-06f;
  g = g * s + 4.30527871e-05f;
  g = g * s - 0.000112429785f;
  g = g * s - 0.00138771674f;
  g = g * s + 0.0108530605f;
  g = g * s + 0.146637753f;
  g = g * s + 0.271552891f;
  float big = 1.0f - morok_expf (-z) * g;
  big = a >= 4.0f ? 1.0f : big; /* NaN falls through to big, which is NaN */
  return a < 1.0f ? small : MOROK_VMATH_COPYSIGN (float, int32_t, big, x);
}

/* pow: 2^(y log2|x|) evaluated in double (float in, float out), so that the
 * product, up to ~150 in size, carries the 1e-12 relative accuracy needed for
 * a final error of 0.5 ulp plus the one rounding to float; then C's rules for
 * signs, zeros, infinities and NaN, each a select. No tables: log2 is the
 * atanh series to s^15 (|s| < 0.172) and 2^r the Taylor series to degree 10
 * (|r| <= 0.5), both exact coefficients with errors below 1e-13. */
MOROK_VMATH_FN double
morok_log2_f64 (double a) /* a > 0, finite; every float is a normal double */
{
#pragma clang fp reassociate(off)
  int64_t u = __builtin_bit_cast(int64_t, a) - 0x3fe6a09e667f3bcdL; /* sqrt(1/2) */
  double m = __builtin_bit_cast(double, (u & 0x000fffffffffffffL) + 0x3fe6a09e667f3bcdL);
  double e = __builtin_bit_cast(double, (u >> 52) + 0x4338000000000000L) - 0x1.8p52;
  double f = m - 1.0;
  double s = f / (f + 2.0);
  double z = s * s;
  double p = 1.0 / 15;
  p = p * z + 1.0 / 13;
  p = p * z + 1.0 / 11;
  p = p * z + 1.0 / 9;
  p = p * z + 1.0 / 7;
  p = p * z + 1.0 / 5;
  p = p * z + 1.0 / 3;
  p = p * z + 1.0;
  return e + (2.0 * s * p) * 1.4426950408889634;
}

MOROK_VMATH_FN double
morok_exp2_f64 (double t) /* t in [-160, 130] or NaN */
{
#pragma clang fp reassociate(off)
  double tm = t + 0x1.8p52; /* rounds t to an integer, as in exp */
  double n = tm - 0x1.8p52;
  double r = t - n;
  double p = 7.0549116208011234e-09;
  p = p * r + 1.01780860092397e-07;
  p = p * r + 1.321548679014431e-06;
  p = p * r + 1.5252733804059841e-05;
  p = p * r + 0.00015403530393381609;
  p = p * r + 0.0013333558146428443;
  p = p * r + 0.0096181291076284769;
  p = p * r + 0.055504108664821583;
  p = p * r + 0.24022650695910072;
  p = p * r + 0.69314718055994529;
  p = p * r + 1.0;
  int64_t bits = (__builtin_bit_cast(int64_t, tm) + 1023) << 52;
  return p * __builtin_bit_cast(double, bits);
}

MOROK_VMATH_FN float
morok_powf (float x, float y)
{
#pragma clang fp reassociate(off)
  float ax = MOROK_VMATH_ABS (float, int32_t, x);
  double l = morok_log2_f64 ((double) ax);
  l = ax == 0.0f ? -__builtin_inf () : ax == __builtin_inff () ? __builtin_inf () : l;
  double t = (double) y * l; /* exact in double: 24 x 53 bits */
  t = t > 130.0 ? 130.0 : t;
  t = t < -160.0 ? -160.0 : t;
  float r = (float) morok_exp2_f64 (t);

  /* C's sign rules: |y| >= 2^24 and +-inf count as even integers. Adding
   * and subtracting 2^23 rounds a float in [0, 2^23) to an integer; at and
   * above 2^23 every float is one. */
  float ay = MOROK_VMATH_ABS (float, int32_t, y), hy = ay * 0.5f;
  int y_int = ay >= 0x1p23f || (ay + 0x1p23f) - 0x1p23f == ay;
  int y_odd = y_int && hy < 0x1p23f && (hy + 0x1p23f) - 0x1p23f != hy;
  r = (__builtin_bit_cast(int32_t, x) < 0 && y_odd) ? -r : r;
  r = (x < 0.0f && ax != __builtin_inff () && !y_int) ? __builtin_nanf ("") : r;
  r = x != x ? x : r;
  /* pow (1, y) = pow (x, 0) = 1 even for NaN; pow (-1, +-inf) = 1. */
  r = (x == 1.0f || y == 0.0f) ? 1.0f : r;
  return (ax == 1.0f && MOROK_VMATH_ABS (float, int32_t, y) == __builtin_inff ()) ? 1.0f : r;
}
