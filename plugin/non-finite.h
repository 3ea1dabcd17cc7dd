/* SPDX-License-Identifier: MIT */
/* Input samples that are not finite (NaN, ±infinity) count as silence in
 * every element (the conversions that read them say how many there were):
 * the first ones since the element started or last flushed are told with
 * an element WARNING whose details structure is named
 * MOROK_NON_FINITE_INPUT (`samples`, guint64: how many of the buffer's
 * samples counted as silence; `pts`, guint64 ns: its time; `pad`, string:
 * the request pad, where it came through one).
 *
 *   gsize bad = morok_audio_mix_f32 (dst, map.data, frames, channels);
 *   morok_non_finite_warn (GST_ELEMENT (self), NULL, bad, frames, pts, &self->non_finite_told);
 */
#pragma once

#include <gst/gst.h>

G_BEGIN_DECLS

#define MOROK_NON_FINITE_INPUT "morok/non-finite-input"

/* Posts the warning (then sets *@told) when @bad of the buffer's @n
 * samples were not finite and *@told is not set; @pts is the buffer's,
 * @pad the request pad's name or NULL. */
void morok_non_finite_warn (GstElement *element, const char *pad, guint64 bad, gsize n,
                            GstClockTime pts, gboolean *told);

G_END_DECLS
