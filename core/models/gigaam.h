/* SPDX-License-Identifier: MIT */
/* GigaAM (v3 and v2, CTC and RNN-T): the model file and the forward pass as lazy tensors.
 *
 * morok_gigaam_load () reads a GigaAM model: a model hub folder as
 * downloaded (config.json, model.safetensors or its shards,
 * tokenizer.model), or a Morok GigaAM file (one safetensors file whose
 * __metadata__["morok.config"] holds the config, docs/gigaam-model.md);
 * it checks the config and the shape of every tensor it needs, and keeps the
 * files mapped: f32 weights are read in place from it, the others converted
 * to f32 once, at load (morok_gigaam_weight_bytes_owned). The graph
 * builders below turn it into tensors: the log-mel front-end from the
 * waveform, the Conformer encoder, the CTC head. The JIT wrappers in
 * models/gigaam-encoder-jit.h put them into one prepared plan.
 *
 *   g_autoptr (GError) error = NULL;
 *   g_autoptr (MorokGigaAm) model = morok_gigaam_load ("gigaam-v3-ctc.safetensors", &error);
 *   if (!model)
 *     return FALSE;  // "m.safetensors: tensor '...norm_out.weight' is [512], expected [768]"
 *   const MorokGigaAmConfig *cfg = morok_gigaam_config (model);
 *   g_print ("%s, %u layers, d_model %u\n", cfg->version == MOROK_GIGAAM_V3 ? "v3" : "v2",
 *            cfg->n_layers, cfg->d_model);
 *   gint64 frames = morok_gigaam_encoded_frames (model, 36800);  // 58: 2.3 s at 16 kHz
 *
 * Inside a build function (wav [b, t + tail] f32, rows written by
 * morok_gigaam_pack_wave; lengths [b] i64 sample counts):
 *
 *   MorokTensor *enc = morok_gigaam_forward (model, wav, lengths, cfg->n_layers, error);
 *   MorokTensor *lp = morok_gigaam_ctc_log_probs (model, enc, error);          // [b, T', C]
 *
 * or in two steps, morok_gigaam_features () ([b, T, F] log-mel) and
 * morok_gigaam_encoder (), to look at the features.
 *
 * Shapes: B batch, L samples, T feature frames, F mel bands, T' encoded
 * frames (about T / 4), d channels, C classes (the vocabulary and a blank,
 * the last class). */
#pragma once

#include <glib.h>

#include "models/transcript.h"
#include "tensor/morok-tensor.h"

G_BEGIN_DECLS

typedef enum
{
  MOROK_GIGAAM_V2, /* conv2d subsampling (+ linear), centred frames, BatchNorm in the conv module */
  MOROK_GIGAAM_V3, /* conv1d subsampling, uncentred frames, LayerNorm in the conv module */
} MorokGigaAmVersion;

/* Tokens an RNN-T frame can emit at most (upstream's max_symbols_per_step). */
#define MOROK_RNNT_MAX_SYMBOLS 10

typedef enum
{
  MOROK_GIGAAM_HEAD_CTC,  /* head.decoder_layers.0: a 1x1 conv to the classes */
  MOROK_GIGAAM_HEAD_RNNT, /* head.decoder (predictor LSTM) and head.joint */
} MorokGigaAmHead;

typedef enum
{
  MOROK_GIGAAM_VOCAB_CHAR,          /* ids index the tokens, concatenated as they are */
  MOROK_GIGAAM_VOCAB_SENTENCEPIECE, /* pieces; "▁" (U+2581) starts a word */
} MorokGigaAmVocabType;

/* The model's config as read from "morok.config" (and the weights). */
typedef struct
{
  MorokGigaAmVersion version; /* from "subsampling": conv1d is v3, conv2d v2 */
  /* front-end */
  guint sample_rate;   /* Hz */
  guint n_fft;         /* samples per frame */
  guint win_length;    /* samples of the Hann window, <= n_fft, centred in the frame */
  guint hop_length;    /* samples between frames */
  gboolean center;     /* frames centred on hop multiples, reflect padding (v2) */
  guint n_mels;        /* F */
  double log_clamp[2]; /* mel power is clamped to [lo, hi] before the log */
  /* encoder */
  guint n_layers;
  guint d_model; /* d */
  guint n_heads;
  guint ff_dim;             /* ff_expansion_factor * d */
  guint conv_kernel;        /* depthwise kernel size, read from the weights */
  gboolean conv_batch_norm; /* BatchNorm (v2) or LayerNorm (v3) in the conv module */
  guint subs_kernel;        /* subsampling kernel and padding; stride 2, twice */
  guint subs_padding;
  double rope_base;
  double layer_norm_eps;
  double batch_norm_eps;
  /* head and vocabulary */
  MorokGigaAmHead head; /* from "model_class" */
  guint pred_hidden;    /* RNN-T: H, the predictor's embedding and LSTM size */
  guint pred_layers;    /* RNN-T: LSTM layers */
  guint joint_hidden;   /* RNN-T: J, the joint's hidden size */
  guint n_classes;      /* C = tokens + blank */
  guint blank_id;       /* C - 1 */
  MorokGigaAmVocabType vocab_type;
  char **tokens; /* n_classes - 1 UTF-8 strings */
  /* SentencePiece (NULL and FALSE for characters): */
  MorokPieceType *piece_types; /* n_classes - 1, vocabulary.piece_types */
  char *unk_surface;           /* the unknown piece's text, vocabulary.unk_surface */
  gboolean strip_first_space;  /* add_dummy_prefix or remove_extra_whitespaces */
} MorokGigaAmConfig;

