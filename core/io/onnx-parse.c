/* SPDX-License-Identifier: MIT */
/* onnx-parse.c: loading an ONNX file and parsing its ModelProto into the
 * read-only views of onnx-reader.h. TensorProto parsing is in onnx-tensor.c,
 * the model-owned memory and the field readers in onnx-fields.c; the
 * lookups of onnx-reader.c read what this file built. One way:
 * onnx-parse → onnx-tensor → onnx-fields, and onnx-reader below all three.
 *
 * Field numbers are those of onnx/onnx.proto (IR version 3 onwards, which
 * only ever added fields). Unknown fields are skipped; known fields with an
 * unexpected wire type are an error, because skipping them would silently
 * lose data.
 */
#define G_LOG_DOMAIN "morok-io"

#include "io/onnx-private.h"

#include <string.h>

/* Deepest subgraph nesting accepted (Silero v5 nests 5 levels). Bounds the
 * parser's recursion on hostile input. */
#define MAX_GRAPH_DEPTH 32

/* --- GraphProto, NodeProto, AttributeProto ------------------------------- */

/* Appends a repeated float field (fixed32) to `values`, packed or not. */
static gboolean
read_repeated_floats (MorokPbReader *r, guint32 field, MorokPbWire wire, GArray *values,
                      GError **error)
{
  const guint8 *data;
  gsize len;
  guint32 bits;
  float f;

  if (wire == MOROK_PB_WIRE_I32)
    {
      if (!morok_pb_read_fixed32 (r, field, &bits, error))
        return FALSE;
      memcpy (&f, &bits, 4);
      g_array_append_val (values, f);
      return TRUE;
    }
  if (!morok_pb_expect_wire (r, field, wire, MOROK_PB_WIRE_LEN, error)
      || !morok_pb_read_len (r, field, &data, &len, error))
    return FALSE;
  if (len % 4 != 0)
    {
      g_set_error (error, MOROK_IO_ERROR, MOROK_IO_ERROR_MALFORMED,
                   "%s: packed float field %u of %s is %" G_GSIZE_FORMAT
                   " bytes, not a multiple of 4, before offset %" G_GSIZE_FORMAT,
                   r->file, field, r->what, len, morok_pb_reader_offset (r));
      return FALSE;
    }
  for (gsize k = 0; k < len; k += 4)
    {
      bits = (guint32) data[k] | (guint32) data[k + 1] << 8 | (guint32) data[k + 2] << 16
             | (guint32) data[k + 3] << 24;
      memcpy (&f, &bits, 4);
      g_array_append_val (values, f);
    }
  return TRUE;
}

static MorokOnnxGraph *parse_graph (MorokOnnxModel *m, MorokPbReader *r, guint depth,
                                    const MorokOnnxNode *parent, GError **error);

static gboolean
parse_attribute_graph (MorokOnnxModel *m, MorokPbReader *r, guint32 field, MorokPbWire wire,
                       const MorokOnnxNode *node, const MorokOnnxGraph **out, GError **error)
{
  MorokPbReader sub;

  if (!morok_onnx_read_sub (r, field, wire, "GraphProto", &sub, error))
    return FALSE;
  *out = parse_graph (m, &sub, node->graph->depth + 1, node, error);
  return *out != NULL;
}

static gboolean
parse_attribute_tensor (MorokOnnxModel *m, MorokPbReader *r, guint32 field, MorokPbWire wire,
                        const MorokOnnxNode *node, const MorokOnnxTensor **out, GError **error)
{
  MorokPbReader sub;

  if (!morok_onnx_read_sub (r, field, wire, "TensorProto", &sub, error))
    return FALSE;
  *out = morok_onnx_parse_tensor (m, &sub, node->graph, node, error);
  return *out != NULL;
}

/* The type of an attribute written without AttributeProto.type (IR < 2). */
static MorokOnnxAttrType
infer_attribute_type (const gboolean seen[12])
{
  static const MorokOnnxAttrType by_field[12] = {
    0,
    0,
    MOROK_ONNX_ATTR_FLOAT,
    MOROK_ONNX_ATTR_INT,
    MOROK_ONNX_ATTR_STRING,
    MOROK_ONNX_ATTR_TENSOR,
    MOROK_ONNX_ATTR_GRAPH,
    MOROK_ONNX_ATTR_FLOATS,
    MOROK_ONNX_ATTR_INTS,
    MOROK_ONNX_ATTR_STRINGS,
    MOROK_ONNX_ATTR_TENSORS,
    MOROK_ONNX_ATTR_GRAPHS,
  };

  for (guint f = 2; f < 12; f++)
    if (seen[f])
      return by_field[f];
  return MOROK_ONNX_ATTR_UNDEFINED;
}

