/* SPDX-License-Identifier: MIT */
/* morok-io.c: the error domain of the weight readers and their checks. */
#include "io/morok-io.h"
#include <math.h>

/* clang-format off */
G_DEFINE_QUARK (morok-io-error-quark, morok_io_error)
/* clang-format on */

gboolean
morok_io_check_finite (const char *file, const char *tensor, const float *data, gint64 n,
                       GError **error)
{
  for (gint64 i = 0; i < n; i++)
    if (!isfinite (data[i]))
      {
        g_set_error (error, MOROK_IO_ERROR, MOROK_IO_ERROR_MALFORMED,
                     "%s: tensor '%s' holds a non-finite value at %" G_GINT64_FORMAT, file, tensor,
                     i);
        return FALSE;
      }
  return TRUE;
}
