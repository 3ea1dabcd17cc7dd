/* SPDX-License-Identifier: MIT */
/* Throw-away folders for tests that write files (cache folders, scripts). */
#pragma once

#include <glib.h>

/* A fresh, empty folder (mode 0700) under the system's temporary folder.
 * (transfer full) */
char *temp_dir_new (void);
/* Deletes @path and everything below it; symlinks are removed, not followed. */
void temp_dir_remove (const char *path);
