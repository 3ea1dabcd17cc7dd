/* SPDX-License-Identifier: MIT */
/* The base of the elements that run GigaAM once per utterance
 * (morokencoder, moroktranscriber): 16 kHz mono F32LE or S16LE audio in,
 * utterances gathered by utterance-gate.h (cut at a GAP, DISCONT, EOS or
 * max-duration, in batches of max-batch), the GAP events that let
 * downstream preroll, the LATENCY answer, and the properties model,
 * max-duration, max-batch and precision (read at READY→PAUSED). On
 * READY→PAUSED the base acquires the prototype of the plan read_settings () names for
 * the model and the bounds (loaded, checked and prepared by the first
 * element of the process that asks for it; utterance-prototype.h) and
 * calls open (); per batch it calls run (), which pushes each utterance's
 * output with morok_utterance_element_push (). The caps pushed on the src
 * pad are its template's (fixed caps).
 *
 *   static void
 *   my_class_init (MyElementClass *klass)
 *   {
 *     MorokUtteranceElementClass *uclass = MOROK_UTTERANCE_ELEMENT_CLASS (klass);
 *     uclass->read_settings = my_read_settings;  // its properties; the plan they need
 *     uclass->open = my_open;         // this element's contexts of the prepared plans
 *     uclass->release = my_release;
 *     uclass->run = my_run;           // executes, pushes one output per utterance
 *     uclass->debug_category = my_debug;
 *     gst_element_class_add_static_pad_template (GST_ELEMENT_CLASS (klass), &src_template);
 *   }
 */
#pragma once

#include <gst/gst.h>

#include "jit/morok-jit.h"
#include "models/gigaam.h"
#include "live-worker.h"
#include "utterance-gate.h"
#include "utterance-prototype.h"

G_BEGIN_DECLS

#define MOROK_UTTERANCE_RATE 16000
#define MOROK_UTTERANCE_MAX_BATCH_LIMIT 64

#define MOROK_TYPE_UTTERANCE_ELEMENT (morok_utterance_element_get_type ())
G_DECLARE_DERIVABLE_TYPE (MorokUtteranceElement, morok_utterance_element, MOROK, UTTERANCE_ELEMENT,
                          GstElement)

struct _MorokUtteranceElementClass
{
  GstElementClass parent_class;

  /* Reads the subclass's properties for this prepare (once, on
   * READY→PAUSED) and returns the plan they need. */
  MorokUtterancePlan (*read_settings) (MorokUtteranceElement *self);
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
  /* Live mode (NULL: the subclass has none). The first buffer calls
   * live_start () with whether upstream answers the LATENCY query live; it
   * snapshots the subclass's settings and returns the samples between two
   * decodes of a growing utterance, or 0 to decode offline. In live mode
   * live_decode () runs on the element's own thread (live-worker.h) with
   * the samples of the open utterance so far, and once more, @final, when
   * it ended; it pushes with morok_utterance_element_push () and tells
   * downstream with morok_utterance_element_push_gap (). Upstream not live,
   * the streaming thread waits for each decode (the decodes fall at the
   * same samples whatever the machine's speed). The LATENCY query adds
   * live_latency (@upstream_live), unless it is NONE, instead of what
   * offline decoding holds; it is also called, @upstream_live TRUE, at
   * PAUSED→PLAYING when no buffer came in PAUSED and upstream answers
   * live or not at all, before a live source starts, to measure what it
   * needs then. */
  gint64 (*live_start) (MorokUtteranceElement *self, gboolean upstream_live);
  GstFlowReturn (*live_decode) (MorokUtteranceElement *self, const MorokLiveUtterance *utt,
                                gint64 n, gboolean final);
  GstClockTime (*live_latency) (MorokUtteranceElement *self, gboolean upstream_live);
  /* Live mode: @buf is ready to leave now (queued for the push thread). */
  void (*live_ready) (MorokUtteranceElement *self, GstBuffer *buf);
  /* The subclass's debug category: property warnings and the prepare summary. */
  GstDebugCategory *debug_category;
};

/* Pushes @buf (transfer full), output of an utterance of the batch, after a
 * GAP for any time before it not yet told. In live mode the three push
 * functions queue what they push for a thread of its own (live-output.h),
 * and return the flow of the last push done. */
GstFlowReturn morok_utterance_element_push (MorokUtteranceElement *self, GstBuffer *buf);
/* Pushes a GAP: downstream learns that nothing comes before @until (an
 * utterance's end, once its output is out). */
void morok_utterance_element_push_gap (MorokUtteranceElement *self, GstClockTime until);
/* What the next push would return before it queues anything: in live
 * mode FLUSHING from FLUSH_START on, so that a long decode stops early. */
GstFlowReturn morok_utterance_element_flow (MorokUtteranceElement *self);
/* Live mode: the subclass stamps its output @shift later than its audio
 * (its lateness); the GAPs the base sends between utterances follow. */
void morok_utterance_element_set_live_shift (MorokUtteranceElement *self, GstClockTime shift);
/* The running time of buffer time @t (NONE when it has none). */
GstClockTime morok_utterance_element_running_time (MorokUtteranceElement *self, GstClockTime t);
/* The running time now by the element's clock (NONE without one). */
GstClockTime morok_utterance_element_now (MorokUtteranceElement *self);
/* The latency a buffer's running time has before it is late: what the
 * pipeline configured (its LATENCY event), and at least what the element
 * answered; NONE before either. */
GstClockTime morok_utterance_element_deadline_latency (MorokUtteranceElement *self);
/* Pushes @event (transfer full) downstream after the output before it. */
void morok_utterance_element_push_event (MorokUtteranceElement *self, GstEvent *event);

G_END_DECLS
