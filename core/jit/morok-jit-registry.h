/* SPDX-License-Identifier: MIT */
/* The registry: prepared wrappers shared by everything in the process that
 * runs the same model with the same options.
 *
 * A prepared wrapper (its compiled program, packed weights and model) is a
 * prototype: nobody executes it, each user runs it in a context of its own
 * (morok_jit_new_context). The registry keeps one prototype per key,
 * counting its users: the first acquire of a key calls make () to prepare
 * it, later ones (and those racing the first, which wait for it) get the
 * same one; acquires of other keys never wait for that prepare. The last
 * release frees the prototype, its program and its model. The key is the
 * caller's: the model file's contents (morok_jit_registry_file_key, not its
 * path) and every option that changes the program (bounds, sample rate,
 * morok_prepare_config_key).
 *
 *   g_autofree char *file = morok_jit_registry_file_key (path, &error);
 *   g_autofree char *key = g_strdup_printf ("silero %s 16000 %s", file, config_key);
 *   MorokJitShared *shared = morok_jit_registry_acquire (key, make_silero, path, &error);
 *   if (!shared) ...
 *   g_autoptr (SileroVadJit) mine = silero_vad_jit_new_context (
 *       (SileroVadJit *) morok_jit_shared_prototype (shared), &error);
 *   ... execute mine ...
 *   silero_vad_jit_free (g_steal_pointer (&mine));   // before the release
 *   morok_jit_registry_release (shared);
 */
#pragma once

#include "jit/morok-jit.h"

G_BEGIN_DECLS

/* One use of a registered prototype. */
typedef struct _MorokJitShared MorokJitShared;

/* Makes and prepares the prototype of a key: (transfer full) a prepared
 * wrapper, or NULL with @error set. Runs without the registry's lock, on
 * the thread of the first acquire of the key. */
typedef MorokJit *(*MorokJitMakeFn) (gpointer data, GError **error);
/* The same for a value other than one wrapper (several prepared wrappers
 * and their model, say): (transfer full) the value, or NULL with @error. */
typedef gpointer (*MorokSharedMakeFn) (gpointer data, GError **error);

/* ---- keys ---- */

/* "<128-bit hash of the bytes, hex>-<size in bytes>" of the file at @path:
 * the same for two copies of one file under any names. Reads the whole
 * file (mapped) the first time; then remembers the key while the file's
 * inode, size and modification times stay. A folder (a model hub download)
 * has the key "folder-<hash>" of its files' names and keys (hidden files and
 * sub-folders left out). (transfer full) Fails with a G_FILE_ERROR naming
 * @path. */
char *morok_jit_registry_file_key (const char *path, GError **error);
/* The 128-bit hash of @bytes bytes at @data into @out (non-cryptographic: a
 * deliberate collision is possible, an accidental one is not). */
void morok_jit_registry_hash128 (gconstpointer data, gsize bytes, guint64 out[2]);
/* The settings of @config that change the program (threads, -O level, ISA,
 * precision, compiler, and any unusable environment value), as text for a
 * key. (transfer full) */
char *morok_prepare_config_key (const MorokPrepareConfig *config);

/* ---- uses ---- */

/* One more use of the prototype of @key, made by @make (@data) if there is
 * none. (transfer full) release it. Fails with make's error (every acquire
 * that waited for that make gets a copy; the next acquire tries again). */
MorokJitShared *morok_jit_registry_acquire (const char *key, MorokJitMakeFn make, gpointer data,
                                            GError **error);
/* The same for a key whose prototype is any value, made by @make and freed
 * by @free_value (on the last release). A key is acquired one way only. */
MorokJitShared *morok_jit_registry_acquire_value (const char *key, MorokSharedMakeFn make,
                                                  GDestroyNotify free_value, gpointer data,
                                                  GError **error);
/* The prepared prototype: (transfer none) valid until @shared is released.
 * Execute it only through morok_jit_new_context. */
MorokJit *morok_jit_shared_prototype (MorokJitShared *shared);
/* The value of a key acquired with morok_jit_registry_acquire_value
 * (transfer none), valid until @shared is released. */
gpointer morok_jit_shared_value (MorokJitShared *shared);
/* Drops the use; the last one frees the prototype. NULL is a no-op. */
void morok_jit_registry_release (MorokJitShared *shared);

/* ---- counters, for tests and logs ---- */

/* Prototypes alive now. */
guint morok_jit_registry_n_prototypes (void);
/* Uses of @key now (0 if none). */
guint morok_jit_registry_users (const char *key);
/* Successful make () calls since the process started. */
guint64 morok_jit_registry_prepare_count (void);

G_END_DECLS
