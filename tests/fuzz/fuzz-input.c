/* SPDX-License-Identifier: MIT */
/* fuzz-input.c: fatal GLib criticals and inputs as memory files for the
 * fuzz targets (fuzz-input.h). */
#include "fuzz-input.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

void
fuzz_input_setup (void)
{
  static gsize done;

  if (g_once_init_enter (&done))
    {
      g_log_set_always_fatal (G_LOG_FATAL_MASK | G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING);
      g_once_init_leave (&done, 1);
    }
}

FuzzFile *
fuzz_file_new (const uint8_t *data, size_t size)
{
  FuzzFile *file = g_new0 (FuzzFile, 1);

  file->fd = memfd_create ("fuzz-input", MFD_CLOEXEC);
  if (file->fd < 0)
    {
      g_printerr ("memfd_create: %s\n", g_strerror (errno));
      abort ();
    }
  for (size_t done = 0; done < size;)
    {
      ssize_t n = write (file->fd, data + done, size - done);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        {
          g_printerr ("writing the input to a memory file: %s\n", g_strerror (errno));
          abort ();
        }
      done += (size_t) n;
    }
  file->path = g_strdup_printf ("/proc/self/fd/%d", file->fd);
  return file;
}

void
fuzz_file_free (FuzzFile *file)
{
  if (file == NULL)
    return;
  close (file->fd);
  g_free (file->path);
  g_free (file);
}
