/* SPDX-License-Identifier: MIT */
/* Private to kernels/: the disk cache of compiled kernel objects. compiler.c
 * opens the cache folder, asks for a key, looks the key up before running
 * clang and stores the object after a successful load.
 *
 *   g_autoptr (MorokObjectCache) cache = morok_object_cache_open (dir);  // NULL: refused
 *   g_autofree char *key = morok_object_cache_key (cache, cc, flags, source, ...);
 *   g_autoptr (GBytes) obj = cache ? morok_object_cache_read (cache, key) : NULL;
 *   if (!obj) ... compile, load, then morok_object_cache_write (cache, key, obj, ...);
 *
 * Trust (docs/architecture.md, "The kernel cache"): a folder is used only
 * when it is a real folder (not a symlink) owned by the effective user and
 * writable by nobody else; an entry only when it is a regular file with the
 * same owner and mode, opened without following a symlink. Each entry is
 * <key>.obj: a header naming its key, the object's size and the SHA-256 of
 * the object's bytes, checked before the object is returned, then the
 * object; <key>.cc, the same for a compiler's `--version` output
 * (morok_object_cache_key). A refused folder is logged and the compile goes on without the
 * cache; a bad entry is deleted and reads as a miss. */
#pragma once

#include "morok-compiler.h"

G_BEGIN_DECLS

typedef struct _MorokObjectCache MorokObjectCache;

/* Bytes in front of the object in an entry (tests strip them). */
#define MOROK_OBJECT_CACHE_HEADER_BYTES 120

/* Folder of the cache for @opts: opts->cache_dir, else $MOROK_CACHE_DIR, else
 * g_get_user_cache_dir ()/morok. NULL when caching is off (opts->use_cache is
 * FALSE or $MOROK_CACHE is "0"). (transfer full) (nullable) */
char *morok_object_cache_dir (const MorokCompileOptions *opts);

/* Opens @dir, creating it (mode 0700) when missing. NULL, with a logged
 * reason, when the folder cannot be made or opened, is a symlink, belongs to
 * another user or is writable by group or others. (transfer full) (nullable) */
MorokObjectCache *morok_object_cache_open (const char *dir);

/* Closes the folder; NULL is a no-op. */
void morok_object_cache_close (MorokObjectCache *cache);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (MorokObjectCache, morok_object_cache_close)

/* Hex SHA-256 over MOROK_KERNEL_ABI_VERSION, the output of `@cc_path
 * --version` (run once per path per process, and kept in @cache, when
 * not NULL, per compiler file: its real path, inode, size and times),
 * @flags (NULL-terminated), the CPU's feature flags and @source.
 * (transfer full) Fails with MOROK_COMPILE_ERROR_NO_COMPILER when
 * `--version` cannot be run. */
char *morok_object_cache_key (MorokObjectCache *cache, const char *cc_path,
                              const char *const *flags, const char *source, GError **error);

/* The object stored under @key, its header checked: NULL when there is none.
 * An entry that fails a check (owner, mode, not a regular file, header, key,
 * size or SHA-256) is deleted and logged at debug level. (transfer full)
 * (nullable) */
GBytes *morok_object_cache_read (MorokObjectCache *cache, const char *key);

/* Stores @object under @key atomically (a temporary file in the folder,
 * renamed over the entry), so a concurrent reader never sees half a file. */
gboolean morok_object_cache_write (MorokObjectCache *cache, const char *key, GBytes *object,
                                   GError **error);

/* Deletes the entry for @key, e.g. one that failed to load. */
void morok_object_cache_remove (MorokObjectCache *cache, const char *key);

G_END_DECLS
