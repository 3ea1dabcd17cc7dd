/* SPDX-License-Identifier: MIT */
/* onnx-test-util.h: what the ONNX reader tests share. */
#pragma once

#include <glib.h>

/* A Silero network: the file's version and a sample rate. */
typedef struct
{
  const char *version;
  guint rate;
} SileroCase;

/* Every network of the official files. */
static const SileroCase silero_cases[] = {
  { "v4", 16000 }, { "v4", 8000 }, { "v5", 16000 }, { "v5", 8000 }, { "v6", 16000 }, { "v6", 8000 },
};

/* Returns the path of a Silero model, or NULL (and skips the test) when the
 * models have not been fetched. */
static inline char *
silero_path (const char *version)
{
  const char *dir = g_getenv ("MOROK_MODEL_DIR");
  g_autofree char *name = g_strdup_printf ("silero_vad_%s.onnx", version);
  char *path = g_build_filename (dir ? dir : "models", name, NULL);

  if (!g_file_test (path, G_FILE_TEST_IS_REGULAR))
    {
      g_autofree char *msg
          = g_strdup_printf ("%s missing: run scripts/fetch-silero-models.sh", path);
      g_test_skip (msg);
      g_free (path);
      return NULL;
    }
  return path;
}

/* The bytes of a Silero model, or NULL (and the test skipped) as above. */
static inline char *
silero_contents (const char *version, gsize *len)
{
  g_autofree char *path = silero_path (version);
  char *data = NULL;
  if (path)
    g_assert_true (g_file_get_contents (path, &data, len, NULL));
  return data;
}
