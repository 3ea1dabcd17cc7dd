/* SPDX-License-Identifier: MIT */
/* onnx-tensor.c: ONNX TensorProtos: parsed and checked, their data types,
 * and their data converted to float or int64 arrays on request.
 *
 * A tensor keeps its values either in raw_data (little-endian, packed by
 * element size) or in the typed repeated field of its type: float_data,
 * int32_data (also INT8/16, UINT8/16, BOOL, FLOAT16 and BFLOAT16 bit
 * patterns), int64_data, double_data or uint64_data (UINT32, UINT64), each
 * written packed or one value per field. Values are decoded from the
 * TensorProto bytes each time they are asked for; the parser has already
 * checked that there are exactly n_elements of them.
 */
#define G_LOG_DOMAIN "morok-io"

#include "io/onnx-private.h"

#include <string.h>

/* Largest element count accepted, so that count * element size never
 * overflows 64 bits. */
#define MAX_ELEMENTS (G_MAXINT64 / 16)

/* --- Data types --------------------------------------------------------- */

static const struct
{
  const char *name;
  gsize size;
} dtypes[] = {
  [MOROK_ONNX_DTYPE_UNDEFINED] = { "UNDEFINED", 0 },
  [MOROK_ONNX_DTYPE_FLOAT] = { "FLOAT", 4 },
  [MOROK_ONNX_DTYPE_UINT8] = { "UINT8", 1 },
  [MOROK_ONNX_DTYPE_INT8] = { "INT8", 1 },
  [MOROK_ONNX_DTYPE_UINT16] = { "UINT16", 2 },
  [MOROK_ONNX_DTYPE_INT16] = { "INT16", 2 },
  [MOROK_ONNX_DTYPE_INT32] = { "INT32", 4 },
  [MOROK_ONNX_DTYPE_INT64] = { "INT64", 8 },
  [MOROK_ONNX_DTYPE_STRING] = { "STRING", 0 },
  [MOROK_ONNX_DTYPE_BOOL] = { "BOOL", 1 },
  [MOROK_ONNX_DTYPE_FLOAT16] = { "FLOAT16", 2 },
  [MOROK_ONNX_DTYPE_DOUBLE] = { "DOUBLE", 8 },
  [MOROK_ONNX_DTYPE_UINT32] = { "UINT32", 4 },
  [MOROK_ONNX_DTYPE_UINT64] = { "UINT64", 8 },
  [MOROK_ONNX_DTYPE_COMPLEX64] = { "COMPLEX64", 8 },
  [MOROK_ONNX_DTYPE_COMPLEX128] = { "COMPLEX128", 16 },
  [MOROK_ONNX_DTYPE_BFLOAT16] = { "BFLOAT16", 2 },
};

const char *
morok_onnx_dtype_name (gint32 dtype)
{
  if (dtype < 0 || dtype >= (gint32) G_N_ELEMENTS (dtypes))
    return "UNKNOWN";
  return dtypes[dtype].name;
}

gsize
morok_onnx_dtype_size (gint32 dtype)
{
  if (dtype < 0 || dtype >= (gint32) G_N_ELEMENTS (dtypes))
    return 0;
  return dtypes[dtype].size;
}

static gboolean
dtype_is_integer (gint32 dtype)
{
  switch (dtype)
    {
    case MOROK_ONNX_DTYPE_UINT8:
    case MOROK_ONNX_DTYPE_INT8:
    case MOROK_ONNX_DTYPE_UINT16:
    case MOROK_ONNX_DTYPE_INT16:
    case MOROK_ONNX_DTYPE_INT32:
    case MOROK_ONNX_DTYPE_INT64:
    case MOROK_ONNX_DTYPE_BOOL:
    case MOROK_ONNX_DTYPE_UINT32:
    case MOROK_ONNX_DTYPE_UINT64: return TRUE;
    default: return FALSE;
    }
}

static gboolean
dtype_is_float (gint32 dtype)
{
  return dtype == MOROK_ONNX_DTYPE_FLOAT || dtype == MOROK_ONNX_DTYPE_DOUBLE
         || dtype == MOROK_ONNX_DTYPE_FLOAT16 || dtype == MOROK_ONNX_DTYPE_BFLOAT16;
}

static float
bits_to_float (guint32 bits)
{
  float f;

  memcpy (&f, &bits, 4);
  return f;
}

