/* SPDX-License-Identifier: MIT */
/* Replays a corpus through a fuzz target without libFuzzer: every file of
 * each folder given (sorted by name), or each file given, goes once to
 * LLVMFuzzerTestOneInput () in a buffer of exactly its size, so that ASan
 * sees a read one byte past the end. meson test runs it under ASan and
 * UBSan (tests/fuzz/meson.build): a report, an abort or a fatal GLib
 * critical fails the test, and the log names the input that was running.
 *
 *   fuzz-replay-onnx tests/fuzz/corpus/onnx [more folders or files]
 */
#include "fuzz-input.h"

#include <stdlib.h>
#include <string.h>

static gboolean
replay_file (const char *path)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *contents = NULL;
  gsize size;

  if (!g_file_get_contents (path, &contents, &size, &error))
    {
      g_printerr ("%s\n", error->message);
      return FALSE;
    }
  g_print ("%s (%" G_GSIZE_FORMAT " bytes)\n", path, size);
  /* g_file_get_contents adds a NUL after the data: copy to the exact size */
  g_autofree guint8 *input = g_memdup2 (contents, size);
  LLVMFuzzerTestOneInput (input, size);
  return TRUE;
}

static int
compare_names (const void *a, const void *b)
{
  return strcmp (*(const char *const *) a, *(const char *const *) b);
}

/* Replays the files of @dir; adds their count to *n_done. */
static gboolean
replay_folder (const char *dir, guint *n_done)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GDir) d = g_dir_open (dir, 0, &error);
  g_autoptr (GPtrArray) paths = g_ptr_array_new_with_free_func (g_free);
  const char *name;

  if (d == NULL)
    {
      g_printerr ("%s\n", error->message);
      return FALSE;
    }
  while ((name = g_dir_read_name (d)) != NULL)
    g_ptr_array_add (paths, g_build_filename (dir, name, NULL));
  qsort (paths->pdata, paths->len, sizeof (gpointer), compare_names);
  for (guint k = 0; k < paths->len; k++)
    {
      const char *path = g_ptr_array_index (paths, k);
      if (!g_file_test (path, G_FILE_TEST_IS_REGULAR))
        continue;
      if (!replay_file (path))
        return FALSE;
      (*n_done)++;
    }
  return TRUE;
}

int
main (int argc, char **argv)
{
  guint n_done = 0;

  for (int k = 1; k < argc; k++)
    {
      gboolean ok = g_file_test (argv[k], G_FILE_TEST_IS_DIR) ? replay_folder (argv[k], &n_done)
                                                              : replay_file (argv[k]) && ++n_done;
      if (!ok)
        return EXIT_FAILURE;
    }
  if (n_done == 0)
    {
      g_printerr ("usage: %s CORPUS-FOLDER-OR-FILE...: no input replayed\n", argv[0]);
      return EXIT_FAILURE;
    }
  g_print ("%u inputs replayed without a finding\n", n_done);
  return EXIT_SUCCESS;
}
