/* SPDX-License-Identifier: MIT */
/* The kernel cache's trust checks (kernels/object-cache.h): an entry that was
 * damaged, cut short, filed under another key, reached through a symlink or
 * kept in a folder that others could write is never loaded; the compile goes
 * on without it and gives the right result.
 *
 * The attack in each case is a forged entry whose object, if it ever ran,
 * would create a marker file with a raw `open` system call and return 666
 * instead of 42. One test runs it from a trusted folder to show that the
 * marker works; every other test checks that it stays absent. */

#include "kernels/morok-compiler.h"
#include "kernels/object-cache.h"
#include "temp-dir.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The kernel a plan would have: out[0] = 42. */
static const char benign_source[]
    = "#include <stdint.h>\n"
      "void morok_k0 (void *const *bufs, const int64_t *vars, uint32_t tid, uint32_t n)\n"
      "{ ((float *) bufs[0])[0] = 42.0f; }\n";

/* The attacker's kernel: creates @marker (open (path, O_WRONLY|O_CREAT,
 * 0600) through the syscall instruction), then out[0] = 666. */
static char *
malicious_source (const char *marker)
{
  return g_strdup_printf (
      "#include <stdint.h>\n"
      "static const char marker[] = \"%s\";\n"
      "void morok_k0 (void *const *bufs, const int64_t *vars, uint32_t tid, uint32_t n)\n"
      "{\n"
      "  long r;\n"
      "  __asm__ volatile (\"syscall\" : \"=a\" (r) : \"a\" (2L), \"D\" (marker), \"S\" (0101L),\n"
      "                    \"d\" (0600L) : \"rcx\", \"r11\", \"memory\");\n"
      "  ((float *) bufs[0])[0] = 666.0f;\n"
      "}\n",
      marker);
}

typedef struct
{
  char *root;        /* temporary folder holding everything below */
  char *dir;         /* the cache folder the compile is pointed at */
  char *marker;      /* created only if the malicious object runs */
  char *key;         /* the benign source's cache key */
  char *entry;       /* dir/<key>.obj */
  GBytes *malicious; /* the malicious object's bytes */
  char *malicious_key;
} Fixture;

/* The name (without ".obj") of the only entry in @dir. */
static char *
only_key (const char *dir)
{
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;
  char *key = NULL;

  g_assert_nonnull (d);
  while ((name = g_dir_read_name (d)) != NULL)
    if (g_str_has_suffix (name, ".obj"))
      {
        g_assert_null (key);
        key = g_strndup (name, strlen (name) - 4);
      }
  g_assert_nonnull (key);
  return key;
}

static MorokObject *
compile_in (const char *dir, const char *source)
{
  g_autoptr (GError) error = NULL;
  MorokCompileOptions opts;
  MorokObject *obj;

  morok_compile_options_init (&opts);
  opts.use_cache = TRUE;
  opts.cache_dir = dir;
  obj = morok_compile (source, &opts, &error);
  g_assert_no_error (error);
  return obj;
}

/* Runs morok_k0 of @obj: its out[0]. */
static float
run (MorokObject *obj)
{
  g_autoptr (GError) error = NULL;
  MorokKernelFn fn = (MorokKernelFn) morok_object_lookup (obj, "morok_k0", &error);
  float out[1] = { 0 };
  void *bufs[1] = { out };

  g_assert_no_error (error);
  fn ((void *const *) bufs, NULL, 0, 1);
  return out[0];
}

/* A cache folder with the benign entry, and the malicious object at hand. */
static void
fixture_setup (Fixture *f, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *evil_dir = NULL;
  g_autofree char *evil_src = NULL;

  f->root = temp_dir_new ();
  f->dir = g_build_filename (f->root, "cache", NULL);
  f->marker = g_build_filename (f->root, "malicious-code-ran", NULL);
  morok_object_free (compile_in (f->dir, benign_source));
  f->key = only_key (f->dir);
  f->entry = g_strconcat (f->dir, "/", f->key, ".obj", NULL);

  evil_dir = g_build_filename (f->root, "evil", NULL);
  evil_src = malicious_source (f->marker);
  morok_object_free (compile_in (evil_dir, evil_src));
  f->malicious_key = only_key (evil_dir);
  g_autoptr (MorokObjectCache) evil = morok_object_cache_open (evil_dir);
  g_assert_nonnull (evil);
  f->malicious = morok_object_cache_read (evil, f->malicious_key);
  g_assert_nonnull (f->malicious);
  g_assert_false (g_file_test (f->marker, G_FILE_TEST_EXISTS));
}

