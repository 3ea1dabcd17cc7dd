/* SPDX-License-Identifier: MIT */
/* The clang driver: one compiler process per translation unit, source on
 * stdin (a memfd, not a pipe) and the object on stdout (no files on disk),
 * the object loaded by
 * elf-loader.c and stored in the disk cache of object-cache.c.
 *
 * The subprocess (rather than libclang in-process) is the default because a
 * compiler crash then cannot take the pipeline down, and clang's C++ library
 * would clash with other LLVM copies loaded in the same process. */

#define G_LOG_DOMAIN "morok-kernels"

#include "morok-compiler.h"
#include "object-cache.h"
#include "kernels/kernel-lib.h"

#include <errno.h>
#include <gio/gio.h>
#include <glib/gstdio.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* How much of clang's stderr an error message keeps: the first errors are the
 * ones that explain the rest. */
#define STDERR_MAX 4096

G_DEFINE_QUARK (morok - compile - error - quark, morok_compile_error)

static atomic_uint_fast64_t n_invocations;
static atomic_uint_fast64_t n_cache_hits;

/* Flags fixed for every kernel: freestanding (nothing outside the object and
 * the kernel library may be called), position-independent (the image lands
 * anywhere), calls to the library through the GOT (-fno-plt: it may lie
 * more than 2 GiB away), no unwind tables or stack protector (nothing
 * would use them), and the fast-math subset that lets clang vectorise
 * reductions while keeping NaN and Inf. kernels/meson.build builds the
 * library with the same list (kernel_jit_flags). */
static const char *const base_flags[] = {
  "-x",
  "c",
  "-std=c11",
  "-c",
  "-ffreestanding",
  "-fno-math-errno",
  "-fPIC",
  "-fno-plt",
  "-fno-stack-protector",
  "-fno-asynchronous-unwind-tables",
  "-fassociative-math",
  "-fno-signed-zeros",
  "-fno-trapping-math",
  "-ffp-contract=fast",
  "-fvisibility=default",
  "-mprefer-vector-width=512",
};

void
morok_compile_options_init (MorokCompileOptions *opts)
{
  g_return_if_fail (opts != NULL);

  memset (opts, 0, sizeof *opts);
  opts->opt_level = 2;
  opts->use_cache = g_strcmp0 (g_getenv ("MOROK_CACHE"), "0") != 0;
}

guint64
morok_compile_count_invocations (void)
{
  return atomic_load (&n_invocations);
}

guint64
morok_compile_count_cache_hits (void)
{
  return atomic_load (&n_cache_hits);
}

/* Absolute path of the compiler: opts->cc, else $MOROK_CC, else clang on
 * PATH. A name without a slash is searched on PATH. (transfer full) */
static char *
find_compiler (const MorokCompileOptions *opts, GError **error)
{
  const char *cc = opts->cc;
  const char *origin = "from the compile options";
  char *path;

  if (cc == NULL && g_getenv ("MOROK_CC") != NULL && g_getenv ("MOROK_CC")[0] != '\0')
    {
      cc = g_getenv ("MOROK_CC");
      origin = "from MOROK_CC";
    }
  if (cc == NULL)
    {
      cc = "clang";
      origin = "the default";
    }

  if (strchr (cc, '/') == NULL)
    {
      path = g_find_program_in_path (cc);
      if (path == NULL)
        g_set_error (error, MOROK_COMPILE_ERROR, MOROK_COMPILE_ERROR_NO_COMPILER,
                     "C compiler '%s' (%s) not found on PATH: install clang or set MOROK_CC", cc,
                     origin);
      return path;
    }
  if (!g_file_test (cc, G_FILE_TEST_EXISTS))
    {
      g_set_error (error, MOROK_COMPILE_ERROR, MOROK_COMPILE_ERROR_NO_COMPILER,
                   "C compiler '%s' (%s) not found: install clang or set MOROK_CC", cc, origin);
      return NULL;
    }
  if (g_file_test (cc, G_FILE_TEST_IS_DIR) || !g_file_test (cc, G_FILE_TEST_IS_EXECUTABLE))
    {
      g_set_error (error, MOROK_COMPILE_ERROR, MOROK_COMPILE_ERROR_NO_COMPILER,
                   "C compiler '%s' (%s) is not an executable file: install clang or set "
                   "MOROK_CC",
                   cc, origin);
      return NULL;
    }
  return g_strdup (cc);
}

