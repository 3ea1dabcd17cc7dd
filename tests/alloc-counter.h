/* SPDX-License-Identifier: MIT */
/* Counting allocations: a test program linked with alloc-counter.c replaces
 * malloc and its siblings with counting versions (glibc's __libc_* do the
 * work), so it sees allocations made inside libglib and libmorok too. */
#pragma once

#include <glib.h>

/* FALSE where the counting cannot work (under AddressSanitizer or valgrind). */
gboolean alloc_counter_works (void);
/* Starts counting from zero, the calling thread's allocations only. */
void alloc_counter_start (void);
/* Stops counting; returns the allocations since alloc_counter_start (). */
gint alloc_counter_stop (void);
