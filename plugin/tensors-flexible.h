/* SPDX-License-Identifier: MIT */
/* The per-tensor header of NNStreamer's other/tensors,format=flexible: 128
 * bytes of little-endian u32 fields in front of each tensor's data. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define MOROK_TENSORS_HEADER_SIZE 128
#define MOROK_TENSORS_MAGIC 0xfeedccedu
#define MOROK_TENSORS_VERSION (0xDE000000u | (1u << 12) | 0u) /* 1.0 */
#define MOROK_TENSORS_TYPE_FLOAT32 7u
#define MOROK_TENSORS_FORMAT_FLEXIBLE 1u
#define MOROK_TENSORS_MEDIA_TENSOR 4u
#define MOROK_TENSORS_RANK_LIMIT 16

/* Writes the header of an f32 tensor whose dims are @dims, outermost first
 * (the header lists them innermost first), into @out (128 bytes). */
void morok_tensors_header_write_f32 (guint8 *out, const guint32 *dims, guint rank);

G_END_DECLS
