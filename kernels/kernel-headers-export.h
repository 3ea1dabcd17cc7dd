/* SPDX-License-Identifier: MIT */
/* The kernel headers (kernels/include), compiled by clang with the JIT's flags
 * once per ISA (kernel-headers-export.c), seen from host code: tests and
 * kernels/bench-gemm.c call them through this table. Host code is compiled by
 * the project's compiler, which need not understand clang's vector types, so
 * only plain arrays cross this boundary. Include <stdint.h> first.
 *
 *   const MorokKernelExports *k = &morok_kernel_exports_avx512;
 *   if (morok_kernel_exports_runnable (k))
 *     k->gemm_f32 (m, n, k, a, k, 1, b, n, 1, c, n, 0);
 */
#pragma once

typedef enum
{
  MOROK_VMATH_EXP,
  MOROK_VMATH_LOG,
  MOROK_VMATH_TANH,
  MOROK_VMATH_SIGMOID,
  MOROK_VMATH_ERF,  /* scalar only */
  MOROK_VMATH_SQRT, /* scalar only */
  MOROK_VMATH_POW,  /* scalar only, y from the second input */
} MorokVmathFn;

typedef enum
{
  MOROK_EXPORT_ISA_PORTABLE,
  MOROK_EXPORT_ISA_AVX2,
  MOROK_EXPORT_ISA_AVX512,
} MorokExportIsa;

typedef struct
{
  const char *name; /* "avx512", "avx2", "portable" or "baseline" */
  MorokExportIsa isa;
  void (*f16_to_f32) (const uint16_t *in, float *out, int64_t n);
  void (*f32_to_f16) (const float *in, uint16_t *out, int64_t n);
  void (*bf16_to_f32) (const uint16_t *in, float *out, int64_t n);
  void (*f32_to_bf16) (const float *in, uint16_t *out, int64_t n);
  /* out[i] = fn (x[i]) (pow: fn (x[i], y[i])), through a loop over the scalar
   * function (width 1) or the 8- or 16-wide vector one (n a multiple). */
  void (*vmath) (MorokVmathFn fn, int width, const float *x, const float *y, float *out, int64_t n);
  void (*gemm_f32) (int64_t M, int64_t N, int64_t K, const float *A, int64_t sam, int64_t sak,
                    const float *B, int64_t sbk, int64_t sbn, float *C, int64_t ldc,
                    int accumulate);
  /* C = A . B with B packed by morok_weight_pack (kernels/weight-pack.h) in
   * f32 (bp float), bf16 or bf16x3 (A rounded by bf16_round into ahi, and
   * alo for bf16x3, lda words a row, M + 6 rows, or with ahi NULL A itself,
   * rounded a block at a time; bhi the hi copy of B, blo the lo copy or
   * NULL, k2 pairs per panel; NULL where this object has no vdpbf16ps
   * kernel), int8 (A quantised by i8_quantize into qa, sa with row
   * stride lda; bq, sb, corr the packed quads, scales and first block's
   * corrections, cs elements from one block's to the next; NULL in the
   * portable objects). */
  void (*gemm_f32_packed) (int64_t M, int64_t N, int64_t K, const float *A, int64_t sam,
                           int64_t sak, const float *bp, float *C, int64_t ldc, int accumulate);
  void (*bf16_round) (int64_t M, int64_t K, const float *A, int64_t sam, int64_t sak, uint32_t *ahi,
                      uint32_t *alo, int64_t lda);
  void (*gemm_bf16_packed) (int64_t M, int64_t N, int64_t K, const float *A, int64_t sam,
                            int64_t sak, const uint32_t *ahi, const uint32_t *alo, int64_t lda,
                            const uint16_t *bhi, const uint16_t *blo, int64_t k2, float *C,
                            int64_t ldc, int accumulate);
  void (*i8_quantize) (int64_t M, int64_t K, const float *A, int64_t sam, int64_t sak, uint8_t *qa,
                       float *sa, int64_t lda);
  /* the largest |round (a / sa)| of i8_quantize, which adds it + 1: 127,
   * or 63 on AVX2 without VNNI (morok-gemm-i8.h) */
  int i8_amax;
  void (*gemm_i8_packed) (int64_t M, int64_t N, const uint8_t *qa, const float *sa, int64_t lda,
                          const int8_t *bq, const float *sb, const int32_t *corr, int64_t cs,
                          float *C, int64_t ldc, int accumulate);
  /* the same on AMX tiles (morok-gemm-i8-amx.h): lda a multiple of 64, qa
   * rows to M rounded up to 32; NULL where the object has no AMX-INT8 */
  void (*gemm_i8_amx_packed) (int64_t M, int64_t N, const uint8_t *qa, const float *sa, int64_t lda,
                              const int8_t *bq, const float *sb, const int32_t *corr, int64_t cs,
                              float *C, int64_t ldc, int accumulate);
  /* |DFT| of up to 16 windowed frames (morok-dft.h), tw its table */
  void (*dft_mag_f32) (int64_t rows, int64_t L, const float *const *frames, int64_t se,
                       const float *win, int64_t sw, const float *tw, float *out);
} MorokKernelExports;

/* One function of the kernel library: the name generated code calls, the
 * ISA's function (kernel-lib.c hands the ELF loader one table). */
typedef struct
{
  const char *name;
  void *address;
} MorokKernelSymbol;

/* Each ends with { NULL, NULL }. */
extern const MorokKernelSymbol morok_kernel_lib_symbols_avx512[];
extern const MorokKernelSymbol morok_kernel_lib_symbols_avx2[];
extern const MorokKernelSymbol morok_kernel_lib_symbols_portable[];

extern const MorokKernelExports morok_kernel_exports_avx512;
extern const MorokKernelExports morok_kernel_exports_avx2;
extern const MorokKernelExports morok_kernel_exports_portable;
/* The portable code built for the baseline x86-64, not -march=native: in
 * the kernel tests only (kernel_test_objects), not in libmorok. */
extern const MorokKernelExports morok_kernel_exports_baseline;
/* The avx2 code built for x86-64-v3 (no VNNI, whatever this CPU has): in
 * the kernel tests only (kernel_test_objects). */
extern const MorokKernelExports morok_kernel_exports_avx2v3;

/* Whether this CPU runs the ISA's code (the objects are built with the ISA's
 * -m flags on top of -march=native, so they exist even where it does not). */
static inline int
morok_kernel_exports_runnable (const MorokKernelExports *k)
{
  switch (k->isa)
    {
    case MOROK_EXPORT_ISA_AVX512:
      return __builtin_cpu_supports ("avx512f") && __builtin_cpu_supports ("avx512vl")
             && __builtin_cpu_supports ("avx512bw") && __builtin_cpu_supports ("avx512dq");
    case MOROK_EXPORT_ISA_AVX2:
      return __builtin_cpu_supports ("avx2") && __builtin_cpu_supports ("fma");
    default: return 1;
    }
}
