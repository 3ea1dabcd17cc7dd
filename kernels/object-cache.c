/* SPDX-License-Identifier: MIT */
/* Disk cache of compiled kernel objects. The key hashes everything that
 * decides an object's bytes (see object-cache.h), so a stale entry can only be
 * hit through a hash collision; entries are never invalidated, only added.
 * Running `cc --version` costs a process (several ms), so its output is kept
 * per compiler path for the life of the process. */

#define G_LOG_DOMAIN "morok-kernels"

#include "object-cache.h"

#include <errno.h>
#include <gio/gio.h>
#include <glib/gstdio.h>
#include <string.h>

static GMutex versions_lock;
static GHashTable *versions; /* compiler path -> its `--version` output; under versions_lock */

/* Output of `@cc_path --version`. (transfer full) */
static char *
compiler_version (const char *cc_path, GError **error)
{
  g_autoptr (GMutexLocker) locker = g_mutex_locker_new (&versions_lock);
  g_autoptr (GSubprocess) proc = NULL;
  g_autoptr (GError) local = NULL;
  char *out = NULL;
  const char *cached;

  if (versions == NULL)
    versions = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  cached = g_hash_table_lookup (versions, cc_path);
  if (cached != NULL)
    return g_strdup (cached);

  proc = g_subprocess_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_SILENCE,
                           &local, cc_path, "--version", NULL);
  if (proc == NULL || !g_subprocess_communicate_utf8 (proc, NULL, NULL, &out, NULL, &local))
    {
      g_set_error (error, MOROK_COMPILE_ERROR, MOROK_COMPILE_ERROR_NO_COMPILER,
                   "cannot run C compiler '%s': %s", cc_path, local->message);
      return NULL;
    }
  if (!g_subprocess_get_successful (proc))
    {
      g_free (out);
      g_set_error (error, MOROK_COMPILE_ERROR, MOROK_COMPILE_ERROR_NO_COMPILER,
                   "'%s --version' failed: is it a C compiler?", cc_path);
      return NULL;
    }
  g_hash_table_insert (versions, g_strdup (cc_path), g_strdup (out));
  return out;
}

/* The lines of /proc/cpuinfo that -march=native depends on (vendor, family,
 * model, feature flags) for the first CPU; a fixed list of
 * __builtin_cpu_supports () answers where /proc is not readable. */
static const char *
cpu_features (void)
{
  static const char *features;

  if (g_once_init_enter (&features))
    {
      g_autofree char *cpuinfo = NULL;
      GString *s = g_string_new (NULL);

      if (g_file_get_contents ("/proc/cpuinfo", &cpuinfo, NULL, NULL))
        {
          g_auto (GStrv) lines = g_strsplit (cpuinfo, "\n", -1);
          for (guint i = 0; lines[i] != NULL && lines[i][0] != '\0'; i++)
            if (g_str_has_prefix (lines[i], "vendor_id")
                || g_str_has_prefix (lines[i], "cpu family")
                || g_str_has_prefix (lines[i], "model\t") || g_str_has_prefix (lines[i], "flags"))
              g_string_append_printf (s, "%s\n", lines[i]);
        }
      if (s->len == 0)
        {
          __builtin_cpu_init ();
          g_string_append_printf (s, "sse4.2=%d avx=%d avx2=%d fma=%d avx512f=%d avx512bw=%d "
                                  "avx512vl=%d avx512vnni=%d",
                                  !!__builtin_cpu_supports ("sse4.2"),
                                  !!__builtin_cpu_supports ("avx"),
                                  !!__builtin_cpu_supports ("avx2"),
                                  !!__builtin_cpu_supports ("fma"),
                                  !!__builtin_cpu_supports ("avx512f"),
                                  !!__builtin_cpu_supports ("avx512bw"),
                                  !!__builtin_cpu_supports ("avx512vl"),
                                  !!__builtin_cpu_supports ("avx512vnni"));
        }
      g_once_init_leave (&features, g_string_free (s, FALSE));
    }
  return features;
}

/* Adds one labelled, length-prefixed field, so that no two different inputs
 * (a flag ending where the next begins) hash the same bytes. */
static void
add_field (GChecksum *sum, const char *label, const char *value)
{
  guint64 len = strlen (value);

  g_checksum_update (sum, (const guchar *) label, strlen (label) + 1);
  g_checksum_update (sum, (const guchar *) &len, sizeof len);
  g_checksum_update (sum, (const guchar *) value, len);
}

char *
morok_object_cache_key (const char *cc_path, const char *const *flags, const char *source,
                        GError **error)
{
  g_autoptr (GChecksum) sum = NULL;
  g_autofree char *version = NULL;

  g_return_val_if_fail (cc_path != NULL && source != NULL, NULL);

  version = compiler_version (cc_path, error);
  if (version == NULL)
    return NULL;
  sum = g_checksum_new (G_CHECKSUM_SHA256);
  add_field (sum, "abi", G_STRINGIFY (MOROK_KERNEL_ABI_VERSION));
  add_field (sum, "cc", version);
  for (guint i = 0; flags != NULL && flags[i] != NULL; i++)
    add_field (sum, "flag", flags[i]);
  add_field (sum, "cpu", cpu_features ());
  add_field (sum, "source", source);
  return g_strdup (g_checksum_get_string (sum));
}

char *
morok_object_cache_dir (const MorokCompileOptions *opts)
{
  const char *env;

  g_return_val_if_fail (opts != NULL, NULL);

  if (!opts->use_cache || g_strcmp0 (g_getenv ("MOROK_CACHE"), "0") == 0)
    return NULL;
  if (opts->cache_dir != NULL)
    return g_strdup (opts->cache_dir);
  env = g_getenv ("MOROK_CACHE_DIR");
  if (env != NULL && env[0] != '\0')
    return g_strdup (env);
  return g_build_filename (g_get_user_cache_dir (), "morok", NULL);
}

static char *
entry_path (const char *dir, const char *key)
{
  g_autofree char *name = g_strconcat (key, ".o", NULL);
  return g_build_filename (dir, name, NULL);
}

GBytes *
morok_object_cache_read (const char *dir, const char *key)
{
  g_autofree char *path = entry_path (dir, key);
  char *contents;
  gsize len;

  if (!g_file_get_contents (path, &contents, &len, NULL))
    return NULL;
  return g_bytes_new_take (contents, len);
}

gboolean
morok_object_cache_write (const char *dir, const char *key, GBytes *object, GError **error)
{
  g_autofree char *path = entry_path (dir, key);
  gsize len;
  const char *data = g_bytes_get_data (object, &len);

  if (g_mkdir_with_parents (dir, 0700) != 0)
    {
      int saved = errno;
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (saved),
                   "cannot create cache folder '%s': %s", dir, g_strerror (saved));
      return FALSE;
    }
  /* CONSISTENT: written to a temporary file and renamed over the entry. */
  return g_file_set_contents_full (path, data, len, G_FILE_SET_CONTENTS_CONSISTENT, 0600, error);
}

void
morok_object_cache_remove (const char *dir, const char *key)
{
  g_autofree char *path = entry_path (dir, key);

  g_unlink (path);
}
