/* SPDX-License-Identifier: MIT */
/* Reading a SentencePiece ModelProto with the protobuf wire reader. Fields
 * (sentencepiece_model.proto):
 *   ModelProto     1 repeated SentencePiece, 2 TrainerSpec, 3 NormalizerSpec
 *   SentencePiece  1 piece, 2 score (unused here), 3 type (default NORMAL)
 *   TrainerSpec    40 unk_id (0), 41 bos_id (1), 42 eos_id (2), 43 pad_id (-1),
 *                  44 unk_surface (" ⁇ ")
 *   NormalizerSpec 3 add_dummy_prefix (true), 4 remove_extra_whitespaces (true) */
#define G_LOG_DOMAIN "morok-io"
#include "io/sentencepiece-model.h"

#include "io/morok-io.h"
#include "io/protobuf-wire.h"

#include <string.h>

const char *
morok_sp_piece_type_name (MorokSpPieceType type)
{
  static const char *const names[]
      = { NULL, "normal", "unknown", "control", "user_defined", "unused", "byte" };
  return type >= MOROK_SP_PIECE_NORMAL && type <= MOROK_SP_PIECE_BYTE ? names[type] : NULL;
}

static gboolean
read_string (MorokPbReader *r, guint32 field, MorokPbWire wire, char **out, GError **error)
{
  const guint8 *data;
  gsize len;
  if (!morok_pb_expect_wire (r, field, wire, MOROK_PB_WIRE_LEN, error)
      || !morok_pb_read_len (r, field, &data, &len, error))
    return FALSE;
  if (!g_utf8_validate ((const char *) data, (gssize) len, NULL))
    {
      g_set_error (error, MOROK_IO_ERROR, MOROK_IO_ERROR_MALFORMED,
                   "%s: field %u of %s is not UTF-8", r->file, field, r->what);
      return FALSE;
    }
  g_free (*out);
  *out = g_strndup ((const char *) data, len);
  return TRUE;
}

static gboolean
read_int (MorokPbReader *r, guint32 field, MorokPbWire wire, guint64 *out, GError **error)
{
  return morok_pb_expect_wire (r, field, wire, MOROK_PB_WIRE_VARINT, error)
         && morok_pb_read_varint (r, out, error);
}

static gboolean
read_piece (MorokPbReader *r, GPtrArray *pieces, GArray *types, GError **error)
{
  char *piece = g_strdup ("");
  guint64 type = MOROK_SP_PIECE_NORMAL;
  g_ptr_array_add (pieces, piece); /* freed with the array from here on */
  while (!morok_pb_reader_done (r))
    {
      guint32 field;
      MorokPbWire wire;
      if (!morok_pb_read_tag (r, &field, &wire, error))
        return FALSE;
      gboolean ok = field == 1   ? read_string (r, field, wire,
                                                (char **) &pieces->pdata[pieces->len - 1], error)
                    : field == 3 ? read_int (r, field, wire, &type, error)
                                 : morok_pb_skip (r, field, wire, error);
      if (!ok)
        return FALSE;
    }
  if (type < MOROK_SP_PIECE_NORMAL || type > MOROK_SP_PIECE_BYTE)
    {
      g_set_error (error, MOROK_IO_ERROR, MOROK_IO_ERROR_MALFORMED,
                   "%s: piece %u has unknown type %" G_GUINT64_FORMAT, r->file, pieces->len - 1,
                   type);
      return FALSE;
    }
  MorokSpPieceType t = (MorokSpPieceType) type;
  g_array_append_val (types, t);
  return TRUE;
}

static gboolean
read_trainer (MorokPbReader *r, MorokSpModel *sp, GError **error)
{
  gint32 *ids[] = { &sp->unk_id, &sp->bos_id, &sp->eos_id, &sp->pad_id }; /* fields 40 .. 43 */
  while (!morok_pb_reader_done (r))
    {
      guint32 field;
      MorokPbWire wire;
      guint64 v;
      if (!morok_pb_read_tag (r, &field, &wire, error))
        return FALSE;
      gboolean ok;
      if (field >= 40 && field <= 43)
        {
          ok = read_int (r, field, wire, &v, error);
          *ids[field - 40] = (gint32) (gint64) v; /* int32: negatives are sign-extended */
        }
      else if (field == 44)
        ok = read_string (r, field, wire, &sp->unk_surface, error);
      else
        ok = morok_pb_skip (r, field, wire, error);
      if (!ok)
        return FALSE;
    }
  return TRUE;
}

