/* SPDX-License-Identifier: MIT */
/* Morok kernels: from one C translation unit to callable machine code.
 *
 * Each translation unit of a plan's generated source is compiled by one
 * clang process (source on stdin, ELF relocatable object on stdout; the
 * units of morok_compile_units side by side), each object is linked in
 * memory by Morok's own x86-64 ELF loader (pages mapped writable, filled, then made
 * read+execute, never both), and its functions are looked up by name. Objects
 * are cached on disk under $XDG_CACHE_HOME/morok, keyed by a hash of the
 * source, the compiler's `--version`, the flags, the CPU features and
 * MOROK_KERNEL_ABI_VERSION. A cache folder that is a symlink, another user's
 * or writable by group or others is not used (logged; the compile goes on),
 * and an entry is used only when its own SHA-256 checks out
 * (docs/architecture.md, "The kernel cache's trust model").
 *
 * Environment read here (and only here; the JIT layer maps its own settings,
 * such as a dump folder, onto MorokCompileOptions):
 *   MOROK_CC         compiler when opts->cc is NULL (a path, or a name looked
 *                    up on PATH); default "clang" on PATH
 *   MOROK_CACHE=0    disables the disk cache, whatever opts->use_cache says
 *   MOROK_CACHE_DIR  cache folder when opts->cache_dir is NULL; default
 *                    g_get_user_cache_dir ()/morok
 *
 *   MOROK_KERNEL_LIB=0  morok_kernel_lib_find finds no library: units
 *                    compile the kernel headers' bodies themselves
 *
 * Generated sources start with the kernel prelude (morok_render_prelude (),
 * built from the headers in kernels/include), which
 * defines the memset and memcpy clang may call. The only outside symbols
 * the loader resolves are the kernel library's (opts->lib): the headers'
 * GEMM and attention entry points, compiled once at build time per ISA
 * and linked into libmorok, which a unit that defines MOROK_KERNEL_LIB
 * calls instead of compiling them (kernels/include/morok-prelude.h). Units
 * are compiled with -fno-plt, so such calls go through a GOT slot of the
 * image and reach libmorok at any distance.
 *
 *   MorokCompileOptions opts;
 *   morok_compile_options_init (&opts);
 *   g_autoptr (MorokObject) obj = morok_compile (src, &opts, &error);
 *   if (!obj)
 *     return FALSE;                        // error says what failed, e.g. no clang
 *   MorokKernelFn fn = (MorokKernelFn) morok_object_lookup (obj, "morok_k0", &error);
 *   fn (bufs, vars, 0, 1);
 */
#pragma once

#include <glib.h>
#include <stdint.h>
#include "morok-isa.h"

G_BEGIN_DECLS

/* Bumped whenever the calling convention of generated kernels changes. */
#define MOROK_KERNEL_ABI_VERSION 2

/* Every generated kernel has this signature: its binding table (the
 * buffers it writes and reads, in the order its source names them), values
 * of the symbolic variables, and the calling thread's share (tid of nthreads). */
typedef void (*MorokKernelFn) (void *const *bufs, const int64_t *vars, uint32_t tid,
                               uint32_t nthreads);

#define MOROK_COMPILE_ERROR (morok_compile_error_quark ())
GQuark morok_compile_error_quark (void);

typedef enum
{
  MOROK_COMPILE_ERROR_NO_COMPILER, /* MOROK_CC or clang on PATH not found / not runnable */
  MOROK_COMPILE_ERROR_FAILED,      /* the compiler ran and rejected the source */
  MOROK_COMPILE_ERROR_BAD_OBJECT,  /* the object is not an ELF file we can load */
  MOROK_COMPILE_ERROR_RELOCATION,  /* a relocation type or symbol we cannot resolve */
  MOROK_COMPILE_ERROR_NOT_FOUND,   /* morok_object_lookup: no such function */
  MOROK_COMPILE_ERROR_MEMORY,      /* mmap/mprotect failed */
} MorokCompileError;

/* The kernel library of one ISA: its functions by name, and its identity. */
typedef struct _MorokKernelLib MorokKernelLib;

