/* SPDX-License-Identifier: MIT */
/* The kernel library: the kernel headers as generated code sees them,
 * compiled once per ISA by kernels/meson.build with the JIT's flags
 * (-ffreestanding -O2 -march=native, the fast-math subset,
 * -DMOROK_ISA_<isa>=1, -DMOROK_EXPORT_ISA=<isa>) and linked into libmorok.
 * It exports them as a table of plain functions for tests and benchmarks,
 * and the headers' MOROK_KERNEL_FN entry points (GEMM, attention, DFT) under
 * per-ISA names, listed by their own names for the loader
 * (morok_kernel_lib_symbols_<isa>): units that call the library get their
 * declarations only. */

/* The prelude defines memset/memcpy for kernel objects, which have no libc;
 * in a host process they would replace libc's for everyone. Rename them. */
#define MOROK_EXPORT_PASTE(a, b) a##_##b
#define MOROK_EXPORT_NAME(a, b) MOROK_EXPORT_PASTE (a, b)
#define memset MOROK_EXPORT_NAME (morok_export_memset, MOROK_EXPORT_ISA)
#define memcpy MOROK_EXPORT_NAME (morok_export_memcpy, MOROK_EXPORT_ISA)

/* The library's functions: global (hidden: libmorok's own), one name per ISA. */
#define MOROK_KERNEL_FN __attribute__ ((visibility ("hidden")))
#define morok_gemm_f32 MOROK_EXPORT_NAME (morok_gemm_f32, MOROK_EXPORT_ISA)
#define morok_gemm_f32_packed MOROK_EXPORT_NAME (morok_gemm_f32_packed, MOROK_EXPORT_ISA)
#define morok_gemm_f16_packed MOROK_EXPORT_NAME (morok_gemm_f16_packed, MOROK_EXPORT_ISA)
#define morok_gemm_bf16_packed MOROK_EXPORT_NAME (morok_gemm_bf16_packed, MOROK_EXPORT_ISA)
#define morok_gemm_bf16_round MOROK_EXPORT_NAME (morok_gemm_bf16_round, MOROK_EXPORT_ISA)
#define morok_gemm_amx_packed MOROK_EXPORT_NAME (morok_gemm_amx_packed, MOROK_EXPORT_ISA)
#define morok_gemm_i8_quantize MOROK_EXPORT_NAME (morok_gemm_i8_quantize, MOROK_EXPORT_ISA)
#define morok_gemm_i8_packed MOROK_EXPORT_NAME (morok_gemm_i8_packed, MOROK_EXPORT_ISA)
#define morok_gemm_i8_amx_packed MOROK_EXPORT_NAME (morok_gemm_i8_amx_packed, MOROK_EXPORT_ISA)
#define morok_attention_f32 MOROK_EXPORT_NAME (morok_attention_f32, MOROK_EXPORT_ISA)
#define morok_dft_mag_f32 MOROK_EXPORT_NAME (morok_dft_mag_f32, MOROK_EXPORT_ISA)

#include "morok-prelude.h"
#include "morok-half.h"
#include "morok-vmath.h"
#include "morok-gemm.h"
#include "morok-gemm-f16.h"
#include "morok-gemm-amx.h"
#include "morok-gemm-bf16.h"
#include "morok-gemm-i8.h"
#include "morok-gemm-i8-amx.h"
#include "morok-attention.h"
#include "morok-dft.h"

#include "kernel-headers-export.h"

#define STR2(x) #x
#define STR(x) STR2 (x)

static void
f16_to_f32 (const uint16_t *in, float *out, int64_t n)
{
  for (int64_t i = 0; i < n; i++)
    out[i] = morok_f16_to_f32 (in[i]);
}

static void
f32_to_f16 (const float *in, uint16_t *out, int64_t n)
{
  for (int64_t i = 0; i < n; i++)
    out[i] = morok_f32_to_f16 (in[i]);
}

static void
bf16_to_f32 (const uint16_t *in, float *out, int64_t n)
{
  for (int64_t i = 0; i < n; i++)
    out[i] = morok_bf16_to_f32 (in[i]);
}

static void
f32_to_bf16 (const float *in, uint16_t *out, int64_t n)
{
  for (int64_t i = 0; i < n; i++)
    out[i] = morok_f32_to_bf16 (in[i]);
}

/* Vector arguments without AVX: see morok-vmath.h. */
#pragma clang diagnostic ignored "-Wpsabi"

typedef float f32x8u __attribute__ ((ext_vector_type (8), aligned (4)));
typedef float f32x16u __attribute__ ((ext_vector_type (16), aligned (4)));

/* One loop per function and width, the way generated element-wise kernels
 * call them. */
