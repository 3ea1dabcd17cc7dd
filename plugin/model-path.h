/* SPDX-License-Identifier: MIT */
/* Where the elements find their default model files. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The first existing @file_name in: $MOROK_MODEL_DIR, the installed model
 * folder, the source tree's models/ (for uninstalled use). (transfer full)
 * or NULL with an error that lists the folders searched. */
char *morok_model_path_find (const char *file_name, GError **error);

G_END_DECLS
