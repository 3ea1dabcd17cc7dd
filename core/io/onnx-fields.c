/* SPDX-License-Identifier: MIT */
/* onnx-fields.c: the bottom of the ONNX reader: memory owned by the model
 * (freed with it) and the protobuf field readers that check a known field's
 * wire type first. onnx-tensor.c and onnx-parse.c build on it; it calls
 * neither.
 */
#define G_LOG_DOMAIN "morok-io"

#include "io/onnx-private.h"

#include <string.h>

/* --- Allocation --------------------------------------------------------- */

gpointer
morok_onnx_model_alloc (MorokOnnxModel *m, gsize size)
{
  gpointer p = g_malloc0 (size);
  g_ptr_array_add (m->blocks, p);
  return p;
}

const char *
morok_onnx_model_string (MorokOnnxModel *m, const guint8 *data, gsize len)
{
  return g_string_chunk_insert_len (m->strings, (const char *) data, (gssize) len);
}

/* Copies the array's pointers into model memory and frees the array.
 * Returns NULL for an empty array. */
gpointer
morok_onnx_model_steal_ptrs (MorokOnnxModel *m, GPtrArray *a, guint *out_n)
{
  gpointer *p = NULL;

  *out_n = a->len;
  if (a->len > 0)
    {
      p = morok_onnx_model_alloc (m, a->len * sizeof (gpointer));
      memcpy (p, a->pdata, a->len * sizeof (gpointer));
    }
  g_ptr_array_unref (a);
  return p;
}

gpointer
morok_onnx_model_steal_values (MorokOnnxModel *m, GArray *a, guint *out_n)
{
  gpointer p = NULL;
  gsize bytes = (gsize) a->len * g_array_get_element_size (a);

  *out_n = a->len;
  if (a->len > 0)
    {
      p = morok_onnx_model_alloc (m, bytes);
      memcpy (p, a->data, bytes);
    }
  g_array_unref (a);
  return p;
}

/* --- Field helpers ------------------------------------------------------ */

gboolean
morok_onnx_read_string (MorokOnnxModel *m, MorokPbReader *r, guint32 field, MorokPbWire wire,
                        const char **out, GError **error)
{
  const guint8 *data;
  gsize len;

  if (!morok_pb_expect_wire (r, field, wire, MOROK_PB_WIRE_LEN, error)
      || !morok_pb_read_len (r, field, &data, &len, error))
    return FALSE;
  *out = morok_onnx_model_string (m, data, len);
  return TRUE;
}

gboolean
morok_onnx_read_int (MorokPbReader *r, guint32 field, MorokPbWire wire, gint64 *out, GError **error)
{
  guint64 v;

  if (!morok_pb_expect_wire (r, field, wire, MOROK_PB_WIRE_VARINT, error)
      || !morok_pb_read_varint (r, &v, error))
    return FALSE;
  *out = (gint64) v;
  return TRUE;
}

gboolean
morok_onnx_read_sub (MorokPbReader *r, guint32 field, MorokPbWire wire, const char *what,
                     MorokPbReader *out_sub, GError **error)
{
  return morok_pb_expect_wire (r, field, wire, MOROK_PB_WIRE_LEN, error)
         && morok_pb_read_message (r, field, what, out_sub, error);
}

/* Appends a repeated varint field to `values` (gint64), packed or not. */
gboolean
morok_onnx_read_repeated_varints (MorokPbReader *r, guint32 field, MorokPbWire wire, GArray *values,
                                  GError **error)
{
  MorokPbReader packed;
  guint64 v;

  if (wire == MOROK_PB_WIRE_VARINT)
    {
      if (!morok_pb_read_varint (r, &v, error))
        return FALSE;
      g_array_append_val (values, v);
      return TRUE;
    }
  if (!morok_onnx_read_sub (r, field, wire, r->what, &packed, error))
    return FALSE;
  while (!morok_pb_reader_done (&packed))
    {
      if (!morok_pb_read_varint (&packed, &v, error))
        return FALSE;
      g_array_append_val (values, v);
    }
  return TRUE;
}
