/* SPDX-License-Identifier: MIT */
/* The registry of shared prototypes (jit/morok-jit-registry.h): one make
 * per key however many threads acquire it at once, no waiting across keys,
 * the last release frees the prototype and its model, failures are retried;
 * and file keys that follow the contents, not the path. The prototypes are
 * GainJit (jit-fixtures.h). */
#include "jit-fixtures.h"
#include "jit/morok-jit-registry.h"
#include "temp-dir.h"

#include <stdio.h>
#include <string.h>

#define N_THREADS 8

typedef struct
{
  gint makes;      /* make () calls, atomic */
  int freed;       /* gain_free () calls */
  gint64 sleep_us; /* how long make () takes */
  gboolean fail;
} Maker;

static MorokJit *
make_gain (gpointer data, GError **error)
{
  Maker *m = data;
  g_atomic_int_inc (&m->makes);
  g_usleep (m->sleep_us);
  if (m->fail)
    {
      g_set_error (error, MOROK_JIT_ERROR, MOROK_JIT_ERROR_BUILD, "no gain today");
      return NULL;
    }
  GainJit *jit = gain_jit_new (gain_new (2.0f, 4, 8, &m->freed));
  g_autoptr (MorokInputSpec) x = morok_input_spec_f32 (MOROK_SHAPE (4, 8));
  if (!gain_jit_prepare (jit, x, error))
    g_clear_pointer (&jit, gain_jit_free);
  return jit ? gain_jit_jit (jit) : NULL;
}

typedef struct
{
  Maker *maker;
  MorokJitShared *shared;
} Acquire;

static gpointer
acquire_thread (gpointer data)
{
  Acquire *a = data;
  a->shared = morok_jit_registry_acquire ("gain", make_gain, a->maker, NULL);
  return NULL;
}

/* Eight threads acquire one key while its make () takes 50 ms: make runs
 * once, all get the same prototype, the key has eight users; the prototype
 * and its model live until the last release. */
static void
test_one_make_per_key (void)
{
  Maker m = { .sleep_us = 50000 };
  guint64 prepares = morok_jit_registry_prepare_count ();
  Acquire a[N_THREADS];
  GThread *threads[N_THREADS];
  for (guint i = 0; i < N_THREADS; i++)
    {
      a[i] = (Acquire){ &m, NULL };
      threads[i] = g_thread_new ("acquire", acquire_thread, &a[i]);
    }
  for (guint i = 0; i < N_THREADS; i++)
    g_thread_join (threads[i]);
  g_assert_cmpint (m.makes, ==, 1);
  g_assert_cmpuint (morok_jit_registry_prepare_count (), ==, prepares + 1);
  g_assert_cmpuint (morok_jit_registry_n_prototypes (), ==, 1);
  g_assert_cmpuint (morok_jit_registry_users ("gain"), ==, N_THREADS);
  for (guint i = 0; i < N_THREADS; i++)
    {
      g_assert_nonnull (a[i].shared);
      g_assert_true (morok_jit_shared_prototype (a[i].shared)
                     == morok_jit_shared_prototype (a[0].shared));
    }
  for (guint i = 0; i + 1 < N_THREADS; i++)
    morok_jit_registry_release (a[i].shared);
  g_assert_cmpint (m.freed, ==, 0);
  g_assert_cmpuint (morok_jit_registry_users ("gain"), ==, 1);
  morok_jit_registry_release (a[N_THREADS - 1].shared);
  g_assert_cmpint (m.freed, ==, 1);
  g_assert_cmpuint (morok_jit_registry_users ("gain"), ==, 0);
  g_assert_cmpuint (morok_jit_registry_n_prototypes (), ==, 0);
}

/* A context of a shared prototype computes what the prototype does:
 * relu (x * 2 + 1). */
static void
test_context_of_prototype (void)
{
  Maker m = { 0 };
  g_autoptr (GError) error = NULL;
  MorokJitShared *shared = morok_jit_registry_acquire ("gain", make_gain, &m, &error);
  g_assert_no_error (error);
  g_autoptr (GainJit) mine
      = gain_jit_new_context ((GainJit *) morok_jit_shared_prototype (shared), &error);
  g_assert_no_error (error);
  float *x = gain_jit_x_mut (mine, &error)->data;
  for (guint i = 0; i < 32; i++)
    x[i] = (float) i - 16.0f;
  g_assert_true (gain_jit_execute (mine, &error));
  const float *y = gain_jit_output (mine, &error)->data;
  for (guint i = 0; i < 32; i++)
    g_assert_cmpfloat (y[i], ==, MAX (2.0f * ((float) i - 16.0f) + 1.0f, 0.0f));
  g_clear_pointer (&mine, gain_jit_free);
  morok_jit_registry_release (shared);
  g_assert_cmpint (m.freed, ==, 1);
}