/* IEEE half to single: exact, including subnormals, infinities and NaNs. */
static float
half_to_float (guint16 h)
{
  guint32 sign = (guint32) (h & 0x8000u) << 16;
  guint32 exp = (h >> 10) & 0x1f;
  guint32 mant = h & 0x3ffu;

  if (exp == 0x1f)
    return bits_to_float (sign | 0x7f800000u | mant << 13);
  if (exp != 0)
    return bits_to_float (sign | (exp + 127 - 15) << 23 | mant << 13);
  if (mant == 0)
    return bits_to_float (sign);
  /* Subnormal: mant * 2^-24, renormalised. */
  exp = 127 - 15 + 1;
  while (!(mant & 0x400u))
    {
      mant <<= 1;
      exp--;
    }
  return bits_to_float (sign | exp << 23 | (mant & 0x3ffu) << 13);
}

/* --- Parsing ----------------------------------------------------------- */

/* The typed field that holds values of `dtype` when raw_data is not used,
 * and how many of its entries make one element; 0 when unchecked. */
static guint32
typed_field_of (gint32 dtype)
{
  switch (dtype)
    {
    case MOROK_ONNX_DTYPE_FLOAT: return 4;
    case MOROK_ONNX_DTYPE_UINT8:
    case MOROK_ONNX_DTYPE_INT8:
    case MOROK_ONNX_DTYPE_UINT16:
    case MOROK_ONNX_DTYPE_INT16:
    case MOROK_ONNX_DTYPE_INT32:
    case MOROK_ONNX_DTYPE_BOOL:
    case MOROK_ONNX_DTYPE_FLOAT16:
    case MOROK_ONNX_DTYPE_BFLOAT16: return 5;
    case MOROK_ONNX_DTYPE_STRING: return 6;
    case MOROK_ONNX_DTYPE_INT64: return 7;
    case MOROK_ONNX_DTYPE_DOUBLE: return 10;
    case MOROK_ONNX_DTYPE_UINT32:
    case MOROK_ONNX_DTYPE_UINT64: return 11;
    default: return 0;
    }
}

/* Counts the entries of one occurrence of a typed data field. */
static gboolean
count_typed (MorokPbReader *r, guint32 field, MorokPbWire wire, gsize *count, GError **error)
{
  const guint8 *data;
  gsize len, n;
  guint32 width = field == 4 ? 4 : field == 10 ? 8 : 0; /* fixed-size fields */

  if (wire != MOROK_PB_WIRE_LEN || field == 6)
    {
      MorokPbWire want = field == 6   ? MOROK_PB_WIRE_LEN
                         : width == 4 ? MOROK_PB_WIRE_I32
                         : width == 8 ? MOROK_PB_WIRE_I64
                                      : MOROK_PB_WIRE_VARINT;
      if (!morok_pb_expect_wire (r, field, wire, want, error)
          || !morok_pb_skip (r, field, wire, error))
        return FALSE;
      *count += 1;
      return TRUE;
    }
  if (!morok_pb_read_len (r, field, &data, &len, error))
    return FALSE;
  if (width != 0)
    {
      if (len % width != 0)
        {
          g_set_error (error, MOROK_IO_ERROR, MOROK_IO_ERROR_MALFORMED,
                       "%s: packed field %u of %s is %" G_GSIZE_FORMAT
                       " bytes, not a multiple of %u, before offset %" G_GSIZE_FORMAT,
                       r->file, field, r->what, len, width, morok_pb_reader_offset (r));
          return FALSE;
        }
      *count += len / width;
      return TRUE;
    }
  if (!morok_pb_count_packed_varints (r, data, len, &n, error))
    return FALSE;
  *count += n;
  return TRUE;
}

/* Checks the parsed tensor: dims, element count, and that its data (raw or
 * typed) holds exactly that many elements. */
