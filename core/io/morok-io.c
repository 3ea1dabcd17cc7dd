/* SPDX-License-Identifier: MIT */
/* morok-io.c: the error domain of the weight readers and their checks. */
#include "io/morok-io.h"
#include <errno.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

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

char *
morok_io_describe_path (const char *path, int errno_value)
{
  const char *why;
  switch (errno_value)
    {
    case ENOENT: why = "no such file"; break;
    case ENOTDIR: why = "a part of the path is a file, not a folder"; break;
    case EACCES:
    case EPERM: why = "no permission to read it"; break;
    case EISDIR: why = "a folder, not a file"; break;
    default: why = g_strerror (errno_value); break;
    }
  return g_strdup_printf ("%s: %s", path, why);
}

GMappedFile *
morok_io_map_file (const char *path, GError **error)
{
  g_return_val_if_fail (path != NULL, NULL);
  /* GLib maps whatever open () accepts: a folder opens, and only mmap ()
   * fails on it, with ENODEV */
  GStatBuf st;
  int saved = 0;
  if (g_stat (path, &st) != 0)
    saved = errno;
  else if (S_ISDIR (st.st_mode))
    saved = EISDIR;
  if (saved)
    {
      g_autofree char *what = morok_io_describe_path (path, saved);
      g_set_error (error, MOROK_IO_ERROR, MOROK_IO_ERROR_OPEN, "%s", what);
      return NULL;
    }
  g_autoptr (GError) local = NULL;
  GMappedFile *file = g_mapped_file_new (path, FALSE, &local);
  if (file)
    return file;
  if (g_error_matches (local, G_FILE_ERROR, G_FILE_ERROR_ACCES)
      || g_error_matches (local, G_FILE_ERROR, G_FILE_ERROR_PERM))
    {
      g_autofree char *what = morok_io_describe_path (path, EACCES);
      g_set_error (error, MOROK_IO_ERROR, MOROK_IO_ERROR_OPEN, "%s", what);
    }
  else
    g_set_error (error, MOROK_IO_ERROR, MOROK_IO_ERROR_OPEN, "%s: cannot read it: %s", path,
                 local->message);
  return NULL;
}
