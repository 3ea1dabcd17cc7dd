/* SPDX-License-Identifier: MIT */
#pragma once

#include "utterance-element.h"

G_BEGIN_DECLS

#define MOROK_TYPE_TRANSCRIBER (morok_transcriber_get_type ())
G_DECLARE_FINAL_TYPE (MorokTranscriber, morok_transcriber, MOROK, TRANSCRIBER,
                      MorokUtteranceElement)

GST_ELEMENT_REGISTER_DECLARE (moroktranscriber);

G_END_DECLS
