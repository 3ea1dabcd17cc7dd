/* SPDX-License-Identifier: MIT */
#include "model-path.h"
#include <gio/gio.h>

char *
morok_model_path_find (const char *file_name, GError **error)
{
  const char *dirs[]
      = { g_getenv ("MOROK_MODEL_DIR"), MOROK_INSTALLED_MODEL_DIR, MOROK_SOURCE_MODEL_DIR };
  g_autoptr (GString) searched = g_string_new (NULL);
  for (guint i = 0; i < G_N_ELEMENTS (dirs); i++)
    {
      if (!dirs[i] || !*dirs[i])
        continue;
      char *path = g_build_filename (dirs[i], file_name, NULL);
      if (g_file_test (path, G_FILE_TEST_IS_REGULAR))
        return path;
      g_free (path);
      g_string_append_printf (searched, "%s%s", searched->len ? ", " : "", dirs[i]);
    }
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
               "%s not found in %s (run scripts/fetch-silero-models.sh, or set the model "
               "property or MOROK_MODEL_DIR)",
               file_name, searched->str);
  return NULL;
}