static MorokOnnxAttribute *
parse_attribute (MorokOnnxModel *m, MorokPbReader *r, const MorokOnnxNode *node, GError **error)
{
  MorokOnnxAttribute *a = morok_onnx_model_alloc (m, sizeof *a);
  g_autoptr (GArray) floats = g_array_new (FALSE, FALSE, sizeof (float));
  g_autoptr (GArray) ints = g_array_new (FALSE, FALSE, sizeof (gint64));
  g_autoptr (GPtrArray) strings = g_ptr_array_new ();
  g_autoptr (GPtrArray) tensors = g_ptr_array_new ();
  g_autoptr (GPtrArray) graphs = g_ptr_array_new ();
  gboolean seen[12] = { FALSE };
  gint64 type = 0;
  const guint8 *data;
  gsize len;
  guint32 bits;

  a->name = "";
  a->s = "";
  while (!morok_pb_reader_done (r))
    {
      guint32 field;
      MorokPbWire wire;
      const char *str;
      const MorokOnnxTensor *t;
      const MorokOnnxGraph *g;

      if (!morok_pb_read_tag (r, &field, &wire, error))
        return NULL;
      if (field < 12)
        seen[field] = TRUE;
      switch (field)
        {
        case 1: /* name */
          if (!morok_onnx_read_string (m, r, field, wire, &a->name, error))
            return NULL;
          break;
        case 2: /* f */
          if (!morok_pb_expect_wire (r, field, wire, MOROK_PB_WIRE_I32, error)
              || !morok_pb_read_fixed32 (r, field, &bits, error))
            return NULL;
          memcpy (&a->f, &bits, 4);
          break;
        case 3: /* i */
          if (!morok_onnx_read_int (r, field, wire, &a->i, error))
            return NULL;
          break;
        case 4: /* s */
          if (!morok_pb_expect_wire (r, field, wire, MOROK_PB_WIRE_LEN, error)
              || !morok_pb_read_len (r, field, &data, &len, error))
            return NULL;
          a->s = morok_onnx_model_string (m, data, len);
          a->s_len = len;
          break;
        case 5: /* t */
          if (!parse_attribute_tensor (m, r, field, wire, node, &a->t, error))
            return NULL;
          break;
        case 6: /* g */
          if (!parse_attribute_graph (m, r, field, wire, node, &a->g, error))
            return NULL;
          break;
        case 7: /* floats */
          if (!read_repeated_floats (r, field, wire, floats, error))
            return NULL;
          break;
        case 8: /* ints */
          if (!morok_onnx_read_repeated_varints (r, field, wire, ints, error))
            return NULL;
          break;
        case 9: /* strings */
          if (!morok_onnx_read_string (m, r, field, wire, &str, error))
            return NULL;
          g_ptr_array_add (strings, (gpointer) str);
          break;
        case 10: /* tensors */
          if (!parse_attribute_tensor (m, r, field, wire, node, &t, error))
            return NULL;
          g_ptr_array_add (tensors, (gpointer) t);
          break;
        case 11: /* graphs */
          if (!parse_attribute_graph (m, r, field, wire, node, &g, error))
            return NULL;
          g_ptr_array_add (graphs, (gpointer) g);
          break;
        case 20: /* type */
          if (!morok_onnx_read_int (r, field, wire, &type, error))
            return NULL;
          break;
        default:
          if (!morok_pb_skip (r, field, wire, error))
            return NULL;
        }
    }

  a->floats = morok_onnx_model_steal_values (m, g_steal_pointer (&floats), &a->n_floats);
  a->ints = morok_onnx_model_steal_values (m, g_steal_pointer (&ints), &a->n_ints);
  a->strings = morok_onnx_model_steal_ptrs (m, g_steal_pointer (&strings), &a->n_strings);
  a->tensors = morok_onnx_model_steal_ptrs (m, g_steal_pointer (&tensors), &a->n_tensors);
  a->graphs = morok_onnx_model_steal_ptrs (m, g_steal_pointer (&graphs), &a->n_graphs);
  a->type = type > 0 && type <= MOROK_ONNX_ATTR_GRAPHS ? (MorokOnnxAttrType) type
                                                       : infer_attribute_type (seen);
  return a;
}

