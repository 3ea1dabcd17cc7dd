/* SPDX-License-Identifier: MIT */
/* The shared prototypes of the utterance elements (utterance-prototype.h). */
#include "utterance-prototype.h"
#include "utterance-element.h"
#include "models/gigaam-encoder-jit.h"

static void
prototype_free (MorokUtterancePrototype *p)
{
  g_clear_pointer (&p->decoder, morok_rnnt_decoder_free);
  g_clear_pointer (&p->plan, morok_jit_free);
  g_clear_pointer (&p->model, morok_gigaam_unref);
  g_free (p);
}
G_DEFINE_AUTOPTR_CLEANUP_FUNC (MorokUtterancePrototype, prototype_free)

typedef struct
{
  const char *path;
  MorokUtterancePlan plan;
  guint max_batch;
  gdouble max_duration;
  const MorokPrepareConfig *config;
  gboolean made; /* this acquire made the prototype */
} MakeData;

/* @plan's wrapper for @model (a reference taken), prepared; for ASR the
 * model's head says which. */
static MorokJit *
prepare_plan (MorokGigaAm *model, MorokUtterancePlan plan, const MorokPrepareConfig *config,
              GError **error)
{
  gboolean rnnt = plan == MOROK_UTTERANCE_PLAN_ASR
                  && morok_gigaam_config (model)->head == MOROK_GIGAAM_HEAD_RNNT;
  if (plan == MOROK_UTTERANCE_PLAN_ENCODER)
    {
      g_autoptr (GigaAmEncoderJit) jit = gigaam_encoder_jit_new (morok_gigaam_ref (model));
      return gigaam_encoder_jit_prepare_at_bounds (jit, config, error)
                 ? gigaam_encoder_jit_jit (g_steal_pointer (&jit))
                 : NULL;
    }
  if (rnnt)
    {
      g_autoptr (GigaAmRnntJit) jit = gigaam_rnnt_jit_new (morok_gigaam_ref (model));
      return gigaam_rnnt_jit_prepare_at_bounds (jit, config, error)
                 ? gigaam_rnnt_jit_jit (g_steal_pointer (&jit))
                 : NULL;
    }
  g_autoptr (GigaAmCtcJit) jit = gigaam_ctc_jit_new (morok_gigaam_ref (model));
  return gigaam_ctc_jit_prepare_at_bounds (jit, config, error)
             ? gigaam_ctc_jit_jit (g_steal_pointer (&jit))
             : NULL;
}

static gpointer
make_prototype (gpointer data, GError **error)
{
  MakeData *d = data;
  g_autoptr (MorokUtterancePrototype) p = g_new0 (MorokUtterancePrototype, 1);
  if (!(p->model = morok_gigaam_load (d->path, error))
      || !morok_gigaam_check_sample_rate (p->model, MOROK_UTTERANCE_RATE, error))
    return NULL;
  gint64 max_samples = MAX ((gint64) (d->max_duration * MOROK_UTTERANCE_RATE),
                            morok_gigaam_min_samples (p->model));
  morok_gigaam_set_limits (p->model, d->max_batch, max_samples);
  /* the plans below are all this model makes: hold each weight once */
  morok_gigaam_set_release_packed (p->model, TRUE);
  if (!(p->plan = prepare_plan (p->model, d->plan, d->config, error)))
    return NULL;
  if (d->plan == MOROK_UTTERANCE_PLAN_ASR
      && morok_gigaam_config (p->model)->head == MOROK_GIGAAM_HEAD_RNNT
      && !(p->decoder = morok_rnnt_decoder_new (p->model, d->max_batch, d->config, error)))
    return NULL;
  d->made = TRUE;
  return g_steal_pointer (&p);
}

MorokJitShared *
morok_utterance_prototype_acquire (const char *path, MorokUtterancePlan plan, guint max_batch,
                                   gdouble max_duration, const MorokPrepareConfig *config,
                                   gboolean *out_made, GError **error)
{
  static const char *const plan_name[] = { "encoder", "log-probs", "asr" };
  g_autofree char *file_key = morok_jit_registry_file_key (path, error);
  if (!file_key)
    return NULL;
  g_autofree char *config_key = morok_prepare_config_key (config);
  g_autofree char *key
      = g_strdup_printf ("gigaam %s %s batch=%u duration=%.17g %s", plan_name[plan], file_key,
                         max_batch, max_duration, config_key);
  MakeData d = { path, plan, max_batch, max_duration, config, FALSE };
  MorokJitShared *shared = morok_jit_registry_acquire_value (
      key, make_prototype, (GDestroyNotify) prototype_free, &d, error);
  if (out_made)
    *out_made = d.made;
  return shared;
}
