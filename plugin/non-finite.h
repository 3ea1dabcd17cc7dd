/* SPDX-License-Identifier: MIT */
/* Input samples that are not finite (NaN, ±infinity) count as silence in
 * every element: the first ones since the element started or last flushed
 * are told with an element WARNING whose details structure is named
 * MOROK_NON_FINITE_INPUT (`samples`, guint64: how many the buffer had;
 * `pts`, guint64 ns: its time; `pad`, string: the request pad, where it
 * came through one).
 *
 *   morok_non_finite_check (GST_ELEMENT (self), NULL, map.data, n_values, pts,
 *                           &self->non_finite_told);
 */
#pragma once

#include <gst/gst.h>

G_BEGIN_DECLS

#define MOROK_NON_FINITE_INPUT "morok/non-finite-input"

/* Looks at @n F32 values at @data unless *@told, and posts the warning
 * (then sets *@told) when some are not finite; @pts is the buffer's, @pad
 * the request pad's name or NULL. */
void morok_non_finite_check (GstElement *element, const char *pad, const guint8 *data, gsize n,
                             GstClockTime pts, gboolean *told);

G_END_DECLS
