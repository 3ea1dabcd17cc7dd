/* SPDX-License-Identifier: MIT */
#include "tensors-flexible.h"
#include <string.h>

static void
put_u32 (guint8 *p, guint32 v)
{
  v = GUINT32_TO_LE (v);
  memcpy (p, &v, 4);
}

void
morok_tensors_header_write_f32 (guint8 *out, const guint32 *dims, guint rank)
{
  g_return_if_fail (rank >= 1 && rank <= MOROK_TENSORS_RANK_LIMIT);
  memset (out, 0, MOROK_TENSORS_HEADER_SIZE);
  /* magic, version, type, dimension[16] (innermost first, 0-terminated),
   * format, media type */
  put_u32 (out + 0, MOROK_TENSORS_MAGIC);
  put_u32 (out + 4, MOROK_TENSORS_VERSION);
  put_u32 (out + 8, MOROK_TENSORS_TYPE_FLOAT32);
  for (guint i = 0; i < rank; i++)
    put_u32 (out + 12 + 4 * i, dims[rank - 1 - i]);
  put_u32 (out + 12 + 4 * MOROK_TENSORS_RANK_LIMIT, MOROK_TENSORS_FORMAT_FLEXIBLE);
  put_u32 (out + 16 + 4 * MOROK_TENSORS_RANK_LIMIT, MOROK_TENSORS_MEDIA_TENSOR);
}