static void
fixture_teardown (Fixture *f, gconstpointer data)
{
  g_chmod (f->dir, 0700);
  temp_dir_remove (f->root);
  g_free (f->root);
  g_free (f->dir);
  g_free (f->marker);
  g_free (f->key);
  g_free (f->entry);
  g_free (f->malicious_key);
  g_bytes_unref (f->malicious);
}

/* Files the malicious object under the benign key in @dir with a header that
 * checks out, as an attacker who can write the folder would. */
static void
forge_entry (Fixture *f, const char *dir)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (MorokObjectCache) cache = morok_object_cache_open (dir);

  g_assert_nonnull (cache);
  g_assert_true (morok_object_cache_write (cache, f->key, f->malicious, &error));
  g_assert_no_error (error);
}

/* Compiling the benign source through @dir recompiles (one compiler run, no
 * hit), gives 42, and the marker is absent. */
static void
assert_recompiled_safely (Fixture *f, const char *dir)
{
  guint64 runs = morok_compile_count_invocations ();
  guint64 hits = morok_compile_count_cache_hits ();
  g_autoptr (MorokObject) obj = compile_in (dir, benign_source);

  g_assert_cmpfloat (run (obj), ==, 42.0f);
  g_assert_cmpuint (morok_compile_count_invocations (), ==, runs + 1);
  g_assert_cmpuint (morok_compile_count_cache_hits (), ==, hits);
  g_assert_false (g_file_test (f->marker, G_FILE_TEST_EXISTS));
}

/* The control: a forged entry in the user's own private folder is trusted
 * (whoever can write there is the user), and its code leaves the marker.
 * Without this, the other tests could pass with a marker that never works. */
static void
test_forged_entry_in_private_folder_runs (Fixture *f, gconstpointer data)
{
  forge_entry (f, f->dir);
  guint64 hits = morok_compile_count_cache_hits ();
  g_autoptr (MorokObject) obj = compile_in (f->dir, benign_source);

  g_assert_cmpuint (morok_compile_count_cache_hits (), ==, hits + 1);
  g_assert_cmpfloat (run (obj), ==, 666.0f);
  g_assert_true (g_file_test (f->marker, G_FILE_TEST_EXISTS));
}

/* The good entry is a hit: the checks pass what they should. */
static void
test_good_entry_hits (Fixture *f, gconstpointer data)
{
  guint64 runs = morok_compile_count_invocations ();
  g_autoptr (MorokObject) obj = compile_in (f->dir, benign_source);

  g_assert_cmpfloat (run (obj), ==, 42.0f);
  g_assert_cmpuint (morok_compile_count_invocations (), ==, runs);
}

/* The malicious object put in place of the benign one behind the benign
 * entry's header (SHA-256 no longer matches) is dropped and recompiled. */
static void
test_tampered_object_recompiled (Fixture *f, gconstpointer data)
{
  g_autofree char *good = NULL;
  gsize len, evil_len;
  const char *evil = g_bytes_get_data (f->malicious, &evil_len);

  g_assert_true (g_file_get_contents (f->entry, &good, &len, NULL));
  g_autoptr (GByteArray) bad = g_byte_array_new ();
  g_byte_array_append (bad, (guint8 *) good, MOROK_OBJECT_CACHE_HEADER_BYTES);
  g_byte_array_append (bad, (guint8 *) evil, evil_len);
  g_assert_true (g_file_set_contents (f->entry, (char *) bad->data, bad->len, NULL));
  assert_recompiled_safely (f, f->dir);
}

/* Bytes changed inside the object where its code holds 42.0f (rewritten to
 * 666.0f, an object that still loads and runs) are caught by the SHA-256. */
static void
test_changed_constant_recompiled (Fixture *f, gconstpointer data)
{
  const float was = 42.0f, now = 666.0f;
  g_autofree char *bytes = NULL;
  gsize len;
  guint n = 0;

  g_assert_true (g_file_get_contents (f->entry, &bytes, &len, NULL));
  for (gsize i = MOROK_OBJECT_CACHE_HEADER_BYTES; i + sizeof was <= len; i++)
    if (memcmp (bytes + i, &was, sizeof was) == 0)
      {
        memcpy (bytes + i, &now, sizeof now);
        n++;
      }
  g_assert_cmpuint (n, ==, 1);
  g_assert_true (g_file_set_contents (f->entry, bytes, len, NULL));
  assert_recompiled_safely (f, f->dir);
}

/* An entry cut short (header alone, or half the object) is recompiled. */
static void
test_truncated_entry_recompiled (Fixture *f, gconstpointer data)
{
  g_autofree char *bytes = NULL;
  gsize len;

  g_assert_true (g_file_get_contents (f->entry, &bytes, &len, NULL));
  g_assert_true (g_file_set_contents (f->entry, bytes, MOROK_OBJECT_CACHE_HEADER_BYTES - 1, NULL));
  assert_recompiled_safely (f, f->dir);
  g_assert_true (g_file_set_contents (f->entry, bytes, len / 2, NULL));
  assert_recompiled_safely (f, f->dir);
}

