/* SPDX-License-Identifier: MIT */
/* onnx-reader.h: the weights and the structure of an ONNX file, read by
 * Morok's own protobuf wire-format reader (no libprotobuf, no onnxruntime).
 *
 * It reads the subset of ONNX that model code needs to take weights from an
 * exported network and to recognise which network it is: the ModelProto
 * header, the main graph and every subgraph (If branches, Loop bodies), their
 * initializers, nodes (op type, name, inputs, outputs, attributes) and the
 * value tensors of Constant nodes. Tensor data stays in the file (mapped, not
 * copied) until a tensor is asked for as floats or integers.
 *
 * Every varint, length and count is checked against the bytes it lives in:
 * a truncated or corrupt file gives a MOROK_IO_ERROR naming the file, the
 * message and the offset ("vad.onnx: truncated length-delimited field 5 at
 * offset 1234 (GraphProto): ..."), never a read outside the file.
 *
 *   g_autoptr (MorokOnnxModel) model = morok_onnx_model_load (path, error);
 *   if (model == NULL)
 *     return FALSE;
 *   // v5 holds its 16 kHz network in the then-branch of the If node "If_0".
 *   const MorokOnnxGraph *g16 = morok_onnx_model_find_graph (model, "If_0:then_branch");
 *   const MorokOnnxTensor *w
 *       = morok_onnx_graph_require_tensor (g16, "encoder.0.reparam_conv.weight", error);
 *   static const gint64 want[] = { 128, 129, 3 };
 *   if (w == NULL || !morok_onnx_tensor_check_dims (w, 3, want, error))
 *     return FALSE;
 *   gsize n;
 *   g_autofree float *data = morok_onnx_tensor_to_f32 (w, &n, error); // 49536 floats
 *
 * (tests/test-onnx-reader.c runs this example.)
 *
 * Graph paths: the main graph's path is "". A subgraph held by attribute
 * `attr` of node `node` has the path "<node>:<attr>" below the main graph and
 * "<parent path>/<node>:<attr>" deeper down (a node without a name is written
 * "#<index in its graph>"). Lookups by name search a graph and all its
 * subgraphs, depth first: a graph's initializers, then its nodes in order,
 * each node's Constant value before the subgraphs of its attributes.
 *
 * All structures are read-only views owned by the model: pointers stay valid
 * until morok_onnx_model_free ().
 */
#pragma once

#include <glib.h>

#include "io/morok-io.h"

G_BEGIN_DECLS

/* TensorProto.DataType values. */
typedef enum
{
  MOROK_ONNX_DTYPE_UNDEFINED = 0,
  MOROK_ONNX_DTYPE_FLOAT = 1,
  MOROK_ONNX_DTYPE_UINT8 = 2,
  MOROK_ONNX_DTYPE_INT8 = 3,
  MOROK_ONNX_DTYPE_UINT16 = 4,
  MOROK_ONNX_DTYPE_INT16 = 5,
  MOROK_ONNX_DTYPE_INT32 = 6,
  MOROK_ONNX_DTYPE_INT64 = 7,
  MOROK_ONNX_DTYPE_STRING = 8,
  MOROK_ONNX_DTYPE_BOOL = 9,
  MOROK_ONNX_DTYPE_FLOAT16 = 10,
  MOROK_ONNX_DTYPE_DOUBLE = 11,
  MOROK_ONNX_DTYPE_UINT32 = 12,
  MOROK_ONNX_DTYPE_UINT64 = 13,
  MOROK_ONNX_DTYPE_COMPLEX64 = 14,
  MOROK_ONNX_DTYPE_COMPLEX128 = 15,
  MOROK_ONNX_DTYPE_BFLOAT16 = 16,
} MorokOnnxDtype;

/* AttributeProto.AttributeType values. */
typedef enum
{
  MOROK_ONNX_ATTR_UNDEFINED = 0,
  MOROK_ONNX_ATTR_FLOAT = 1,
  MOROK_ONNX_ATTR_INT = 2,
  MOROK_ONNX_ATTR_STRING = 3,
  MOROK_ONNX_ATTR_TENSOR = 4,
  MOROK_ONNX_ATTR_GRAPH = 5,
  MOROK_ONNX_ATTR_FLOATS = 6,
  MOROK_ONNX_ATTR_INTS = 7,
  MOROK_ONNX_ATTR_STRINGS = 8,
  MOROK_ONNX_ATTR_TENSORS = 9,
  MOROK_ONNX_ATTR_GRAPHS = 10,
} MorokOnnxAttrType;

