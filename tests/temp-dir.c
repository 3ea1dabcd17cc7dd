/* SPDX-License-Identifier: MIT */
#include "temp-dir.h"

#include <glib/gstdio.h>

char *
temp_dir_new (void)
{
  g_autoptr (GError) error = NULL;
  char *dir = g_dir_make_tmp ("morok-test-XXXXXX", &error);

  g_assert_no_error (error);
  return dir;
}

void
temp_dir_remove (const char *path)
{
  g_autoptr (GDir) dir = g_dir_open (path, 0, NULL);
  const char *name;

  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *child = g_build_filename (path, name, NULL);
      if (g_file_test (child, G_FILE_TEST_IS_DIR) && !g_file_test (child, G_FILE_TEST_IS_SYMLINK))
        temp_dir_remove (child);
      else
        g_unlink (child);
    }
  g_rmdir (path);
}
