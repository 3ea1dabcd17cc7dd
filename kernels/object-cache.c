/* SPDX-License-Identifier: MIT */
/* Disk cache of compiled kernel objects. The key hashes everything that
 * decides an object's bytes (see object-cache.h), so a stale entry can only be
 * hit through a hash collision; entries are never invalidated, only added.
 * Folder and entries are checked as object-cache.h says; the entry's own
 * SHA-256 catches a damaged or swapped file, the owner and mode checks keep
 * out files that anyone but the user could have written.
 * Running `cc --version` costs a process, so its
 * output is kept per compiler path for the life of the process, and in the
 * cache per compiler file (compiler_version). */

#define G_LOG_DOMAIN "morok-kernels"

#include "object-cache.h"
#include "kernels/cpu-features.h"

#include <errno.h>
#include <fcntl.h>
#include <gio/gio.h>
#include <glib/gstdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static GBytes *cache_read (MorokObjectCache *cache, const char *key, const char *suffix);
static gboolean cache_write (MorokObjectCache *cache, const char *key, const char *suffix,
                             GBytes *object, GError **error);

static GMutex versions_lock;
static GHashTable *versions; /* compiler path -> its `--version` output; under versions_lock */

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

/* The key under which the cache keeps `--version` of the compiler file
 * that @cc_path names: its real path, device, inode, size, modification
 * and change times, which a new install of the compiler changes. NULL
 * when it cannot be found or stat'ed. (transfer full) (nullable) */
static char *
version_key (const char *cc_path)
{
  g_autofree char *real = realpath (cc_path, NULL);
  struct stat st;
  if (real == NULL || stat (real, &st) != 0)
    return NULL;
  g_autofree char *id
      = g_strdup_printf ("%s\n%ju %ju %jd %jd.%09ld %jd.%09ld", real, (uintmax_t) st.st_dev,
                         (uintmax_t) st.st_ino, (intmax_t) st.st_size, (intmax_t) st.st_mtim.tv_sec,
                         st.st_mtim.tv_nsec, (intmax_t) st.st_ctim.tv_sec, st.st_ctim.tv_nsec);
  g_autoptr (GChecksum) sum = g_checksum_new (G_CHECKSUM_SHA256);
  add_field (sum, "cc --version of", id);
  return g_strdup (g_checksum_get_string (sum));
}

/* Runs `@cc_path --version`. (transfer full) */
static char *
run_version (const char *cc_path, GError **error)
{
  g_autoptr (GSubprocess) proc = NULL;
  g_autoptr (GError) local = NULL;
  char *out = NULL;

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
  return out;
}

/* Output of `@cc_path --version`: kept per path for the life of the
 * process and, with a @cache, in the cache under version_key, so that a
 * process that finds its kernels there runs no compiler at all (clang's
 * `--version` alone was most of a warm Silero prepare). A wrapper script keeps its entry when the
 * compiler behind it changes: its objects are then those of the compiler before, still correct for
 * this CPU and source. (transfer full) */
static char *
compiler_version (const char *cc_path, MorokObjectCache *cache, GError **error)
{
  g_autoptr (GMutexLocker) locker = g_mutex_locker_new (&versions_lock);
  if (versions == NULL)
    versions = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  const char *known = g_hash_table_lookup (versions, cc_path);
  if (known != NULL)
    return g_strdup (known);

  g_autofree char *key = cache ? version_key (cc_path) : NULL;
  g_autoptr (GBytes) stored = key ? cache_read (cache, key, ".cc") : NULL;
  char *out = NULL;
  if (stored != NULL)
    out = g_strndup (g_bytes_get_data (stored, NULL), g_bytes_get_size (stored));
  else if ((out = run_version (cc_path, error)) == NULL)
    return NULL;
  else if (key != NULL)
    {
      g_autoptr (GBytes) bytes = g_bytes_new (out, strlen (out));
      g_autoptr (GError) local = NULL;
      if (!cache_write (cache, key, ".cc", bytes, &local))
        g_debug ("'%s --version' not kept in the cache: %s", cc_path, local->message);
    }
  g_hash_table_insert (versions, g_strdup (cc_path), g_strdup (out));
  return out;
}