typedef struct _MorokOnnxModel MorokOnnxModel;
typedef struct _MorokOnnxGraph MorokOnnxGraph;
typedef struct _MorokOnnxNode MorokOnnxNode;
typedef struct _MorokOnnxAttribute MorokOnnxAttribute;
typedef struct _MorokOnnxTensor MorokOnnxTensor;

/* A TensorProto: an initializer, a Constant node's value or another tensor
 * attribute. Strings are never NULL ("" when absent). */
struct _MorokOnnxTensor
{
  const char *name;       /* TensorProto.name */
  const char *value_name; /* what nodes call it: the initializer's name, the Constant's output */
  gint32 dtype;           /* a MorokOnnxDtype, or a newer value this reader does not know */
  guint rank;
  const gint64 *dims;          /* [rank], each >= 0 */
  gint64 n_elements;           /* product of dims, 1 for a scalar */
  const MorokOnnxGraph *graph; /* the graph it is defined in */
  const MorokOnnxNode *node;   /* the node whose attribute holds it, NULL for an initializer */
  gboolean external;           /* data_location is EXTERNAL: the data is in another file */

  /*< private >*/
  const guint8 *msg; /* the TensorProto's bytes, inside the mapped file */
  gsize msg_len;
  const guint8 *raw; /* raw_data, NULL when the data is in typed fields */
  gsize raw_len;
};

/* An AttributeProto. Only the members of its type are meaningful. */
struct _MorokOnnxAttribute
{
  const char *name;
  MorokOnnxAttrType type; /* AttributeProto.type, or inferred from the fields when absent */
  float f;
  gint64 i;
  const char *s; /* bytes of s, NUL-terminated for convenience */
  gsize s_len;
  const MorokOnnxTensor *t;
  const MorokOnnxGraph *g;
  guint n_floats;
  const float *floats;
  guint n_ints;
  const gint64 *ints;
  guint n_strings;
  const char *const *strings;
  guint n_tensors;
  const MorokOnnxTensor *const *tensors;
  guint n_graphs;
  const MorokOnnxGraph *const *graphs;
};

/* A NodeProto. An omitted optional input is "". */
struct _MorokOnnxNode
{
  const char *name;
  const char *op_type;
  const char *domain;
  guint n_inputs;
  const char *const *inputs;
  guint n_outputs;
  const char *const *outputs;
  guint n_attributes;
  const MorokOnnxAttribute *const *attributes;
  const MorokOnnxGraph *graph; /* the graph the node is in */
  guint index;                 /* position in graph->nodes */
};

/* A GraphProto: the main graph or a subgraph. */
struct _MorokOnnxGraph
{
  const char *name;
  const char *path;            /* see "Graph paths" above */
  const MorokOnnxNode *parent; /* node whose attribute holds it, NULL for the main graph */
  guint depth;                 /* 0 for the main graph */
  guint n_nodes;
  const MorokOnnxNode *const *nodes;
  guint n_initializers;
  const MorokOnnxTensor *const *initializers;
  guint n_inputs; /* names of the ValueInfoProto inputs and outputs */
  const char *const *inputs;
  guint n_outputs;
  const char *const *outputs;

  /*< private >*/
  const MorokOnnxModel *model;
};

/* --- Loading ------------------------------------------------------------ */

/* Maps and parses an ONNX file. Returns (transfer full) the model, or NULL
 * with MOROK_IO_ERROR_OPEN (cannot read; the message starts with `path` as
 * given), _TRUNCATED, _MALFORMED or _UNSUPPORTED (the message starts with the
 * file's base name) set. */
MorokOnnxModel *morok_onnx_model_load (const char *path, GError **error);

/* Parses ONNX bytes, copied first, so `data` may be freed afterwards. `name`
 * stands for the file in error messages. Returns (transfer full) the model or
 * NULL with the error set as for morok_onnx_model_load (). */
MorokOnnxModel *morok_onnx_model_load_from_data (const void *data, gsize size, const char *name,
                                                 GError **error);

/* Frees the model and everything it handed out. NULL is a no-op. */
void morok_onnx_model_free (MorokOnnxModel *model);

/* --- The model ---------------------------------------------------------- */

/* Returns the name used in messages (the file's base name), owned by model. */
const char *morok_onnx_model_name (const MorokOnnxModel *model);

/* Returns ModelProto.ir_version, 0 when absent. */
gint64 morok_onnx_model_ir_version (const MorokOnnxModel *model);

