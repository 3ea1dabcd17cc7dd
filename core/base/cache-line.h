/* SPDX-License-Identifier: MIT */
/* cache-line.h (private to libmorok): the one rounding of a buffer's size.
 * Every block libmorok hands to kernels (a program's or context's buffers,
 * folded weights, scratch slices, the parts of a thread's scratch) starts
 * on a 64-byte cache line, so that vector loads never span two lines and
 * two threads never write one line. */
#pragma once

#include <glib.h>

/* @bytes rounded up to whole cache lines (at least one). */
static inline gsize
morok_round_64 (gsize bytes)
{
  return MAX ((bytes + 63) / 64 * 64, 64);
}