/* A valid entry of another key (the malicious source's own) copied under the
 * benign key's name is refused: the header names the key it was made for. */
static void
test_entry_of_another_key_recompiled (Fixture *f, gconstpointer data)
{
  g_autofree char *evil_dir = g_build_filename (f->root, "evil", NULL);
  g_autofree char *evil_name = g_strconcat (f->malicious_key, ".obj", NULL);
  g_autofree char *evil_entry = g_build_filename (evil_dir, evil_name, NULL);
  g_autofree char *bytes = NULL;
  gsize len;

  g_assert_true (g_file_get_contents (evil_entry, &bytes, &len, NULL));
  g_assert_true (g_file_set_contents (f->entry, bytes, len, NULL));
  assert_recompiled_safely (f, f->dir);
}

/* An entry that is a symlink (to a forged entry elsewhere) is not followed. */
static void
test_symlinked_entry_refused (Fixture *f, gconstpointer data)
{
  g_autofree char *elsewhere = g_build_filename (f->root, "elsewhere", NULL);
  g_autofree char *name = g_strconcat (f->key, ".obj", NULL);
  g_autofree char *target = g_build_filename (elsewhere, name, NULL);

  forge_entry (f, elsewhere);
  g_assert_cmpint (g_unlink (f->entry), ==, 0);
  g_assert_cmpint (symlink (target, f->entry), ==, 0);
  assert_recompiled_safely (f, f->dir);
}

/* An entry writable by group or others is dropped, whatever it holds. */
static void
test_group_writable_entry_refused (Fixture *f, gconstpointer data)
{
  forge_entry (f, f->dir);
  g_assert_cmpint (g_chmod (f->entry, 0660), ==, 0);
  assert_recompiled_safely (f, f->dir);
}

/* A folder writable by the group (here with a forged entry in it) is not
 * used: nothing is read from it and nothing is stored in it. */
static void
test_group_writable_folder_refused (Fixture *f, gconstpointer data)
{
  forge_entry (f, f->dir);
  g_assert_cmpint (g_chmod (f->dir, 0770), ==, 0);
  assert_recompiled_safely (f, f->dir);
  assert_recompiled_safely (f, f->dir); /* still a miss: nothing was stored */
}

/* A cache folder that is a symlink (to a folder with a forged entry) is not
 * used. */
static void
test_symlinked_folder_refused (Fixture *f, gconstpointer data)
{
  g_autofree char *link = g_build_filename (f->root, "cache-link", NULL);
  g_autofree char *link_slash = g_strconcat (link, "/", NULL);

  forge_entry (f, f->dir);
  g_assert_cmpint (symlink (f->dir, link), ==, 0);
  assert_recompiled_safely (f, link);
  assert_recompiled_safely (f, link_slash);
}

/* A folder that belongs to another user is not used. As root the test hands
 * the folder (with a forged entry) to nobody (uid 65534); otherwise it
 * points the cache at a folder of root's that exists everywhere. */
static void
test_folder_of_another_user_refused (Fixture *f, gconstpointer data)
{
  if (geteuid () != 0)
    {
      g_test_message ("not root: checking a root-owned folder (/usr) instead of chown");
      assert_recompiled_safely (f, "/usr");
      return;
    }
  forge_entry (f, f->dir);
  g_assert_cmpint (chown (f->dir, 65534, 65534), ==, 0);
  assert_recompiled_safely (f, f->dir);
}

/* An entry that belongs to another user is dropped (root only: chown). */
static void
test_entry_of_another_user_refused (Fixture *f, gconstpointer data)
{
  if (geteuid () != 0)
    {
      g_test_skip ("needs root to give an entry to another user");
      return;
    }
  forge_entry (f, f->dir);
  g_assert_cmpint (chown (f->entry, 65534, 65534), ==, 0);
  assert_recompiled_safely (f, f->dir);
}

/* A FIFO in place of an entry neither blocks the compile nor is read. */
static void
test_fifo_entry_does_not_block (Fixture *f, gconstpointer data)
{
  g_assert_cmpint (g_unlink (f->entry), ==, 0);
  g_assert_cmpint (mkfifo (f->entry, 0600), ==, 0);
  assert_recompiled_safely (f, f->dir);
}

/* A compiler wrapper that logs each `--version` it answers to @log and
 * prints @version; anything else goes to clang. */
