/* SPDX-License-Identifier: MIT */
/* protobuf-wire.c: bounds-checked protobuf wire-format primitives. */
#define G_LOG_DOMAIN "morok-io"

#include "io/protobuf-wire.h"
#include "io/morok-io.h"

#include <string.h>

#define MAX_FIELD_NUMBER ((1u << 29) - 1)

MorokPbReader
morok_pb_reader_init (const guint8 *data, gsize size, const char *file, const char *what)
{
  MorokPbReader r = { data, data, data + size, size, file, what };
  return r;
}

static gsize
bytes_left (const MorokPbReader *r)
{
  return (gsize) (r->end - r->pos);
}

/* A field that needs more bytes than its message has left: truncated when
 * the message reaches the end of the buffer (the data was cut off),
 * malformed when an enclosing message ends first. */
static void
set_overrun_error (const MorokPbReader *r, GError **error, const char *kind, guint32 field,
                   gsize at, guint64 need)
{
  gboolean cut = r->end == r->base + r->size;
  g_set_error (error, MOROK_IO_ERROR, cut ? MOROK_IO_ERROR_TRUNCATED : MOROK_IO_ERROR_MALFORMED,
               "%s: %s %s field %u at offset %" G_GSIZE_FORMAT " (%s): needs %" G_GUINT64_FORMAT
               " bytes, %s has %" G_GSIZE_FORMAT " left",
               r->file, cut ? "truncated" : "overlong", kind, field, at, r->what, need,
               cut ? "the data" : "the enclosing message", bytes_left (r));
}

gboolean
morok_pb_read_varint (MorokPbReader *r, guint64 *out_value, GError **error)
{
  const guint8 *p = r->pos;
  guint64 v = 0;

  for (guint i = 0; i < 10; i++)
    {
      if (p >= r->end)
        {
          gboolean cut = r->end == r->base + r->size;
          g_set_error (error, MOROK_IO_ERROR,
                       cut ? MOROK_IO_ERROR_TRUNCATED : MOROK_IO_ERROR_MALFORMED,
                       "%s: %s varint at offset %" G_GSIZE_FORMAT " (%s)", r->file,
                       cut ? "truncated" : "unterminated", morok_pb_reader_offset (r), r->what);
          return FALSE;
        }
      guint8 b = *p++;
      /* The tenth byte holds bit 63 only. */
      if (i == 9 && b > 1)
        break;
      v |= (guint64) (b & 0x7f) << (7 * i);
      if (!(b & 0x80))
        {
          r->pos = p;
          *out_value = v;
          return TRUE;
        }
    }
  g_set_error (error, MOROK_IO_ERROR, MOROK_IO_ERROR_MALFORMED,
               "%s: varint overflows 64 bits at offset %" G_GSIZE_FORMAT " (%s)", r->file,
               morok_pb_reader_offset (r), r->what);
  return FALSE;
}

gboolean
morok_pb_read_tag (MorokPbReader *r, guint32 *out_field, MorokPbWire *out_wire, GError **error)
{
  gsize at = morok_pb_reader_offset (r);
  guint64 tag;

  if (!morok_pb_read_varint (r, &tag, error))
    return FALSE;
  guint64 field = tag >> 3;
  guint wire = (guint) (tag & 7);
  if (field == 0 || field > MAX_FIELD_NUMBER)
    {
      g_set_error (error, MOROK_IO_ERROR, MOROK_IO_ERROR_MALFORMED,
                   "%s: invalid field number %" G_GUINT64_FORMAT " at offset %" G_GSIZE_FORMAT
                   " (%s)",
                   r->file, field, at, r->what);
      return FALSE;
    }
  if (wire != MOROK_PB_WIRE_VARINT && wire != MOROK_PB_WIRE_I64 && wire != MOROK_PB_WIRE_LEN
      && wire != MOROK_PB_WIRE_I32)
    {
      g_set_error (error, MOROK_IO_ERROR, MOROK_IO_ERROR_MALFORMED,
                   "%s: %s wire type %u for field %u at offset %" G_GSIZE_FORMAT " (%s)", r->file,
                   wire == 3 || wire == 4 ? "unsupported group" : "invalid", wire, (guint) field,
                   at, r->what);
      return FALSE;
    }
  *out_field = (guint32) field;
  *out_wire = (MorokPbWire) wire;
  return TRUE;
}

