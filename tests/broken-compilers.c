/* SPDX-License-Identifier: MIT */
#include "broken-compilers.h"

#include <glib/gstdio.h>

/* Rejects -mprefer-vector-width like a compiler too old for it, after
 * answering `--version` as clang does, and never reads stdin. */
static const char wrapper_script[]
    = "#!/bin/sh\n"
      "for a; do\n"
      "  case \"$a\" in\n"
      "    --version) exec clang --version ;;\n"
      "    -mprefer-vector-width=*) echo \"wrapper: error: unknown argument '$a'\" >&2; exit 1 ;;\n"
      "  esac\n"
      "done\n"
      "exec clang \"$@\"\n";

BrokenCompiler *
broken_compilers_new (const char *dir)
{
  char *wrapper = g_build_filename (dir, "cc-rejects-a-flag", NULL);
  BrokenCompiler *c = g_new0 (BrokenCompiler, 4);

  g_assert_true (g_file_set_contents (wrapper, wrapper_script, -1, NULL));
  g_assert_cmpint (g_chmod (wrapper, 0755), ==, 0);
  c[0] = (BrokenCompiler){ "/bin/true", "wrote no object" };
  c[1] = (BrokenCompiler){ "/bin/false", "/bin/false" };
  c[2] = (BrokenCompiler){ wrapper, "unknown argument '-mprefer-vector-width=512'" };
  return c;
}

void
broken_compilers_free (BrokenCompiler *compilers)
{
  if (compilers == NULL)
    return;
  g_free ((char *) compilers[2].path);
  g_free (compilers);
}
