/* SPDX-License-Identifier: MIT */
#include "alloc-counter.h"
#include <stddef.h>

/* AddressSanitizer owns malloc: there nothing is counted */
#if defined(__SANITIZE_ADDRESS__)
#define COUNTING 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define COUNTING 0
#endif
#endif
#ifndef COUNTING
#define COUNTING 1
#endif

/* Valgrind replaces malloc in the program too: there nothing is counted */
#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define UNDER_VALGRIND() RUNNING_ON_VALGRIND
#endif
#endif
#ifndef UNDER_VALGRIND
#define UNDER_VALGRIND() 0
#endif

/* Only the thread that called alloc_counter_start () is counted, between
 * start and stop. The pool's workers run only generated kernels, which
 * cannot call malloc (the loader resolves no outside symbol), so what
 * execute allocates is the calling thread's; GLib's own threads (the worker
 * that reaps a finished compiler process, for one) allocate on their own
 * schedule, late under load, and must not be counted with it. */
static __thread gint counting;
static gint allocations; /* malloc, calloc, realloc, aligned allocations */

gboolean
alloc_counter_works (void)
{
  return COUNTING && !UNDER_VALGRIND ();
}

#if COUNTING
void *__libc_malloc (size_t n);
void *__libc_calloc (size_t n, size_t size);
void *__libc_realloc (void *p, size_t n);
void *__libc_memalign (size_t align, size_t n);

static inline G_GNUC_UNUSED void
count (void)
{
  if (counting)
    g_atomic_int_inc (&allocations);
}

void *
malloc (size_t n)
{
  count ();
  return __libc_malloc (n);
}

void *
calloc (size_t n, size_t size)
{
  count ();
  return __libc_calloc (n, size);
}

void *
realloc (void *p, size_t n)
{
  count ();
  return __libc_realloc (p, n);
}

void *
aligned_alloc (size_t align, size_t n)
{
  count ();
  return __libc_memalign (align, n);
}
#endif

void
alloc_counter_start (void)
{
  g_atomic_int_set (&allocations, 0);
  counting = 1;
}

gint
alloc_counter_stop (void)
{
  counting = 0;
  return g_atomic_int_get (&allocations);
}