static gboolean
validate_tensor (MorokOnnxModel *m, MorokOnnxTensor *t, gsize typed_counts[12], gsize at,
                 GError **error)
{
  guint64 n = 1;

  for (guint k = 0; k < t->rank; k++)
    {
      gint64 d = t->dims[k];
      if (d < 0 || (d > 0 && n > (guint64) MAX_ELEMENTS / (guint64) d))
        {
          g_set_error (error, MOROK_IO_ERROR, MOROK_IO_ERROR_MALFORMED,
                       "%s: tensor '%s' at offset %" G_GSIZE_FORMAT
                       " has %s dimension %" G_GINT64_FORMAT,
                       m->name, t->name, at, d < 0 ? "a negative" : "an oversized", d);
          return FALSE;
        }
      n *= (guint64) d;
    }
  t->n_elements = (gint64) n;

  if (t->external)
    return TRUE;
  if (t->raw != NULL)
    {
      gsize esize = morok_onnx_dtype_size (t->dtype);
      if (esize != 0 && (guint64) t->raw_len != n * esize)
        {
          g_autofree char *dims = morok_onnx_tensor_format_dims (t);
          g_set_error (error, MOROK_IO_ERROR, MOROK_IO_ERROR_MALFORMED,
                       "%s: tensor '%s' at offset %" G_GSIZE_FORMAT " has %" G_GSIZE_FORMAT
                       " bytes of raw_data, %s %s needs %" G_GUINT64_FORMAT,
                       m->name, t->name, at, t->raw_len, morok_onnx_dtype_name (t->dtype), dims,
                       n * esize);
          return FALSE;
        }
      return TRUE;
    }
  guint32 field = typed_field_of (t->dtype);
  if (field != 0 && typed_counts[field] != n)
    {
      g_autofree char *dims = morok_onnx_tensor_format_dims (t);
      g_set_error (error, MOROK_IO_ERROR, MOROK_IO_ERROR_MALFORMED,
                   "%s: tensor '%s' at offset %" G_GSIZE_FORMAT " has %" G_GSIZE_FORMAT
                   " values in field %u, %s %s needs %" G_GUINT64_FORMAT,
                   m->name, t->name, at, typed_counts[field], field,
                   morok_onnx_dtype_name (t->dtype), dims, n);
      return FALSE;
    }
  return TRUE;
}

MorokOnnxTensor *
morok_onnx_parse_tensor (MorokOnnxModel *m, MorokPbReader *r, const MorokOnnxGraph *graph,
                         const MorokOnnxNode *node, GError **error)
{
  MorokOnnxTensor *t = morok_onnx_model_alloc (m, sizeof *t);
  g_autoptr (GArray) dims = g_array_new (FALSE, FALSE, sizeof (gint64));
  gsize typed_counts[12] = { 0 };
  gsize at = morok_pb_reader_offset (r);
  gint64 v;

  t->name = "";
  t->graph = graph;
  t->node = node;
  t->msg = r->pos;
  t->msg_len = (gsize) (r->end - r->pos);

  while (!morok_pb_reader_done (r))
    {
      guint32 field;
      MorokPbWire wire;
      const guint8 *data;
      gsize len;

      if (!morok_pb_read_tag (r, &field, &wire, error))
        return NULL;
      switch (field)
        {
        case 1: /* dims */
          if (!morok_onnx_read_repeated_varints (r, field, wire, dims, error))
            return NULL;
          break;
        case 2: /* data_type */
          if (!morok_onnx_read_int (r, field, wire, &v, error))
            return NULL;
          t->dtype = (gint32) v;
          break;
        case 3: /* segment */
          g_set_error (error, MOROK_IO_ERROR, MOROK_IO_ERROR_UNSUPPORTED,
                       "%s: segmented tensor at offset %" G_GSIZE_FORMAT, m->name, at);
          return NULL;
        case 4:  /* float_data */
        case 5:  /* int32_data */
        case 6:  /* string_data */
        case 7:  /* int64_data */
        case 10: /* double_data */
        case 11: /* uint64_data */
          if (!count_typed (r, field, wire, &typed_counts[field], error))
            return NULL;
          break;
        case 8: /* name */
          if (!morok_onnx_read_string (m, r, field, wire, &t->name, error))
            return NULL;
          break;
        case 9: /* raw_data */
          if (!morok_pb_expect_wire (r, field, wire, MOROK_PB_WIRE_LEN, error)
              || !morok_pb_read_len (r, field, &data, &len, error))
            return NULL;
          t->raw = data;
          t->raw_len = len;
          break;
        case 14: /* data_location */
          if (!morok_onnx_read_int (r, field, wire, &v, error))
            return NULL;
          t->external = v == 1;
          break;
        default:
          if (!morok_pb_skip (r, field, wire, error))
            return NULL;
        }
    }

  t->dims = morok_onnx_model_steal_values (m, g_steal_pointer (&dims), &t->rank);
  t->value_name = t->name;
  if (!validate_tensor (m, t, typed_counts, at, error))
    return NULL;
  return t;
}

/* The name to show for a tensor: a Constant's value often has none of its
 * own, only the node's output. */
static const char *
tensor_label (const MorokOnnxTensor *t)
{
  return t->name[0] != '\0' ? t->name : t->value_name;
}

/* --- Decoding ----------------------------------------------------------- */

/* One element, before conversion to the caller's type. */
typedef struct
{
  gboolean is_float;
  double f; /* when is_float */
  gint64 i; /* otherwise; UINT64 bit pattern for is_unsigned */
  gboolean is_unsigned;
} Value;

