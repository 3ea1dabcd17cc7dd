/* SPDX-License-Identifier: MIT */
/* Reading the committed fixtures (tests/fixtures/) from any test program. */
#pragma once

#include <glib.h>
#include <json-glib/json-glib.h>

/* tests/fixtures/@name; G_TEST_SRCDIR (set by meson) is tests/. (transfer full) */
char *fixture_path (const char *name);
/* The samples of a 16-bit PCM mono WAV fixture, and its rate. (transfer full) */
gint16 *fixture_read_wav (const char *name, guint *out_rate, gsize *out_n);
/* The samples of utterance @i of gigaam-audio.safetensors ("audio.i", the
 * GigaAM fixtures' input), *out_n of them. (transfer full) */
float *fixture_gigaam_utterance (guint i, gsize *out_n);
/* One float per line; lines starting with '#' are a header. (transfer full) */
GArray *fixture_read_floats (const char *name);

/* An edit of a GigaAM file's header: the header object and the parsed
 * morok.config (written back after the edit). */
typedef void (*FixtureGigaAmEdit) (JsonObject *header, JsonObject *config);
/* Writes to @path a copy of gigaam-v3-tiny.safetensors with its header
 * edited by @edit, or cut to @truncate bytes when that is not 0. */
void fixture_write_gigaam (const char *path, FixtureGigaAmEdit edit, gsize truncate);
/* The same from the GigaAM fixture file @fixture. */
void fixture_write_edited (const char *fixture, const char *path, FixtureGigaAmEdit edit,
                           gsize truncate);
/* Writes to @path a copy of the GigaAM fixture file @fixture with every
 * float tensor stored as F32 (the same values: the fixtures store f16 and
 * bf16), in the same order, the data starting 8-byte aligned. */
void fixture_write_f32 (const char *fixture, const char *path);

/* Pages of this process's mappings of the file @path that are resident in
 * it (/proc/self/pagemap), of the pages wholly inside bytes [offset, offset
 * + n) of the file; -1 when /proc cannot tell (not Linux). */
gint64 fixture_mapped_pages_resident (const char *path, gsize offset, gsize n);

/* The tolerance of precision int8 in the GigaAM tests (docs/gigaam-model.md,
 * "Precision int8"): 2e-1 where its products run on VNNI, 4e-1 on AVX2
 * without VNNI, whose activations have 7 bits (absolute, or relative above
 * 1; also the near-tie margin of the tokens). */
double fixture_int8_tol (void);