typedef struct
{
  const char *cc;                 /* compiler; NULL: $MOROK_CC, else "clang" on PATH */
  int opt_level;                  /* -O<n>, default 2 */
  gboolean use_cache;             /* default TRUE unless MOROK_CACHE=0 */
  const char *cache_dir;          /* NULL: $MOROK_CACHE_DIR, else $XDG_CACHE_HOME/morok */
  const char *dump_dir;           /* if set, the source is also written there as <hash>.c */
  const char *march;              /* NULL: $MOROK_MARCH, else "native" */
  const char *const *extra_flags; /* NULL-terminated, may be NULL */
  const MorokKernelLib *lib;      /* the library the units may call (morok_kernel_lib_find);
                                   * NULL: none, every undefined symbol is an error */
} MorokCompileOptions;

typedef struct _MorokObject MorokObject;

/* The kernel library of @isa when units compiled with @opts (NULL: the
 * defaults) may call it: libmorok was built with clang, with these very
 * flags (-O2, -march=native and no extra ones, so not under MOROK_MARCH)
 * on this CPU, which runs @isa, and MOROK_KERNEL_LIB is not "0". Otherwise
 * NULL, and @out_why (nullable) gets the reason (static). (transfer none)
 * static: valid for the process. */
const MorokKernelLib *morok_kernel_lib_find (MorokIsa isa, const MorokCompileOptions *opts,
                                             const char **out_why);
/* The library's identity, a SHA-256 of its compiler, flags, CPU and source
 * text, which units that call it carry (and so the cache key). (transfer none) */
const char *morok_kernel_lib_id (const MorokKernelLib *lib);

/* Fills @opts with the defaults above. Only use_cache reads the environment
 * (FALSE when MOROK_CACHE is "0"); NULL fields are resolved when compiling. */
void morok_compile_options_init (MorokCompileOptions *opts);

/* Compiles @source (NUL-terminated C) into a loaded object, or loads it from
 * the disk cache. @opts may be NULL for the defaults. (transfer full)
 * Fails with MOROK_COMPILE_ERROR_*: NO_COMPILER names the missing path and
 * where it came from; FAILED names the compiler and holds the head (4 KiB) of
 * its stderr (also when it exits 0 without an object). No signal reaches the
 * caller, whatever the compiler does. A cache
 * entry that fails to load is deleted and recompiled, never an error. */
MorokObject *morok_compile (const char *source, const MorokCompileOptions *opts, GError **error);
/* As morok_compile for each of @n sources, their compilers run side by side
 * (one process each; cached ones only loaded): out_objects[i] (transfer
 * full) is source i's. On failure, the first error and no objects. */
gboolean morok_compile_units (const char *const *sources, guint n, const MorokCompileOptions *opts,
                              MorokObject **out_objects, GError **error);

/* Loads an ELF relocatable x86-64 object from @data (copied; any alignment).
 * (transfer full) Fails with BAD_OBJECT when a header, offset or index does
 * not fit the @size bytes, RELOCATION for an unsupported relocation type, an
 * undefined symbol or a 32-bit overflow, MEMORY when mmap/mprotect fail. */
MorokObject *morok_object_load (const guint8 *data, gsize size, GError **error);
/* As morok_object_load, resolving undefined symbols against @lib's
 * functions (NULL: none; any other undefined symbol is a RELOCATION error),
 * the image mapped at @hint where the system agrees (NULL: anywhere; a test
 * places it far from libmorok). */
MorokObject *morok_object_load_full (const guint8 *data, gsize size, const MorokKernelLib *lib,
                                     gpointer hint, GError **error);

/* Address of the global function @name; valid until the object is freed.
 * Fails with NOT_FOUND (also for data symbols and static functions). */
gpointer morok_object_lookup (MorokObject *obj, const char *name, GError **error);

/* Unmaps the object's code and data; NULL is a no-op. */
void morok_object_free (MorokObject *obj);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (MorokObject, morok_object_free)

/* Process-wide counters, for tests that prove nothing was recompiled. */
guint64 morok_compile_count_invocations (void); /* compile processes run (not --version) */
guint64 morok_compile_count_cache_hits (void);  /* objects served from disk */

G_END_DECLS
