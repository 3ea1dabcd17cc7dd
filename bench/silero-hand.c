/* SPDX-License-Identifier: MIT */
/* A hand-written forward pass of Silero VAD v5/v6 at 16 kHz, one stream,
 * in AVX-512 intrinsics: the yardstick the plan's time per chunk is held
 * against (bench/compare-silero.sh). Not a test; not used by Morok.
 *
 * The weights come from Morok's loader (the STFT basis made from the
 * file's window and folded in time: the matrix products the plan ran
 * before its FFT) and are laid out once for the loops below: every
 * product is a register tile of up to 4 rows (the frames) x 4 or 5 vectors
 * of columns, A broadcast, the weight rows read as whole aligned vectors;
 * convolution taps that only read padding are skipped per row; the LSTM's
 * two products are one over [x | h] with the gate columns interleaved per
 * 64 units, so that each pass of 16 accumulators ends in the gate math of
 * its units. It runs over the fixture speech chunk by chunk (the state
 * carried) and checks each probability against onnxruntime's
 * (tests/fixtures/vad-probs-<version>-16k.txt) and Morok's plan, within
 * 1e-5, then prints the median time per chunk.
 *
 *   build/bench/silero-hand [v5|v6] [MODEL_DIR]
 */
#include "bench-util.h"
#include "bench-wav.h"
#include "jit/morok-jit-recurrent.h"
#include "models/silero-vad-jit.h"
#include "models/silero-vad-private.h"
#include <immintrin.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PASSES 20
#define TOL 1e-5
#define HAND_FN static inline __attribute__ ((always_inline, target ("avx512f,avx512dq,fma")))
#define HAND_TOP static __attribute__ ((noinline, target ("avx512f,avx512dq,fma")))

enum
{
  C = 64,    /* context samples */
  N = 512,   /* new samples */
  X = C + N, /* input */
  L = 256,   /* STFT window */
  HOP = 128, /* = L / 2 */
  F = 129,   /* bins */
  T = 4,     /* frames */
  FE = 144,  /* the folded frames' row, 129 padded for whole vectors */
  FC = 144,  /* cosine columns, padded to 9 vectors */
  FS = 128,  /* sine columns (bins 1 .. 127), padded to 8 vectors */
  H = 128,   /* LSTM units */
  G = 4 * H, /* gate rows */
};

/* The weights, 64-byte aligned, laid out for the loops. */
typedef struct
{
  float *cos;  /* [F][FC]: cosine n (0 .. 128) by bin */
  float *sin;  /* [127][FS]: sine n (1 .. 127) by bin 1 .. 127 */
  float *w0;   /* [3][F][128]: tap, input channel, output */
  float *w1;   /* [3][128][64] */
  float *w2;   /* [2][64][64]: taps 1 and 2 (tap 0 only reads padding) */
  float *w3;   /* [64][128]: tap 1 */
  float *b[4]; /* [128], [64], [64], [128] */
  float *wl;   /* [2 H][G]: rows x then h; columns by pass p, gate q, unit: p 256 + q 64 + u */
  float *bl;   /* [G]: b_ih + b_hh, the same columns */
  float *head; /* [H] */
  float head_b;
} Hand;

static float *
aligned_zero (gsize floats)
{
  float *p = NULL;
  if (posix_memalign ((void **) &p, 64, floats * sizeof (float)) != 0)
    return NULL;
  memset (p, 0, floats * sizeof (float));
  return p;
}

static void
hand_free (Hand *h)
{
  float **all[] = { &h->cos,  &h->sin,  &h->w0,   &h->w1, &h->w2, &h->w3,  &h->b[0],
                    &h->b[1], &h->b[2], &h->b[3], &h->wl, &h->bl, &h->head };
  for (guint i = 0; i < G_N_ELEMENTS (all); i++)
    g_clear_pointer (all[i], free);
}

/* conv weight [M, Cin, 3] tap j as [Cin][M] rows into @dst. */
static void
conv_tap (const SileroParam *w, gint64 j, float *dst)
{
  gint64 M = w->dims[0], Cin = w->dims[1];
  for (gint64 c = 0; c < Cin; c++)
    for (gint64 m = 0; m < M; m++)
      dst[c * M + m] = w->data[(m * Cin + c) * 3 + j];
}

