/* SPDX-License-Identifier: MIT */
/* Constant matmul operands in the GEMM's panel layout: see weight-pack.h. */
#include "kernels/weight-pack.h"
#include "base/morok-dtype.h"
#include "base/cache-line.h"
#include "kernels/cpu-features.h"
#include <math.h>
#include <string.h>
guint
morok_weight_pack_nr (MorokIsa isa)
{
  /* MOROK_GEMM_NR of each ISA in kernels/include/morok-gemm.h */
  switch (isa)
    {
    case MOROK_ISA_AVX512: return 64;
    case MOROK_ISA_AVX2: return 16;
    default: return 4;
    }
}

/* NULL if this CPU has @f, else its name. */
static const char *
unless (MorokCpuFeature f)
{
  return morok_cpu_has (f) ? NULL : morok_cpu_feature_name (f);
}

const char *
morok_weight_pack_missing (MorokIsa isa, MorokPrecision precision)
{
  gboolean avx512 = isa == MOROK_ISA_AVX512;
  switch (precision)
    {
    case MOROK_PRECISION_F32: return NULL;
    case MOROK_PRECISION_F16: return !avx512 ? "the avx512 ISA" : unless (MOROK_CPU_AVX512_FP16);
    case MOROK_PRECISION_BF16:
    case MOROK_PRECISION_BF16X3:
      if (!avx512)
        return "the avx512 ISA";
      return morok_cpu_has (MOROK_CPU_AMX_BF16) || morok_cpu_has (MOROK_CPU_AVX512_BF16)
                 ? NULL
                 : "AVX512-BF16 (or AMX-BF16)";
    case MOROK_PRECISION_INT8:
      /* AVX2 without VNNI runs them as vpmaddubsw + vpmaddwd
       * (kernels/include/morok-gemm-i8.h) */
      if (avx512)
        return unless (MOROK_CPU_AVX512_VNNI);
      return isa == MOROK_ISA_AVX2 ? NULL : "the avx512 or avx2 ISA";
    default: return "a known precision";
    }
}

int
morok_weight_pack_int8_amax (MorokIsa isa)
{
  gboolean vnni = morok_cpu_has (MOROK_CPU_AVX512_VNNI) || morok_cpu_has (MOROK_CPU_AVX_VNNI);
  return isa == MOROK_ISA_AVX2 && !vnni ? 63 : 127;
}

guint
morok_weight_pack_bf16_parts (MorokPrecision format)
{
  return format == MOROK_PRECISION_BF16X3 ? 2 : format == MOROK_PRECISION_BF16 ? 1 : 0;
}

guint
morok_weight_pack_amx_parts (MorokPrecision format)
{
  guint parts = morok_weight_pack_bf16_parts (format);
  return parts && morok_cpu_has (MOROK_CPU_AMX_BF16) ? parts : 0;
}

guint
morok_weight_pack_rounded_a_parts (MorokPrecision format, gint64 n)
{
  return n > MOROK_WEIGHT_PACK_TASK_COLS && !morok_weight_pack_amx_parts (format)
             ? morok_weight_pack_bf16_parts (format)
             : 0;
}

gsize
morok_weight_pack_scratch_bytes (gint64 rows, gint64 k, gint64 n, MorokPrecision format,
                                 gboolean epilogue)
{
  guint parts = morok_weight_pack_amx_parts (format);
  /* A in bf16 tiles: 32-row blocks, k to a multiple of 32, hi (and lo in
   * bf16x3), as kernels/include/morok-gemm-amx.h lays it out */
  if (parts)
    return (gsize) ((rows + 31) / 32 * 32) * (gsize) ((k + 31) / 32 * 32) * 2 * parts;
  gsize block = epilogue ? (gsize) rows * MOROK_WEIGHT_PACK_EPILOGUE_COLS * sizeof (float) : 0;
  gsize qrows = (gsize) morok_weight_pack_a_rows (rows);
  /* then A rounded (bf16 on vdpbf16ps), K2 words a row, hi (and lo) */
  guint rounded = morok_weight_pack_rounded_a_parts (format, n);
  if (rounded)
    return block
           + morok_round_64 (qrows * (gsize) morok_weight_pack_pairs (k, format) * 4 * rounded);
  if (format != MOROK_PRECISION_INT8)
    return block;
  /* then A quantised (morok-gemm-i8.h), 4 * K4 bytes a row, then a scale
   * per row */
  return block + morok_round_64 (qrows * (gsize) morok_weight_pack_quads (k) * 4)
         + morok_round_64 (qrows * sizeof (float)); /* the next thread's slice 64-byte aligned */
}

