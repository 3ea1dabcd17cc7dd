/* SPDX-License-Identifier: MIT */
/* What the Silero VAD loader (silero-vad.c) hands to the forward pass
 * (silero-vad-forward.c): the weights of each rate's network, as f32 arrays
 * owned by the model. */
#pragma once

#include "models/silero-vad.h"

#define SILERO_MAX_LAYERS 2

/* One weight: its data, its shape as Morok uses it and its ONNX name. */
typedef struct
{
  float *data;
  char *name;
  guint rank;
  gint64 dims[3];
} SileroParam;

/* v4: a depthwise-separable block and the folded pointwise down-conv after it. */
typedef struct
{
  SileroParam dw_w, dw_b;     /* [C, 1, 5], [C] */
  SileroParam pw_w, pw_b;     /* [Cout, C, 1], [Cout] */
  SileroParam proj_w, proj_b; /* [Cout, C, 1], [Cout]; data NULL: identity residual */
  SileroParam down_w, down_b; /* [Cout, Cout, 1], [Cout] */
  gint64 down_stride;
} SileroBlock;

/* The network of one sample rate. */
typedef struct
{
  guint rate;                                     /* Hz */
  guint chunk;                                    /* new samples per call */
  guint context;                                  /* samples of the previous chunk before them */
  gint64 stft_hop, stft_pad_left, stft_pad_right; /* reflect padding before the STFT */
  /* [L]: the window of the file's STFT basis, a windowed DFT (silero-vad.c,
   * basis_window); the STFT is an FFT */
  SileroParam window;
  /* v5/v6 */
  SileroParam enc_w[4], enc_b[4]; /* k3 p1, strides 1, 2, 2, 1, each + ReLU */
  /* v4 */
  SileroParam norm_filter; /* [1, 1, 7] */
  SileroBlock block[4];
  /* LSTM, per layer, PyTorch gate order i, f, g, o */
  SileroParam w_ih[SILERO_MAX_LAYERS], w_hh[SILERO_MAX_LAYERS]; /* [4H, In], [4H, H] */
  SileroParam b_ih[SILERO_MAX_LAYERS], b_hh[SILERO_MAX_LAYERS]; /* [4H] */
  SileroParam head_w, head_b;                                   /* [1, H], [1] */
} SileroNet;

struct _MorokSileroVad
{
  MorokSileroVadVersion version;
  guint layers, hidden;
  guint n_rates;
  guint rates[2];
  SileroNet net[2]; /* net[i] runs rates[i] */
};

/* The network for @rate, NULL when the model has none. */
const SileroNet *silero_vad_net (const MorokSileroVad *model, guint rate);
