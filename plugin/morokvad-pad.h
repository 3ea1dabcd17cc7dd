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

/* request_new_pad: adds sink_%u (@name's index, or the lowest free one;
 * from @templ) and its src_%u to @element, unless it has @max already or
 * @name is taken. (transfer none) the sink pad, or NULL. */
GstPad *morok_vad_pad_request (GstElement *element, GstPadTemplate *templ, const char *name,
                               guint max);
/* release_pad: stops the stream of @pad (a chunk of it waiting in a round
 * returns), then removes it and its src pad. */
void morok_vad_pad_release (GstElement *element, GstPad *pad);
/* Calls @fn on each request pad of @element. */
void morok_vad_pad_foreach (GstElement *element, void (*fn) (MorokVadPad *pad));
/* FLUSH_START for the rounds: a chunk of @pad waiting in a round returns
 * at once (before the pads deactivate). Any thread. */
void morok_vad_pad_unblock (MorokVadPad *pad);
/* Leaves the rounds and drops the stream (the pads are inactive): the next
 * caps start afresh. */
void morok_vad_pad_stop (MorokVadPad *pad);

G_END_DECLS
