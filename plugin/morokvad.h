/* SPDX-License-Identifier: MIT */
#pragma once

#include "vad-rounds.h"
#include "models/vad-segmenter.h"
#include <gst/audio/gstaudiofilter.h>

G_BEGIN_DECLS

#define MOROK_TYPE_VAD (morok_vad_get_type ())
G_DECLARE_FINAL_TYPE (MorokVad, morok_vad, MOROK, VAD, GstAudioFilter)

GST_ELEMENT_REGISTER_DECLARE (morokvad);

/* ---- for the request pads (morokvad-pad.c) ---- */

/* (transfer none) The rounds of the batched plan at @rate, valid while the
 * element is above READY; NULL with an error naming the rate when the model
 * does not run it. */
MorokVadRounds *morok_vad_rounds_of (MorokVad *self, guint rate, GError **error);
/* The segmenter settings at @rate from the properties, and remove-silence
 * (@out_remove_silence nullable); FALSE with MOROK_VAD_ERROR_PARAMS naming
 * a bad one. */
gboolean morok_vad_settings (MorokVad *self, guint rate, MorokVadParams *out_params,
                             gboolean *out_remove_silence, GError **error);
/* The latency remove-silence adds at @rate with the properties, in live
 * mode (@live) or exact; 0 without remove-silence. */
GstClockTime morok_vad_hold (MorokVad *self, guint rate, gboolean live);

G_END_DECLS
