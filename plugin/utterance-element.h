/* SPDX-License-Identifier: MIT */
/* The base of the elements that run GigaAM once per utterance
 * (morokencoder, moroktranscriber): 16 kHz mono F32LE or S16LE audio in,
 * utterances gathered by utterance-gate.h (cut at a GAP, DISCONT, EOS or
 * max-duration, in batches of max-batch), the GAP events that let
 * downstream preroll, the LATENCY answer, and the properties model,
 * max-duration, max-batch and precision (read at READY→PAUSED). On
 * READY→PAUSED the base acquires the prototype of the subclass's plan () for
 * the model and the bounds (loaded, checked and prepared by the first
 * element of the process that asks for it; utterance-prototype.h) and
 * calls open (); per batch it calls run (), which pushes each utterance's
 * output with morok_utterance_element_push ().
 *
 *   static void
 *   my_class_init (MyElementClass *klass)
 *   {
 *     MorokUtteranceElementClass *uclass = MOROK_UTTERANCE_ELEMENT_CLASS (klass);
 *     uclass->plan = my_plan;         // which plan of the model (shared by all its users)
     uclass->open = my_open;         // this element's contexts of the prepared plans
 *     uclass->release = my_release;
 *     uclass->run = my_run;           // executes, pushes one output per utterance
 *     uclass->src_caps = "text/x-raw, format = (string) utf8";
 *     uclass->debug_category = my_debug;
 *     gst_element_class_add_static_pad_template (GST_ELEMENT_CLASS (klass), &src_template);
 *   }
 */
#pragma once

#include <gst/gst.h>

#include "jit/morok-jit.h"
#include "models/gigaam.h"
#include "utterance-gate.h"
#include "utterance-prototype.h"

G_BEGIN_DECLS

#define MOROK_UTTERANCE_RATE 16000
#define MOROK_UTTERANCE_MAX_BATCH_LIMIT 64

#define MOROK_TYPE_UTTERANCE_ELEMENT (morok_utterance_element_get_type ())
G_DECLARE_DERIVABLE_TYPE (MorokUtteranceElement, morok_utterance_element, MOROK,
                          UTTERANCE_ELEMENT, GstElement)

struct _MorokUtteranceElementClass
{
  GstElementClass parent_class;

  /* The plan the subclass runs, asked once on READY→PAUSED (the subclass
   * reads its properties for it). */
  MorokUtterancePlan (*plan) (MorokUtteranceElement *self);
  /* Opens the subclass's contexts of @proto's plans (shared with other
   * elements; utterance-prototype.h), whose model's limits are the bounds
   * (morok_gigaam_max_batch () utterances of morok_gigaam_max_samples ()).
   * FALSE with @error, which the base posts naming the file. */
  gboolean (*open) (MorokUtteranceElement *self, const MorokUtterancePrototype *proto,
                    GError **error);
  /* Frees what open made (before the prototype's release); also called
   * when it failed. */
  void (*release) (MorokUtteranceElement *self);
  /* Runs @count utterances: waves[i] holds n[i] samples (short ones padded
   * with silence to the model's minimum; utts[i].n is the audio's own count)
   * and pushes their output in order with morok_utterance_element_push ().
   * An error is posted by the subclass. */
  GstFlowReturn (*run) (MorokUtteranceElement *self, const MorokUtterance *utts,
                        const float *const *waves, const gint64 *n, guint count);
  /* What the subclass holds back beyond the utterances (NULL: nothing),
   * called with the object lock. */
  GstClockTime (*extra_latency) (MorokUtteranceElement *self);
  /* The caps pushed on the src pad (whose template the subclass adds). */
  const char *src_caps;
  /* The subclass's debug category: property warnings and the prepare summary. */
  GstDebugCategory *debug_category;
};

/* Pushes @buf (transfer full), output of an utterance of the batch, after a
 * GAP for any time before it not yet told. */
GstFlowReturn morok_utterance_element_push (MorokUtteranceElement *self, GstBuffer *buf);
/* Tells downstream with a GAP that nothing comes before @until (an
 * utterance's end, once its output is out). */
void morok_utterance_element_tell (MorokUtteranceElement *self, GstClockTime until);
/* (transfer none) */
GstPad *morok_utterance_element_src_pad (MorokUtteranceElement *self);

G_END_DECLS
