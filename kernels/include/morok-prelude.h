/* SPDX-License-Identifier: MIT */
/* Prelude of every generated kernel translation unit: fixed-width types,
 * vector types from clang's ext_vector_type (no system intrinsics headers:
 * <immintrin.h> alone costs a large share of each compile), and the memset/memcpy that
 * clang may emit calls to even in freestanding code. Compiled with
 * -ffreestanding: nothing here may call libc or libm. */
#pragma once

typedef signed char int8_t;
typedef unsigned char uint8_t;
typedef short int16_t;
typedef unsigned short uint16_t;
typedef int int32_t;
typedef unsigned int uint32_t;
typedef long int64_t;
typedef unsigned long uint64_t;
typedef unsigned long size_t;

#define MOROK_INLINE static inline __attribute__ ((always_inline))

/* The kernel library: the big GEMM and attention entry points of the
 * headers, which take only runtime arguments and so get the same machine
 * code in every unit, are compiled once at build time per ISA
 * (kernels/kernel-headers-export.c) and linked into libmorok. A unit that
 * calls the library (the renderer defines MOROK_KERNEL_LIB) sees only their
 * declarations and the ELF loader resolves them (kernels/kernel-lib.c);
 * elsewhere (a -march the library was not built for, no clang at build
 * time, MOROK_KERNEL_LIB=0) they are static definitions compiled into the
 * unit, as the library object itself compiles them. */
#ifndef MOROK_KERNEL_FN
#if defined(MOROK_KERNEL_LIB)
#define MOROK_KERNEL_FN
#else
#define MOROK_KERNEL_FN static __attribute__ ((unused))
#endif
#endif

typedef float morok_f32x4 __attribute__ ((ext_vector_type (4)));
typedef float morok_f32x8 __attribute__ ((ext_vector_type (8)));
typedef float morok_f32x16 __attribute__ ((ext_vector_type (16)));
typedef int32_t morok_i32x16 __attribute__ ((ext_vector_type (16)));

/* In-register transpose of n x n floats, r[0 .. n-1] vectors of n lanes
 * (morok_f32x16, morok_f32x8): stage `bit` swaps that bit of the row index
 * with that bit of the column index, pairing rows R and R|bit; lo is the
 * stage's first shuffle, hi##bit its second. The GEMM packs with it, the
 * DFT moves samples and bins between frames and lanes with it. */
// clang-format off
#define MOROK_T_STAGE(r, n, hi, bit, ...)                                                          \
  _Pragma ("clang loop unroll(full)")                                                              \
  for (int R = 0; R < (n); R++)                                                                    \
    if (!(R & (bit)))                                                                              \
      {                                                                                            \
        __typeof__ (r[0]) x_ = r[R], y_ = r[R | (bit)];                                            \
        r[R] = __builtin_shufflevector (x_, y_, __VA_ARGS__);                                      \
        r[R | (bit)] = __builtin_shufflevector (x_, y_, hi##bit);                                  \
      }
#define MOROK_T16_HI_1 1, 17, 3, 19, 5, 21, 7, 23, 9, 25, 11, 27, 13, 29, 15, 31
#define MOROK_T16_HI_2 2, 3, 18, 19, 6, 7, 22, 23, 10, 11, 26, 27, 14, 15, 30, 31
#define MOROK_T16_HI_4 4, 5, 6, 7, 20, 21, 22, 23, 12, 13, 14, 15, 28, 29, 30, 31
#define MOROK_T16_HI_8 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31
#define MOROK_TRANSPOSE16(r)                                                                       \
  MOROK_T_STAGE (r, 16, MOROK_T16_HI_, 1, 0, 16, 2, 18, 4, 20, 6, 22, 8, 24, 10, 26, 12, 28, 14, 30) \
  MOROK_T_STAGE (r, 16, MOROK_T16_HI_, 2, 0, 1, 16, 17, 4, 5, 20, 21, 8, 9, 24, 25, 12, 13, 28, 29)  \
  MOROK_T_STAGE (r, 16, MOROK_T16_HI_, 4, 0, 1, 2, 3, 16, 17, 18, 19, 8, 9, 10, 11, 24, 25, 26, 27)  \
  MOROK_T_STAGE (r, 16, MOROK_T16_HI_, 8, 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23)
#define MOROK_T8_HI_1 1, 9, 3, 11, 5, 13, 7, 15
#define MOROK_T8_HI_2 2, 3, 10, 11, 6, 7, 14, 15
#define MOROK_T8_HI_4 4, 5, 6, 7, 12, 13, 14, 15
#define MOROK_TRANSPOSE8(r)                                                                        \
  MOROK_T_STAGE (r, 8, MOROK_T8_HI_, 1, 0, 8, 2, 10, 4, 12, 6, 14)                                 \
  MOROK_T_STAGE (r, 8, MOROK_T8_HI_, 2, 0, 1, 8, 9, 4, 5, 12, 13)                                  \
  MOROK_T_STAGE (r, 8, MOROK_T8_HI_, 4, 0, 1, 2, 3, 8, 9, 10, 11)
// clang-format on

/* clang turns zeroing and copy loops into calls to these; the object must
 * define them itself since the loader resolves no outside symbol but the
 * kernel library's. */
__attribute__ ((no_builtin ("memset"), used)) void *
memset (void *dst, int c, size_t n)
{
  unsigned char *d = (unsigned char *) dst;
  for (size_t i = 0; i < n; i++)
    d[i] = (unsigned char) c;
  return dst;
}

__attribute__ ((no_builtin ("memcpy"), used)) void *
memcpy (void *restrict dst, const void *restrict src, size_t n)
{
  unsigned char *d = (unsigned char *) dst;
  const unsigned char *s = (const unsigned char *) src;
  for (size_t i = 0; i < n; i++)
    d[i] = s[i];
  return dst;
}
