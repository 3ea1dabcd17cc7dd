/* SPDX-License-Identifier: MIT */
#include "hub-fixtures.h"

/* the layouts are make-hub-fixtures.py's KINDS */
const HubFixture hub_fixtures[HUB_N_FIXTURES] = {
  { "v3_ctc", "gigaam-v3-tiny.safetensors", FALSE },
  { "v2_ctc", "gigaam-v2-tiny.safetensors", FALSE },
  { "v3_e2e_ctc", "gigaam-v3-e2e-ctc-tiny.safetensors", TRUE },
  { "v3_e2e_rnnt", "gigaam-v3-e2e-rnnt-tiny.safetensors", FALSE },
  { "v2_rnnt", "gigaam-v2-rnnt-tiny.safetensors", FALSE },
  { "v3_rnnt", "gigaam-v3-rnnt-tiny.safetensors", FALSE },
};

char *
hub_fixture_path (const char *kind)
{
  const char *dir = g_getenv ("G_TEST_BUILDDIR");
  g_assert_nonnull (dir);
  return g_build_filename (dir, "hub", kind, NULL);
}
