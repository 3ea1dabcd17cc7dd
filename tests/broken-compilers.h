/* SPDX-License-Identifier: MIT */
/* Compilers that fail the way real set-ups do, for the tests that prove a
 * failing MOROK_CC is an error naming it and never a signal in the host:
 * one that exits 0 without reading its input or writing an object
 * (/bin/true), one that exits 1 at once (/bin/false), and a clang wrapper
 * that answers `--version` but rejects one of Morok's flags before reading
 * the source (written into @dir). Each entry is NULL-terminated. */
#pragma once

#include <glib.h>

typedef struct
{
  const char *path;   /* what MOROK_CC is set to */
  const char *expect; /* a part of the error message (what it printed) */
} BrokenCompiler;

/* The three compilers; the wrapper's path lives in @dir. (transfer full)
 * Free with broken_compilers_free (). */
BrokenCompiler *broken_compilers_new (const char *dir);
void broken_compilers_free (BrokenCompiler *compilers);