typedef struct _MorokGigaAm MorokGigaAm;

/* ---- loading ---- */

/* Reads and checks @path, a model hub folder or a converted file: the same
 * model either way. (transfer full); NULL with a MOROK_IO_ERROR naming
 * the file and the tensor or config field at fault: OPEN, TRUNCATED,
 * MALFORMED (a wrong shape, a bad config value), NOT_FOUND (a missing tensor,
 * metadata or config field), UNSUPPORTED (a model Morok does not run). */
MorokGigaAm *morok_gigaam_load (const char *path, GError **error);
MorokGigaAm *morok_gigaam_ref (MorokGigaAm *model);
/* Drops a reference; the last one frees the weights and unmaps the file.
 * NULL is a no-op. The file must not be truncated while the model lives
 * (a read of the lost pages ends the process with SIGBUS). */
void morok_gigaam_unref (MorokGigaAm *model);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (MorokGigaAm, morok_gigaam_unref)

/* Bytes of f32 weights that @model holds in memory of its own: copies of
 * the weights the file does not store as f32 (or not aligned for floats)
 * and of the subsampling's, reordered at load. The rest is read in place
 * from the mapped file and resident only while read. */
gsize morok_gigaam_weight_bytes_owned (const MorokGigaAm *model);
/* (transfer none) valid while @model lives. */
const MorokGigaAmConfig *morok_gigaam_config (const MorokGigaAm *model);
/* The file or folder it was loaded from. (transfer none) */
const char *morok_gigaam_path (const MorokGigaAm *model);
/* TRUE when the model takes audio at @rate Hz (its config's
 * preprocessor.sample_rate); otherwise FALSE with MOROK_IO_ERROR_UNSUPPORTED
 * naming the file and both rates: a model's front-end and frames are made
 * for its rate, and audio at another one gives plausible, wrong output. */
gboolean morok_gigaam_check_sample_rate (const MorokGigaAm *model, guint rate, GError **error);

/* ---- limits of the JIT wrappers' variables ---- */

/* The batch sizes and sample counts the wrappers are prepared for (their
 * variables' default upper bounds): 1 and 30 s unless set. Plans prepared
 * before a change keep their bounds. */
void morok_gigaam_set_limits (MorokGigaAm *model, guint max_batch, gint64 max_samples);
guint morok_gigaam_max_batch (const MorokGigaAm *model);
/* With @release, a weight that a plan packs into its own panels, or that
 * its kernels read (the plan then reads a copy of its own), leaves the model
 * once the plan is made (its copy freed, or its pages of the mapped file
 * dropped), so that every weight is resident once, in the plans. The model can then build
 * no further graph that needs them (a builder fails naming the weight):
 * for a host that prepares its plans once after loading, as the elements
 * do. FALSE (the default) keeps every weight. */
void morok_gigaam_set_release_packed (MorokGigaAm *model, gboolean release);
/* Drops the mapped file's pages from this process's memory; they come back
 * from the file when read again. The wrappers' *_prepare_at_bounds, through
 * which the elements prepare, call it: reading a weight maps its
 * neighbours' pages too (the kernel's fault-around, whole large folios on
 * Linux 6.18 ext4), those of weights already released. */
void morok_gigaam_drop_file_pages (MorokGigaAm *model);
gint64 morok_gigaam_max_samples (const MorokGigaAm *model);
/* The fewest samples the front-end takes: one frame (n_fft), or for
 * centred frames more than the reflect padding (n_fft / 2 + 1). */
gint64 morok_gigaam_min_samples (const MorokGigaAm *model);

/* ---- lengths (closed form, as the reference computes them) ---- */

/* Feature frames of @samples samples: v3 (L - n_fft) / hop + 1, v2 L / hop + 1
 * (floor division); 0 when that is not positive. */
gint64 morok_gigaam_feature_frames (const MorokGigaAm *model, gint64 samples);
/* Encoded frames: the feature frames through two stride-2 layers,
 * T -> (T + 2p - k) / 2 + 1 each. */