static void
write_wrapper (const char *path, const char *log, const char *version)
{
  g_autofree char *script
      = g_strdup_printf ("#!/bin/sh\n"
                         "if [ \"$1\" = --version ]; then echo run >> '%s'; echo '%s'; exit 0; fi\n"
                         "exec clang \"$@\"\n",
                         log, version);
  g_assert_true (g_file_set_contents (path, script, -1, NULL));
  g_assert_cmpint (g_chmod (path, 0755), ==, 0);
}

static guint
count_lines (const char *path)
{
  g_autofree char *text = NULL;
  if (!g_file_get_contents (path, &text, NULL, NULL))
    return 0;
  guint n = 0;
  for (const char *c = text; *c; c++)
    n += *c == '\n';
  return n;
}

static guint
count_objects (const char *dir)
{
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;
  guint n = 0;
  while (d && (name = g_dir_read_name (d)) != NULL)
    n += g_str_has_suffix (name, ".obj");
  return n;
}

/* Compiles the benign source with compiler @cc into @dir; its result. */
static float
compile_with (const char *dir, const char *cc)
{
  g_autoptr (GError) error = NULL;
  MorokCompileOptions opts;
  morok_compile_options_init (&opts);
  opts.use_cache = TRUE;
  opts.cache_dir = dir;
  opts.cc = cc;
  MorokObject *obj = morok_compile (benign_source, &opts, &error);
  g_assert_no_error (error);
  float out = run (obj);
  morok_object_free (obj);
  return out;
}

/* The compiler's `--version` is kept in the cache per compiler file: a
 * second path to the same file (which the process has not seen) runs no
 * `--version` and hits the object; the file rewritten, a third path runs
 * it again and files a new object. */
static void
test_compiler_version_kept (void)
{
  g_autofree char *root = temp_dir_new ();
  g_autofree char *dir = g_build_filename (root, "cache", NULL);
  g_autofree char *log = g_build_filename (root, "version-runs", NULL);
  g_autofree char *cc = g_build_filename (root, "cc-wrapper", NULL);
  g_autofree char *link1 = g_build_filename (root, "cc-1", NULL);
  g_autofree char *link2 = g_build_filename (root, "cc-2", NULL);
  write_wrapper (cc, log, "wrapped clang 1");
  g_assert_cmpint (symlink (cc, link1), ==, 0);
  g_assert_cmpint (symlink (cc, link2), ==, 0);

  g_assert_cmpfloat (compile_with (dir, link1), ==, 42.0f);
  g_assert_cmpuint (count_lines (log), ==, 1);
  g_assert_cmpuint (count_objects (dir), ==, 1);
  g_assert_cmpfloat (compile_with (dir, cc), ==, 42.0f);
  g_assert_cmpuint (count_lines (log), ==, 1);
  g_assert_cmpuint (count_objects (dir), ==, 1);

  write_wrapper (cc, log, "wrapped clang 2, a newer one");
  g_assert_cmpfloat (compile_with (dir, link2), ==, 42.0f);
  g_assert_cmpuint (count_lines (log), ==, 2);
  g_assert_cmpuint (count_objects (dir), ==, 2);
  temp_dir_remove (root);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
#define ADD(path, fn) g_test_add (path, Fixture, NULL, fixture_setup, fn, fixture_teardown)
  ADD ("/object-cache/trust/forged-entry-in-private-folder-runs",
       test_forged_entry_in_private_folder_runs);
  ADD ("/object-cache/trust/good-entry-hits", test_good_entry_hits);
  ADD ("/object-cache/trust/tampered-object-recompiled", test_tampered_object_recompiled);
  ADD ("/object-cache/trust/changed-constant-recompiled", test_changed_constant_recompiled);
  ADD ("/object-cache/trust/truncated-entry-recompiled", test_truncated_entry_recompiled);
  ADD ("/object-cache/trust/entry-of-another-key-recompiled", test_entry_of_another_key_recompiled);
  ADD ("/object-cache/trust/symlinked-entry-refused", test_symlinked_entry_refused);
  ADD ("/object-cache/trust/group-writable-entry-refused", test_group_writable_entry_refused);
  ADD ("/object-cache/trust/group-writable-folder-refused", test_group_writable_folder_refused);
  ADD ("/object-cache/trust/symlinked-folder-refused", test_symlinked_folder_refused);
  ADD ("/object-cache/trust/folder-of-another-user-refused", test_folder_of_another_user_refused);
  ADD ("/object-cache/trust/entry-of-another-user-refused", test_entry_of_another_user_refused);
  ADD ("/object-cache/trust/fifo-entry-does-not-block", test_fifo_entry_does_not_block);
#undef ADD
  g_test_add_func ("/object-cache/compiler-version-kept", test_compiler_version_kept);
  return g_test_run ();
}
