/* SPDX-License-Identifier: MIT */
/* The tiny GigaAM fixtures as model hub folders: build/tests/hub/<kind>,
 * written at build time by scripts/gigaam/make-hub-fixtures.py from the
 * converted fixtures. */
#pragma once

#include <glib.h>

typedef struct
{
  const char *kind;       /* upstream's model name, the folder's name */
  const char *file;       /* the converted fixture it was made from (tests/fixtures) */
  gboolean made_frontend; /* no window and filterbank: the loader makes them from the config */
} HubFixture;

#define HUB_N_FIXTURES 6
extern const HubFixture hub_fixtures[HUB_N_FIXTURES];

/* build/tests/hub/@kind; G_TEST_BUILDDIR (set by meson) is build/tests. (transfer full) */
char *hub_fixture_path (const char *kind);