gint64 morok_gigaam_encoded_frames (const MorokGigaAm *model, gint64 samples);
/* The vocabulary as models/transcript.h reads it; its pointers are
 * @model's, valid while it lives. */
void morok_gigaam_vocabulary (const MorokGigaAm *model, MorokVocabulary *out);
/* Seconds between encoded frames (4 hops: 0.04 s at 16 kHz). */
double morok_gigaam_frame_seconds (const MorokGigaAm *model);

/* ---- the waveform input of the builders ----
 * wav is [b, t + tail] f32 for t samples of the longest item: row i holds
 * item i's samples, then its tail, then anything (read as zeros). */

/* Samples after each item's own that the builders read: for centred frames
 * (v2) n_fft / 2, the item's right reflect padding (torch's "reflect",
 * mirrored about its last sample), so that a batch's shorter items are
 * framed at their own end and not at the batch's; 0 for v3. */
gint64 morok_gigaam_wave_tail (const MorokGigaAm *model);
/* Writes one row of wav: the @n samples of @wave, then the tail,
 * row[n + j] = wave[n - 2 - j] (0 where n - 2 - j < 0): @row holds at least
 * @n + tail floats, and nothing past them is written. */
void morok_gigaam_pack_wave (const MorokGigaAm *model, const float *wave, gint64 n, float *row);

/* ---- the forward pass as tensors (for build functions) ----
 * @lengths is [b] i64, the samples of each batch item; an item's values past
 * its length and tail are read as zeros (whatever the buffer holds), so each
 * item's valid frames are those it has alone, and its frames past its
 * encoded length are unspecified. Items shorter than one frame give
 * unspecified values (NaN) for themselves only. The tensors reference the
 * model's weights: @model must outlive every plan built from them (a wrapper
 * holds a reference). */

/* wav [b, t + tail] f32 -> log-mel features [b, T, F] f32, T =
 * feature_frames (t). */
MorokTensor *morok_gigaam_features (MorokGigaAm *model, MorokTensor *wav, MorokTensor *lengths,
                                    GError **error);
/* features [b, T, F] -> [b, T', d] after the subsampling and the first
 * @n_layers Conformer layers (config->n_layers: the encoder's output). */
MorokTensor *morok_gigaam_encoder (MorokGigaAm *model, MorokTensor *features, MorokTensor *lengths,
                                   guint n_layers, GError **error);
/* wav [b, t + tail] f32 -> [b, T', d]: features and encoder in one graph, as the
 * wrappers build it: the values of morok_gigaam_encoder (morok_gigaam_features
 * ()), with the features made already padded for the subsampling, so that
 * they are stored once and read in place. */
MorokTensor *morok_gigaam_forward (MorokGigaAm *model, MorokTensor *wav, MorokTensor *lengths,
                                   guint n_layers, GError **error);
/* encoded [b, T', d] -> CTC log-probabilities [b, T', C] (log_softmax). */
MorokTensor *morok_gigaam_ctc_log_probs (MorokGigaAm *model, MorokTensor *encoded, GError **error);

/* ---- the RNN-T head (models/gigaam-rnnt.c; config->head RNNT) ----
 * H pred_hidden, L pred_layers, J joint_hidden. */

/* encoded [b, T', d] -> head.joint.enc (encoded) [b, T', J]: the joint's
 * encoder half, once for every frame. */
MorokTensor *morok_gigaam_rnnt_encoder_proj (MorokGigaAm *model, MorokTensor *encoded,
                                             GError **error);
/* One predictor step: x_gates [B, 4H] (the first layer's input term of
 * the tokens: rows of morok_gigaam_rnnt_input_gates), h and c [L, B, H]
 * -> [head.joint.pred (g) [B, J] | h' [L, B, H] | c' [L, B, H]] flattened,
 * g the last layer's h'. */
MorokTensor *morok_gigaam_rnnt_predictor (MorokGigaAm *model, MorokTensor *x_gates, MorokTensor *h,
                                          MorokTensor *c, GError **error);
/* enc [B, J] and pred [B, J] (the two projections) -> log_softmax
 * (joint_net (relu (enc + pred))) [B, C]. */
MorokTensor *morok_gigaam_rnnt_joint (MorokGigaAm *model, MorokTensor *enc, MorokTensor *pred,
                                      GError **error);
/* The first LSTM layer's input term of every token, [C, 4H] f32: row k is
 * lstm.weight_ih_l0 · embed[k] + lstm.bias_ih_l0 (summed in double), the
 * blank's row "no token yet", upstream's zero embedding: bias_ih_l0.
 * (transfer full, g_free) or NULL with a MOROK_TENSOR_ERROR for a CTC model
 * or a weight a plan has released (morok_gigaam_set_release_packed). */
float *morok_gigaam_rnnt_input_gates (MorokGigaAm *model, GError **error);

G_END_DECLS
