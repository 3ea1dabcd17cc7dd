/* SPDX-License-Identifier: MIT */
/* Greedy CTC decoding on the host: the best class of each frame, repeats
 * collapsed, blanks dropped, each token with the frames it spans
 * (models/transcript.h makes text and words of them).
 *
 *   const MorokBuffer *lp = gigaam_ctc_jit_output (jit, &error);   // [b, T', C]
 *   const float *item = (const float *) lp->data + i * lp->shape[1] * C;
 *   gint64 frames = morok_gigaam_encoded_frames (model, n_samples[i]);
 *   MorokCtcToken tokens[frames];                                   // at most one per frame
 *   guint n = morok_ctc_greedy_decode (item, frames, C, C, cfg->blank_id, tokens);
 *   double start = tokens[0].frame * morok_gigaam_frame_seconds (model);  // seconds
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* One decoded token: a run of frames whose best class is @id. */
typedef struct
{
  guint id;        /* class index, never the blank */
  gint64 frame;    /* first frame of the run */
  gint64 n_frames; /* frames in the run (>= 1) */
} MorokCtcToken;

/* The first highest of @n >= 1 scores, as a scan that keeps a score only
 * when a later one is greater would find it (a NaN never wins; all NaN, or
 * a NaN first: 0). The argmax of greedy CTC and RNN-T decoding. */
guint morok_best_class (const float *scores, guint n);

/* Decodes @n_frames frames of scores (log-probabilities or logits): frame i
 * is the @n_classes floats at @scores + i * @row_stride. Per frame the first
 * highest class wins; a run of equal classes gives one token; @blank gives
 * none and separates runs (so "a blank a" is two tokens). Writes the tokens
 * to @out, which must hold @n_frames, and returns their number. Allocates
 * nothing. */
guint morok_ctc_greedy_decode (const float *scores, gint64 n_frames, gsize row_stride,
                               guint n_classes, guint blank, MorokCtcToken *out);

G_END_DECLS