static MorokOnnxNode *
parse_node (MorokOnnxModel *m, MorokPbReader *r, const MorokOnnxGraph *graph, GError **error)
{
  MorokOnnxNode *node = morok_onnx_model_alloc (m, sizeof *node);
  g_autoptr (GPtrArray) inputs = g_ptr_array_new ();
  g_autoptr (GPtrArray) outputs = g_ptr_array_new ();
  g_autoptr (GPtrArray) attributes = g_ptr_array_new ();

  node->name = node->op_type = node->domain = "";
  node->graph = graph;
  while (!morok_pb_reader_done (r))
    {
      guint32 field;
      MorokPbWire wire;
      const char *str;
      MorokPbReader sub;
      MorokOnnxAttribute *a;

      if (!morok_pb_read_tag (r, &field, &wire, error))
        return NULL;
      switch (field)
        {
        case 1: /* input */
        case 2: /* output */
          if (!morok_onnx_read_string (m, r, field, wire, &str, error))
            return NULL;
          g_ptr_array_add (field == 1 ? inputs : outputs, (gpointer) str);
          break;
        case 3:
          if (!morok_onnx_read_string (m, r, field, wire, &node->name, error))
            return NULL;
          break;
        case 4:
          if (!morok_onnx_read_string (m, r, field, wire, &node->op_type, error))
            return NULL;
          break;
        case 5: /* attribute */
          if (!morok_onnx_read_sub (r, field, wire, "AttributeProto", &sub, error)
              || !(a = parse_attribute (m, &sub, node, error)))
            return NULL;
          g_ptr_array_add (attributes, a);
          break;
        case 7:
          if (!morok_onnx_read_string (m, r, field, wire, &node->domain, error))
            return NULL;
          break;
        default:
          if (!morok_pb_skip (r, field, wire, error))
            return NULL;
        }
    }
  node->inputs = morok_onnx_model_steal_ptrs (m, g_steal_pointer (&inputs), &node->n_inputs);
  node->outputs = morok_onnx_model_steal_ptrs (m, g_steal_pointer (&outputs), &node->n_outputs);
  node->attributes
      = morok_onnx_model_steal_ptrs (m, g_steal_pointer (&attributes), &node->n_attributes);

  /* A Constant's value is known to the graph by the node's output. */
  const MorokOnnxAttribute *value = morok_onnx_node_find_attribute (node, "value");
  if (strcmp (node->op_type, "Constant") == 0 && value != NULL && value->t != NULL
      && node->n_outputs > 0)
    ((MorokOnnxTensor *) value->t)->value_name = node->outputs[0];
  return node;
}

/* Returns the name of a ValueInfoProto. */
static gboolean
parse_value_info_name (MorokOnnxModel *m, MorokPbReader *r, const char **out, GError **error)
{
  *out = "";
  while (!morok_pb_reader_done (r))
    {
      guint32 field;
      MorokPbWire wire;

      if (!morok_pb_read_tag (r, &field, &wire, error))
        return FALSE;
      if (field == 1)
        {
          if (!morok_onnx_read_string (m, r, field, wire, out, error))
            return FALSE;
        }
      else if (!morok_pb_skip (r, field, wire, error))
        return FALSE;
    }
  return TRUE;
}

