/* SPDX-License-Identifier: MIT */
#pragma once

#include "utterance-element.h"

G_BEGIN_DECLS

#define MOROK_TYPE_ENCODER (morok_encoder_get_type ())
G_DECLARE_FINAL_TYPE (MorokEncoder, morok_encoder, MOROK, ENCODER, MorokUtteranceElement)

GST_ELEMENT_REGISTER_DECLARE (morokencoder);

G_END_DECLS
