/* SPDX-License-Identifier: MIT */
/* Morok safetensors reader: the weights of a model in one memory-mapped file.
 *
 * Layout: u64 little-endian header length N, N bytes of JSON mapping each
 * tensor name to {"dtype", "shape", "data_offsets": [begin, end]} plus an
 * optional "__metadata__" map of string to string, then the data buffer.
 * morok_safetensors_open () maps the file read-only and checks the whole
 * header before it returns: every dtype known, every shape's byte size equal
 * to its offsets' span, every span inside the file, no two spans overlapping
 * (gaps are allowed; a name given twice keeps its last entry, as json-glib
 * parses objects). Tensor data is then read in place, without copies.
 *
 *   g_autoptr (GError) error = NULL;
 *   g_autoptr (MorokSafetensors) st = morok_safetensors_open (path, &error);
 *   if (!st)
 *     return FALSE;  // e.g. "m.safetensors: tensor 'w': data_offsets [0, 64] past end ..."
 *   const MorokSafetensor *w = morok_safetensors_get (st, "head.decoder_layers.0.weight", &error);
 *   g_autofree float *wf = w ? morok_safetensor_dup_f32 (w, &error) : NULL;
 *   if (!wf)
 *     return FALSE;
 *   const char *config = morok_safetensors_metadata (st, "morok.config");  // JSON or NULL
 *   for (guint i = 0; i < morok_safetensors_n_tensors (st); i++)
 *     g_print ("%s\n", morok_safetensors_nth (st, i)->name);   // in file order
 */
#pragma once

#include <glib.h>

#include "morok-io.h"

G_BEGIN_DECLS

/* The element types of the format that Morok reads. */
typedef enum
{
  MOROK_SAFETENSOR_DTYPE_F64,
  MOROK_SAFETENSOR_DTYPE_F32,
  MOROK_SAFETENSOR_DTYPE_F16,
  MOROK_SAFETENSOR_DTYPE_BF16,
  MOROK_SAFETENSOR_DTYPE_I64,
  MOROK_SAFETENSOR_DTYPE_I32,
  MOROK_SAFETENSOR_DTYPE_I16,
  MOROK_SAFETENSOR_DTYPE_I8,
  MOROK_SAFETENSOR_DTYPE_U8,
  MOROK_SAFETENSOR_DTYPE_BOOL,
} MorokSafetensorDtype;

/* Most dimensions a tensor may have; files with more are MALFORMED. */
#define MOROK_SAFETENSOR_RANK_MAX 8

/* One tensor of an open file; valid until the file is freed. */
typedef struct
{
  const char *name;
  const char *file; /* basename of the file, for messages */
  MorokSafetensorDtype dtype;
  guint rank;         /* 0 for a scalar */
  const gint64 *dims; /* [rank], outermost first */
  gint64 n_elements;  /* product of dims, 1 for a scalar */
  gconstpointer data; /* n_bytes, little-endian, read-only; aligned only as the file is */
  gsize n_bytes;      /* n_elements * element size */
  gsize offset;       /* of data from the start of the file, bytes */
} MorokSafetensor;

typedef struct _MorokSafetensors MorokSafetensors;

/* ---- dtypes ---- */

/* "F32", "BF16", ... as the format spells them. */
const char *morok_safetensor_dtype_name (MorokSafetensorDtype dtype);
/* Bytes per element. */
gsize morok_safetensor_dtype_size (MorokSafetensorDtype dtype);
/* TRUE for F64, F32, F16, BF16: the types the _f32 helpers convert. */
gboolean morok_safetensor_dtype_is_float (MorokSafetensorDtype dtype);

/* ---- files ---- */

/* Maps and checks `path`. (transfer full); NULL with MOROK_IO_ERROR_OPEN,
 * _TRUNCATED, _MALFORMED or _UNSUPPORTED naming the file and the tensor. */
MorokSafetensors *morok_safetensors_open (const char *path, GError **error);
/* Unmaps the file; every tensor and string it handed out dies with it. NULL is a no-op. */
void morok_safetensors_free (MorokSafetensors *st);

/* The path the file was opened with. (transfer none) */
const char *morok_safetensors_path (const MorokSafetensors *st);
/* Number of tensors. */
guint morok_safetensors_n_tensors (const MorokSafetensors *st);
/* Tensor i < n_tensors, in the order of their data in the file. (transfer none) */
const MorokSafetensor *morok_safetensors_nth (const MorokSafetensors *st, guint i);
/* The tensor called `name`, or NULL. (transfer none) */
const MorokSafetensor *morok_safetensors_find (const MorokSafetensors *st, const char *name);
/* As _find, but a missing tensor is MOROK_IO_ERROR_NOT_FOUND. (transfer none) */
const MorokSafetensor *morok_safetensors_get (const MorokSafetensors *st, const char *name,
                                              GError **error);
/* The tensor `name` of exactly `rank` dims equal to `dims` (-1 matches any size);
 * NULL with NOT_FOUND, or MALFORMED: "f: tensor 'w' is [64,1,3], expected [128,1,3]". */
const MorokSafetensor *morok_safetensors_get_shaped (const MorokSafetensors *st, const char *name,
                                                     guint rank, const gint64 *dims,
                                                     GError **error);

/* TRUE when @tensor has exactly @rank dims equal to @dims (-1 matches any
 * size); else MALFORMED: "f: tensor 'w' is [64,1,3], expected [128,1,3]". */
gboolean morok_safetensor_check_shape (const MorokSafetensor *tensor, guint rank,
                                       const gint64 *dims, GError **error);

/* __metadata__[key], or NULL. (transfer none) */
const char *morok_safetensors_metadata (const MorokSafetensors *st, const char *key);
/* All metadata keys, sorted, NULL-terminated. (transfer container): g_free () the array. */
const char **morok_safetensors_metadata_keys (const MorokSafetensors *st);

/* ---- data as f32 ---- */

/* Copies the tensor's n_elements values, converted to float, into `dest`
 * (n_dest floats). FALSE with MOROK_IO_ERROR_UNSUPPORTED for a non-float dtype. */
gboolean morok_safetensor_read_f32 (const MorokSafetensor *tensor, float *dest, gsize n_dest,
                                    GError **error);
/* The values as a new float array. (transfer full): g_free (); NULL on error as above. */
float *morok_safetensor_dup_f32 (const MorokSafetensor *tensor, GError **error);
/* The values in place, for a file that stores them as the host reads floats
 * (F32 on a little-endian host, 4-byte aligned); NULL otherwise: read them
 * with the helpers above. (transfer none) valid until the file is freed; a
 * file truncated after it was opened ends the reader with SIGBUS there. */
const float *morok_safetensor_f32_in_place (const MorokSafetensor *tensor);
/* For a reader done with @tensor for now (a loader that copied it out, a
 * packer that made its own layout of it): the whole pages of its bytes
 * leave this process's resident memory (the file stays mapped; they are
 * read again from it when touched), so that a large file and what is made
 * of it are not resident at once. Pages it shares with its neighbours stay. */
void morok_safetensor_drop (const MorokSafetensor *tensor);
/* Every page of the file leaves this process's resident memory, as above:
 * for a reader done with all of it for now (a read maps the pages around
 * it too, the kernel's fault-around, so single drops leave some behind). */
void morok_safetensors_drop (const MorokSafetensors *st);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (MorokSafetensors, morok_safetensors_free)

G_END_DECLS
