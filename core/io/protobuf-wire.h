/* SPDX-License-Identifier: MIT */
/* protobuf-wire.h (private to core/io): bounds-checked reading of the
 * protobuf wire format.
 *
 * A MorokPbReader walks one message: [pos, end) inside a buffer that starts
 * at base. Every read checks the bytes it needs against end and fails with a
 * MOROK_IO_ERROR naming the file, the message type, the field and the offset
 * from base, so a truncated or corrupt file never causes a read outside the
 * buffer.
 *
 *   MorokPbReader r = morok_pb_reader_init (data, size, "vad.onnx", "ModelProto");
 *   while (!morok_pb_reader_done (&r))
 *     {
 *       guint32 field;
 *       MorokPbWire wire;
 *       if (!morok_pb_read_tag (&r, &field, &wire, error))
 *         return FALSE;
 *       if (field == 7 && wire == MOROK_PB_WIRE_LEN)
 *         ... morok_pb_read_message (&r, field, "GraphProto", &sub, error) ...
 *       else if (!morok_pb_skip (&r, field, wire, error))
 *         return FALSE;
 *     }
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef enum
{
  MOROK_PB_WIRE_VARINT = 0,
  MOROK_PB_WIRE_I64 = 1,
  MOROK_PB_WIRE_LEN = 2,
  MOROK_PB_WIRE_SGROUP = 3, /* deprecated groups: rejected */
  MOROK_PB_WIRE_EGROUP = 4,
  MOROK_PB_WIRE_I32 = 5,
} MorokPbWire;

typedef struct
{
  const guint8 *base; /* start of the whole buffer: offsets count from here */
  const guint8 *pos;
  const guint8 *end; /* end of the current message */
  gsize size;        /* size of the whole buffer */
  const char *file;  /* for error messages, borrowed */
  const char *what;  /* message type being read, e.g. "TensorProto", borrowed */
} MorokPbReader;

/* Returns a reader over a whole buffer of `size` bytes. */
MorokPbReader morok_pb_reader_init (const guint8 *data, gsize size, const char *file,
                                    const char *what);

/* Returns TRUE when the reader is at the end of its message. */
static inline gboolean
morok_pb_reader_done (const MorokPbReader *r)
{
  return r->pos >= r->end;
}

/* Returns the offset of the reader's position from the start of the buffer. */
static inline gsize
morok_pb_reader_offset (const MorokPbReader *r)
{
  return (gsize) (r->pos - r->base);
}

/* Reads a varint of at most 10 bytes. Fails when it is cut off or longer. */
gboolean morok_pb_read_varint (MorokPbReader *r, guint64 *out_value, GError **error);

/* Reads a field tag. Fails on field number 0, a number above 2^29 - 1 or an
 * invalid or group wire type. */
gboolean morok_pb_read_tag (MorokPbReader *r, guint32 *out_field, MorokPbWire *out_wire,
                            GError **error);

/* Reads the payload of a length-delimited field: out_data points into the
 * buffer (borrowed). Fails when the length runs past the message. */
gboolean morok_pb_read_len (MorokPbReader *r, guint32 field, const guint8 **out_data,
                            gsize *out_len, GError **error);

/* Reads a length-delimited field as a sub-message reader over its payload. */
gboolean morok_pb_read_message (MorokPbReader *r, guint32 field, const char *what,
                                MorokPbReader *out_sub, GError **error);

/* Reads 4 or 8 little-endian bytes. */
gboolean morok_pb_read_fixed32 (MorokPbReader *r, guint32 field, guint32 *out_value,
                                GError **error);
gboolean morok_pb_read_fixed64 (MorokPbReader *r, guint32 field, guint64 *out_value,
                                GError **error);

/* Skips a field's payload of the given wire type. */
gboolean morok_pb_skip (MorokPbReader *r, guint32 field, MorokPbWire wire, GError **error);

/* Fails with MOROK_IO_ERROR_MALFORMED unless wire == expected, naming the
 * field; for fields whose meaning depends on their wire type. */
gboolean morok_pb_expect_wire (MorokPbReader *r, guint32 field, MorokPbWire wire,
                               MorokPbWire expected, GError **error);

/* Counts the varints in a packed field payload, checking each one. */
gboolean morok_pb_count_packed_varints (const MorokPbReader *r, const guint8 *data, gsize len,
                                        gsize *out_count, GError **error);

G_END_DECLS