static gboolean
hand_init (Hand *h, const MorokSileroVad *vad)
{
  const SileroNet *n = silero_vad_net (vad, 16000);
  if (!n || n->window.dims[0] != 2 * (F - 1) || n->enc_w[0].dims[1] != F || vad->hidden != H
      || vad->layers != 1)
    return FALSE;
  /* the STFT basis folded in time, from its window: the cosines of frame
   * samples r = 0 .. 128 (the even part), the sines of r = 1 .. 127 (the odd
   * part; bins 0 and 128 have none) */
  const gint64 L = n->window.dims[0];
  h->cos = aligned_zero (F * FC);
  h->sin = aligned_zero (127 * FS);
  for (gint64 r = 0; r < F; r++)
    for (gint64 k = 0; k < F; k++)
      {
        double a = 2 * G_PI * (double) ((k * r) % L) / (double) L, w = n->window.data[r];
        h->cos[r * FC + k] = (float) (w * cos (a));
        if (r >= 1 && r < F - 1 && k >= 1 && k < F - 1)
          h->sin[(r - 1) * FS + (k - 1)] = (float) (-w * sin (a));
      }
  h->w0 = aligned_zero (3 * F * 128);
  h->w1 = aligned_zero (3 * 128 * 64);
  h->w2 = aligned_zero (2 * 64 * 64);
  h->w3 = aligned_zero (64 * 128);
  for (gint64 j = 0; j < 3; j++)
    {
      conv_tap (&n->enc_w[0], j, h->w0 + j * F * 128);
      conv_tap (&n->enc_w[1], j, h->w1 + j * 128 * 64);
    }
  conv_tap (&n->enc_w[2], 1, h->w2);
  conv_tap (&n->enc_w[2], 2, h->w2 + 64 * 64);
  conv_tap (&n->enc_w[3], 1, h->w3);
  for (guint i = 0; i < 4; i++)
    {
      h->b[i] = aligned_zero (n->enc_b[i].dims[0]);
      memcpy (h->b[i], n->enc_b[i].data, n->enc_b[i].dims[0] * sizeof (float));
    }
  h->wl = aligned_zero (2 * H * G);
  h->bl = aligned_zero (G);
  for (gint64 q = 0; q < 4; q++)
    for (gint64 u = 0; u < H; u++)
      {
        gint64 col = u / 64 * 256 + q * 64 + u % 64, row = q * H + u;
        for (gint64 k = 0; k < H; k++)
          {
            h->wl[k * G + col] = n->w_ih[0].data[row * H + k];
            h->wl[(H + k) * G + col] = n->w_hh[0].data[row * H + k];
          }
        h->bl[col] = n->b_ih[0].data[row] + n->b_hh[0].data[row];
      }
  h->head = aligned_zero (H);
  memcpy (h->head, n->head_w.data, H * sizeof (float));
  h->head_b = n->head_b.data[0];
  return TRUE;
}

/* ---- the pass ---- */

/* acc[r NV + v] += sum_{k < K} a[r lda + k] w[k ldw + 16 v], r < R, v < NV:
 * R rows of A broadcast against NV vectors of each weight row. */
HAND_FN void
tile (const int R, const int NV, __m512 *acc, const float *a, int lda, const float *w, int ldw,
      int K)
{
  for (int k = 0; k < K; k++)
    {
      __m512 wv[16];
#pragma GCC unroll 16
      for (int v = 0; v < NV; v++)
        wv[v] = _mm512_load_ps (w + (gsize) k * ldw + 16 * v);
#pragma GCC unroll 4
      for (int r = 0; r < R; r++)
        {
          __m512 av = _mm512_set1_ps (a[r * lda + k]);
#pragma GCC unroll 16
          for (int v = 0; v < NV; v++)
            acc[r * NV + v] = _mm512_fmadd_ps (av, wv[v], acc[r * NV + v]);
        }
    }
}

HAND_FN void
zero (const int n, __m512 *acc)
{
#pragma GCC unroll 32
  for (int i = 0; i < n; i++)
    acc[i] = _mm512_setzero_ps ();
}