gint64
morok_weight_pack_a_rows (gint64 rows)
{
  /* the vpdpbusd and vdpbf16ps tiles read up to MR - 1 = 5 past M, the
   * AMX block 31 */
  return (rows + 8 + 31) / 32 * 32;
}

gboolean
morok_weight_pack_int8_amx (guint nr)
{
  return nr == 64 && morok_cpu_has (MOROK_CPU_AMX_INT8);
}

gint64
morok_weight_pack_quads (gint64 k)
{
  return (k + 63) / 64 * 16; /* a whole tile of AMX's 16 quads */
}

gint64
morok_weight_pack_int8_blocks (gint64 k)
{
  return (k + MOROK_WEIGHT_PACK_INT8_KC - 1) / MOROK_WEIGHT_PACK_INT8_KC;
}

gint64
morok_weight_pack_pairs (gint64 k, MorokPrecision format)
{
  return morok_weight_pack_bf16_parts (format) ? (k + 31) / 32 * 16 : (k + 1) / 2;
}

gsize
morok_weight_pack_bytes (gint64 k, gint64 n, guint nr, MorokPrecision format)
{
  gint64 panels = (n + nr - 1) / nr;
  gint64 copies = MAX (morok_weight_pack_bf16_parts (format), 1);
  if (format == MOROK_PRECISION_INT8) /* quads, then a scale and corrections per column */
    return (
        gsize) (panels * nr
                * (morok_weight_pack_quads (k) * 4 + 4 + 4 * morok_weight_pack_int8_blocks (k)));
  if (format != MOROK_PRECISION_F32)
    return (gsize) (copies * panels * morok_weight_pack_pairs (k, format) * nr * 2 * 2);
  return (gsize) (panels * k * nr * 4);
}

/* Rows of B a block, and the widest panel (the avx512 ISA's): the
 * packers walk B a block of one panel at a time, PACK_KB rows by nr
 * columns (4 KB), so that its reads along B's contiguous axis and its
 * writes into the panel both stay in L1 (element by element across the
 * panels, GigaAM's packing took about twice as long). */
#define PACK_KB 16
#define PACK_NR_MAX 64

/* B[k0 .. k0 + PACK_KB, c0 .. c0 + nr] into @t (row-major, @nr wide), zero
 * past K and N, read along B's contiguous axis */
static void
gather_block (const float *b, gint64 k, gint64 n, gint64 sbk, gint64 sbn, gint64 k0, gint64 c0,
              guint nr, float *t)
{
  gint64 rows = MIN (PACK_KB, k - k0), cols = MIN ((gint64) nr, n - c0);
  if (rows < PACK_KB || cols < nr)
    memset (t, 0, PACK_KB * nr * sizeof *t);
  const float *src = b + k0 * sbk + c0 * sbn;
  if (sbn == 1)
    for (gint64 i = 0; i < rows; i++)
      memcpy (t + i * nr, src + i * sbk, cols * sizeof *t);
  else if (sbk == 1)
    for (gint64 j = 0; j < cols; j++)
      for (gint64 i = 0; i < rows; i++)
        t[i * nr + j] = src[i + j * sbn];
  else
    for (gint64 i = 0; i < rows; i++)
      for (gint64 j = 0; j < cols; j++)
        t[i * nr + j] = src[i * sbk + j * sbn];
}

/* int8 (weight-pack.h): each column's largest magnitude, then each value
 * rounded (to nearest even) to a multiple of it / 127 */
