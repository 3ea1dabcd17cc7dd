/* SPDX-License-Identifier: MIT */
/* onnx-private.h (private to core/io): the model structure and the helpers
 * that onnx-parse.c, onnx-tensor.c and onnx-reader.c share. Calls point one
 * way: onnx-parse.c → onnx-tensor.c → onnx-fields.c, each of them reading
 * the views through onnx-reader.c, which calls none of them.
 */
#pragma once

#include "io/onnx-reader.h"
#include "io/protobuf-wire.h"

G_BEGIN_DECLS

typedef struct
{
  const char *domain;
  gint64 version;
} OpsetImport;

struct _MorokOnnxModel
{
  char *name;          /* base name, for messages */
  GMappedFile *mapped; /* the file, or NULL when loaded from data */
  guint8 *owned;       /* a copy of the data given to _load_from_data () */
  const guint8 *data;
  gsize size;

  GPtrArray *blocks;     /* every allocation below, freed with the model */
  GStringChunk *strings; /* every string below */

  gint64 ir_version;
  const char *producer_name;
  const char *producer_version;
  guint n_opsets;
  OpsetImport *const *opsets;
  MorokOnnxGraph *graph;

  /* Depth-first flat views, built after parsing. */
  guint n_graphs;
  const MorokOnnxGraph *const *graphs;
  guint n_nodes;
  const MorokOnnxNode *const *nodes;
  guint n_tensors;
  const MorokOnnxTensor *const *tensors;
};

/* onnx-fields.c. Model-owned memory: zeroed, freed with the model. */
gpointer morok_onnx_model_alloc (MorokOnnxModel *m, gsize size);

/* Returns a NUL-terminated model-owned copy of len bytes. */
const char *morok_onnx_model_string (MorokOnnxModel *m, const guint8 *data, gsize len);

/* Move a GPtrArray's pointers / a GArray's values into model memory and free
 * the array; return NULL for an empty array. */
gpointer morok_onnx_model_steal_ptrs (MorokOnnxModel *m, GPtrArray *a, guint *out_n);
gpointer morok_onnx_model_steal_values (MorokOnnxModel *m, GArray *a, guint *out_n);

/* Field readers that check the wire type of a known field first. */
gboolean morok_onnx_read_string (MorokOnnxModel *m, MorokPbReader *r, guint32 field,
                                 MorokPbWire wire, const char **out, GError **error);
gboolean morok_onnx_read_int (MorokPbReader *r, guint32 field, MorokPbWire wire, gint64 *out,
                              GError **error);
gboolean morok_onnx_read_sub (MorokPbReader *r, guint32 field, MorokPbWire wire, const char *what,
                              MorokPbReader *out_sub, GError **error);
/* Appends a repeated varint field to `values` (gint64), packed or not. */
gboolean morok_onnx_read_repeated_varints (MorokPbReader *r, guint32 field, MorokPbWire wire,
                                           GArray *values, GError **error);

/* Parses the TensorProto that r spans (onnx-tensor.c), checking that its data
 * holds exactly its elements. */
MorokOnnxTensor *morok_onnx_parse_tensor (MorokOnnxModel *m, MorokPbReader *r,
                                          const MorokOnnxGraph *graph, const MorokOnnxNode *node,
                                          GError **error);

G_END_DECLS