#define LOOPS(NAME, SCALAR, V8, V16)                                                               \
  static void NAME (int width, const float *x, float *out, int64_t n)                              \
  {                                                                                                \
    if (width == 16)                                                                               \
      for (int64_t i = 0; i + 16 <= n; i += 16)                                                    \
        *(f32x16u *) (out + i) = V16 (*(const f32x16u *) (x + i));                                 \
    else if (width == 8)                                                                           \
      for (int64_t i = 0; i + 8 <= n; i += 8)                                                      \
        *(f32x8u *) (out + i) = V8 (*(const f32x8u *) (x + i));                                    \
    else                                                                                           \
      for (int64_t i = 0; i < n; i++)                                                              \
        out[i] = SCALAR (x[i]);                                                                    \
  }

LOOPS (vm_exp, morok_expf, morok_exp_f32x8, morok_exp_f32x16)
LOOPS (vm_log, morok_logf, morok_log_f32x8, morok_log_f32x16)
LOOPS (vm_tanh, morok_tanhf, morok_tanh_f32x8, morok_tanh_f32x16)
LOOPS (vm_sigmoid, morok_sigmoidf, morok_sigmoid_f32x8, morok_sigmoid_f32x16)

static MOROK_VEC512 void
vmath (MorokVmathFn fn, int width, const float *x, const float *y, float *out, int64_t n)
{
  switch (fn)
    {
    case MOROK_VMATH_EXP: vm_exp (width, x, out, n); break;
    case MOROK_VMATH_LOG: vm_log (width, x, out, n); break;
    case MOROK_VMATH_TANH: vm_tanh (width, x, out, n); break;
    case MOROK_VMATH_SIGMOID: vm_sigmoid (width, x, out, n); break;
    case MOROK_VMATH_ERF:
      for (int64_t i = 0; i < n; i++)
        out[i] = morok_erff (x[i]);
      break;
    case MOROK_VMATH_SQRT:
      for (int64_t i = 0; i < n; i++)
        out[i] = morok_sqrtf (x[i]);
      break;
    case MOROK_VMATH_POW:
      for (int64_t i = 0; i < n; i++)
        out[i] = morok_powf (x[i], y[i]);
      break;
    }
}

#if defined(MOROK_ISA_AVX512)
#define ISA MOROK_EXPORT_ISA_AVX512
#elif defined(MOROK_ISA_AVX2)
#define ISA MOROK_EXPORT_ISA_AVX2
#else
#define ISA MOROK_EXPORT_ISA_PORTABLE
#endif

const MorokKernelExports MOROK_EXPORT_NAME (morok_kernel_exports, MOROK_EXPORT_ISA) = {
  .name = STR (MOROK_EXPORT_ISA),
  .isa = ISA,
  .f16_to_f32 = f16_to_f32,
  .f32_to_f16 = f32_to_f16,
  .bf16_to_f32 = bf16_to_f32,
  .f32_to_bf16 = f32_to_bf16,
  .vmath = vmath,
  .gemm_f32 = morok_gemm_f32,
  .gemm_f32_packed = morok_gemm_f32_packed,
#if defined(MOROK_GEMMBF_KC)
  .bf16_round = morok_gemm_bf16_round,
  .gemm_bf16_packed = morok_gemm_bf16_packed,
#endif
  .i8_quantize = morok_gemm_i8_quantize,
  .i8_amax = MOROK_GEMM8_AMAX,
#if defined(MOROK_GEMM8_KC)
  .gemm_i8_packed = morok_gemm_i8_packed,
#endif
#if defined(MOROK_AMX8_NC)
  .gemm_i8_amx_packed = morok_gemm_i8_amx_packed,
#endif
  .dft_mag_f32 = morok_dft_mag_f32,
};

/* name as generated code calls it -> this ISA's function */
#define SYMBOL(fn)                                                                                 \
  {                                                                                                \
#fn, (void *) fn                                                                               \
  }
const MorokKernelSymbol MOROK_EXPORT_NAME (morok_kernel_lib_symbols, MOROK_EXPORT_ISA)[] = {
  SYMBOL (morok_gemm_f32),           SYMBOL (morok_gemm_f32_packed),
#if defined(MOROK_ISA_AVX512) && defined(__AVX512FP16__)
  SYMBOL (morok_gemm_f16_packed),
#endif
#if defined(MOROK_GEMMBF_KC)
  SYMBOL (morok_gemm_bf16_round),    SYMBOL (morok_gemm_bf16_packed),
#endif
#if defined(MOROK_ISA_AVX512) && defined(__AMXBF16__) && defined(__AVX512BF16__)
  SYMBOL (morok_gemm_amx_packed),
#endif
  SYMBOL (morok_gemm_i8_quantize),
#if defined(MOROK_GEMM8_KC)
  SYMBOL (morok_gemm_i8_packed),
#endif
#if defined(MOROK_AMX8_NC)
  SYMBOL (morok_gemm_i8_amx_packed),
#endif
  SYMBOL (morok_attention_f32),      SYMBOL (morok_dft_mag_f32),      { 0, 0 },
};
