/* SPDX-License-Identifier: MIT */
#pragma once

#include <gst/audio/gstaudiofilter.h>

G_BEGIN_DECLS

#define MOROK_TYPE_VAD (morok_vad_get_type ())
G_DECLARE_FINAL_TYPE (MorokVad, morok_vad, MOROK, VAD, GstAudioFilter)

GST_ELEMENT_REGISTER_DECLARE (morokvad);

G_END_DECLS
