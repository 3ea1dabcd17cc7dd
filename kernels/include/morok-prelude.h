/* SPDX-License-Identifier: MIT */
/* Prelude of every generated kernel translation unit: fixed-width types,
 * vector types from clang's ext_vector_type (no system intrinsics headers:
 * <immintrin.h> alone costs ~120 ms per compile), and the memset/memcpy that
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