static gboolean
read_normalizer (MorokPbReader *r, MorokSpModel *sp, GError **error)
{
  while (!morok_pb_reader_done (r))
    {
      guint32 field;
      MorokPbWire wire;
      guint64 v = 0;
      if (!morok_pb_read_tag (r, &field, &wire, error))
        return FALSE;
      gboolean ok = field == 3 || field == 4 ? read_int (r, field, wire, &v, error)
                                             : morok_pb_skip (r, field, wire, error);
      if (!ok)
        return FALSE;
      if (field == 3)
        sp->add_dummy_prefix = v != 0;
      else if (field == 4)
        sp->remove_extra_whitespaces = v != 0;
    }
  return TRUE;
}

static gboolean
read_model (MorokPbReader *r, MorokSpModel *sp, GError **error)
{
  g_autoptr (GPtrArray) pieces = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GArray) types = g_array_new (FALSE, FALSE, sizeof (MorokSpPieceType));
  while (!morok_pb_reader_done (r))
    {
      guint32 field;
      MorokPbWire wire;
      MorokPbReader sub;
      if (!morok_pb_read_tag (r, &field, &wire, error))
        return FALSE;
      gboolean ok;
      if (field >= 1 && field <= 3)
        {
          static const char *const what[]
              = { NULL, "SentencePiece", "TrainerSpec", "NormalizerSpec" };
          ok = morok_pb_expect_wire (r, field, wire, MOROK_PB_WIRE_LEN, error)
               && morok_pb_read_message (r, field, what[field], &sub, error)
               && (field == 1   ? read_piece (&sub, pieces, types, error)
                   : field == 2 ? read_trainer (&sub, sp, error)
                                : read_normalizer (&sub, sp, error));
        }
      else
        ok = morok_pb_skip (r, field, wire, error);
      if (!ok)
        return FALSE;
    }
  if (pieces->len == 0)
    {
      g_set_error (error, MOROK_IO_ERROR, MOROK_IO_ERROR_MALFORMED,
                   "%s: no pieces: not a SentencePiece model", r->file);
      return FALSE;
    }
  sp->n_pieces = pieces->len;
  g_ptr_array_add (pieces, NULL);
  sp->pieces = (char **) g_ptr_array_steal (pieces, NULL);
  sp->types = (MorokSpPieceType *) g_array_steal (types, NULL);
  return TRUE;
}

MorokSpModel *
morok_sp_model_load (const char *path, GError **error)
{
  g_return_val_if_fail (path != NULL, NULL);
  g_autoptr (GMappedFile) file = morok_io_map_file (path, error);
  if (!file)
    return NULL;
  g_autofree char *name = g_path_get_basename (path);
  g_autoptr (MorokSpModel) sp = g_new0 (MorokSpModel, 1);
  *sp = (MorokSpModel){ .unk_id = 0,
                        .bos_id = 1,
                        .eos_id = 2,
                        .pad_id = -1,
                        .unk_surface = g_strdup (" \u2047 "),
                        .add_dummy_prefix = TRUE,
                        .remove_extra_whitespaces = TRUE };
  gsize size = g_mapped_file_get_length (file);
  MorokPbReader r = morok_pb_reader_init (size ? (const guint8 *) g_mapped_file_get_contents (file)
                                               : (const guint8 *) "",
                                          size, name, "ModelProto");
  if (!read_model (&r, sp, error))
    return NULL;
  return g_steal_pointer (&sp);
}

void
morok_sp_model_free (MorokSpModel *sp)
{
  if (!sp)
    return;
  g_strfreev (sp->pieces);
  g_free (sp->types);
  g_free (sp->unk_surface);
  g_free (sp);
}