/* The -march value: opts->march, else $MOROK_MARCH (x86-64-v3 for valgrind,
 * which cannot run the AVX-512 that -march=native picks here), else native. */
static const char *
resolve_march (const MorokCompileOptions *opts)
{
  const char *env = g_getenv ("MOROK_MARCH");
  if (opts->march)
    return opts->march;
  return env && *env ? env : "native";
}

/* Every flag after the compiler's name and before "-o - -"; these enter the
 * cache key. (transfer full) NULL-terminated */
static GPtrArray *
build_flags (const MorokCompileOptions *opts)
{
  GPtrArray *flags = g_ptr_array_new_with_free_func (g_free);

  for (gsize i = 0; i < G_N_ELEMENTS (base_flags); i++)
    g_ptr_array_add (flags, g_strdup (base_flags[i]));
  g_ptr_array_add (flags, g_strdup_printf ("-O%d", opts->opt_level));
  g_ptr_array_add (flags, g_strdup_printf ("-march=%s", resolve_march (opts)));
  for (guint i = 0; opts->extra_flags != NULL && opts->extra_flags[i] != NULL; i++)
    g_ptr_array_add (flags, g_strdup (opts->extra_flags[i]));
  g_ptr_array_add (flags, NULL);
  return flags;
}

char *
morok_compile_flags_line (const MorokCompileOptions *opts)
{
  g_autoptr (GPtrArray) flags = build_flags (opts);
  return g_strjoinv (" ", (char **) flags->pdata);
}

/* Writes @source to @dir/@key.c for debugging; failure only warns. */
static void
dump_source (const char *dir, const char *key, const char *source)
{
  g_autofree char *name = g_strconcat (key, ".c", NULL);
  g_autofree char *path = g_build_filename (dir, name, NULL);
  g_autoptr (GError) error = NULL;

  if (g_mkdir_with_parents (dir, 0755) != 0 || !g_file_set_contents (path, source, -1, &error))
    g_warning ("cannot dump kernel source to '%s': %s", path,
               error ? error->message : g_strerror (errno));
}

/* A file descriptor, at offset 0, that reads back @source: a memfd (no file
 * on disk), or an unlinked temporary file where memfd_create is refused. The
 * compiler reads its stdin from it, so no pipe is written to and a compiler
 * that exits without reading cannot raise SIGPIPE in the host. */
static int
source_fd (const char *source, GError **error)
{
  gsize len = strlen (source), done = 0;
  g_autofree char *tmp_path = NULL;
  int fd = memfd_create ("morok-kernel-source", MFD_CLOEXEC);

  if (fd < 0)
    {
      fd = g_file_open_tmp ("morok-kernel-XXXXXX.c", &tmp_path, error);
      if (fd < 0)
        return -1;
      g_unlink (tmp_path);
    }
  while (done < len)
    {
      ssize_t n = write (fd, source + done, len - done);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        {
          int saved = errno;
          g_set_error (error, MOROK_COMPILE_ERROR, MOROK_COMPILE_ERROR_FAILED,
                       "cannot stage the kernel source for the compiler: %s", g_strerror (saved));
          close (fd);
          return -1;
        }
      done += n;
    }
  if (lseek (fd, 0, SEEK_SET) != 0)
    {
      g_set_error (error, MOROK_COMPILE_ERROR, MOROK_COMPILE_ERROR_FAILED,
                   "cannot stage the kernel source for the compiler: %s", g_strerror (errno));
      close (fd);
      return -1;
    }
  return fd;
}

/* "C compiler 'cc' <what>:\n<the head of its stderr>" as a FAILED error. */
static void
set_compiler_failed (GError **error, const char *cc_path, const char *what, GBytes *err)
{
  gsize len = 0;
  const char *text = err ? g_bytes_get_data (err, &len) : NULL;
  g_autofree char *head = g_utf8_make_valid (text ? text : "", MIN (len, STDERR_MAX));

  g_set_error (error, MOROK_COMPILE_ERROR, MOROK_COMPILE_ERROR_FAILED, "C compiler '%s' %s:\n%s%s",
               cc_path, what, len > 0 ? head : "(nothing on stderr)",
               len > STDERR_MAX ? "\n[...]" : "");
}

