/* SPDX-License-Identifier: MIT */
/* One persistent pool of worker threads for the whole process. The caller of
 * a step is thread 0; workers spin briefly for the next step (steps of a plan
 * follow each other within microseconds), then sleep on a condition. */
#define G_LOG_DOMAIN "morok-runtime"
#include "runtime/morok-runtime.h"
#include <stdlib.h>

#define SPIN_ITERATIONS 20000

typedef struct
{
  guint n;
  GMutex busy; /* one job at a time */
  GMutex mu;
  GCond wake;
  gint generation;
  gint sleeping; /* workers in g_cond_wait, or about to be */
  gint pending;
  MorokKernelFn fn;
  void *const *bufs;
  const int64_t *vars;
  guint nthreads;
} Pool;

static Pool *pool;

static gpointer
worker (gpointer data)
{
  guint tid = GPOINTER_TO_UINT (data);
  gint seen = 0;
  for (;;)
    {
      for (guint i = 0; i < SPIN_ITERATIONS && g_atomic_int_get (&pool->generation) == seen; i++)
        __builtin_ia32_pause ();
      if (g_atomic_int_get (&pool->generation) == seen)
        {
          g_mutex_lock (&pool->mu);
          g_atomic_int_inc (&pool->sleeping);
          while (g_atomic_int_get (&pool->generation) == seen)
            g_cond_wait (&pool->wake, &pool->mu);
          g_atomic_int_add (&pool->sleeping, -1);
          g_mutex_unlock (&pool->mu);
        }
      seen = g_atomic_int_get (&pool->generation);
      if (tid < pool->nthreads)
        pool->fn (pool->bufs, pool->vars, tid, pool->nthreads);
      g_atomic_int_add (&pool->pending, -1);
    }
  return NULL;
}

static gpointer
pool_create (gpointer unused)
{
  guint cores = g_get_num_processors ();
  guint n = cores;
  const char *env = g_getenv ("MOROK_THREADS");
  if (env && atoi (env) > 0)
    n = MIN ((guint) atoi (env), cores);
  Pool *p = g_new0 (Pool, 1);
  p->n = MAX (n, 1);
  g_mutex_init (&p->busy);
  g_mutex_init (&p->mu);
  g_cond_init (&p->wake);
  pool = p;
  for (guint i = 1; i < p->n; i++)
    g_thread_unref (g_thread_new ("morok-worker", worker, GUINT_TO_POINTER (i)));
  return p;
}

guint
morok_thread_pool_size (void)
{
  static GOnce once = G_ONCE_INIT;
  g_once (&once, pool_create, NULL);
  return pool->n;
}

void
morok_thread_pool_run (MorokKernelFn fn, void *const *bufs, const int64_t *vars, guint n)
{
  n = MIN (n, morok_thread_pool_size ());
  if (n <= 1 || !g_mutex_trylock (&pool->busy))
    {
      fn (bufs, vars, 0, 1);
      return;
    }
  pool->fn = fn;
  pool->bufs = bufs;
  pool->vars = vars;
  pool->nthreads = n;
  g_atomic_int_set (&pool->pending, (gint) pool->n - 1);
  /* only a sleeping worker needs the (system) call: a worker counts itself
   * in `sleeping` before it reads the generation, the caller reads
   * `sleeping` after it moves the generation on (both full barriers), so
   * either the caller sees it or it sees the new generation */
  g_atomic_int_inc (&pool->generation);
  if (g_atomic_int_get (&pool->sleeping) > 0)
    {
      g_mutex_lock (&pool->mu);
      g_cond_broadcast (&pool->wake);
      g_mutex_unlock (&pool->mu);
    }
  fn (bufs, vars, 0, n);
  /* a worker that was preempted may take a while: spin a little, then yield
   * the core to it instead of burning the time slice */
  for (guint i = 0; g_atomic_int_get (&pool->pending) > 0; i++)
    if (i < SPIN_ITERATIONS)
      __builtin_ia32_pause ();
    else
      g_thread_yield ();
  g_mutex_unlock (&pool->busy);
}
