/* SPDX-License-Identifier: MIT */
/* Caps a sink pad's template refuses fail negotiation before the element's
 * event function sees them: a probe on the pad lets the element first post
 * an error that says what it takes.
 *
 *   static void
 *   refused (GstElement *element, GstPad *pad, GstCaps *caps)
 *   {
 *     GST_ELEMENT_ERROR (element, STREAM, FORMAT, ("takes ... not ..."), ("put ... before"));
 *   }
 *   morok_caps_refusal_watch (sinkpad, refused);
 */
#pragma once

#include <gst/gst.h>

G_BEGIN_DECLS

typedef void (*MorokCapsRefused) (GstElement *element, GstPad *pad, GstCaps *caps);

/* Calls @refused with @sinkpad's element when a CAPS event whose caps are
 * not within the pad's template reaches it. */
void morok_caps_refusal_watch (GstPad *sinkpad, MorokCapsRefused refused);

G_END_DECLS
