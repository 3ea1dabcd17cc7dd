/* SPDX-License-Identifier: MIT */
/* set_property's check for the properties marked GST_PARAM_MUTABLE_READY
 * (read when the element prepares): past READY they are ignored, with a
 * warning in the element's debug category @cat, instead of silently not
 * taking effect. */
#pragma once

#include <gst/gst.h>

static inline gboolean
morok_property_settable (GstElement *element, GstDebugCategory *cat, const GParamSpec *pspec)
{
  if (!(pspec->flags & GST_PARAM_MUTABLE_READY) || GST_STATE (element) <= GST_STATE_READY)
    return TRUE;
  GST_CAT_WARNING_OBJECT (cat, element, "property '%s' can only be set in NULL or READY; ignored",
                          pspec->name);
  return FALSE;
}
