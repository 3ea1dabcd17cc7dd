/* SPDX-License-Identifier: MIT */
/* morok-io.h: reading model weights from files (ONNX initializers and
 * Constant nodes, safetensors).
 *
 * Every reader in core/io reports what a user can cause (a missing,
 * truncated or corrupt file, a tensor that is absent or of the wrong shape)
 * as a GError in the MOROK_IO_ERROR domain, whose message names the file and
 * what is wrong:
 *
 *   g_autoptr (GError) error = NULL;
 *   g_autoptr (MorokOnnxModel) model = morok_onnx_model_load ("vad.onnx", &error);
 *   if (model == NULL)
 *     {
 *       g_printerr ("%s\n", error->message);  // "vad.onnx: truncated varint at offset 12 ..."
 *       if (g_error_matches (error, MOROK_IO_ERROR, MOROK_IO_ERROR_OPEN))
 *         g_printerr ("fetch the models first\n");
 *     }
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define MOROK_IO_ERROR (morok_io_error_quark ())
GQuark morok_io_error_quark (void);

typedef enum
{
  /* Used when the file cannot be opened, mapped or read (missing,
   * unreadable, a directory). */
  MOROK_IO_ERROR_OPEN,
  /* Used when the data ends inside a field: a cut-off download, an empty
   * file. */
  MOROK_IO_ERROR_TRUNCATED,
  /* Used when the bytes are there but are not a valid encoding, or
   * contradict themselves (a length past its enclosing message, dims that do
   * not match the data size, a tensor of the wrong shape). */
  MOROK_IO_ERROR_MALFORMED,
  /* Used when the file is valid but uses a feature Morok does not read
   * (external tensor data, a string tensor asked for as numbers). */
  MOROK_IO_ERROR_UNSUPPORTED,
  /* Used when a named tensor, graph or attribute is absent. */
  MOROK_IO_ERROR_NOT_FOUND,
} MorokIoError;

/* Returns TRUE when the @n values of @data (tensor @tensor of @file) are all
 * finite; otherwise fails with MOROK_IO_ERROR_MALFORMED naming the file, the
 * tensor and the first bad index ("vad.onnx: tensor 'conv1.weight' holds a
 * non-finite value at 17"): a weight that is Inf or NaN makes every output
 * NaN or saturated, which no later check would tell from a real result. */
gboolean morok_io_check_finite (const char *file, const char *tensor, const float *data, gint64 n,
                                GError **error);

/* Maps @path read-only: (transfer full) g_mapped_file_unref () it; NULL with
 * MOROK_IO_ERROR_OPEN saying in words what is wrong with the path ("m.onnx:
 * no such file", "models/: a folder, not a file", "m.onnx: no permission to
 * read it"), where GLib would say "mmap() failed: No such device". */
GMappedFile *morok_io_map_file (const char *path, GError **error);
/* What is wrong with @path, which an open () or a read failed on with @errno_value,
 * as "<path>: <reason in words>". (transfer full) */
char *morok_io_describe_path (const char *path, int errno_value);

G_END_DECLS
