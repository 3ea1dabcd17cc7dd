/* SPDX-License-Identifier: MIT */
/* Constant matmul operands packed at prepare into the panels the GEMM
 * micro-kernels read (kernels/include/morok-gemm.h), so that execute streams
 * them in order instead of packing them again on every call.
 *
 * B [K, N] (element (k, n) at b[k*sbk + n*sbn]) becomes panels of NR columns,
 * zero beyond N:
 *   f32: panel p, row k, column j at dst[(p*K + k)*NR + j]
 *   f16: k taken in pairs (K2 = ceil (K / 2), zero past K), the pair's two
 *        values side by side: dst[((p*K2 + q)*NR + j)*2 + (k & 1)], q = k / 2,
 *        as the f16 micro-kernel multiplies a broadcast pair of A against it.
 *   bf16: the same pairs in bf16 with K2 rounded up to a multiple of 16
 *        (an AMX tile is 16 pairs deep; a tile of 16 columns is then 16 rows
 *        of 64 bytes, 256 bytes apart). Without AMX vdpbf16ps reads the same
 *        layout: a pair of 16 columns is one zmm.
 *   bf16x3: the bf16 layout twice: hi = bf16 (b), then at element
 *        panels*K2*NR*2 lo = bf16 (b - hi).
 *   int8: column j quantised symmetrically, q = round (b / s[j]) in
 *        [-127, 127] with s[j] = max_k |b[k, j]| / 127 (to nearest even), k
 *        in quads (K4 = 16 ceil (K / 64), zero past K), the quad's four values
 *        side by side: dst[((p*K4 + q)*NR + j)*4 + (k & 3)], q = k / 4, as
 *        vpdpbusd and the AMX tiles read them; then, at byte panels*K4*NR*4, s as float
 *        [panels*NR], then corr[blk][j] = 128 * sum q[k, j] over the k of
 *        block blk (MOROK_WEIGHT_PACK_INT8_KC each) as int32
 *        [blocks][panels*NR] (zero past N): the sum an activation offset by
 *        128 adds (kernels/include/morok-gemm-i8.h).
 *
 *   gsize bytes = morok_weight_pack_bytes (768, 3072, 64, MOROK_PRECISION_F16);
 *   morok_weight_pack (w, 768, 3072, 1, 768, 64, MOROK_PRECISION_F16, dst);  // W^T of [3072, 768]
 */
#pragma once

#include "kernels/morok-isa.h"
#include "base/morok-dtype.h"

G_BEGIN_DECLS

/* Contractions with at most this many rows (or columns) run without packing
 * (morok_gemm_f32's small paths); the renderer passes it to the kernel
 * headers, and prepare lays constant operands out for them. */
#define MOROK_GEMM_SMALL 8

/* Columns per panel of the micro-kernel that @isa's kernels use. */
guint morok_weight_pack_nr (MorokIsa isa);
/* Whether a plan for @isa runs @precision's products on this CPU: NULL if
 * it does, else what is missing ("AVX512-VNNI", "the avx512 ISA"): the one
 * answer the plan's precision check, its error and the tests' skips give.
 * f32 runs everywhere; f16 needs avx512 and AVX512-FP16; bf16 and bf16x3
 * avx512 and AMX-BF16 (tile multiplies) or AVX512-BF16 (vdpbf16ps); int8
 * avx512 and AVX512-VNNI (zmm vpdpbusd), or avx2 (ymm vpdpbusd on
 * AVX-VNNI, else vpmaddubsw and vpmaddwd with 7-bit activations). */
const char *morok_weight_pack_missing (MorokIsa isa, MorokPrecision precision);
/* The largest |round (a / s)| of the activations in @isa's int8 products
 * on this CPU, compiled for -march=native: 127 where they run on VNNI, 63
 * on AVX2 without (kernels/include/morok-gemm-i8.h). */
int morok_weight_pack_int8_amax (MorokIsa isa);
/* The bf16 copies of the weight a bf16 format keeps (bf16: 1, bf16x3: hi
 * and lo, 2); 0 for the other formats. */
guint morok_weight_pack_bf16_parts (MorokPrecision format);
/* morok_weight_pack_bf16_parts where this CPU runs the format's products on
 * AMX; 0 elsewhere, where they run as vdpbf16ps on AVX512-BF16 (the same
 * packed layout, kernels/include/morok-gemm-bf16.h). */
guint morok_weight_pack_amx_parts (MorokPrecision format);
/* Columns of C a product with packed weights and an epilogue stores at a
 * time, into the kernel's scratch memory, before the epilogue reads them
 * back (from L2) into the output: a block of its own, not rows of the
 * output, whose row stride (12 KB for 3072 columns) put a tile's rows of C
 * into the same cache sets as each other and the panel of B. */
#define MOROK_WEIGHT_PACK_EPILOGUE_COLS 256
/* Columns of C in one task of a product with packed weights (but AMX's):
 * the threads take such blocks in turn. */
#define MOROK_WEIGHT_PACK_TASK_COLS 128
/* The bf16 parts of A (1: bf16, 2: bf16x3) that a product with B packed in
 * @format and @n columns rounds once into the thread's scratch and reads
 * there (kernels/include/morok-gemm-bf16.h): on vdpbf16ps, where there is
 * no AMX, with more than one task's columns; 0 elsewhere (the product
 * rounds A a block at a time, or is not bf16). The scratch's size and the
 * renderer both ask this. */
guint morok_weight_pack_rounded_a_parts (MorokPrecision format, gint64 n);
/* Scratch bytes per thread that a product with B packed in @format needs,
 * for at most @rows rows of A, K = @k and N at most @n: the AMX formats
 * convert A into tiles there; the others with an @epilogue store blocks of
 * C there, int8 then A quantised, bf16 and bf16x3 on vdpbf16ps with more
 * than one task's columns A rounded. */
gsize morok_weight_pack_scratch_bytes (gint64 rows, gint64 k, gint64 n, MorokPrecision format,
                                       gboolean epilogue);
/* K2 of a pairs layout (f16, bf16, bf16x3): pairs per panel. */
gint64 morok_weight_pack_pairs (gint64 k, MorokPrecision format);
/* K4 of the int8 layout: quads per panel, K rounded up to 64 (an AMX tile
 * of B is 16 quads deep; vpdpbusd reads the same layout). */
gint64 morok_weight_pack_quads (gint64 k);
/* Rows of A quantised (int8) or rounded (bf16 and bf16x3 on vdpbf16ps)
 * that a product with at most @rows rows reads (the tiles read past the
 * last, never store it). */
gint64 morok_weight_pack_a_rows (gint64 rows);
/* Whether int8 products with panels of @nr columns run on AMX tiles on
 * this CPU (kernels/include/morok-gemm-i8-amx.h): the avx512 ISA's panels
 * (64) and AMX-INT8 with the tiles granted; else on vpdpbusd. */
gboolean morok_weight_pack_int8_amx (guint nr);
/* k per block of the int8 kernel, each with its own corrections (its
 * MOROK_GEMM8_KC) */
#define MOROK_WEIGHT_PACK_INT8_KC 1024
/* Blocks of MOROK_WEIGHT_PACK_INT8_KC k in K = @k (rows of corrections). */
gint64 morok_weight_pack_int8_blocks (gint64 k);
gsize morok_weight_pack_bytes (gint64 k, gint64 n, guint nr, MorokPrecision format);
/* Rounds to nearest even (int8: weight-pack.h above). */
void morok_weight_pack (const float *b, gint64 k, gint64 n, gint64 sbk, gint64 sbn, guint nr,
                        MorokPrecision format, void *dst);

G_END_DECLS
