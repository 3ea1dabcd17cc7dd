/* SPDX-License-Identifier: MIT */
/* What the GigaAM loader (gigaam.c) and the graph builders
 * (gigaam-frontend.c, gigaam-encoder.c) share. */
#pragma once

#include "io/safetensors.h"
#include "models/gigaam.h"

/* One weight as f32, in the file's shape: read in place from the mapped
 * file, or from a copy of the model's own (stored as f16, bf16 or f64, not
 * aligned for floats, or reordered at load). */
typedef struct
{
  const float *data;             /* NULL once a plan has packed it and it was released */
  float *copy;                   /* data when the model owns it, else NULL */
  const MorokSafetensor *tensor; /* where data lies in the mapping, else NULL */
  guint rank;
  gint64 dims[4];
} GigaAmWeight;

/* The tensors a model is read from, by their upstream names: one Morok
 * file, or the files of a model hub folder (gigaam-hub.c). */
typedef struct
{
  GPtrArray *files;    /* MorokSafetensors*, mapped while the model lives */
  GHashTable *by_name; /* name -> const MorokSafetensor*; NULL: the one file's names */
  GHashTable *made;    /* tensors made at load (a folder's front-end tables): MorokSafetensor*
                          -> their storage; not mapped, so never dropped */
} GigaAmTensors;

struct _MorokGigaAm
{
  gint ref_count;
  char *path;
  char *file; /* basename, for messages */
  MorokGigaAmConfig config;
  gboolean folder;       /* loaded from a model hub folder, not a Morok file */
  GigaAmTensors tensors; /* the files, mapped while the model lives: the weights read in place */
  GHashTable *weights;   /* name -> GigaAmWeight*; the subsampling's weights are
                           reordered (gigaam.c, reorder_subsampling_weights) */
  /* front-end constants made at load from the stored window and filterbank */
  float *dft;     /* [n_fft, 2Q], Q = n_fft / 2 + 1: window * cos | window * -sin */
  float *dft_hi;  /* dft rounded towards 0 to multiples of 2^-7 (exact) */
  float *dft_lo;  /* the exact basis minus dft_hi, rounded to f32 */
  float *mel_fb2; /* [2Q, F]: the filterbank twice, so mel = (dft²) · mel_fb2 */
  /* tables the builders size from a plan's bounds (positions, thresholds,
   * rotary), by name and length: they live as long as the model, like the
   * weights, and a second build reuses them (so its nodes merge) */
  GHashTable *tables; /* "name:length" -> float* */
  guint max_batch;
  gint64 max_samples;
  gboolean release_packed; /* morok_gigaam_set_release_packed () */
};

/* ---- model hub folders (gigaam-hub.c) ---- */

/* Opens the folder @dir (config.json, model.safetensors or shards with their
 * index, tokenizer.model) into m->tensors and makes the normalised config
 * that a converted file holds as "morok.config": (transfer full) its JSON,
 * or NULL with a MOROK_IO_ERROR naming the file and what is wrong. */
char *gigaam_hub_open (MorokGigaAm *m, const char *dir, GError **error);
/* Makes the front-end's window and mel filterbank from m->config when the
 * folder has none, as scripts/gigaam/convert.py does. */
void gigaam_hub_add_frontend (MorokGigaAm *m);
/* The tensor @name of @m's files, or NULL with MOROK_IO_ERROR_NOT_FOUND. */
const MorokSafetensor *gigaam_tensors_get (const MorokGigaAm *m, const char *name, GError **error);
void gigaam_tensors_clear (GigaAmTensors *t);

/* Reads the config @json of @m's file into m->config (gigaam-config.c);
 * FALSE with a MOROK_IO_ERROR naming the file and the field. */
gboolean gigaam_read_config (MorokGigaAm *m, const char *json, GError **error);

/* wav [b, t] -> log-mel [b, T + 2 pad_t, F + 2 pad_f]: the features with
 * zero padding around them, made inside the front-end (gigaam-frontend.c). */
MorokTensor *gigaam_log_mel (MorokGigaAm *model, MorokTensor *wav, MorokTensor *lengths,
                             gint64 pad_t, gint64 pad_f, GError **error);

/* Frames of @samples samples after @stage of the two stride-2 subsampling
 * layers: 0 the feature frames, 2 the encoded frames. */
gint64 gigaam_stage_frames (const MorokGigaAm *model, gint64 samples, guint stage);

/* A weight tensor of @model in @g, by name (printf-style, e.g. a layer
 * index); NULL with a MOROK_TENSOR_ERROR if the model has no such weight
 * (a bug: load checked every name the builders use). */
MorokTensor *gigaam_weight (MorokGigaAm *model, MorokGraph *g, GError **error, const char *fmt, ...)
    G_GNUC_PRINTF (4, 5);
/* The weight @name of @model as it lies on the host, or NULL with a
 * MOROK_TENSOR_ERROR if the model has no such weight or a plan released it. */
GigaAmWeight *gigaam_weight_data (MorokGigaAm *model, const char *name, GError **error);
/* The f32 table @name of @n values, living as long as @model: a new one
 * (zeros, *out_fill set to TRUE: the caller fills it) or the one made
 * before with that name and length. */
float *gigaam_table (MorokGigaAm *model, const char *name, gsize n, gboolean *out_fill);
