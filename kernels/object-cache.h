/* SPDX-License-Identifier: MIT */
/* Private to kernels/: the disk cache of compiled kernel objects. compiler.c
 * asks for a key, looks the key up before running clang and stores the object
 * after a successful load. A file is named <key>.o, where the key is the hex
 * SHA-256 of everything that decides the object's bytes. */
#pragma once

#include "morok-compiler.h"

G_BEGIN_DECLS

/* Folder of the cache for @opts: opts->cache_dir, else $MOROK_CACHE_DIR, else
 * g_get_user_cache_dir ()/morok. NULL when caching is off (opts->use_cache is
 * FALSE or $MOROK_CACHE is "0"). (transfer full) (nullable) */
char *morok_object_cache_dir (const MorokCompileOptions *opts);

/* Hex SHA-256 over MOROK_KERNEL_ABI_VERSION, the output of `@cc_path
 * --version` (run once per path per process), @flags (NULL-terminated), the
 * CPU's feature flags and @source. (transfer full) Fails with
 * MOROK_COMPILE_ERROR_NO_COMPILER when `--version` cannot be run. */
char *morok_object_cache_key (const char *cc_path, const char *const *flags, const char *source,
                              GError **error);

/* The object stored under @key, or NULL when there is none or it cannot be
 * read. (transfer full) (nullable) */
GBytes *morok_object_cache_read (const char *dir, const char *key);

/* Stores @object under @key atomically (temporary file + rename), creating
 * @dir if needed, so a concurrent reader never sees half a file. */
gboolean morok_object_cache_write (const char *dir, const char *key, GBytes *object,
                                   GError **error);

/* Deletes the entry for @key, e.g. one that failed to load. */
void morok_object_cache_remove (const char *dir, const char *key);

G_END_DECLS
