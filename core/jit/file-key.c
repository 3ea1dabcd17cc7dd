/* SPDX-License-Identifier: MIT */
/* Registry keys from contents: a 128-bit hash of a file's bytes, and the
 * prepare settings that change a program.
 *
 * The hash reads 32 bytes a round into four 64-bit lanes, each lane
 * lane = rotl (lane + word * P2, 31) * P1 (the multiply-rotate round of the
 * xxHash family, whose constants these are), then folds the lanes, the
 * tail and the length into two 64-bit halves with the splitmix64
 * finaliser, each half from another mix of the lanes. Chosen for speed: the
 * four lanes run in parallel, about a byte per cycle per lane, so hashing
 * is bound by reading the file (docs/morokvad.md has the figures); a key
 * only has to tell apart model files, nobody forges them. A file's key is
 * remembered with its device, inode, size and times, so the elements after
 * the first do not read the file again while it is unchanged. */
#define G_LOG_DOMAIN "morok-jit"
#include "jit/morok-jit-registry.h"

#include <sys/mman.h>
#include <glib/gstdio.h>
#include <stdint.h>
#include <string.h>

#define P1 0x9E3779B185EBCA87ull
#define P2 0xC2B2AE3D27D4EB4Full
#define P3 0x165667B19E3779F9ull

static inline guint64
rotl (guint64 x, int r)
{
  return (x << r) | (x >> (64 - r));
}

static inline guint64
load64 (const guint8 *p)
{
  guint64 w;
  memcpy (&w, p, 8);
  return GUINT64_FROM_LE (w);
}

static inline guint64
round64 (guint64 lane, guint64 word)
{
  return rotl (lane + word * P2, 31) * P1;
}

/* splitmix64's finaliser: every input bit flips each output bit with
 * probability about 1/2. */
static inline guint64
finish (guint64 x)
{
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

static void
hash_init (guint64 l[4])
{
  l[0] = P1 + P2, l[1] = P2, l[2] = 0, l[3] = -P1;
}

/* The lanes over @bytes bytes at @p, a multiple of 32. */
static void
hash_stripes (guint64 l[4], const guint8 *p, gsize bytes)
{
  for (const guint8 *end = p + bytes; p < end; p += 32)
    for (int i = 0; i < 4; i++)
      l[i] = round64 (l[i], load64 (p + 8 * i));
}

/* The last @n < 32 bytes at @p of @bytes in all, and the lanes, into @out. */
static void
hash_finish (guint64 l[4], const guint8 *p, gsize n, gsize bytes, guint64 out[2])
{
  const guint8 *end = p + n;
  guint64 tail = 0;
  for (int i = 0; end - p >= 8; p += 8, i = (i + 1) % 4)
    l[i] = round64 (l[i], load64 (p));
  for (int s = 0; p < end; p++, s += 8)
    tail |= (guint64) *p << s;
  guint64 a = rotl (l[0], 1) + rotl (l[1], 7) + rotl (l[2], 12) + rotl (l[3], 18);
  guint64 b = (l[0] * P3) ^ rotl (l[1], 29) ^ (l[2] * P1) ^ rotl (l[3], 41);
  out[0] = finish (a ^ round64 (bytes, tail));
  out[1] = finish (b + round64 (~(guint64) bytes, tail) + out[0]);
}

void
morok_jit_registry_hash128 (gconstpointer data, gsize bytes, guint64 out[2])
{
  g_return_if_fail (data != NULL || bytes == 0);
  guint64 l[4];
  hash_init (l);
  gsize body = bytes / 32 * 32;
  hash_stripes (l, data, body);
  hash_finish (l, (const guint8 *) data + body, bytes - body, bytes, out);
}

/* ---- file keys, remembered per file ---- */

/* A file's identity and version: which file (device, inode) and when and
 * how it last changed. A file rewritten in place changes its size or its
 * times, so its key is computed again; only a rewrite within the same tick
 * of the file-time clock (a few ms) as the key it follows goes unseen. */
static char *
file_stamp (const char *path)
{
  GStatBuf st;
  if (g_stat (path, &st) != 0)
    return NULL;
  return g_strdup_printf ("%ju %ju %jd %jd.%09ld %jd.%09ld", (uintmax_t) st.st_dev,
                          (uintmax_t) st.st_ino, (intmax_t) st.st_size, (intmax_t) st.st_mtime,
                          st.st_mtim.tv_nsec, (intmax_t) st.st_ctime, st.st_ctim.tv_nsec);
}

static GMutex memo_lock;
static GHashTable *memo; /* file_stamp -> key, both owned */

/* Hashes the mapped file a slice at a time, dropping each slice's pages
 * from the process once read: a model is hashed without becoming resident
 * (a 883 MB GigaAM file was the peak of an int8 element's memory). */
#define HASH_SLICE ((gsize) 8 << 20) /* a multiple of the page and of 32 */

static char *
hash_file (const char *path, GError **error)
{
  g_autoptr (GMappedFile) file = g_mapped_file_new (path, FALSE, error);
  if (!file)
    return NULL;
  gsize bytes = g_mapped_file_get_length (file);
  const guint8 *data = bytes ? (const guint8 *) g_mapped_file_get_contents (file) : NULL;
  guint64 l[4], h[2];
  hash_init (l);
  gsize body = bytes / 32 * 32, at = 0;
  for (; at < body; at += HASH_SLICE)
    {
      gsize n = MIN (HASH_SLICE, body - at);
      hash_stripes (l, data + at, n);
      if (n == HASH_SLICE) /* whole pages: the mapping is page-aligned */
        madvise ((void *) (data + at), n, MADV_DONTNEED);
    }
  hash_finish (l, data ? data + body : (const guint8 *) "", bytes - body, bytes, h);
  return g_strdup_printf ("%016" G_GINT64_MODIFIER "x%016" G_GINT64_MODIFIER "x-%" G_GSIZE_FORMAT,
                          h[0], h[1], bytes);
}

static int
compare_names (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const char *const *) a, *(const char *const *) b);
}

