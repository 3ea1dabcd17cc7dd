/* SPDX-License-Identifier: MIT */
/* A request sink pad of morokvad (`sink_%u`) with its src pad (`src_%u`):
 * one stream with its own caps, segment, segmenter, meta, messages (naming
 * the pad) and silence gate, whose chunks run in the element's rounds of
 * the batched plan for its rate (vad-rounds.h). Read-only properties:
 * `probability` (the last chunk's) and `chunks-processed`. */
#pragma once

#include "vad-rounds.h"
#include <gst/gst.h>

G_BEGIN_DECLS

#define MOROK_TYPE_VAD_PAD (morok_vad_pad_get_type ())
G_DECLARE_FINAL_TYPE (MorokVadPad, morok_vad_pad, MOROK, VAD_PAD, GstPad)

/* Makes @name (from @sink_templ) and its src pad (@src_name, from
 * @src_templ); neither is added to an element yet. (transfer floating) */
MorokVadPad *morok_vad_pad_new (GstPadTemplate *sink_templ, const char *name,
                                GstPadTemplate *src_templ, const char *src_name);
/* (transfer none) The src pad of @pad. */
GstPad *morok_vad_pad_src (MorokVadPad *pad);
/* FLUSH_START for the rounds: a chunk of @pad waiting in a round returns
 * at once (before the pads deactivate). Any thread. */
void morok_vad_pad_unblock (MorokVadPad *pad);
/* Leaves the rounds and drops the stream (the pads are inactive): the next
 * caps start afresh. */
void morok_vad_pad_stop (MorokVadPad *pad);

G_END_DECLS
