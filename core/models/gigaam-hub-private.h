/* SPDX-License-Identifier: MIT */
/* What the model hub folder's reader (gigaam-hub.c) and its config
 * normalisation (gigaam-hub-config.c) share. */
#pragma once

#include <json-glib/json-glib.h>

#include "io/sentencepiece-model.h"
#include "models/gigaam-private.h"

/* A folder being opened. */
typedef struct
{
  const char *dir;         /* the folder, as given */
  const char *config_file; /* "<folder>/config.json", for messages */
  GHashTable *by_name;     /* upstream name -> const MorokSafetensor* (borrowed) */
  MorokSpModel *tokenizer; /* NULL: a character vocabulary */
  GError **error;
} GigaAmHub;

/* The normalised config ("morok.config" of a converted file) of the
 * upstream config @cfg and the folder's tensors: (transfer full) JSON, or
 * NULL with h->error set naming config.json and the field. */
char *gigaam_hub_normalise (GigaAmHub *h, JsonObject *cfg);
/* The tokenizer file that @cfg names (decoding.model_path), or NULL. */
const char *gigaam_hub_named_tokenizer (JsonObject *cfg);
/* TRUE when @cfg's vocabulary is a SentencePiece model: it names one, or
 * has no character vocabulary. */
gboolean gigaam_hub_wants_tokenizer (JsonObject *cfg);
/* Sets h->error: the folder's weights have no tensor @name. Returns FALSE. */
gboolean gigaam_hub_missing (GigaAmHub *h, const char *name);