/* A model folder (a model hub download) is the files in it: the key hashes
 * each file's name and key, in name order. Hidden files and sub-folders
 * (a hub client's bookkeeping) are not the model's. */
static char *
folder_key (const char *path, GError **error)
{
  g_autoptr (GDir) dir = g_dir_open (path, 0, error);
  if (!dir)
    return NULL;
  g_autoptr (GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  for (const char *name; (name = g_dir_read_name (dir));)
    if (name[0] != '.')
      g_ptr_array_add (names, g_strdup (name));
  g_ptr_array_sort (names, compare_names);
  g_autoptr (GString) list = g_string_new (NULL);
  for (guint i = 0; i < names->len; i++)
    {
      g_autofree char *child = g_build_filename (path, names->pdata[i], NULL);
      if (!g_file_test (child, G_FILE_TEST_IS_REGULAR))
        continue;
      g_autofree char *key = morok_jit_registry_file_key (child, error);
      if (!key)
        return NULL;
      g_string_append_printf (list, "%s%c%s\n", (const char *) names->pdata[i], 0, key);
    }
  guint64 h[2];
  morok_jit_registry_hash128 (list->str, list->len, h);
  return g_strdup_printf ("folder-%016" G_GINT64_MODIFIER "x%016" G_GINT64_MODIFIER "x", h[0],
                          h[1]);
}

char *
morok_jit_registry_file_key (const char *path, GError **error)
{
  g_return_val_if_fail (path != NULL, NULL);
  if (g_file_test (path, G_FILE_TEST_IS_DIR))
    return folder_key (path, error);
  g_autofree char *stamp = file_stamp (path);
  if (stamp)
    {
      g_mutex_lock (&memo_lock);
      char *known = memo ? g_strdup (g_hash_table_lookup (memo, stamp)) : NULL;
      g_mutex_unlock (&memo_lock);
      if (known)
        return known;
    }
  char *key = hash_file (path, error);
  if (key && stamp)
    {
      g_mutex_lock (&memo_lock);
      if (!memo)
        memo = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
      g_hash_table_replace (memo, g_steal_pointer (&stamp), g_strdup (key));
      g_mutex_unlock (&memo_lock);
    }
  return key;
}