/* out[r ldo + 16 v] = acc (+ bias, then ReLU when @relu) */
HAND_FN void
store (const int R, const int NV, const __m512 *acc, float *out, int ldo, const float *bias,
       int relu)
{
#pragma GCC unroll 4
  for (int r = 0; r < R; r++)
#pragma GCC unroll 16
    for (int v = 0; v < NV; v++)
      {
        __m512 y = acc[r * NV + v];
        if (bias)
          y = _mm512_add_ps (y, _mm512_load_ps (bias + 16 * v));
        if (relu)
          y = _mm512_max_ps (y, _mm512_setzero_ps ());
        _mm512_storeu_ps (out + r * ldo + 16 * v, y);
      }
}

/* e^x, |error| a few ulp over [-88, 88] (clamped outside): x = n ln 2 + r,
 * e^r by its Taylor series to r^7 (|r| <= ln 2 / 2), times 2^n. */
HAND_FN __m512
v_exp (__m512 x)
{
  x = _mm512_max_ps (_mm512_min_ps (x, _mm512_set1_ps (88.0f)), _mm512_set1_ps (-88.0f));
  __m512 k = _mm512_roundscale_ps (_mm512_mul_ps (x, _mm512_set1_ps (1.44269504f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps (k, _mm512_set1_ps (0.693145751953125f), x);
  r = _mm512_fnmadd_ps (k, _mm512_set1_ps (1.42860682e-6f), r);
  static const float c[]
      = { 1 / 5040.0f, 1 / 720.0f, 1 / 120.0f, 1 / 24.0f, 1 / 6.0f, 0.5f, 1.0f, 1.0f };
  __m512 p = _mm512_set1_ps (c[0]);
  for (int i = 1; i < 8; i++)
    p = _mm512_fmadd_ps (p, r, _mm512_set1_ps (c[i]));
  return _mm512_scalef_ps (p, k);
}

HAND_FN __m512
v_sigmoid (__m512 x)
{
  __m512 one = _mm512_set1_ps (1.0f);
  return _mm512_div_ps (one, _mm512_add_ps (one, v_exp (_mm512_sub_ps (_mm512_setzero_ps (), x))));
}

/* tanh x = 2 sigmoid (2x) - 1 */
HAND_FN __m512
v_tanh (__m512 x)
{
  __m512 s = v_sigmoid (_mm512_add_ps (x, x));
  return _mm512_sub_ps (_mm512_add_ps (s, s), _mm512_set1_ps (1.0f));
}

/* The folded frames: e[t][n] = f[n] + f[L - n], o[t][n] = f[n] - f[L - n]
 * (n = 1 .. 127), e[t][0] = f[0], e[t][128] = f[128], f the frame t of
 * the input reflect-padded by C on the right. */
HAND_FN void
fold (const float *x, float e[T][FE], float o[T][FE])
{
  float xp[X + C + 16] __attribute__ ((aligned (64)));
  memcpy (xp, x, X * sizeof (float));
  for (int i = 0; i < C; i++)
    xp[X + i] = x[X - 2 - i];
  const __m512i rev = _mm512_set_epi32 (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  for (int t = 0; t < T; t++)
    {
      const float *f = xp + t * HOP;
      for (int n = 1; n < F; n += 16) /* n .. n + 15 against L - n - 15 .. L - n, reversed */
        {
          __m512 a = _mm512_loadu_ps (f + n);
          __m512 b = _mm512_permutexvar_ps (rev, _mm512_loadu_ps (f + L - n - 15));
          _mm512_storeu_ps (e[t] + n, _mm512_add_ps (a, b));
          _mm512_storeu_ps (o[t] + n, _mm512_sub_ps (a, b));
        }
      e[t][0] = f[0];
      e[t][HOP] = f[HOP];
    }
}

/* One chunk: x [576] and state [h | c] -> the probability, state' into @out_state. */
HAND_TOP float
hand_forward (const Hand *w, const float *x, const float *state, float *out_state)
{
  float e[T][FE], o[T][FE];
  float re[T][FC] __attribute__ ((aligned (64)));
  float im[T][FC] __attribute__ ((aligned (64))); /* bin f at f: 0 at 0 and 128 .. */
  float mag[T][FC] __attribute__ ((aligned (64)));
  float e0[T][128] __attribute__ ((aligned (64)));
  float e1[2][64] __attribute__ ((aligned (64)));
  float xh[2 * H] __attribute__ ((aligned (64))); /* [e3 | h] */
  __m512 acc[32];
  fold (x, e, o);

  /* STFT: re [4, 129 (144)] = e . cos, im [4, 1 + 127] = o . sin */
  zero (20, acc);
  tile (T, 5, acc, e[0], FE, w->cos, FC, F);
  store (T, 5, acc, re[0], FC, NULL, 0);
  zero (16, acc);
  tile (T, 4, acc, e[0], FE, w->cos + 80, FC, F);
  store (T, 4, acc, re[0] + 80, FC, NULL, 0);
  for (int half = 0; half < 2; half++)
    {
      zero (16, acc);
      tile (T, 4, acc, o[0] + 1, FE, w->sin + 64 * half, FS, F - 2);
      store (T, 4, acc, im[0] + 1 + 64 * half, FC, NULL, 0);
    }
  for (int t = 0; t < T; t++)
    {
      im[t][0] = 0.0f;
      memset (im[t] + F - 1, 0, (FC - F + 1) * sizeof (float));
      for (int f = 0; f < FC; f += 16)
        {
          __m512 r = _mm512_load_ps (re[t] + f), i = _mm512_load_ps (im[t] + f);
          _mm512_store_ps (mag[t] + f,
                           _mm512_sqrt_ps (_mm512_fmadd_ps (r, r, _mm512_mul_ps (i, i))));
        }
    }

  /* conv 0, k3 s1 p1: row t reads mag rows t - 1 .. t + 1; tap 0 skips row
   * 0, tap 2 row 3 */
  for (int half = 0; half < 2; half++)
    {
      const float *w0 = w->w0 + 64 * half;
      zero (16, acc);
      tile (T, 4, acc, mag[0], FC, w0 + F * 128, 128, F);
      tile (3, 4, acc + 4, mag[0], FC, w0, 128, F);
      tile (3, 4, acc, mag[1], FC, w0 + 2 * F * 128, 128, F);
      store (T, 4, acc, e0[0] + 64 * half, 128, w->b[0] + 64 * half, 1);
    }
  /* conv 1, k3 s2 p1: row r reads e0 rows 2r - 1 .. 2r + 1 */
  zero (8, acc);
  tile (2, 4, acc, e0[0], 2 * 128, w->w1 + 128 * 64, 64, 128);
  tile (2, 4, acc, e0[1], 2 * 128, w->w1 + 2 * 128 * 64, 64, 128);
  tile (1, 4, acc + 4, e0[1], 0, w->w1, 64, 128);
  store (2, 4, acc, e1[0], 64, w->b[1], 1);
  /* conv 2, k3 s2 p1: taps 1 and 2 over e1 [2, 64] read as one row of 128,
   * two sets of sums */
  zero (8, acc);
  tile (1, 4, acc, e1[0], 0, w->w2, 64, 64);
  tile (1, 4, acc + 4, e1[0] + 64, 0, w->w2 + 64 * 64, 64, 64);
  for (int v = 0; v < 4; v++)
    acc[v] = _mm512_add_ps (acc[v], acc[4 + v]);
  float e2[64] __attribute__ ((aligned (64)));
  store (1, 4, acc, e2, 64, w->b[2], 1);
  /* conv 3, k3 s1 p1 on one frame: tap 1 */
  zero (8, acc);
  tile (1, 8, acc, e2, 0, w->w3, 128, 64);
  store (1, 8, acc, xh, 128, w->b[3], 1);

  /* LSTM: z = [x | h] . [W_ih; W_hh] + b, two passes of 64 units, each
   * ending in its c', h' and its part of the head's sum */
  memcpy (xh + H, state, H * sizeof (float));
  __m512 head = _mm512_setzero_ps ();
  for (int p = 0; p < 2; p++)
    {
      zero (16, acc);
      tile (1, 16, acc, xh, 0, w->wl + 256 * p, G, 2 * H);
      for (int v = 0; v < 4; v++)
        {
          const float *b = w->bl + 256 * p + 16 * v;
          __m512 i = v_sigmoid (_mm512_add_ps (acc[v], _mm512_load_ps (b)));
          __m512 f = v_sigmoid (_mm512_add_ps (acc[4 + v], _mm512_load_ps (b + 64)));
          __m512 g = v_tanh (_mm512_add_ps (acc[8 + v], _mm512_load_ps (b + 128)));
          __m512 o = v_sigmoid (_mm512_add_ps (acc[12 + v], _mm512_load_ps (b + 192)));
          int u = 64 * p + 16 * v;
          __m512 c = _mm512_fmadd_ps (f, _mm512_loadu_ps (state + H + u), _mm512_mul_ps (i, g));
          __m512 h = _mm512_mul_ps (o, v_tanh (c));
          _mm512_storeu_ps (out_state + u, h);
          _mm512_storeu_ps (out_state + H + u, c);
          head = _mm512_fmadd_ps (_mm512_max_ps (h, _mm512_setzero_ps ()),
                                  _mm512_load_ps (w->head + u), head);
        }
    }
  float z = _mm512_reduce_add_ps (head) + w->head_b;
  return 1.0f / (1.0f + __builtin_expf (-z));
}

/* ---- the run ---- */

/* onnxruntime's probabilities (vad-probs-<version>-16k.txt), or NULL. */
static GArray *
read_reference (const char *version)
{
  g_autofree char *name = g_strdup_printf ("vad-probs-%s-16k.txt", version);
  g_autofree char *path = g_build_filename (MOROK_SOURCE_ROOT, "tests", "fixtures", name, NULL);
  g_autofree char *text = NULL;
  if (!g_file_get_contents (path, &text, NULL, NULL))
    return NULL;
  GArray *p = g_array_new (FALSE, FALSE, sizeof (float));
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  for (guint i = 0; lines[i]; i++)
    if (lines[i][0] && lines[i][0] != '#')
      {
        float v = (float) g_ascii_strtod (lines[i], NULL);
        g_array_append_val (p, v);
      }
  return p;
}

/* Morok's plan over the same chunks, step by step as a host runs it. */
typedef struct
{
  SileroVadJit *jit;
  MorokJitRecurrent *rec;
  float *audio;
} Plan;

static void
plan_clear (Plan *p)
{
  g_clear_pointer (&p->rec, morok_jit_recurrent_free);
  g_clear_pointer (&p->jit, silero_vad_jit_free);
}

static gboolean
plan_init (Plan *p, MorokSileroVad *vad, GError **error)
{
  p->jit = silero_vad_jit_new (morok_silero_vad_ref (vad));
  g_autoptr (MorokInputSpec) as = morok_input_spec_f32 (MOROK_SHAPE (1, X));
  g_autoptr (MorokInputSpec) ss = morok_input_spec_f32 (MOROK_SHAPE (2 * H));
  if (!silero_vad_jit_prepare (p->jit, as, ss, error))
    return FALSE;
  p->rec = silero_vad_jit_recurrent_new (p->jit, error);
  MorokBuffer *a = p->rec ? silero_vad_jit_audio_mut (p->jit, error) : NULL;
  p->audio = a ? a->data : NULL;
  return p->audio != NULL;
}

/* One pass over the chunks from a zero state: @probs and the time of each
 * step in @us; FALSE with @error. */
static gboolean
plan_pass (Plan *p, const float *samples, gsize n, float *probs, double *us, GError **error)
{
  morok_jit_recurrent_reset (p->rec);
  memset (p->audio, 0, X * sizeof (float));
  for (gsize c = 0, at = 0; at < n; c++, at += N)
    {
      gsize len = MIN (N, n - at);
      memmove (p->audio, p->audio + N, C * sizeof (float));
      memcpy (p->audio + C, samples + at, len * sizeof (float));
      memset (p->audio + C + len, 0, (N - len) * sizeof (float));
      double t0 = bench_now_us ();
      const float *o = morok_jit_recurrent_step (p->rec, error);
      us[c] = bench_now_us () - t0;
      if (!o)
        return FALSE;
      probs[c] = o[0];
    }
  return TRUE;
}

/* One pass of the hand-written forward pass, as plan_pass. */
static void
hand_pass (const Hand *w, const float *samples, gsize n, float *probs, double *us)
{
  float x[X] __attribute__ ((aligned (64))), state[2][2 * H];
  memset (x, 0, sizeof x);
  memset (state[0], 0, sizeof state[0]);
  for (gsize c = 0, at = 0; at < n; c++, at += N)
    {
      gsize len = MIN (N, n - at);
      memmove (x, x + N, C * sizeof (float));
      memcpy (x + C, samples + at, len * sizeof (float));
      memset (x + C + len, 0, (N - len) * sizeof (float));
      double t0 = bench_now_us ();
      probs[c] = hand_forward (w, x, state[c & 1], state[(c + 1) & 1]);
      us[c] = bench_now_us () - t0;
    }
}

static double
max_diff (const float *a, const float *b, gsize n)
{
  double m = 0;
  for (gsize i = 0; i < n; i++)
    m = MAX (m, fabs ((double) a[i] - b[i]));
  return m;
}

int
main (int argc, char **argv)
{
  g_setenv ("MOROK_THREADS", "1", FALSE);
  const char *version = argc > 1 ? argv[1] : "v5";
  const char *dir = argc > 2 ? argv[2] : g_getenv ("MOROK_MODEL_DIR");
  if (!__builtin_cpu_supports ("avx512f") || !__builtin_cpu_supports ("avx512dq"))
    {
      printf ("silero-hand: this CPU has no AVX-512 (F, DQ): nothing to measure\n");
      return 0;
    }
  g_autofree char *name = g_strdup_printf ("silero_vad_%s.onnx", version);
  g_autofree char *path = g_build_filename (dir ? dir : MOROK_SOURCE_ROOT "/models", name, NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (MorokSileroVad) vad = morok_silero_vad_load (path, &error);
  gsize n = 0;
  g_autofree float *samples
      = bench_read_wav (MOROK_SOURCE_ROOT "/tests/fixtures/speech-16k.wav", &n);
  Hand w = { 0 };
  if (!vad || !samples || !hand_init (&w, vad))
    {
      fprintf (stderr, "silero-hand: %s\n",
               !vad       ? error->message
               : !samples ? "speech-16k.wav not readable"
                          : "the model is not v5/v6 at 16 kHz");
      return 1;
    }
  gsize chunks = (n + N - 1) / N;
  Plan plan = { 0 };
  if (!plan_init (&plan, vad, &error))
    {
      fprintf (stderr, "silero-hand: %s\n", error->message);
      hand_free (&w);
      plan_clear (&plan);
      return 1;
    }
  /* the passes alternate, hand-written then plan, in this one process:
   * both see the same speed of the machine */
  g_autofree float *probs = g_new (float, chunks);
  g_autofree float *plan_probs = g_new (float, chunks);
  g_autofree double *us = g_new (double, chunks *PASSES);
  g_autofree double *plan_us = g_new (double, chunks *PASSES);
  gboolean ok = TRUE;
  for (guint pass = 0; pass < PASSES && ok; pass++)
    {
      hand_pass (&w, samples, n, probs, us + pass * chunks);
      ok = plan_pass (&plan, samples, n, plan_probs, plan_us + pass * chunks, &error);
    }
  hand_free (&w);
  plan_clear (&plan);
  g_autoptr (GArray) ort = read_reference (version);
  if (!ok || !ort || ort->len != chunks)
    {
      fprintf (stderr, "silero-hand: %s\n", !ok ? error->message : "no onnxruntime reference");
      return 1;
    }
  double d_ort = max_diff (probs, (const float *) ort->data, chunks);
  double d_morok = max_diff (probs, plan_probs, chunks);
  double hand = bench_median (us, chunks * PASSES), morok = bench_median (plan_us, chunks * PASSES);
  printf ("hand-written %s 16 kHz: median %.2f us per chunk; the plan's step in the same "
          "process %.2f us (%.2fx); %" G_GSIZE_FORMAT " chunks x %d passes; "
          "max |p - onnxruntime| %.1e, max |p - morok| %.1e\n",
          version, hand, morok, morok / hand, chunks, PASSES, d_ort, d_morok);
  if (d_ort > TOL || d_morok > TOL)
    {
      fprintf (stderr, "silero-hand: probabilities off by more than %g\n", TOL);
      return 1;
    }
  return 0;
}
