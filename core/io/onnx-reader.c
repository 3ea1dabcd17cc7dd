/* SPDX-License-Identifier: MIT */
/* onnx-reader.c: looking a parsed model's graphs, nodes and tensors up.
 * Plain reads of the views onnx-parse.c built; it calls nothing else of
 * core/io.
 */
#define G_LOG_DOMAIN "morok-io"

#include "io/onnx-private.h"

#include <string.h>

/* --- Queries ------------------------------------------------------------ */

const char *
morok_onnx_model_name (const MorokOnnxModel *model)
{
  g_return_val_if_fail (model != NULL, NULL);
  return model->name;
}

gint64
morok_onnx_model_ir_version (const MorokOnnxModel *model)
{
  g_return_val_if_fail (model != NULL, 0);
  return model->ir_version;
}

const char *
morok_onnx_model_producer_name (const MorokOnnxModel *model)
{
  g_return_val_if_fail (model != NULL, NULL);
  return model->producer_name;
}

const char *
morok_onnx_model_producer_version (const MorokOnnxModel *model)
{
  g_return_val_if_fail (model != NULL, NULL);
  return model->producer_version;
}

gint64
morok_onnx_model_opset_version (const MorokOnnxModel *model, const char *domain)
{
  g_return_val_if_fail (model != NULL && domain != NULL, -1);
  if (strcmp (domain, "ai.onnx") == 0)
    domain = "";
  for (guint k = 0; k < model->n_opsets; k++)
    {
      const char *d = model->opsets[k]->domain;
      if (strcmp (d, "ai.onnx") == 0)
        d = "";
      if (strcmp (d, domain) == 0)
        return model->opsets[k]->version;
    }
  return -1;
}

const MorokOnnxGraph *
morok_onnx_model_graph (const MorokOnnxModel *model)
{
  g_return_val_if_fail (model != NULL, NULL);
  return model->graph;
}

const MorokOnnxGraph *const *
morok_onnx_model_graphs (const MorokOnnxModel *model, guint *out_n)
{
  g_return_val_if_fail (model != NULL && out_n != NULL, NULL);
  *out_n = model->n_graphs;
  return model->graphs;
}

const MorokOnnxNode *const *
morok_onnx_model_nodes (const MorokOnnxModel *model, guint *out_n)
{
  g_return_val_if_fail (model != NULL && out_n != NULL, NULL);
  *out_n = model->n_nodes;
  return model->nodes;
}

const MorokOnnxTensor *const *
morok_onnx_model_tensors (const MorokOnnxModel *model, guint *out_n)
{
  g_return_val_if_fail (model != NULL && out_n != NULL, NULL);
  *out_n = model->n_tensors;
  return model->tensors;
}

const MorokOnnxGraph *
morok_onnx_model_find_graph (const MorokOnnxModel *model, const char *path)
{
  g_return_val_if_fail (model != NULL && path != NULL, NULL);
  for (guint k = 0; k < model->n_graphs; k++)
    if (strcmp (model->graphs[k]->path, path) == 0)
      return model->graphs[k];
  return NULL;
}

const MorokOnnxTensor *
morok_onnx_model_find_tensor (const MorokOnnxModel *model, const char *name)
{
  g_return_val_if_fail (model != NULL && name != NULL, NULL);
  return morok_onnx_graph_find_tensor (model->graph, name);
}

static gboolean
graph_contains (const MorokOnnxGraph *outer, const MorokOnnxGraph *g)
{
  for (; g != NULL; g = g->parent != NULL ? g->parent->graph : NULL)
    if (g == outer)
      return TRUE;
  return FALSE;
}

const MorokOnnxTensor *
morok_onnx_graph_find_tensor (const MorokOnnxGraph *graph, const char *name)
{
  const MorokOnnxModel *m;

  g_return_val_if_fail (graph != NULL && name != NULL, NULL);
  m = graph->model;
  for (guint k = 0; k < m->n_tensors; k++)
    {
      const MorokOnnxTensor *t = m->tensors[k];
      if ((strcmp (t->value_name, name) == 0 || strcmp (t->name, name) == 0)
          && graph_contains (graph, t->graph))
        return t;
    }
  return NULL;
}

const MorokOnnxTensor *
morok_onnx_graph_require_tensor (const MorokOnnxGraph *graph, const char *name, GError **error)
{
  const MorokOnnxTensor *t;

  g_return_val_if_fail (graph != NULL && name != NULL, NULL);
  t = morok_onnx_graph_find_tensor (graph, name);
  if (t == NULL)
    {
      if (graph->path[0] != '\0')
        g_set_error (error, MOROK_IO_ERROR, MOROK_IO_ERROR_NOT_FOUND,
                     "%s: no tensor '%s' in graph '%s'", graph->model->name, name, graph->path);
      else
        g_set_error (error, MOROK_IO_ERROR, MOROK_IO_ERROR_NOT_FOUND, "%s: no tensor '%s'",
                     graph->model->name, name);
    }
  return t;
}

const MorokOnnxNode *
morok_onnx_graph_find_node (const MorokOnnxGraph *graph, const char *name)
{
  g_return_val_if_fail (graph != NULL && name != NULL, NULL);
  for (guint k = 0; k < graph->n_nodes; k++)
    if (strcmp (graph->nodes[k]->name, name) == 0)
      return graph->nodes[k];
  return NULL;
}

const MorokOnnxAttribute *
morok_onnx_node_find_attribute (const MorokOnnxNode *node, const char *name)
{
  g_return_val_if_fail (node != NULL && name != NULL, NULL);
  for (guint k = 0; k < node->n_attributes; k++)
    if (strcmp (node->attributes[k]->name, name) == 0)
      return node->attributes[k];
  return NULL;
}