typedef struct
{
  const MorokOnnxTensor *t;
  const guint8 *raw;    /* raw_data mode: the next element */
  MorokPbReader msg;    /* typed mode: the TensorProto's remaining fields */
  MorokPbReader packed; /* typed mode: the packed payload being read */
  guint32 field;        /* typed mode: the field holding the values */
} Cursor;

static guint64
load_le (const guint8 *p, gsize n)
{
  guint64 v = 0;

  for (gsize k = 0; k < n; k++)
    v |= (guint64) p[k] << (8 * k);
  return v;
}

static void
cursor_init (Cursor *c, const MorokOnnxTensor *t)
{
  memset (c, 0, sizeof *c);
  c->t = t;
  c->raw = t->raw;
  c->msg = morok_pb_reader_init (t->msg, t->msg_len, t->graph->model->name, "TensorProto");
  switch (t->dtype)
    {
    case MOROK_ONNX_DTYPE_FLOAT: c->field = 4; break;
    case MOROK_ONNX_DTYPE_INT64: c->field = 7; break;
    case MOROK_ONNX_DTYPE_DOUBLE: c->field = 10; break;
    case MOROK_ONNX_DTYPE_UINT32:
    case MOROK_ONNX_DTYPE_UINT64: c->field = 11; break;
    default: c->field = 5;
    }
}

/* Reads the next entry of the typed field as its raw 64 bits. */
static gboolean
cursor_next_typed (Cursor *c, guint64 *out, GError **error)
{
  for (;;)
    {
      MorokPbReader *src = &c->packed;
      guint32 field;
      MorokPbWire wire;
      guint32 v32;

      if (morok_pb_reader_done (&c->packed))
        {
          if (morok_pb_reader_done (&c->msg))
            {
              g_set_error (error, MOROK_IO_ERROR, MOROK_IO_ERROR_MALFORMED,
                           "%s: tensor '%s' has fewer values than elements", c->msg.file,
                           tensor_label (c->t));
              return FALSE;
            }
          if (!morok_pb_read_tag (&c->msg, &field, &wire, error))
            return FALSE;
          if (field != c->field)
            {
              if (!morok_pb_skip (&c->msg, field, wire, error))
                return FALSE;
              continue;
            }
          if (wire == MOROK_PB_WIRE_LEN)
            {
              if (!morok_pb_read_message (&c->msg, field, "TensorProto", &c->packed, error))
                return FALSE;
              continue;
            }
          src = &c->msg;
        }
      if (c->field == 4)
        {
          if (!morok_pb_read_fixed32 (src, c->field, &v32, error))
            return FALSE;
          *out = v32;
          return TRUE;
        }
      if (c->field == 10)
        return morok_pb_read_fixed64 (src, c->field, out, error);
      return morok_pb_read_varint (src, out, error);
    }
}

static gboolean
cursor_next (Cursor *c, Value *v, GError **error)
{
  gint32 dtype = c->t->dtype;
  gsize size = morok_onnx_dtype_size (dtype);
  guint64 bits;

  if (c->raw != NULL)
    {
      bits = load_le (c->raw, size);
      c->raw += size;
    }
  else if (!cursor_next_typed (c, &bits, error))
    return FALSE;

  memset (v, 0, sizeof *v);
  switch (dtype)
    {
    case MOROK_ONNX_DTYPE_FLOAT:
      v->is_float = TRUE;
      v->f = bits_to_float ((guint32) bits);
      break;
    case MOROK_ONNX_DTYPE_DOUBLE:
      v->is_float = TRUE;
      memcpy (&v->f, &bits, 8);
      break;
    case MOROK_ONNX_DTYPE_FLOAT16:
      v->is_float = TRUE;
      v->f = half_to_float ((guint16) bits);
      break;
    case MOROK_ONNX_DTYPE_BFLOAT16:
      v->is_float = TRUE;
      v->f = bits_to_float ((guint32) (guint16) bits << 16);
      break;
    case MOROK_ONNX_DTYPE_INT8: v->i = (gint8) bits; break;
    case MOROK_ONNX_DTYPE_UINT8: v->i = (guint8) bits; break;
    case MOROK_ONNX_DTYPE_INT16: v->i = (gint16) bits; break;
    case MOROK_ONNX_DTYPE_UINT16: v->i = (guint16) bits; break;
    case MOROK_ONNX_DTYPE_INT32: v->i = (gint32) bits; break;
    case MOROK_ONNX_DTYPE_UINT32: v->i = (guint32) bits; break;
    case MOROK_ONNX_DTYPE_BOOL: v->i = (guint8) bits != 0; break;
    case MOROK_ONNX_DTYPE_UINT64:
      v->is_unsigned = TRUE;
      /* fall through */
    default: v->i = (gint64) bits;
    }
  return TRUE;
}