char *
morok_object_cache_key (MorokObjectCache *cache, const char *cc_path, const char *const *flags,
                        const char *source, GError **error)
{
  g_autoptr (GChecksum) sum = NULL;
  g_autofree char *version = NULL;

  g_return_val_if_fail (cc_path != NULL && source != NULL, NULL);

  version = compiler_version (cc_path, cache, error);
  if (version == NULL)
    return NULL;
  sum = g_checksum_new (G_CHECKSUM_SHA256);
  add_field (sum, "abi", G_STRINGIFY (MOROK_KERNEL_ABI_VERSION));
  add_field (sum, "cc", version);
  for (guint i = 0; flags != NULL && flags[i] != NULL; i++)
    add_field (sum, "flag", flags[i]);
  add_field (sum, "cpu", morok_cpu_signature ());
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

/* ---- the folder -------------------------------------------------------- */

struct _MorokObjectCache
{
  int dir_fd; /* the checked folder: every entry is opened relative to it */
  char *dir;  /* for messages */
};

/* Whether @st (a folder or an entry) is the effective user's and writable by
 * nobody else; the reason goes to @out_why otherwise. */
static gboolean
owned_privately (const struct stat *st, const char **out_why)
{
  if (st->st_uid != geteuid ())
    *out_why = "it belongs to another user";
  else if ((st->st_mode & (S_IWGRP | S_IWOTH)) != 0)
    *out_why = "it is writable by group or others";
  else
    return TRUE;
  return FALSE;
}

MorokObjectCache *
morok_object_cache_open (const char *dir)
{
  g_autofree char *path = NULL;
  const char *why = NULL;
  struct stat st;
  gsize len;
  int fd;

  g_return_val_if_fail (dir != NULL, NULL);

  /* Without its trailing slashes, O_NOFOLLOW sees a symlinked folder. */
  path = g_strdup (dir);
  len = strlen (path);
  while (len > 1 && path[len - 1] == '/')
    path[--len] = '\0';

  if (g_mkdir_with_parents (path, 0700) != 0)
    {
      g_message ("kernel cache '%s' not used: cannot create it: %s", path, g_strerror (errno));
      return NULL;
    }
  fd = open (path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    {
      g_message ("kernel cache '%s' not used: %s", path,
                 errno == ELOOP || errno == ENOTDIR ? "it is a symlink or not a folder"
                                                    : g_strerror (errno));
      return NULL;
    }
  if (fstat (fd, &st) != 0 || !owned_privately (&st, &why))
    {
      g_message ("kernel cache '%s' not used: %s", path, why ? why : g_strerror (errno));
      close (fd);
      return NULL;
    }

  MorokObjectCache *cache = g_new0 (MorokObjectCache, 1);
  cache->dir_fd = fd;
  cache->dir = g_steal_pointer (&path);
  return cache;
}

void
morok_object_cache_close (MorokObjectCache *cache)
{
  if (cache == NULL)
    return;
  close (cache->dir_fd);
  g_free (cache->dir);
  g_free (cache);
}

/* ---- entries ------------------------------------------------------------ */

#define ENTRY_MAGIC "MOROKOBJ"
#define ENTRY_VERSION 1
#define KEY_CHARS 64               /* hex SHA-256 */
#define ENTRY_MAX_BYTES (1u << 30) /* larger than any plan's object */

/* The first bytes of an entry; the object follows. Host byte order: entries
 * are read only by the machine (and ABI) that wrote them. */
typedef struct
{
  char magic[8];
  guint32 version;
  guint32 header_bytes;
  guint64 object_bytes;
  char key[KEY_CHARS];
  guint8 sha256[32]; /* of the object's bytes */
} EntryHeader;
G_STATIC_ASSERT (sizeof (EntryHeader) == MOROK_OBJECT_CACHE_HEADER_BYTES);

/* <key>.obj: a kernel object; <key>.cc: a compiler's `--version` */
static char *
entry_name (const char *key, const char *suffix)
{
  return g_strconcat (key, suffix, NULL);
}

static void
object_sha256 (const guint8 *data, gsize len, guint8 out[32])
{
  g_autoptr (GChecksum) sum = g_checksum_new (G_CHECKSUM_SHA256);
  gsize n = 32;

  g_checksum_update (sum, data, len);
  g_checksum_get_digest (sum, out, &n);
}

/* Reads the whole of @fd (@size bytes) into a new buffer, or NULL. */
static guint8 *
read_all (int fd, gsize size)
{
  g_autofree guint8 *buf = g_try_malloc (MAX (size, 1));
  gsize done = 0;

  while (buf != NULL && done < size)
    {
      ssize_t n = read (fd, buf + done, size - done);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return NULL;
      done += n;
    }
  return g_steal_pointer (&buf);
}

/* The entry's object when it passes every check; @out_why says which failed.
 * (transfer full) (nullable) */
static GBytes *
read_checked (MorokObjectCache *cache, const char *name, const char *key, const char **out_why)
{
  g_autofree guint8 *data = NULL;
  EntryHeader header;
  guint8 digest[32];
  struct stat st;
  int fd;

  /* O_NONBLOCK: a FIFO put in place of an entry must not block the open. */
  fd = openat (cache->dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    {
      *out_why = errno == ENOENT ? NULL : errno == ELOOP ? "a symlink" : g_strerror (errno);
      return NULL;
    }
  if (fstat (fd, &st) != 0 || !S_ISREG (st.st_mode))
    *out_why = "not a regular file";
  else if (!owned_privately (&st, out_why))
    ;
  else if (st.st_size < (off_t) sizeof header || st.st_size > ENTRY_MAX_BYTES)
    *out_why = "too short or too long";
  else if ((data = read_all (fd, st.st_size)) == NULL)
    *out_why = "cannot be read";
  close (fd);
  if (data == NULL)
    return NULL;

  memcpy (&header, data, sizeof header);
  if (memcmp (header.magic, ENTRY_MAGIC, sizeof header.magic) != 0
      || header.version != ENTRY_VERSION || header.header_bytes != sizeof header)
    *out_why = "not an entry of this version";
  else if (header.object_bytes != (guint64) st.st_size - sizeof header)
    *out_why = "its size differs from its header's";
  else if (memcmp (header.key, key, KEY_CHARS) != 0)
    *out_why = "it was stored under another key";
  else if (object_sha256 (data + sizeof header, header.object_bytes, digest),
           memcmp (digest, header.sha256, sizeof digest) != 0)
    *out_why = "its SHA-256 does not match its header's";
  else
    return g_bytes_new (data + sizeof header, header.object_bytes);
  return NULL;
}

static GBytes *
cache_read (MorokObjectCache *cache, const char *key, const char *suffix)
{
  g_autofree char *name = NULL;
  const char *why = NULL;
  GBytes *object;

  g_return_val_if_fail (cache != NULL && key != NULL && strlen (key) == KEY_CHARS, NULL);

  name = entry_name (key, suffix);
  object = read_checked (cache, name, key, &why);
  if (object == NULL && why != NULL)
    {
      g_debug ("dropping kernel cache entry %s/%s: %s", cache->dir, name, why);
      unlinkat (cache->dir_fd, name, 0);
    }
  return object;
}

GBytes *
morok_object_cache_read (MorokObjectCache *cache, const char *key)
{
  return cache_read (cache, key, ".obj");
}

/* Writes all @len bytes of @data to @fd. */
static gboolean
write_all (int fd, const void *data, gsize len)
{
  const guint8 *p = data;

  while (len > 0)
    {
      ssize_t n = write (fd, p, len);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return FALSE;
      p += n;
      len -= n;
    }
  return TRUE;
}

static gboolean
cache_write (MorokObjectCache *cache, const char *key, const char *suffix, GBytes *object,
             GError **error)
{
  g_autofree char *name = NULL;
  g_autofree char *tmp = NULL;
  EntryHeader header = { .version = ENTRY_VERSION, .header_bytes = sizeof header };
  gsize len;
  const guint8 *data = g_bytes_get_data (object, &len);
  gboolean ok;
  int fd, saved;

  g_return_val_if_fail (cache != NULL && key != NULL && strlen (key) == KEY_CHARS, FALSE);

  memcpy (header.magic, ENTRY_MAGIC, sizeof header.magic);
  memcpy (header.key, key, KEY_CHARS);
  header.object_bytes = len;
  object_sha256 (data, len, header.sha256);

  name = entry_name (key, suffix);
  tmp = g_strdup_printf (".%s.%d.%08x.tmp", name, (int) getpid (), g_random_int ());
  fd = openat (cache->dir_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    {
      saved = errno;
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (saved),
                   "cannot create '%s' in '%s': %s", tmp, cache->dir, g_strerror (saved));
      return FALSE;
    }
  ok = write_all (fd, &header, sizeof header) && write_all (fd, data, len);
  saved = errno;
  if (close (fd) != 0 && ok)
    {
      ok = FALSE;
      saved = errno;
    }
  if (ok && renameat (cache->dir_fd, tmp, cache->dir_fd, name) != 0)
    {
      ok = FALSE;
      saved = errno;
    }
  if (!ok)
    {
      unlinkat (cache->dir_fd, tmp, 0);
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (saved),
                   "cannot store '%s' in '%s': %s", name, cache->dir, g_strerror (saved));
    }
  return ok;
}

gboolean
morok_object_cache_write (MorokObjectCache *cache, const char *key, GBytes *object, GError **error)
{
  return cache_write (cache, key, ".obj", object, error);
}

void
morok_object_cache_remove (MorokObjectCache *cache, const char *key)
{
  g_autofree char *name = entry_name (key, ".obj");

  g_return_if_fail (cache != NULL);
  unlinkat (cache->dir_fd, name, 0);
}