/* Starts the compiler on @source, the object on its stdout. (transfer full)
 * NULL with @error set. */
static GSubprocess *
spawn_compiler (const char *cc_path, GPtrArray *flags, const char *source, GError **error)
{
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();
  g_autoptr (GSubprocessLauncher) launcher = NULL;
  g_autoptr (GError) local = NULL;

  g_ptr_array_add (argv, (gpointer) cc_path);
  for (guint i = 0; i + 1 < flags->len; i++) /* the last entry is NULL */
    g_ptr_array_add (argv, flags->pdata[i]);
  g_ptr_array_add (argv, "-o");
  g_ptr_array_add (argv, "-");
  g_ptr_array_add (argv, "-");
  g_ptr_array_add (argv, NULL);

  int in_fd = source_fd (source, error);
  if (in_fd < 0)
    return NULL;
  launcher
      = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE);
  g_subprocess_launcher_take_stdin_fd (launcher, in_fd);
  GSubprocess *proc
      = g_subprocess_launcher_spawnv (launcher, (const char *const *) argv->pdata, &local);
  if (proc == NULL)
    {
      g_set_error (error, MOROK_COMPILE_ERROR, MOROK_COMPILE_ERROR_NO_COMPILER,
                   "cannot run C compiler '%s': %s", cc_path, local->message);
      return NULL;
    }
  atomic_fetch_add (&n_invocations, 1);
  return proc;
}

/* Waits for the compiler @proc; the object's bytes, or NULL and @error.
 * (transfer full) */
static GBytes *
finish_compiler (GSubprocess *proc, const char *cc_path, GError **error)
{
  g_autoptr (GBytes) out = NULL;
  g_autoptr (GBytes) err = NULL;
  g_autoptr (GError) local = NULL;
  g_autofree char *status = NULL;

  if (!g_subprocess_communicate (proc, NULL, NULL, &out, &err, &local))
    {
      g_set_error (error, MOROK_COMPILE_ERROR, MOROK_COMPILE_ERROR_FAILED,
                   "talking to C compiler '%s' failed: %s", cc_path, local->message);
      return NULL;
    }
  if (g_subprocess_get_successful (proc))
    {
      if (g_bytes_get_size (out) > 0)
        return g_steal_pointer (&out);
      set_compiler_failed (error, cc_path, "exited with status 0 but wrote no object", err);
      return NULL;
    }
  if (g_subprocess_get_if_exited (proc))
    status = g_strdup_printf ("exited with status %d", g_subprocess_get_exit_status (proc));
  else
    status = g_strdup_printf ("was killed by signal %d", g_subprocess_get_term_sig (proc));
  set_compiler_failed (error, cc_path, status, err);
  return NULL;
}

/* One translation unit of morok_compile_units on its way. */
typedef struct
{
  const char *source;
  char *key;         /* cache key; NULL without cache or dump */
  GSubprocess *proc; /* the compiler, while it runs */
  MorokObject *obj;
} Unit;

/* @u's object from the cache, or NULL (a bad entry is dropped). */
static MorokObject *
load_cached (MorokObjectCache *cache, const char *key, const MorokKernelLib *lib, gint64 start)
{
  g_autoptr (GBytes) object = morok_object_cache_read (cache, key);
  g_autoptr (GError) local = NULL;
  if (object == NULL)
    return NULL;
  MorokObject *obj = morok_object_load_full (g_bytes_get_data (object, NULL),
                                             g_bytes_get_size (object), lib, NULL, &local);
  if (obj != NULL)
    {
      atomic_fetch_add (&n_cache_hits, 1);
      g_debug ("kernel object %s loaded from the cache in %.2f ms", key,
               (g_get_monotonic_time () - start) / 1000.0);
      return obj;
    }
  /* An entry whose bytes check out but do not load (an object of a
   * loader that has since changed) costs one recompile, not a failure. */
  g_debug ("dropping cache entry %s: %s", key, local->message);
  morok_object_cache_remove (cache, key);
  return NULL;
}

