/* SPDX-License-Identifier: MIT */
/* sentencepiece-model.h (private to the library): the parts of a
 * SentencePiece `.model` file (one protobuf ModelProto,
 * sentencepiece_model.proto) that a decoder needs: the pieces, whose ids are
 * their positions, their types, the special ids and the normalizer's flags.
 *
 *   g_autoptr (MorokSpModel) sp = morok_sp_model_load ("tokenizer.model", &error);
 *   if (!sp)
 *     return FALSE;  // "tokenizer.model: piece 3 has unknown type 9"
 *   for (guint i = 0; i < sp->n_pieces; i++)
 *     g_print ("%u %s %s\n", i, sp->pieces[i], morok_sp_piece_type_name (sp->types[i]));
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* SentencePiece.Type, as the file numbers them. */
typedef enum
{
  MOROK_SP_PIECE_NORMAL = 1,
  MOROK_SP_PIECE_UNKNOWN = 2,
  MOROK_SP_PIECE_CONTROL = 3,
  MOROK_SP_PIECE_USER_DEFINED = 4,
  MOROK_SP_PIECE_UNUSED = 5,
  MOROK_SP_PIECE_BYTE = 6,
} MorokSpPieceType;

typedef struct
{
  char **pieces;           /* [n_pieces] UTF-8, NULL-terminated */
  MorokSpPieceType *types; /* [n_pieces] */
  guint n_pieces;
  /* TrainerSpec, with the format's defaults where the file has none */
  gint32 unk_id, bos_id, eos_id, pad_id; /* -1: none */
  char *unk_surface;                     /* what the unknown piece decodes to */
  /* NormalizerSpec */
  gboolean add_dummy_prefix;
  gboolean remove_extra_whitespaces;
} MorokSpModel;

/* Reads @path. (transfer full); NULL with a MOROK_IO_ERROR naming the file:
 * OPEN, TRUNCATED, MALFORMED (bad protobuf, a piece that is not UTF-8, an
 * unknown piece type, no pieces). */
MorokSpModel *morok_sp_model_load (const char *path, GError **error);
void morok_sp_model_free (MorokSpModel *model);
/* "normal", "unknown", "control", "user_defined", "unused", "byte". */
const char *morok_sp_piece_type_name (MorokSpPieceType type);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (MorokSpModel, morok_sp_model_free)

G_END_DECLS
