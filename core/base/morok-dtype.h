/* SPDX-License-Identifier: MIT */
/* The vocabulary every stage shares: element types and the most dims a
 * shape has. f16 and bf16 are stored as 16-bit codes and computed in f32
 * inside kernels; bool is one byte (0 or 1). This folder includes nothing of
 * Morok's, so the runtime and the kernels can name a buffer's type without
 * the tensor or graph layers above them.
 *
 *   gsize bytes = morok_dtype_size (MOROK_DTYPE_F16) * 512;   // 1024
 *   const char *name = morok_dtype_name (MOROK_DTYPE_BF16);  // "bf16"
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define MOROK_MAX_RANK 8 /* dims of a tensor, a node or a buffer */

typedef enum
{
  MOROK_DTYPE_F32,
  MOROK_DTYPE_F16,
  MOROK_DTYPE_BF16,
  MOROK_DTYPE_I32,
  MOROK_DTYPE_I64,
  MOROK_DTYPE_U8,
  MOROK_DTYPE_BOOL,
  MOROK_DTYPE_COUNT
} MorokDType;

/* The arithmetic of a plan's products with constant weights (matmuls whose B
 * is a weight, MorokPlanOptions.precision); everything else is f32. */
typedef enum
{
  MOROK_PRECISION_F32,    /* f32 FMAs */
  MOROK_PRECISION_F16,    /* f16 products, f32 sums (AVX512-FP16) */
  MOROK_PRECISION_BF16,   /* bf16 products, f32 sums (AMX-BF16 or AVX512-BF16) */
  MOROK_PRECISION_BF16X3, /* three bf16 products per f32 product, f32 sums (as bf16) */
  MOROK_PRECISION_INT8,   /* int8 weights per column, uint8 activations per row, int32
                           * sums (AVX512-VNNI, or the avx2 ISA on any AVX2 CPU) */
  MOROK_PRECISION_COUNT
} MorokPrecision;

/* Bytes per element. */
gsize morok_dtype_size (MorokDType dtype);
/* "f32", "f16", ...; "?" for an invalid value. */
const char *morok_dtype_name (MorokDType dtype);
gboolean morok_dtype_is_float (MorokDType dtype);
/* "f32", "f16", "bf16", "bf16x3", "int8"; "?" for an invalid value. */
const char *morok_precision_name (MorokPrecision precision);

/* f16 and bf16 codes to and from f32 on the host: to f32 exact, from f32
 * round to nearest even (NaN stays NaN). The one host-side home of these
 * conversions (safetensors reading, weight packing); generated kernels use
 * kernels/include/morok-half.h, which tests/test-kernel-half.c checks
 * against these. */
float morok_f16_to_f32 (guint16 bits);
float morok_bf16_to_f32 (guint16 bits);
guint16 morok_f32_to_f16 (float value);
guint16 morok_f32_to_bf16 (float value);

G_END_DECLS
