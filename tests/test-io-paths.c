/* SPDX-License-Identifier: MIT */
/* Every entry point that reads a model file says in words what is wrong
 * with a path it cannot read (no such file, a folder, no permission to read
 * it), naming the path; and a model folder has a registry key of its own. */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

#include "io/onnx-reader.h"
#include "io/safetensors.h"
#include "io/sentencepiece-model.h"
#include "jit/morok-jit-registry.h"
#include "models/gigaam.h"
#include "models/silero-vad.h"
#include "temp-dir.h"

static char *tmp_dir;

/* Each reader of a file, as one signature: TRUE when it read @path. */
typedef gboolean (*ReadFn) (const char *path, GError **error);

static gboolean
read_safetensors (const char *path, GError **error)
{
  g_autoptr (MorokSafetensors) st = morok_safetensors_open (path, error);
  return st != NULL;
}

static gboolean
read_onnx (const char *path, GError **error)
{
  g_autoptr (MorokOnnxModel) m = morok_onnx_model_load (path, error);
  return m != NULL;
}

static gboolean
read_sentencepiece (const char *path, GError **error)
{
  g_autoptr (MorokSpModel) sp = morok_sp_model_load (path, error);
  return sp != NULL;
}

static gboolean
read_silero (const char *path, GError **error)
{
  g_autoptr (MorokSileroVad) vad = morok_silero_vad_load (path, error);
  return vad != NULL;
}

static gboolean
read_gigaam (const char *path, GError **error)
{
  g_autoptr (MorokGigaAm) m = morok_gigaam_load (path, error);
  return m != NULL;
}

static const struct
{
  const char *name;
  ReadFn read;
} readers[] = {
  { "safetensors", read_safetensors },
  { "onnx", read_onnx },
  { "sentencepiece", read_sentencepiece },
  { "silero", read_silero },
  { "gigaam", read_gigaam },
};

/* Every reader fails on @path with MOROK_IO_ERROR_OPEN, a message naming
 * @path and saying @words. */
static void
assert_all_refuse (const char *path, const char *words)
{
  for (guint i = 0; i < G_N_ELEMENTS (readers); i++)
    {
      g_autoptr (GError) error = NULL;
      g_test_message ("%s on %s", readers[i].name, path);
      g_assert_false (readers[i].read (path, &error));
      g_assert_error (error, MOROK_IO_ERROR, MOROK_IO_ERROR_OPEN);
      g_assert_nonnull (strstr (error->message, path));
      g_assert_nonnull (strstr (error->message, words));
    }
}

/* A path that does not exist is "no such file". */
static void
test_missing_file (void)
{
  g_autofree char *path = g_build_filename (tmp_dir, "absent.model", NULL);
  assert_all_refuse (path, "no such file");
}

/* A folder given to a reader of files is "a folder, not a file", not
 * GLib's "mmap() failed: No such device"; the GigaAM loader reads folders,
 * and says what an empty one lacks. */
static void
test_folder (void)
{
  g_autofree char *dir = g_build_filename (tmp_dir, "a-folder", NULL);
  g_assert_cmpint (g_mkdir (dir, 0755), ==, 0);
  for (guint i = 0; i + 1 < G_N_ELEMENTS (readers); i++)
    {
      g_autoptr (GError) error = NULL;
      g_assert_false (readers[i].read (dir, &error));
      g_assert_error (error, MOROK_IO_ERROR, MOROK_IO_ERROR_OPEN);
      g_assert_nonnull (strstr (error->message, "a folder, not a file"));
      g_assert_null (strstr (error->message, "mmap"));
    }
  g_autoptr (GError) error = NULL;
  g_assert_false (read_gigaam (dir, &error));
  g_assert_error (error, MOROK_IO_ERROR, MOROK_IO_ERROR_NOT_FOUND);
  g_assert_nonnull (strstr (error->message, "no config.json"));
}

/* A file and a folder that the reader may not read are "no permission to
 * read it" and "no permission to read the folder". Run as root, whom file
 * modes do not stop, the check runs in a child that has become nobody. */
static void
test_no_permission (void)
{
  g_autofree char *file = g_build_filename (tmp_dir, "locked.model", NULL);
  g_autofree char *dir = g_build_filename (tmp_dir, "locked-folder", NULL);
  if (g_test_subprocess ())
    {
      if (geteuid () == 0 && (setgid (65534) != 0 || setuid (65534) != 0))
        g_error ("cannot become nobody");
      assert_all_refuse (file, "no permission to read it");
      g_autoptr (GError) error = NULL;
      g_assert_false (read_gigaam (dir, &error));
      g_assert_error (error, MOROK_IO_ERROR, MOROK_IO_ERROR_OPEN);
      g_assert_nonnull (strstr (error->message, "no permission to read the folder"));
      return;
    }
  g_assert_true (g_file_set_contents (file, "not read", -1, NULL));
  g_assert_cmpint (g_chmod (file, 0), ==, 0);
  g_assert_cmpint (g_mkdir (dir, 0), ==, 0);
  g_assert_cmpint (g_chmod (tmp_dir, 0755), ==, 0); /* nobody passes through it */
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
}

static void
write_file (const char *dir, const char *name, const char *text)
{
  g_autofree char *path = g_build_filename (dir, name, NULL);
  g_assert_true (g_file_set_contents (path, text, -1, NULL));
}

/* A model folder's key is its files': the same for a copy of the folder,
 * another when a file changes, and hidden files are not the model's. */
static void
test_folder_key (void)
{
  g_autofree char *a = g_build_filename (tmp_dir, "model-a", NULL);
  g_autofree char *b = g_build_filename (tmp_dir, "model-b", NULL);
  g_assert_cmpint (g_mkdir (a, 0755), ==, 0);
  g_assert_cmpint (g_mkdir (b, 0755), ==, 0);
  for (guint i = 0; i < 2; i++)
    {
      write_file (i ? b : a, "config.json", "{}");
      write_file (i ? b : a, "model.safetensors", "weights");
    }
  write_file (b, ".cache", "a hub client's notes");
  g_autoptr (GError) error = NULL;
  g_autofree char *ka = morok_jit_registry_file_key (a, &error);
  g_assert_no_error (error);
  g_autofree char *kb = morok_jit_registry_file_key (b, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (ka, ==, kb);
  g_assert_true (g_str_has_prefix (ka, "folder-"));
  write_file (b, "model.safetensors", "other weights");
  g_autofree char *kb2 = morok_jit_registry_file_key (b, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (ka, !=, kb2);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  /* a subprocess works in its parent's folder */
  tmp_dir = g_test_subprocess () ? g_strdup (g_getenv ("IO_PATHS_TEST_DIR")) : temp_dir_new ();
  g_setenv ("IO_PATHS_TEST_DIR", tmp_dir, TRUE);
  g_test_add_func ("/io/paths/missing-file", test_missing_file);
  g_test_add_func ("/io/paths/folder", test_folder);
  g_test_add_func ("/io/paths/no-permission", test_no_permission);
  g_test_add_func ("/io/paths/folder-key", test_folder_key);
  int ret = g_test_run ();
  if (!g_test_subprocess ())
    temp_dir_remove (tmp_dir);
  g_free (tmp_dir);
  return ret;
}