static MorokOnnxGraph *
parse_graph (MorokOnnxModel *m, MorokPbReader *r, guint depth, const MorokOnnxNode *parent,
             GError **error)
{
  MorokOnnxGraph *g = morok_onnx_model_alloc (m, sizeof *g);
  g_autoptr (GPtrArray) nodes = g_ptr_array_new ();
  g_autoptr (GPtrArray) initializers = g_ptr_array_new ();
  g_autoptr (GPtrArray) inputs = g_ptr_array_new ();
  g_autoptr (GPtrArray) outputs = g_ptr_array_new ();

  if (depth > MAX_GRAPH_DEPTH)
    {
      g_set_error (error, MOROK_IO_ERROR, MOROK_IO_ERROR_MALFORMED,
                   "%s: subgraphs nested more than %d deep at offset %" G_GSIZE_FORMAT, m->name,
                   MAX_GRAPH_DEPTH, morok_pb_reader_offset (r));
      return NULL;
    }
  g->name = g->path = "";
  g->parent = parent;
  g->depth = depth;
  g->model = m;
  while (!morok_pb_reader_done (r))
    {
      guint32 field;
      MorokPbWire wire;
      MorokPbReader sub;
      const char *str;
      gpointer item;

      if (!morok_pb_read_tag (r, &field, &wire, error))
        return NULL;
      switch (field)
        {
        case 1: /* node */
          if (!morok_onnx_read_sub (r, field, wire, "NodeProto", &sub, error)
              || !(item = parse_node (m, &sub, g, error)))
            return NULL;
          g_ptr_array_add (nodes, item);
          break;
        case 2:
          if (!morok_onnx_read_string (m, r, field, wire, &g->name, error))
            return NULL;
          break;
        case 5: /* initializer */
          if (!morok_onnx_read_sub (r, field, wire, "TensorProto", &sub, error)
              || !(item = morok_onnx_parse_tensor (m, &sub, g, NULL, error)))
            return NULL;
          g_ptr_array_add (initializers, item);
          break;
        case 11: /* input */
        case 12: /* output */
          if (!morok_onnx_read_sub (r, field, wire, "ValueInfoProto", &sub, error)
              || !parse_value_info_name (m, &sub, &str, error))
            return NULL;
          g_ptr_array_add (field == 11 ? inputs : outputs, (gpointer) str);
          break;
        default:
          if (!morok_pb_skip (r, field, wire, error))
            return NULL;
        }
    }
  g->nodes = morok_onnx_model_steal_ptrs (m, g_steal_pointer (&nodes), &g->n_nodes);
  g->initializers
      = morok_onnx_model_steal_ptrs (m, g_steal_pointer (&initializers), &g->n_initializers);
  g->inputs = morok_onnx_model_steal_ptrs (m, g_steal_pointer (&inputs), &g->n_inputs);
  g->outputs = morok_onnx_model_steal_ptrs (m, g_steal_pointer (&outputs), &g->n_outputs);
  return g;
}

/* --- ModelProto --------------------------------------------------------- */

static OpsetImport *
parse_opset (MorokOnnxModel *m, MorokPbReader *r, GError **error)
{
  OpsetImport *o = morok_onnx_model_alloc (m, sizeof *o);

  o->domain = "";
  while (!morok_pb_reader_done (r))
    {
      guint32 field;
      MorokPbWire wire;

      if (!morok_pb_read_tag (r, &field, &wire, error))
        return NULL;
      if (field == 1 && !morok_onnx_read_string (m, r, field, wire, &o->domain, error))
        return NULL;
      else if (field == 2 && !morok_onnx_read_int (r, field, wire, &o->version, error))
        return NULL;
      else if (field != 1 && field != 2 && !morok_pb_skip (r, field, wire, error))
        return NULL;
    }
  return o;
}

