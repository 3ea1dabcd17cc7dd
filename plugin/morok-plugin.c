/* SPDX-License-Identifier: MIT */
/* The morok plugin: neural speech models compiled by Morok. */
#define PACKAGE "morok"
#include "morokencoder.h"
#include "moroktranscriber.h"
#include "morokvad.h"

static gboolean
plugin_init (GstPlugin *plugin)
{
  gboolean ok = GST_ELEMENT_REGISTER (morokvad, plugin);
  ok = GST_ELEMENT_REGISTER (morokencoder, plugin) && ok;
  ok = GST_ELEMENT_REGISTER (moroktranscriber, plugin) && ok;
  return ok;
}

GST_PLUGIN_DEFINE (GST_VERSION_MAJOR, GST_VERSION_MINOR, morok,
                   "Neural speech models compiled once, replayed per buffer", plugin_init, "0.1.0",
                   "MIT", "morok", "Unknown package origin")