typedef struct
{
  GMutex lock;
  GCond cond;
  gboolean other_key_acquired;
  gboolean saw_other_key; /* make () of the slow key saw the fast one acquired */
} Rendezvous;

static MorokJit *
make_waiting (gpointer data, GError **error)
{
  Rendezvous *r = data;
  gint64 until = g_get_monotonic_time () + 5 * G_TIME_SPAN_SECOND;
  g_mutex_lock (&r->lock);
  while (!r->other_key_acquired && g_cond_wait_until (&r->cond, &r->lock, until))
    ;
  r->saw_other_key = r->other_key_acquired;
  g_mutex_unlock (&r->lock);
  Maker m = { 0 };
  return make_gain (&m, error);
}

static gpointer
acquire_slow (gpointer data)
{
  return morok_jit_registry_acquire ("slow", make_waiting, data, NULL);
}

/* While the make () of one key waits, another key is acquired and made: the
 * registry holds no lock across a prepare. */
static void
test_keys_do_not_wait (void)
{
  Rendezvous r = { 0 };
  g_mutex_init (&r.lock);
  g_cond_init (&r.cond);
  GThread *slow = g_thread_new ("slow", acquire_slow, &r);
  while (morok_jit_registry_users ("slow") == 0)
    g_usleep (1000);
  Maker m = { 0 };
  MorokJitShared *fast = morok_jit_registry_acquire ("fast", make_gain, &m, NULL);
  g_assert_nonnull (fast);
  g_mutex_lock (&r.lock);
  r.other_key_acquired = TRUE;
  g_cond_signal (&r.cond);
  g_mutex_unlock (&r.lock);
  MorokJitShared *slow_shared = g_thread_join (slow);
  g_assert_true (r.saw_other_key);
  morok_jit_registry_release (fast);
  morok_jit_registry_release (slow_shared);
  g_assert_cmpuint (morok_jit_registry_n_prototypes (), ==, 0);
  g_mutex_clear (&r.lock);
  g_cond_clear (&r.cond);
}

/* A failed make () is make's error, keeps nothing, and the next acquire of
 * the key makes again. */
static void
test_failure_is_retried (void)
{
  g_autoptr (GError) error = NULL;
  Maker m = { .fail = TRUE };
  g_assert_null (morok_jit_registry_acquire ("gain", make_gain, &m, &error));
  g_assert_error (error, MOROK_JIT_ERROR, MOROK_JIT_ERROR_BUILD);
  g_assert_cmpstr (error->message, ==, "no gain today");
  g_clear_error (&error);
  g_assert_cmpuint (morok_jit_registry_users ("gain"), ==, 0);
  m.fail = FALSE;
  MorokJitShared *shared = morok_jit_registry_acquire ("gain", make_gain, &m, &error);
  g_assert_no_error (error);
  g_assert_cmpint (m.makes, ==, 2);
  morok_jit_registry_release (shared);
  morok_jit_registry_release (NULL);
}

/* ---- keys ---- */

/* Two copies of one file under other names have one key; a file differing
 * in one bit, or one byte longer, has another, and so has a file changed in
 * place after its key was taken; a missing file is a G_FILE_ERROR naming
 * it. */
