/* SPDX-License-Identifier: MIT */
#include "gigaam-fixture.h"

#include <string.h>

#include "fixtures.h"

void
gigaam_fixture_load (GigaAmFixture *f, const char *version)
{
  GError *e = NULL;
  memset (f, 0, sizeof *f);
  f->version = version;
  g_autofree char *name = g_strdup_printf ("gigaam-%s-tiny.safetensors", version);
  g_autofree char *ref_name = g_strdup_printf ("gigaam-%s-tiny-ref.safetensors", version);
  g_autofree char *path = fixture_path (name);
  g_autofree char *ref_path = fixture_path (ref_name);
  g_autofree char *audio_path = fixture_path ("gigaam-audio.safetensors");
  f->model = morok_gigaam_load (path, &e);
  g_assert_no_error (e);
  f->ref = morok_safetensors_open (ref_path, &e);
  g_assert_no_error (e);
  f->audio_file = morok_safetensors_open (audio_path, &e);
  g_assert_no_error (e);
  for (int i = 0; i < GIGAAM_FIXTURE_UTTERANCES; i++)
    {
      g_autofree char *an = g_strdup_printf ("audio.%d", i);
      const MorokSafetensor *t = morok_safetensors_get (f->audio_file, an, &e);
      g_assert_no_error (e);
      f->audio_copy[i] = morok_safetensor_dup_f32 (t, &e);
      g_assert_no_error (e);
      f->audio[i] = f->audio_copy[i];
      f->n[i] = t->n_elements;
    }
  morok_gigaam_set_limits (f->model, GIGAAM_FIXTURE_UTTERANCES,
                           f->n[GIGAAM_FIXTURE_UTTERANCES - 1]);
}

void
gigaam_fixture_clear (GigaAmFixture *f)
{
  for (int i = 0; i < GIGAAM_FIXTURE_UTTERANCES; i++)
    g_free (f->audio_copy[i]);
  morok_safetensors_free (f->audio_file);
  morok_safetensors_free (f->ref);
  morok_gigaam_unref (f->model);
}