gboolean
morok_pb_read_len (MorokPbReader *r, guint32 field, const guint8 **out_data, gsize *out_len,
                   GError **error)
{
  gsize at = morok_pb_reader_offset (r);
  guint64 len;

  if (!morok_pb_read_varint (r, &len, error))
    return FALSE;
  if (len > bytes_left (r))
    {
      set_overrun_error (r, error, "length-delimited", field, at, len);
      return FALSE;
    }
  *out_data = r->pos;
  *out_len = (gsize) len;
  r->pos += len;
  return TRUE;
}

gboolean
morok_pb_read_message (MorokPbReader *r, guint32 field, const char *what, MorokPbReader *out_sub,
                       GError **error)
{
  const guint8 *data;
  gsize len;

  if (!morok_pb_read_len (r, field, &data, &len, error))
    return FALSE;
  *out_sub = *r;
  out_sub->pos = data;
  out_sub->end = data + len;
  out_sub->what = what;
  return TRUE;
}

static gboolean
read_fixed (MorokPbReader *r, guint32 field, guint n, guint64 *out_value, GError **error)
{
  guint8 bytes[8];
  guint64 v = 0;

  if (bytes_left (r) < n)
    {
      set_overrun_error (r, error, n == 4 ? "32-bit" : "64-bit", field, morok_pb_reader_offset (r),
                         n);
      return FALSE;
    }
  memcpy (bytes, r->pos, n);
  for (guint i = 0; i < n; i++)
    v |= (guint64) bytes[i] << (8 * i);
  r->pos += n;
  *out_value = v;
  return TRUE;
}

gboolean
morok_pb_read_fixed32 (MorokPbReader *r, guint32 field, guint32 *out_value, GError **error)
{
  guint64 v;

  if (!read_fixed (r, field, 4, &v, error))
    return FALSE;
  *out_value = (guint32) v;
  return TRUE;
}

gboolean
morok_pb_read_fixed64 (MorokPbReader *r, guint32 field, guint64 *out_value, GError **error)
{
  return read_fixed (r, field, 8, out_value, error);
}

gboolean
morok_pb_skip (MorokPbReader *r, guint32 field, MorokPbWire wire, GError **error)
{
  guint64 v;
  const guint8 *data;
  gsize len;

  switch (wire)
    {
    case MOROK_PB_WIRE_VARINT: return morok_pb_read_varint (r, &v, error);
    case MOROK_PB_WIRE_I64: return read_fixed (r, field, 8, &v, error);
    case MOROK_PB_WIRE_I32: return read_fixed (r, field, 4, &v, error);
    case MOROK_PB_WIRE_LEN: return morok_pb_read_len (r, field, &data, &len, error);
    case MOROK_PB_WIRE_SGROUP:
    case MOROK_PB_WIRE_EGROUP:
    default: break;
    }
  g_set_error (error, MOROK_IO_ERROR, MOROK_IO_ERROR_MALFORMED,
               "%s: cannot skip wire type %u of field %u at offset %" G_GSIZE_FORMAT " (%s)",
               r->file, (guint) wire, field, morok_pb_reader_offset (r), r->what);
  return FALSE;
}

gboolean
morok_pb_expect_wire (MorokPbReader *r, guint32 field, MorokPbWire wire, MorokPbWire expected,
                      GError **error)
{
  if (wire == expected)
    return TRUE;
  g_set_error (error, MOROK_IO_ERROR, MOROK_IO_ERROR_MALFORMED,
               "%s: field %u of %s has wire type %u, expected %u, at offset %" G_GSIZE_FORMAT,
               r->file, field, r->what, (guint) wire, (guint) expected, morok_pb_reader_offset (r));
  return FALSE;
}

gboolean
morok_pb_count_packed_varints (const MorokPbReader *r, const guint8 *data, gsize len,
                               gsize *out_count, GError **error)
{
  MorokPbReader sub = *r;
  gsize count = 0;
  guint64 v;

  sub.pos = data;
  sub.end = data + len;
  while (!morok_pb_reader_done (&sub))
    {
      if (!morok_pb_read_varint (&sub, &v, error))
        return FALSE;
      count++;
    }
  *out_count = count;
  return TRUE;
}