/* Fails unless the tensor's values can be decoded and converted: integers
 * only when `integer`, any number otherwise. */
static gboolean
check_convertible (const MorokOnnxTensor *t, gboolean integer, GError **error)
{
  const char *file = t->graph->model->name;

  if (t->external)
    {
      g_set_error (error, MOROK_IO_ERROR, MOROK_IO_ERROR_UNSUPPORTED,
                   "%s: tensor '%s' keeps its data in an external file", file, tensor_label (t));
      return FALSE;
    }
  if (dtype_is_integer (t->dtype) || (!integer && dtype_is_float (t->dtype)))
    return TRUE;
  g_set_error (error, MOROK_IO_ERROR, MOROK_IO_ERROR_UNSUPPORTED,
               "%s: tensor '%s' is %s, cannot convert it to %s", file, tensor_label (t),
               morok_onnx_dtype_name (t->dtype), integer ? "int64" : "float");
  return FALSE;
}

float *
morok_onnx_tensor_to_f32 (const MorokOnnxTensor *tensor, gsize *out_n, GError **error)
{
  g_autofree float *out = NULL;
  gsize n;
  Cursor c;
  Value v;

  g_return_val_if_fail (tensor != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!check_convertible (tensor, FALSE, error))
    return NULL;
  n = (gsize) tensor->n_elements;
  out = g_new (float, MAX (n, 1));
  if (tensor->raw != NULL && tensor->dtype == MOROK_ONNX_DTYPE_FLOAT
      && G_BYTE_ORDER == G_LITTLE_ENDIAN)
    {
      /* The common case (every Silero weight): already the right bytes. */
      memcpy (out, tensor->raw, n * sizeof (float));
    }
  else
    {
      cursor_init (&c, tensor);
      for (gsize k = 0; k < n; k++)
        {
          if (!cursor_next (&c, &v, error))
            return NULL;
          out[k] = v.is_float ? (float) v.f : v.is_unsigned ? (float) (guint64) v.i : (float) v.i;
        }
    }
  if (out_n != NULL)
    *out_n = n;
  return g_steal_pointer (&out);
}

gint64 *
morok_onnx_tensor_to_i64 (const MorokOnnxTensor *tensor, gsize *out_n, GError **error)
{
  g_autofree gint64 *out = NULL;
  gsize n;
  Cursor c;
  Value v;

  g_return_val_if_fail (tensor != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!check_convertible (tensor, TRUE, error))
    return NULL;
  n = (gsize) tensor->n_elements;
  out = g_new (gint64, MAX (n, 1));
  cursor_init (&c, tensor);
  for (gsize k = 0; k < n; k++)
    {
      if (!cursor_next (&c, &v, error))
        return NULL;
      out[k] = v.i;
    }
  if (out_n != NULL)
    *out_n = n;
  return g_steal_pointer (&out);
}

/* --- Shapes ------------------------------------------------------------- */

static char *
format_dims (guint rank, const gint64 *dims)
{
  GString *s = g_string_new ("[");

  for (guint k = 0; k < rank; k++)
    g_string_append_printf (s, "%s%" G_GINT64_FORMAT, k ? "," : "", dims[k]);
  g_string_append_c (s, ']');
  return g_string_free (s, FALSE);
}

char *
morok_onnx_tensor_format_dims (const MorokOnnxTensor *tensor)
{
  g_return_val_if_fail (tensor != NULL, NULL);
  return format_dims (tensor->rank, tensor->dims);
}

gboolean
morok_onnx_tensor_check_dims (const MorokOnnxTensor *tensor, guint rank, const gint64 *dims,
                              GError **error)
{
  g_return_val_if_fail (tensor != NULL, FALSE);
  g_return_val_if_fail (dims != NULL || rank == 0, FALSE);

  if (tensor->rank == rank
      && (rank == 0 || memcmp (tensor->dims, dims, rank * sizeof (gint64)) == 0))
    return TRUE;

  g_autofree char *have = format_dims (tensor->rank, tensor->dims);
  g_autofree char *want = format_dims (rank, dims);
  g_set_error (error, MOROK_IO_ERROR, MOROK_IO_ERROR_MALFORMED,
               "%s: tensor '%s' is %s, expected %s", tensor->graph->model->name,
               tensor_label (tensor), have, want);
  return FALSE;
}