static void
pack_int8 (const float *b, gint64 k, gint64 n, gint64 sbk, gint64 sbn, guint nr, gint8 *dst)
{
  gint64 k4 = morok_weight_pack_quads (k), panels = (n + nr - 1) / nr;
  float *scale = (float *) (dst + panels * k4 * nr * 4);
  gint32 *corr = (gint32 *) (scale + panels * nr);
  float t[PACK_KB * PACK_NR_MAX];
  g_autofree float *inv = g_new0 (float, panels *nr);
  for (gint64 p = 0; p < panels; p++)
    for (gint64 k0 = 0; k0 < k; k0 += PACK_KB)
      {
        gather_block (b, k, n, sbk, sbn, k0, p * nr, nr, t);
        for (gint64 i = 0; i < PACK_KB; i++)
          for (guint j = 0; j < nr; j++)
            inv[p * nr + j] = MAX (inv[p * nr + j], fabsf (t[i * nr + j])); /* the max, for now */
      }
  for (gint64 col = 0; col < n; col++)
    {
      scale[col] = inv[col] / 127.0f;
      inv[col] = inv[col] > 0.0f ? 127.0f / inv[col] : 0.0f;
    }
  for (gint64 p = 0; p < panels; p++)
    for (gint64 k0 = 0; k0 < k; k0 += PACK_KB)
      {
        gather_block (b, k, n, sbk, sbn, k0, p * nr, nr, t);
        for (gint64 kk = k0; kk < MIN (k0 + PACK_KB, k); kk++)
          {
            gint8 *row = dst + ((p * k4 + kk / 4) * nr) * 4 + (kk & 3);
            gint32 *c = corr + kk / MOROK_WEIGHT_PACK_INT8_KC * panels * nr + p * nr;
            for (guint j = 0; j < nr; j++)
              {
                float v = t[(kk - k0) * nr + j] * inv[p * nr + j];
                gint8 q = (gint8) CLAMP (rintf (v), -127.0f, 127.0f);
                row[j * 4] = q;
                c[j] += 128 * q;
              }
          }
      }
}

/* the pairs layouts (f16, bf16, bf16x3): row @kk of a block's @t into
 * panel @p */
static void
put_pairs (const float *t, gint64 kk, gint64 p, gint64 k2, guint nr, MorokPrecision format,
           guint16 *dst, guint16 *lo)
{
  guint16 *row = dst + ((p * k2 + kk / 2) * nr) * 2 + (kk & 1);
  guint16 *row_lo = lo + (row - dst);
  for (guint j = 0; j < nr; j++)
    switch (format)
      {
      case MOROK_PRECISION_F16: row[j * 2] = morok_f32_to_f16 (t[j]); break;
      case MOROK_PRECISION_BF16: row[j * 2] = morok_f32_to_bf16 (t[j]); break;
      default: /* bf16x3 */
        {
          guint16 hi = morok_f32_to_bf16 (t[j]);
          row[j * 2] = hi;
          row_lo[j * 2] = morok_f32_to_bf16 (t[j] - morok_bf16_to_f32 (hi));
        }
      }
}

void
morok_weight_pack (const float *b, gint64 k, gint64 n, gint64 sbk, gint64 sbn, guint nr,
                   MorokPrecision format, void *dst)
{
  g_return_if_fail (nr <= PACK_NR_MAX);
  gsize bytes = morok_weight_pack_bytes (k, n, nr, format);
  if (format != MOROK_PRECISION_F32)
    memset (dst, 0, bytes); /* the padding; f32 panels are written whole */
  if (format == MOROK_PRECISION_INT8)
    {
      pack_int8 (b, k, n, sbk, sbn, nr, dst);
      return;
    }
  gint64 k2 = morok_weight_pack_pairs (k, format), panels = (n + nr - 1) / nr;
  guint16 *lo = (guint16 *) dst + bytes / 4; /* bf16x3: the second half */
  float t[PACK_KB * PACK_NR_MAX];
  for (gint64 p = 0; p < panels; p++)
    for (gint64 k0 = 0; k0 < k; k0 += PACK_KB)
      {
        gather_block (b, k, n, sbk, sbn, k0, p * nr, nr, t);
        for (gint64 kk = k0; kk < MIN (k0 + PACK_KB, k); kk++)
          if (format == MOROK_PRECISION_F32)
            memcpy ((float *) dst + (p * k + kk) * nr, t + (kk - k0) * nr, nr * sizeof (float));
          else
            put_pairs (t + (kk - k0) * nr, kk, p, k2, nr, format, dst, lo);
      }
}
