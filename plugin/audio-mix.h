/* SPDX-License-Identifier: MIT */
/* Interleaved audio mixed down to mono f32, straight into a plan's input
 * (morokvad): the mean of the channels; S16 scaled to [-1, 1); a
 * non-finite F32 mix counts as silence (0).
 *
 *   morok_audio_mix_s16 (audio + context + filled, map.data, frames, channels);
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* @n frames of @ch interleaved F32LE channels at @src into @dst; returns
 * how many mixes were not finite (non-finite.h tells of them). */
gsize morok_audio_mix_f32 (float *restrict dst, const guint8 *restrict src, gsize n, guint ch);
/* @n frames of @ch interleaved S16LE channels at @src into @dst. */
void morok_audio_mix_s16 (float *restrict dst, const guint8 *restrict src, gsize n, guint ch);

G_END_DECLS