static gboolean
parse_model (MorokOnnxModel *m, GError **error)
{
  g_autoptr (GPtrArray) opsets = NULL;
  MorokPbReader r;

  /* Checked first: the data of an empty file may be NULL. */
  if (m->size == 0)
    {
      g_set_error (error, MOROK_IO_ERROR, MOROK_IO_ERROR_TRUNCATED, "%s: empty file", m->name);
      return FALSE;
    }
  r = morok_pb_reader_init (m->data, m->size, m->name, "ModelProto");
  opsets = g_ptr_array_new ();
  m->producer_name = m->producer_version = "";
  while (!morok_pb_reader_done (&r))
    {
      guint32 field;
      MorokPbWire wire;
      MorokPbReader sub;
      gpointer item;
      gsize at = morok_pb_reader_offset (&r);

      if (!morok_pb_read_tag (&r, &field, &wire, error))
        return FALSE;
      switch (field)
        {
        case 1:
          if (!morok_onnx_read_int (&r, field, wire, &m->ir_version, error))
            return FALSE;
          break;
        case 2:
          if (!morok_onnx_read_string (m, &r, field, wire, &m->producer_name, error))
            return FALSE;
          break;
        case 3:
          if (!morok_onnx_read_string (m, &r, field, wire, &m->producer_version, error))
            return FALSE;
          break;
        case 7: /* graph */
          if (m->graph != NULL)
            {
              g_set_error (error, MOROK_IO_ERROR, MOROK_IO_ERROR_MALFORMED,
                           "%s: second graph at offset %" G_GSIZE_FORMAT, m->name, at);
              return FALSE;
            }
          if (!morok_onnx_read_sub (&r, field, wire, "GraphProto", &sub, error)
              || !(m->graph = parse_graph (m, &sub, 0, NULL, error)))
            return FALSE;
          break;
        case 8: /* opset_import */
          if (!morok_onnx_read_sub (&r, field, wire, "OperatorSetIdProto", &sub, error)
              || !(item = parse_opset (m, &sub, error)))
            return FALSE;
          g_ptr_array_add (opsets, item);
          break;
        default:
          if (!morok_pb_skip (&r, field, wire, error))
            return FALSE;
        }
    }
  m->opsets = morok_onnx_model_steal_ptrs (m, g_steal_pointer (&opsets), &m->n_opsets);
  if (m->graph == NULL)
    {
      g_set_error (error, MOROK_IO_ERROR, MOROK_IO_ERROR_MALFORMED,
                   "%s: no graph (ModelProto field 7) in %" G_GSIZE_FORMAT " bytes", m->name,
                   m->size);
      return FALSE;
    }
  return TRUE;
}

/* --- Indexing ----------------------------------------------------------- */

typedef struct
{
  GPtrArray *graphs, *nodes, *tensors;
} Index;

/* Sets paths and node indices and lists everything depth first. */
static void
index_graph (MorokOnnxModel *m, MorokOnnxGraph *g, const char *path, Index *ix)
{
  g->path = path;
  g_ptr_array_add (ix->graphs, g);
  for (guint k = 0; k < g->n_initializers; k++)
    g_ptr_array_add (ix->tensors, (gpointer) g->initializers[k]);
  for (guint k = 0; k < g->n_nodes; k++)
    {
      MorokOnnxNode *node = (MorokOnnxNode *) g->nodes[k];
      node->index = k;
      g_ptr_array_add (ix->nodes, node);
      if (strcmp (node->op_type, "Constant") == 0)
        {
          const MorokOnnxAttribute *value = morok_onnx_node_find_attribute (node, "value");
          if (value != NULL && value->t != NULL)
            g_ptr_array_add (ix->tensors, (gpointer) value->t);
        }
      for (guint a = 0; a < node->n_attributes; a++)
        {
          const MorokOnnxAttribute *attr = node->attributes[a];
          guint n_sub = attr->n_graphs + (attr->g != NULL);
          for (guint s = 0; s < n_sub; s++)
            {
              const MorokOnnxGraph *sub = s < attr->n_graphs ? attr->graphs[s] : attr->g;
              g_autofree char *node_id
                  = node->name[0] ? g_strdup (node->name) : g_strdup_printf ("#%u", k);
              g_autofree char *sub_path
                  = g_strdup_printf ("%s%s%s:%s", path, path[0] ? "/" : "", node_id, attr->name);
              index_graph (m, (MorokOnnxGraph *) sub, g_string_chunk_insert (m->strings, sub_path),
                           ix);
            }
        }
    }
}

static void
index_model (MorokOnnxModel *m)
{
  Index ix = { g_ptr_array_new (), g_ptr_array_new (), g_ptr_array_new () };

  index_graph (m, m->graph, "", &ix);
  m->graphs = morok_onnx_model_steal_ptrs (m, ix.graphs, &m->n_graphs);
  m->nodes = morok_onnx_model_steal_ptrs (m, ix.nodes, &m->n_nodes);
  m->tensors = morok_onnx_model_steal_ptrs (m, ix.tensors, &m->n_tensors);
}

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
  if (!parse_model (m, error))
    {
      morok_onnx_model_free (m);
      return NULL;
    }
  index_model (m);
  return m;
}

MorokOnnxModel *
morok_onnx_model_load (const char *path, GError **error)
{
  MorokOnnxModel *m;
  GMappedFile *mapped;

  g_return_val_if_fail (path != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  mapped = morok_io_map_file (path, error);
  if (mapped == NULL)
    return NULL;
  m = model_new (path);
  m->mapped = mapped;
  m->data = (const guint8 *) g_mapped_file_get_contents (mapped);
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