/* Returns ModelProto.producer_name / producer_version ("" when absent). */
const char *morok_onnx_model_producer_name (const MorokOnnxModel *model);
const char *morok_onnx_model_producer_version (const MorokOnnxModel *model);

/* Returns the opset version imported for `domain` ("" or "ai.onnx" for the
 * default domain), -1 when the model does not import it. */
gint64 morok_onnx_model_opset_version (const MorokOnnxModel *model, const char *domain);

/* Returns the main graph (transfer none). */
const MorokOnnxGraph *morok_onnx_model_graph (const MorokOnnxModel *model);

/* Return (transfer none) every graph, every node, and every initializer or
 * Constant value tensor of the model, depth first (see above); out_n is set
 * to the count. */
const MorokOnnxGraph *const *morok_onnx_model_graphs (const MorokOnnxModel *model, guint *out_n);
const MorokOnnxNode *const *morok_onnx_model_nodes (const MorokOnnxModel *model, guint *out_n);
const MorokOnnxTensor *const *morok_onnx_model_tensors (const MorokOnnxModel *model, guint *out_n);

/* Returns (transfer none, nullable) the graph with this path, NULL when none. */
const MorokOnnxGraph *morok_onnx_model_find_graph (const MorokOnnxModel *model, const char *path);

/* Returns (transfer none, nullable) the first initializer or Constant value
 * in the whole model whose name or value_name is `name`, NULL when none. */
const MorokOnnxTensor *morok_onnx_model_find_tensor (const MorokOnnxModel *model, const char *name);

/* --- Graphs, nodes, attributes ----------------------------------------- */

/* Like morok_onnx_model_find_tensor (), within `graph` and its subgraphs. */
const MorokOnnxTensor *morok_onnx_graph_find_tensor (const MorokOnnxGraph *graph, const char *name);

/* Like morok_onnx_graph_find_tensor (), but fails with
 * MOROK_IO_ERROR_NOT_FOUND ("vad.onnx: no tensor 'x' in graph 'If_0:then_branch'"). */
const MorokOnnxTensor *morok_onnx_graph_require_tensor (const MorokOnnxGraph *graph,
                                                        const char *name, GError **error);

/* Returns (transfer none, nullable) the node named `name` in `graph` itself
 * (not its subgraphs), NULL when none. */
const MorokOnnxNode *morok_onnx_graph_find_node (const MorokOnnxGraph *graph, const char *name);

/* Returns (transfer none, nullable) the node's attribute `name`. */
const MorokOnnxAttribute *morok_onnx_node_find_attribute (const MorokOnnxNode *node,
                                                          const char *name);

/* --- Tensors ------------------------------------------------------------ */

/* Returns the ONNX name of a data type ("FLOAT", "INT64"), "UNKNOWN" for a
 * value this reader does not know. */
const char *morok_onnx_dtype_name (gint32 dtype);

/* Returns the size of one element in raw_data, 0 when not fixed (STRING,
 * unknown types). */
gsize morok_onnx_dtype_size (gint32 dtype);

/* Returns (transfer full) the tensor's n_elements values converted to float
 * (from FLOAT, DOUBLE, FLOAT16, BFLOAT16 and every integer type and BOOL);
 * free with g_free (). Fails with MOROK_IO_ERROR_UNSUPPORTED for STRING,
 * complex or unknown types and external data. A tensor with no elements
 * gives a non-NULL empty array. out_n may be NULL. */
float *morok_onnx_tensor_to_f32 (const MorokOnnxTensor *tensor, gsize *out_n, GError **error);

/* Returns (transfer full) the values of an integer or BOOL tensor as gint64
 * (UINT64 above G_MAXINT64 wraps); fails with MOROK_IO_ERROR_UNSUPPORTED for
 * floating-point and other types. As morok_onnx_tensor_to_f32 () otherwise. */
gint64 *morok_onnx_tensor_to_i64 (const MorokOnnxTensor *tensor, gsize *out_n, GError **error);

/* Returns TRUE when the tensor has exactly these dims; otherwise fails with
 * MOROK_IO_ERROR_MALFORMED: "vad.onnx: tensor 'conv1.weight' is [64,1,3],
 * expected [128,1,3]". */
gboolean morok_onnx_tensor_check_dims (const MorokOnnxTensor *tensor, guint rank,
                                       const gint64 *dims, GError **error);

/* Returns (transfer full) the dims as "[64,1,3]" ("[]" for a scalar). */
char *morok_onnx_tensor_format_dims (const MorokOnnxTensor *tensor);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (MorokOnnxModel, morok_onnx_model_free)

G_END_DECLS
