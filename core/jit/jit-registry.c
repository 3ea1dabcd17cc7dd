/* SPDX-License-Identifier: MIT */
/* The registry of shared prototypes: a table of entries under one lock,
 * with a condition on which the acquires of a key being made wait. make ()
 * and the freeing of a prototype run outside the lock. */
#define G_LOG_DOMAIN "morok-jit"
#include "jit/morok-jit-registry.h"

struct _MorokJitShared
{
  char *key;
  guint users;    /* acquires not yet released, waiters included */
  gboolean made;  /* make () has returned */
  gpointer value; /* the prototype, NULL until made or when make failed */
  GDestroyNotify free_value;
  gboolean is_jit; /* value is a MorokJit (morok_jit_registry_acquire) */
  GError *error;   /* make's, for those who waited */
};

static GMutex lock;
static GCond made_cond;
static GHashTable *entries; /* key -> MorokJitShared (owns neither: the entry owns its key) */
static guint64 prepares;

static void
entry_free (MorokJitShared *e)
{
  if (e->value)
    e->free_value (e->value);
  g_clear_error (&e->error);
  g_free (e->key);
  g_free (e);
}

/* Called with the lock: the entry itself when @key has none, so its
 * acquire is the one to make it. */
static MorokJitShared *
entry_use (const char *key, gboolean *out_new)
{
  if (!entries)
    entries = g_hash_table_new (g_str_hash, g_str_equal);
  MorokJitShared *e = g_hash_table_lookup (entries, key);
  *out_new = e == NULL;
  if (!e)
    {
      e = g_new0 (MorokJitShared, 1);
      e->key = g_strdup (key);
      g_hash_table_insert (entries, e->key, e);
    }
  e->users++;
  return e;
}

/* Called with the lock: drops a use of @e; TRUE when it was the last, @e
 * is out of the table then and the caller frees it outside the lock. */
static gboolean
entry_drop (MorokJitShared *e)
{
  if (--e->users > 0)
    return FALSE;
  if (g_hash_table_lookup (entries, e->key) == e)
    g_hash_table_remove (entries, e->key);
  return TRUE;
}

/* The make of a wrapper, as the make of a value. */
typedef struct
{
  MorokJitMakeFn make;
  gpointer data;
} JitMake;

static gpointer
make_jit (gpointer data, GError **error)
{
  JitMake *m = data;
  return m->make (m->data, error);
}

MorokJitShared *
morok_jit_registry_acquire (const char *key, MorokJitMakeFn make, gpointer data, GError **error)
{
  g_return_val_if_fail (key != NULL && make != NULL, NULL);
  JitMake m = { make, data };
  MorokJitShared *e = morok_jit_registry_acquire_value (key, make_jit,
                                                        (GDestroyNotify) morok_jit_free, &m, error);
  if (e && !e->is_jit)
    {
      g_critical ("registry: '%s' holds a value, not a wrapper", key);
      morok_jit_registry_release (e);
      return NULL;
    }
  return e;
}

MorokJitShared *
morok_jit_registry_acquire_value (const char *key, MorokSharedMakeFn make,
                                  GDestroyNotify free_value, gpointer data, GError **error)
{
  g_return_val_if_fail (key != NULL && make != NULL && free_value != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);
  g_mutex_lock (&lock);
  gboolean first;
  MorokJitShared *e = entry_use (key, &first);
  if (first)
    {
      g_mutex_unlock (&lock);
      gint64 t0 = g_get_monotonic_time ();
      GError *local = NULL;
      gpointer value = make (data, &local);
      g_mutex_lock (&lock);
      e->value = value;
      e->free_value = free_value;
      e->is_jit = make == make_jit;
      e->error = local;
      e->made = TRUE;
      if (value)
        {
          prepares++;
          g_debug ("registry: prepared '%s' in %.1f ms", key, (g_get_monotonic_time () - t0) / 1e3);
        }
      else if (!local)
        g_set_error (&e->error, MOROK_JIT_ERROR, MOROK_JIT_ERROR_BUILD,
                     "registry: making '%s' failed without an error", key);
      if (!value) /* the next acquire tries again */
        g_hash_table_remove (entries, e->key);
      g_cond_broadcast (&made_cond);
    }
  while (!e->made)
    g_cond_wait (&made_cond, &lock);
  if (e->value)
    {
      g_mutex_unlock (&lock);
      return e;
    }
  g_propagate_error (error, g_error_copy (e->error));
  gboolean last = entry_drop (e);
  g_mutex_unlock (&lock);
  if (last)
    entry_free (e);
  return NULL;
}

MorokJit *
morok_jit_shared_prototype (MorokJitShared *shared)
{
  g_return_val_if_fail (shared != NULL && shared->is_jit, NULL);
  return shared->value;
}

gpointer
morok_jit_shared_value (MorokJitShared *shared)
{
  g_return_val_if_fail (shared != NULL, NULL);
  return shared->value;
}

void
morok_jit_registry_release (MorokJitShared *shared)
{
  if (!shared)
    return;
  g_mutex_lock (&lock);
  gboolean last = entry_drop (shared);
  g_mutex_unlock (&lock);
  if (last)
    entry_free (shared);
}

/* ---- counters ---- */

guint
morok_jit_registry_n_prototypes (void)
{
  g_mutex_lock (&lock);
  guint n = 0;
  if (entries)
    {
      GHashTableIter it;
      gpointer e;
      g_hash_table_iter_init (&it, entries);
      while (g_hash_table_iter_next (&it, NULL, &e))
        n += ((MorokJitShared *) e)->value != NULL;
    }
  g_mutex_unlock (&lock);
  return n;
}

guint
morok_jit_registry_users (const char *key)
{
  g_return_val_if_fail (key != NULL, 0);
  g_mutex_lock (&lock);
  MorokJitShared *e = entries ? g_hash_table_lookup (entries, key) : NULL;
  guint n = e ? e->users : 0;
  g_mutex_unlock (&lock);
  return n;
}

guint64
morok_jit_registry_prepare_count (void)
{
  g_mutex_lock (&lock);
  guint64 n = prepares;
  g_mutex_unlock (&lock);
  return n;
}
