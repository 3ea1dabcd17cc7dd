/* SPDX-License-Identifier: MIT */
/* onnx-reader.c: loading an ONNX file and looking its graphs, nodes and
 * tensors up. The parsing is in onnx-parse.c (graphs, nodes, attributes)
 * and onnx-tensor.c (tensors).
 */
#define G_LOG_DOMAIN "morok-io"

#include "io/onnx-private.h"

#include <string.h>

/* --- Loading ------------------------------------------------------------ */

static MorokOnnxModel *
model_new (const char *name)
{
  MorokOnnxModel *m = g_new0 (MorokOnnxModel, 1);

  m->name = g_path_get_basename (name);
  m->blocks = g_ptr_array_new_with_free_func (g_free);
  m->strings = g_string_chunk_new (4096);
  return m;
}

static MorokOnnxModel *
model_parse (MorokOnnxModel *m, GError **error)
{
  if (!morok_onnx_model_parse (m, error))
    {
      morok_onnx_model_free (m);
      return NULL;
    }
  return m;
}

MorokOnnxModel *
morok_onnx_model_load (const char *path, GError **error)
{
  g_autoptr (GError) local = NULL;
  MorokOnnxModel *m;
  GMappedFile *mapped;

  g_return_val_if_fail (path != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  mapped = g_mapped_file_new (path, FALSE, &local);
  if (mapped == NULL)
    {
      g_set_error (error, MOROK_IO_ERROR, MOROK_IO_ERROR_OPEN, "%s: cannot read: %s", path,
                   local->message);
      return NULL;
    }
  m = model_new (path);
  m->mapped = mapped;
  m->data = (const guint8 *)g_mapped_file_get_contents (mapped);
  m->size = g_mapped_file_get_length (mapped);
  return model_parse (m, error);
}

MorokOnnxModel *
morok_onnx_model_load_from_data (const void *data, gsize size, const char *name, GError **error)
{
  MorokOnnxModel *m;

  g_return_val_if_fail (data != NULL || size == 0, NULL);
  g_return_val_if_fail (name != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  m = model_new (name);
  m->owned = g_memdup2 (data, size);
  m->data = m->owned;
  m->size = size;
  return model_parse (m, error);
}

void
morok_onnx_model_free (MorokOnnxModel *model)
{
  if (model == NULL)
    return;
  g_ptr_array_unref (model->blocks);
  g_string_chunk_free (model->strings);
  g_clear_pointer (&model->mapped, g_mapped_file_unref);
  g_free (model->owned);
  g_free (model->name);
  g_free (model);
}

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
