/* SPDX-License-Identifier: MIT */
/* fuzz-input.h: what the fuzz targets share.
 *
 * Each fuzz-<target>.c defines LLVMFuzzerTestOneInput (), called with one
 * input by libFuzzer (the fuzz-<target> binaries, scripts/fuzz.sh) or by
 * fuzz-replay.c (the fuzz-replay-<target> tests of meson test). A target
 * returns 0 for every input, good or bad: only a crash, a sanitizer report
 * or a GLib critical or warning (made fatal here) is a finding.
 *
 *   int
 *   LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
 *   {
 *     fuzz_input_setup ();
 *     g_autoptr (FuzzFile) file = fuzz_file_new (data, size);
 *     g_autoptr (MorokSafetensors) st = morok_safetensors_open (file->path, NULL);
 *     ...
 *     return 0;
 *   }
 */
#pragma once

#include <glib.h>
#include <stddef.h>
#include <stdint.h>

G_BEGIN_DECLS

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

/* Makes GLib criticals and warnings abort (a library must answer bad input
 * with a GError, never a g_return_if_fail). Cheap after the first call. */
void fuzz_input_setup (void);

/* The input as a file, for loaders that take a path: an anonymous memory
 * file (memfd), named by its /proc/self/fd path. */
typedef struct
{
  int fd;
  char *path;
} FuzzFile;

/* (transfer full) Never NULL: aborts when the memory file cannot be made
 * (a broken machine, not a finding). */
FuzzFile *fuzz_file_new (const uint8_t *data, size_t size);
/* Closes and frees the file. NULL is a no-op. */
void fuzz_file_free (FuzzFile *file);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (FuzzFile, fuzz_file_free)

G_END_DECLS