static void
test_file_key_follows_contents (void)
{
  g_autofree char *dir = temp_dir_new ();
  g_autofree char *a = g_build_filename (dir, "a.onnx", NULL);
  g_autofree char *b = g_build_filename (dir, "b.onnx", NULL);
  g_autofree char *c = g_build_filename (dir, "c.onnx", NULL);
  g_autofree char *d = g_build_filename (dir, "d.onnx", NULL);
  g_autofree guint8 *bytes = g_malloc (1001);
  for (guint i = 0; i < 1001; i++)
    bytes[i] = (guint8) (i * 7);
  g_assert_true (g_file_set_contents (a, (char *) bytes, 1000, NULL));
  g_assert_true (g_file_set_contents (b, (char *) bytes, 1000, NULL));
  g_assert_true (g_file_set_contents (d, (char *) bytes, 1001, NULL));
  bytes[500] ^= 0x10;
  g_assert_true (g_file_set_contents (c, (char *) bytes, 1000, NULL));

  g_autoptr (GError) error = NULL;
  g_autofree char *ka = morok_jit_registry_file_key (a, &error);
  g_autofree char *kb = morok_jit_registry_file_key (b, &error);
  g_autofree char *kc = morok_jit_registry_file_key (c, &error);
  g_autofree char *kd = morok_jit_registry_file_key (d, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (ka, ==, kb);
  g_assert_cmpstr (ka, !=, kc);
  g_assert_cmpstr (ka, !=, kd);
  g_assert_true (g_str_has_suffix (ka, "-1000"));
  g_assert_cmpuint (strlen (ka), ==, 32 + strlen ("-1000"));

  /* rewritten in place, same size: a new key (the remembered one is stale);
   * after a pause, as file times advance by clock ticks (up to 10 ms) */
  g_usleep (20000);
  FILE *f = fopen (a, "r+b");
  g_assert_nonnull (f);
  g_assert_cmpint (fseek (f, 500, SEEK_SET), ==, 0);
  g_assert_cmpint (fputc (bytes[500], f), !=, EOF);
  g_assert_cmpint (fclose (f), ==, 0);
  g_autofree char *ka_rewritten = morok_jit_registry_file_key (a, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (ka_rewritten, ==, kc);

  g_autofree char *missing = g_build_filename (dir, "missing.onnx", NULL);
  g_assert_null (morok_jit_registry_file_key (missing, &error));
  g_assert_error (error, G_FILE_ERROR, G_FILE_ERROR_NOENT);
  g_assert_nonnull (strstr (error->message, "missing.onnx"));
  temp_dir_remove (dir);
}

/* Every one-bit change of a 100-byte buffer, and every prefix of it,
 * changes both halves of the hash: 800 + 101 hashes, all distinct. */
static void
test_hash_spreads (void)
{
  guint8 buf[100];
  for (guint i = 0; i < sizeof buf; i++)
    buf[i] = (guint8) (i * 31 + 5);
  g_autoptr (GHashTable) lo = g_hash_table_new (g_int64_hash, g_int64_equal);
  g_autoptr (GHashTable) hi = g_hash_table_new (g_int64_hash, g_int64_equal);
  g_autofree guint64 *all = g_new (guint64, 2 * (800 + 101));
  guint n = 0;
  for (guint bit = 0; bit < 800; bit++, n++)
    {
      buf[bit / 8] ^= 1u << (bit % 8);
      morok_jit_registry_hash128 (buf, sizeof buf, &all[2 * n]);
      buf[bit / 8] ^= 1u << (bit % 8);
    }
  for (guint len = 0; len <= sizeof buf; len++, n++)
    morok_jit_registry_hash128 (buf, len, &all[2 * n]);
  for (guint i = 0; i < n; i++)
    {
      g_assert_true (g_hash_table_add (lo, &all[2 * i]));
      g_assert_true (g_hash_table_add (hi, &all[2 * i + 1]));
    }
}

/* The key of a config names each setting that changes the program. */
static void
test_config_key (void)
{
  g_autoptr (MorokPrepareConfig) config = morok_prepare_config_new ();
  g_autofree char *before = morok_prepare_config_key (config);
  morok_prepare_config_set_threads (config, 1);
  g_autofree char *one_thread = morok_prepare_config_key (config);
  morok_prepare_config_set_precision (config, MOROK_PRECISION_BF16);
  g_autofree char *bf16 = morok_prepare_config_key (config);
  g_assert_cmpstr (before, !=, one_thread);
  g_assert_cmpstr (one_thread, !=, bf16);
  g_assert_nonnull (strstr (bf16, "precision=bf16"));
  g_assert_nonnull (strstr (bf16, "threads=1"));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/jit-registry/acquire/one-make-per-key", test_one_make_per_key);
  g_test_add_func ("/jit-registry/acquire/context-of-prototype", test_context_of_prototype);
  g_test_add_func ("/jit-registry/acquire/keys-do-not-wait", test_keys_do_not_wait);
  g_test_add_func ("/jit-registry/acquire/failure-is-retried", test_failure_is_retried);
  g_test_add_func ("/jit-registry/key/file-follows-contents", test_file_key_follows_contents);
  g_test_add_func ("/jit-registry/key/hash-spreads", test_hash_spreads);
  g_test_add_func ("/jit-registry/key/config", test_config_key);
  return g_test_run ();
}
