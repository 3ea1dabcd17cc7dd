/* SPDX-License-Identifier: MIT */
/* Morok io: readers of model weights (safetensors, ONNX initializers, .npy).
 *
 * Every reader reports what a bad file can cause as a GError in the
 * MOROK_IO_ERROR domain; the message names the file and, where there is one,
 * the tensor or field at fault:
 *
 *   g_autoptr (GError) error = NULL;
 *   g_autoptr (MorokSafetensors) st = morok_safetensors_open ("model.safetensors", &error);
 *   if (!st && g_error_matches (error, MOROK_IO_ERROR, MOROK_IO_ERROR_TRUNCATED))
 *     g_printerr ("%s\n", error->message);  // "model.safetensors: ... past end of file"
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define MOROK_IO_ERROR (morok_io_error_quark ())
GQuark morok_io_error_quark (void);

typedef enum
{
  MOROK_IO_ERROR_OPEN,        /* the file cannot be opened or mapped (errno's message) */
  MOROK_IO_ERROR_TRUNCATED,   /* the file ends before a length or offset it states */
  MOROK_IO_ERROR_MALFORMED,   /* the content contradicts the format (bad JSON, overlap, size) */
  MOROK_IO_ERROR_UNSUPPORTED, /* well-formed, but a feature Morok does not read (a dtype) */
  MOROK_IO_ERROR_NOT_FOUND,   /* a tensor or key the caller asked for is not in the file */
} MorokIoError;

G_END_DECLS
