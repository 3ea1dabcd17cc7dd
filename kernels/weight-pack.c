/* SPDX-License-Identifier: MIT */
/* Constant matmul operands in the GEMM's panel layout: see weight-pack.h. */
#include "kernels/weight-pack.h"
#include <string.h>


/* round to nearest even, as the kernels' morok_f32_to_f16 (x86-64 has
 * _Float16 in gcc >= 12 and clang) */
static guint16
f32_to_f16 (float v)
{
  _Float16 h = (_Float16) v;
  guint16 u;
  memcpy (&u, &h, sizeof u);
  return u;
}

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

gboolean
morok_weight_pack_f16_supported (void)
{
#if defined(__x86_64__) && (defined(__clang__) || __GNUC__ >= 12)
  __builtin_cpu_init ();
  return __builtin_cpu_supports ("avx512fp16") != 0;
#else
  return FALSE;
#endif
}

gsize
morok_weight_pack_bytes (gint64 k, gint64 n, guint nr, MorokDType dtype)
{
  gint64 panels = (n + nr - 1) / nr;
  if (dtype == MOROK_DTYPE_F16)
    return (gsize) (panels * ((k + 1) / 2) * nr * 2 * 2);
  return (gsize) (panels * k * nr * 4);
}

/* Index of B's (kk, col) in the packed layout, in elements. */
static inline gsize
packed_index (gint64 kk, gint64 col, gint64 k, guint nr, gboolean pairs)
{
  gint64 p = col / nr, j = col % nr;
  if (pairs)
    return (gsize) (((p * ((k + 1) / 2) + kk / 2) * nr + j) * 2 + (kk & 1));
  return (gsize) ((p * k + kk) * nr + j);
}

void
morok_weight_pack (const float *b, gint64 k, gint64 n, gint64 sbk, gint64 sbn, guint nr,
                   MorokDType dtype, void *dst)
{
  gboolean f16 = dtype == MOROK_DTYPE_F16;
  memset (dst, 0, morok_weight_pack_bytes (k, n, nr, dtype)); /* the padding */
  /* walk B along its contiguous axis: reading a 900 MB model across its
   * rows would miss the cache on every element */
  gboolean by_col = sbk == 1 && sbn != 1;
  gint64 outer = by_col ? n : k, inner = by_col ? k : n;
  for (gint64 o = 0; o < outer; o++)
    for (gint64 i = 0; i < inner; i++)
      {
        gint64 kk = by_col ? i : o, col = by_col ? o : i;
        float v = b[kk * sbk + col * sbn];
        gsize at = packed_index (kk, col, k, nr, f16);
        if (f16)
          ((guint16 *) dst)[at] = f32_to_f16 (v);
        else
          ((float *) dst)[at] = v;
      }
}