/* Collects @u's compiler and loads its object, then stores it in @cache. */
static gboolean
finish_unit (Unit *u, MorokObjectCache *cache, const char *cc_path, const MorokKernelLib *lib,
             gint64 start, GError **error)
{
  g_autoptr (GSubprocess) proc = g_steal_pointer (&u->proc);
  g_autoptr (GBytes) object = finish_compiler (proc, cc_path, error);
  g_autoptr (GError) local = NULL;
  if (object == NULL)
    return FALSE;
  u->obj = morok_object_load_full (g_bytes_get_data (object, NULL), g_bytes_get_size (object), lib,
                                   NULL, error);
  if (u->obj == NULL)
    {
      g_prefix_error (error, "object from '%s': ", cc_path);
      return FALSE;
    }
  g_debug ("compiled %zu bytes of C in %.1f ms", strlen (u->source),
           (g_get_monotonic_time () - start) / 1000.0);
  /* Stored only once it has loaded, so the cache never holds a bad object;
   * a cache that cannot be written only costs speed. */
  if (cache != NULL && !morok_object_cache_write (cache, u->key, object, &local))
    g_debug ("cannot store kernel object in the cache: %s", local->message);
  return TRUE;
}

gboolean
morok_compile_units (const char *const *sources, guint n, const MorokCompileOptions *opts,
                     MorokObject **out_objects, GError **error)
{
  MorokCompileOptions defaults;
  g_autofree char *cc_path = NULL;
  g_autofree char *cache_dir = NULL;
  g_autoptr (MorokObjectCache) cache = NULL;
  g_autoptr (GPtrArray) flags = NULL;
  gint64 start = g_get_monotonic_time ();

  g_return_val_if_fail (n == 0 || (sources != NULL && out_objects != NULL), FALSE);
  g_return_val_if_fail (opts == NULL || (opts->opt_level >= 0 && opts->opt_level <= 3), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (opts == NULL)
    {
      morok_compile_options_init (&defaults);
      opts = &defaults;
    }
  cc_path = find_compiler (opts, error);
  if (cc_path == NULL)
    return FALSE;
  flags = build_flags (opts);
  cache_dir = morok_object_cache_dir (opts);
  if (cache_dir != NULL)
    cache = morok_object_cache_open (cache_dir);

  g_autofree Unit *units = g_new0 (Unit, MAX (n, 1));
  gboolean ok = TRUE;
  /* every miss's compiler starts before the first is waited for: they run
   * side by side */
  for (guint i = 0; ok && i < n; i++)
    {
      Unit *u = &units[i];
      u->source = sources[i];
      g_return_val_if_fail (u->source != NULL, FALSE);
      if (cache_dir != NULL || opts->dump_dir != NULL)
        ok = (u->key = morok_object_cache_key (cache, cc_path, (const char *const *) flags->pdata,
                                               u->source, error))
             != NULL;
      if (ok && opts->dump_dir != NULL)
        dump_source (opts->dump_dir, u->key, u->source);
      if (ok && cache != NULL)
        u->obj = load_cached (cache, u->key, opts->lib, start);
      if (ok && u->obj == NULL)
        ok = (u->proc = spawn_compiler (cc_path, flags, u->source, error)) != NULL;
    }
  for (guint i = 0; i < n; i++)
    {
      Unit *u = &units[i];
      if (u->proc && ok)
        ok = finish_unit (u, cache, cc_path, opts->lib, start, error);
      else if (u->proc)
        {
          /* an earlier unit failed: this one's object is not wanted */
          g_subprocess_force_exit (u->proc);
          g_subprocess_wait (u->proc, NULL, NULL);
          g_clear_object (&u->proc);
        }
      g_free (u->key);
    }
  for (guint i = 0; i < n; i++)
    {
      out_objects[i] = ok ? units[i].obj : NULL;
      if (!ok)
        morok_object_free (units[i].obj);
    }
  return ok;
}

MorokObject *
morok_compile (const char *source, const MorokCompileOptions *opts, GError **error)
{
  MorokObject *obj = NULL;
  g_return_val_if_fail (source != NULL, NULL);
  return morok_compile_units (&source, 1, opts, &obj, error) ? obj : NULL;
}
