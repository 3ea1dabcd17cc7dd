/* SPDX-License-Identifier: MIT */
/* What morokencoder and moroktranscriber prepare for a GigaAM model, shared
 * by every such element in the process that runs the same file's contents
 * (not its path) for the same plan, bounds and options: the registry's value
 * (jit/morok-jit-registry.h). The first element loads the model and
 * prepares; the others each open contexts of the prepared plans
 * (morok_jit_new_context, morok_rnnt_decoder_new_context) and hold only
 * those. The model's weights are freed once packed
 * (morok_gigaam_set_release_packed): a prototype's model prepares nothing
 * more.
 *
 *   MorokJitShared *shared = morok_utterance_prototype_acquire (
 *       path, MOROK_UTTERANCE_PLAN_ASR, 4, 20.0, config, NULL, &error);
 *   const MorokUtterancePrototype *proto = morok_jit_shared_value (shared);
 *   g_autoptr (GigaAmCtcJit) mine = gigaam_ctc_jit_new_context ((GigaAmCtcJit *) proto->plan,
 * &error);
 *   ...
 *   morok_jit_registry_release (shared);   // after freeing the contexts
 */
#pragma once

#include "jit/morok-jit-registry.h"
#include "models/gigaam.h"
#include "models/rnnt-decode.h"

G_BEGIN_DECLS

typedef enum
{
  MOROK_UTTERANCE_PLAN_ENCODER,   /* GigaAmEncoderJit: encoder output */
  MOROK_UTTERANCE_PLAN_LOG_PROBS, /* GigaAmCtcJit: CTC log-probabilities (a CTC model) */
  MOROK_UTTERANCE_PLAN_ASR, /* the model's head: GigaAmCtcJit, or GigaAmRnntJit and a decoder */
} MorokUtterancePlan;

typedef struct
{
  MorokGigaAm *model;        /* its limits are the bounds */
  MorokJit *plan;            /* the plan above, prepared */
  MorokRnntDecoder *decoder; /* ASR of an RNN-T model: max-batch rows; else NULL */
} MorokUtterancePrototype;

/* One more use of the prototype for the model at @path, @plan, @max_batch
 * utterances of up to @max_duration s (at least the model's minimum) and
 * @config, made if there is none (@out_made, may be NULL: whether this call
 * made it). (transfer full) release it with morok_jit_registry_release;
 * NULL with the load's or prepare's error. */
MorokJitShared *morok_utterance_prototype_acquire (const char *path, MorokUtterancePlan plan,
                                                   guint max_batch, gdouble max_duration,
                                                   const MorokPrepareConfig *config,
                                                   gboolean *out_made, GError **error);

G_END_DECLS
