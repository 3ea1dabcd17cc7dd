/* SPDX-License-Identifier: MIT */
/* Fuzz target: the ONNX reader (core/io/onnx-*.c, protobuf-wire.c). Parses
 * the input as a ModelProto and, when it parses, walks everything it
 * returned: every lookup by path and name, every tensor's values as float
 * and as int64, and the invariants onnx-reader.h promises. */
#include "fuzz-input.h"

#include <stdlib.h>

#include "io/onnx-reader.h"

/* An invariant of onnx-reader.h that does not hold: a finding. */
#define FUZZ_REQUIRE(cond)                                                                         \
  do                                                                                               \
    {                                                                                              \
      if (!(cond))                                                                                 \
        {                                                                                          \
          g_printerr ("%s:%d: %s does not hold\n", __FILE__, __LINE__, #cond);                     \
          abort ();                                                                                \
        }                                                                                          \
    }                                                                                              \
  while (0)

static void
visit_tensor (const MorokOnnxModel *model, const MorokOnnxTensor *t)
{
  g_autoptr (GError) error = NULL;
  gsize n = 0;

  FUZZ_REQUIRE (morok_onnx_model_find_tensor (model, t->value_name) != NULL);
  FUZZ_REQUIRE (morok_onnx_tensor_check_dims (t, t->rank, t->dims, NULL));
  g_free (morok_onnx_tensor_format_dims (t));
  (void) morok_onnx_dtype_name (t->dtype);
  (void) morok_onnx_dtype_size (t->dtype);

  g_autofree float *f = morok_onnx_tensor_to_f32 (t, &n, &error);
  FUZZ_REQUIRE ((f != NULL) == (error == NULL));
  FUZZ_REQUIRE (f == NULL || n == (gsize) t->n_elements);
  g_clear_error (&error);
  g_autofree gint64 *i = morok_onnx_tensor_to_i64 (t, &n, &error);
  FUZZ_REQUIRE ((i != NULL) == (error == NULL));
  FUZZ_REQUIRE (i == NULL || n == (gsize) t->n_elements);
}

static void
visit_node (const MorokOnnxNode *node)
{
  FUZZ_REQUIRE (morok_onnx_graph_find_node (node->graph, node->name) != NULL);
  for (guint k = 0; k < node->n_attributes; k++)
    FUZZ_REQUIRE (morok_onnx_node_find_attribute (node, node->attributes[k]->name) != NULL);
  for (guint k = 0; k < node->n_inputs; k++)
    (void) morok_onnx_graph_find_tensor (node->graph, node->inputs[k]);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  g_autoptr (GError) error = NULL;
  guint n_graphs, n_nodes, n_tensors;

  fuzz_input_setup ();
  g_autoptr (MorokOnnxModel) model
      = morok_onnx_model_load_from_data (data, size, "fuzz.onnx", &error);
  FUZZ_REQUIRE ((model != NULL) == (error == NULL));
  if (model == NULL)
    return 0;

  (void) morok_onnx_model_ir_version (model);
  (void) morok_onnx_model_producer_name (model);
  (void) morok_onnx_model_opset_version (model, "");
  (void) morok_onnx_model_opset_version (model, "ai.onnx");
  FUZZ_REQUIRE (morok_onnx_model_graph (model) != NULL);

  const MorokOnnxGraph *const *graphs = morok_onnx_model_graphs (model, &n_graphs);
  for (guint k = 0; k < n_graphs; k++)
    {
      FUZZ_REQUIRE (morok_onnx_model_find_graph (model, graphs[k]->path) != NULL);
      g_autoptr (GError) missing = NULL;
      FUZZ_REQUIRE (morok_onnx_graph_require_tensor (graphs[k], "\x01 no such tensor", &missing)
                    == NULL);
      FUZZ_REQUIRE (missing != NULL);
    }
  const MorokOnnxNode *const *nodes = morok_onnx_model_nodes (model, &n_nodes);
  for (guint k = 0; k < n_nodes; k++)
    visit_node (nodes[k]);
  const MorokOnnxTensor *const *tensors = morok_onnx_model_tensors (model, &n_tensors);
  for (guint k = 0; k < n_tensors; k++)
    visit_tensor (model, tensors[k]);
  return 0;
}
