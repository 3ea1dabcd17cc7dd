/* SPDX-License-Identifier: MIT */
/* The GigaAM tiny fixtures (tests/fixtures/gigaam-*, docs/gigaam-model.md,
 * "Test fixtures") as the GigaAM tests load them: a tiny model, its
 * PyTorch reference outputs and the three utterances. */
#pragma once

#include <glib.h>

#include "io/safetensors.h"
#include "models/gigaam.h"

#define GIGAAM_FIXTURE_UTTERANCES 3

typedef struct
{
  const char *version; /* "v3" or "v2" */
  MorokGigaAm *model;  /* limits: batches of all three, the longest's samples */
  MorokSafetensors *ref;
  MorokSafetensors *audio_file;
  const float *audio[GIGAAM_FIXTURE_UTTERANCES]; /* f32 samples, shortest first */
  gint64 n[GIGAAM_FIXTURE_UTTERANCES];
  float *audio_copy[GIGAAM_FIXTURE_UTTERANCES];
} GigaAmFixture;

/* Loads gigaam-@version-tiny.safetensors, its -ref file and the audio;
 * asserts on failure (the fixtures are committed). */
void gigaam_fixture_load (GigaAmFixture *f, const char *version);
void gigaam_fixture_clear (GigaAmFixture *f);
