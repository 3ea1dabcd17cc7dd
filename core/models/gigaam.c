/* SPDX-License-Identifier: MIT */
/* Loading a GigaAM model file: the config (gigaam-config.c), every tensor
 * checked against it (a table of names and shapes), the weights as f32
 * (read in place from the mapped file, or copies), and the front-end's DFT
 * basis. The forward pass is in gigaam-frontend.c and
 * gigaam-encoder.c. */
#define G_LOG_DOMAIN "morok-models"
#include "models/gigaam-private.h"

#include <json-glib/json-glib.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "io/safetensors.h"

#define DEFAULT_MAX_SECONDS 30

/* ---- the tensors ---- */

/* Symbolic sizes of the table below, resolved from the config. */
typedef enum
{
  S_END, /* ends a shape */
  S_1,
  S_D,    /* d_model */
  S_2D,   /* 2 * d_model */
  S_FF,   /* ff_dim */
  S_K,    /* depthwise kernel */
  S_C,    /* classes */
  S_MELS, /* F */
  S_BINS, /* n_fft / 2 + 1 */
  S_WIN,  /* win_length */
  S_SUBS, /* subsampling kernel */
  S_FLAT, /* d * F' (v2: the mel axis after the subsampling) */
  S_H,    /* RNN-T pred_hidden */
  S_4H,   /* 4 * pred_hidden: the LSTM's gates */
  S_J,    /* RNN-T joint_hidden */
} Size;

typedef enum
{
  W_ALL,
  W_V3,   /* conv1d subsampling */
  W_V2,   /* conv2d subsampling */
  W_BN,   /* BatchNorm in the conv module */
  W_CTC,  /* CTC head */
  W_RNNT, /* RNN-T head; "%u" names are per LSTM layer */
} When;

typedef struct
{
  const char *name; /* "%u": one per layer */
  When when;
  Size shape[5];
} WeightSpec;

/* Every tensor the forward pass reads (docs/gigaam-model.md, "Tensor names"). */
static const WeightSpec weight_specs[] = {
  { "preprocessor.featurizer.0.spectrogram.window", W_ALL, { S_WIN } },
  { "preprocessor.featurizer.0.mel_scale.fb", W_ALL, { S_BINS, S_MELS } },
  { "encoder.pre_encode.conv.0.weight", W_V3, { S_D, S_MELS, S_SUBS } },
  { "encoder.pre_encode.conv.0.weight", W_V2, { S_D, S_1, S_SUBS, S_SUBS } },
  { "encoder.pre_encode.conv.0.bias", W_ALL, { S_D } },
  { "encoder.pre_encode.conv.2.weight", W_V3, { S_D, S_D, S_SUBS } },
  { "encoder.pre_encode.conv.2.weight", W_V2, { S_D, S_D, S_SUBS, S_SUBS } },
  { "encoder.pre_encode.conv.2.bias", W_ALL, { S_D } },
  { "encoder.pre_encode.out.weight", W_V2, { S_D, S_FLAT } },
  { "encoder.pre_encode.out.bias", W_V2, { S_D } },
  { "encoder.layers.%u.norm_feed_forward1.weight", W_ALL, { S_D } },
  { "encoder.layers.%u.norm_feed_forward1.bias", W_ALL, { S_D } },
  { "encoder.layers.%u.feed_forward1.linear1.weight", W_ALL, { S_FF, S_D } },
  { "encoder.layers.%u.feed_forward1.linear1.bias", W_ALL, { S_FF } },
  { "encoder.layers.%u.feed_forward1.linear2.weight", W_ALL, { S_D, S_FF } },
  { "encoder.layers.%u.feed_forward1.linear2.bias", W_ALL, { S_D } },
  { "encoder.layers.%u.norm_self_att.weight", W_ALL, { S_D } },
  { "encoder.layers.%u.norm_self_att.bias", W_ALL, { S_D } },
  { "encoder.layers.%u.self_attn.linear_q.weight", W_ALL, { S_D, S_D } },
  { "encoder.layers.%u.self_attn.linear_q.bias", W_ALL, { S_D } },
  { "encoder.layers.%u.self_attn.linear_k.weight", W_ALL, { S_D, S_D } },
  { "encoder.layers.%u.self_attn.linear_k.bias", W_ALL, { S_D } },
  { "encoder.layers.%u.self_attn.linear_v.weight", W_ALL, { S_D, S_D } },
  { "encoder.layers.%u.self_attn.linear_v.bias", W_ALL, { S_D } },
  { "encoder.layers.%u.self_attn.linear_out.weight", W_ALL, { S_D, S_D } },
  { "encoder.layers.%u.self_attn.linear_out.bias", W_ALL, { S_D } },
  { "encoder.layers.%u.norm_conv.weight", W_ALL, { S_D } },
  { "encoder.layers.%u.norm_conv.bias", W_ALL, { S_D } },
  { "encoder.layers.%u.conv.pointwise_conv1.weight", W_ALL, { S_2D, S_D, S_1 } },
  { "encoder.layers.%u.conv.pointwise_conv1.bias", W_ALL, { S_2D } },
  { "encoder.layers.%u.conv.depthwise_conv.weight", W_ALL, { S_D, S_1, S_K } },
  { "encoder.layers.%u.conv.depthwise_conv.bias", W_ALL, { S_D } },
  { "encoder.layers.%u.conv.batch_norm.weight", W_ALL, { S_D } },
  { "encoder.layers.%u.conv.batch_norm.bias", W_ALL, { S_D } },
  { "encoder.layers.%u.conv.batch_norm.running_mean", W_BN, { S_D } },
  { "encoder.layers.%u.conv.batch_norm.running_var", W_BN, { S_D } },
  { "encoder.layers.%u.conv.pointwise_conv2.weight", W_ALL, { S_D, S_D, S_1 } },
  { "encoder.layers.%u.conv.pointwise_conv2.bias", W_ALL, { S_D } },
  { "encoder.layers.%u.norm_feed_forward2.weight", W_ALL, { S_D } },
  { "encoder.layers.%u.norm_feed_forward2.bias", W_ALL, { S_D } },
  { "encoder.layers.%u.feed_forward2.linear1.weight", W_ALL, { S_FF, S_D } },
  { "encoder.layers.%u.feed_forward2.linear1.bias", W_ALL, { S_FF } },
  { "encoder.layers.%u.feed_forward2.linear2.weight", W_ALL, { S_D, S_FF } },
  { "encoder.layers.%u.feed_forward2.linear2.bias", W_ALL, { S_D } },
  { "encoder.layers.%u.norm_out.weight", W_ALL, { S_D } },
  { "encoder.layers.%u.norm_out.bias", W_ALL, { S_D } },
  { "head.decoder_layers.0.weight", W_CTC, { S_C, S_D, S_1 } },
  { "head.decoder_layers.0.bias", W_CTC, { S_C } },
  { "head.decoder.embed.weight", W_RNNT, { S_C, S_H } },
  { "head.decoder.lstm.weight_ih_l%u", W_RNNT, { S_4H, S_H } },
  { "head.decoder.lstm.weight_hh_l%u", W_RNNT, { S_4H, S_H } },
  { "head.decoder.lstm.bias_ih_l%u", W_RNNT, { S_4H } },
  { "head.decoder.lstm.bias_hh_l%u", W_RNNT, { S_4H } },
  { "head.joint.pred.weight", W_RNNT, { S_J, S_H } },
  { "head.joint.pred.bias", W_RNNT, { S_J } },
  { "head.joint.enc.weight", W_RNNT, { S_J, S_D } },
  { "head.joint.enc.bias", W_RNNT, { S_J } },
  { "head.joint.joint_net.1.weight", W_RNNT, { S_C, S_J } },
  { "head.joint.joint_net.1.bias", W_RNNT, { S_C } },
};

/* One stride-2 subsampling layer: L -> floor ((L + 2p - k) / 2) + 1. */
static gint64
subsample_length (const MorokGigaAmConfig *c, gint64 len)
{
  gint64 span = len + 2 * (gint64) c->subs_padding - c->subs_kernel;
  if (len <= 0 || span < 0)
    return 0;
  return span / 2 + 1;
}

static gint64
resolve (const MorokGigaAmConfig *c, Size s)
{
  switch (s)
    {
    case S_1: return 1;
    case S_D: return c->d_model;
    case S_2D: return 2 * (gint64) c->d_model;
    case S_FF: return c->ff_dim;
    case S_K: return c->conv_kernel;
    case S_C: return c->n_classes;
    case S_MELS: return c->n_mels;
    case S_BINS: return c->n_fft / 2 + 1;
    case S_WIN: return c->win_length;
    case S_SUBS: return c->subs_kernel;
    case S_FLAT: return c->d_model * subsample_length (c, subsample_length (c, c->n_mels));
    case S_H: return c->pred_hidden;
    case S_4H: return 4 * (gint64) c->pred_hidden;
    case S_J: return c->joint_hidden;
    default: return -1;
    }
}

static void
weight_free (GigaAmWeight *w)
{
  g_free (w->copy);
  g_free (w);
}

/* A weight read in place, read for now: its pages of the file leave this
 * process's memory (they come back from the file when read again). */
static void
weight_drop_pages (const GigaAmWeight *w)
{
  if (w->tensor)
    morok_safetensor_drop (w->tensor);
}

/* The weight's values become @copy, which the model owns (made from the
 * file's pages, which leave again). */
static void
weight_set_copy (GigaAmWeight *w, float *copy)
{
  weight_drop_pages (w);
  g_free (w->copy);
  w->data = w->copy = copy;
  w->tensor = NULL;
}

/* An error about a tensor names its file by its base name: in a folder,
 * the folder goes in front. Returns FALSE. */
static gboolean
in_folder (const MorokGigaAm *m, GError **error)
{
  if (m->folder)
    g_prefix_error (error, "%s/", m->path);
  return FALSE;
}

static gboolean
read_weight (MorokGigaAm *m, const char *name, const Size *shape, GError **error)
{
  gint64 dims[4];
  guint rank = 0;
  while (rank < 4 && shape[rank] != S_END)
    {
      dims[rank] = resolve (&m->config, shape[rank]);
      rank++;
    }
  const MorokSafetensor *t = gigaam_tensors_get (m, name, error);
  if (!t)
    return FALSE;
  if (!morok_safetensor_check_shape (t, rank, dims, error))
    return in_folder (m, error);
  gboolean mapped = !m->tensors.made || !g_hash_table_contains (m->tensors.made, t);
  GigaAmWeight *w = g_new0 (GigaAmWeight, 1);
  w->rank = rank;
  memcpy (w->dims, dims, sizeof dims);
  g_hash_table_insert (m->weights, g_strdup (name), w);
  w->data = mapped ? morok_safetensor_f32_in_place (t) : NULL;
  w->tensor = w->data ? t : NULL;
  if (!w->data)
    weight_set_copy (w, morok_safetensor_dup_f32 (t, error));
  if (!w->data || !morok_io_check_finite (t->file, t->name, w->data, t->n_elements, error))
    return in_folder (m, error);
  /* read again from the file when a plan packs it or a kernel reads it:
   * until then neither the file's pages nor a copy are resident */
  if (mapped)
    morok_safetensor_drop (t);
  return TRUE;
}

/* The subsampling runs channels last (gigaam-encoder.c): each conv weight
 * [o, c, taps...] is stored taps first, [taps..., c, o], so that a run of
 * taps over a channels-last input is one contiguous [taps · c, o] matrix;
 * v2's pre_encode.out reads the conv output flattened as (c, f) upstream
 * and as (f, c) here: W'[o, f·d + c] = W[o, c·F' + f]. */
static void
reorder_conv_weight (GigaAmWeight *w)
{
  gint64 o_n = w->dims[0], c_n = w->dims[1], taps = 1;
  for (guint i = 2; i < w->rank; i++)
    taps *= w->dims[i];
  float *r = g_new (float, o_n *c_n *taps);
  for (gint64 o = 0; o < o_n; o++)
    for (gint64 c = 0; c < c_n; c++)
      for (gint64 k = 0; k < taps; k++)
        r[(k * c_n + c) * o_n + o] = w->data[(o * c_n + c) * taps + k];
  weight_set_copy (w, r);
  gint64 dims[4];
  for (guint i = 2; i < w->rank; i++)
    dims[i - 2] = w->dims[i];
  dims[w->rank - 2] = c_n;
  dims[w->rank - 1] = o_n;
  memcpy (w->dims, dims, sizeof (gint64) * w->rank);
}

static void
reorder_subsampling_weights (MorokGigaAm *m)
{
  reorder_conv_weight (g_hash_table_lookup (m->weights, "encoder.pre_encode.conv.0.weight"));
  reorder_conv_weight (g_hash_table_lookup (m->weights, "encoder.pre_encode.conv.2.weight"));
  if (m->config.version != MOROK_GIGAAM_V2)
    return;
  GigaAmWeight *w = g_hash_table_lookup (m->weights, "encoder.pre_encode.out.weight");
  gint64 d = m->config.d_model, cols = w->dims[1], f_n = cols / d;
  float *r = g_new (float, d *cols);
  for (gint64 o = 0; o < d; o++)
    for (gint64 ch = 0; ch < d; ch++)
      for (gint64 f = 0; f < f_n; f++)
        r[o * cols + f * d + ch] = w->data[o * cols + ch * f_n + f];
  weight_set_copy (w, r);
}

static gboolean
read_weights (MorokGigaAm *m, GError **error)
{
  MorokGigaAmConfig *c = &m->config;
  /* the depthwise kernel comes from the weights; a config value must agree */
  const MorokSafetensor *dw
      = gigaam_tensors_get (m, "encoder.layers.0.conv.depthwise_conv.weight", error);
  if (!dw)
    return FALSE;
  if (!morok_safetensor_check_shape (dw, 3, (gint64[]){ c->d_model, 1, -1 }, error))
    return in_folder (m, error);
  c->conv_kernel = (guint) dw->dims[2];
  if (c->conv_kernel % 2 == 0)
    {
      g_set_error (error, MOROK_IO_ERROR, MOROK_IO_ERROR_MALFORMED,
                   "%s: tensor 'encoder.layers.0.conv.depthwise_conv.weight' has an even kernel "
                   "(%u); the conv module needs an odd one",
                   m->file, c->conv_kernel);
      return FALSE;
    }
  for (guint k = 0; k < G_N_ELEMENTS (weight_specs); k++)
    {
      const WeightSpec *s = &weight_specs[k];
      if ((s->when == W_V3 && c->version != MOROK_GIGAAM_V3)
          || (s->when == W_V2 && c->version != MOROK_GIGAAM_V2)
          || (s->when == W_BN && !c->conv_batch_norm)
          || (s->when == W_CTC && c->head != MOROK_GIGAAM_HEAD_CTC)
          || (s->when == W_RNNT && c->head != MOROK_GIGAAM_HEAD_RNNT))
        continue;
      guint n = !strstr (s->name, "%u") ? 1 : s->when == W_RNNT ? c->pred_layers : c->n_layers;
      for (guint i = 0; i < n; i++)
        {
          g_autofree char *name = g_strdup_printf (s->name, i);
          if (!read_weight (m, name, s->shape, error))
            return FALSE;
        }
    }
  reorder_subsampling_weights (m);
  return TRUE;
}

/* ---- the front-end's constants ---- */

/* dft [n_fft, 2Q]: column q < Q is w[n] cos (2π q n / N), column Q + q is
 * -w[n] sin (2π q n / N), with the stored window centred in the frame as
 * torch.stft places it. The angles are reduced exactly ((q n) mod N) and
 * evaluated in double. dft_hi + dft_lo is the same basis split for the
 * front-end's exact product (gigaam-frontend.c): dft_hi holds its leading
 * 7 bits (a multiple of 2^-7), dft_lo the rest. mel_fb2 [2Q, F] is the
 * filterbank twice, so that (re | im)² · mel_fb2 = Σ_q (re² + im²) fb[q]. */
static void
make_frontend_tables (MorokGigaAm *m)
{
  const MorokGigaAmConfig *c = &m->config;
  guint n_fft = c->n_fft, q_n = n_fft / 2 + 1, off = (n_fft - c->win_length) / 2;
  const GigaAmWeight *win
      = g_hash_table_lookup (m->weights, "preprocessor.featurizer.0.spectrogram.window");
  const GigaAmWeight *fb
      = g_hash_table_lookup (m->weights, "preprocessor.featurizer.0.mel_scale.fb");
  gsize n = (gsize) n_fft * 2 * q_n;
  m->dft = g_new0 (float, n);
  m->dft_hi = g_new0 (float, n);
  m->dft_lo = g_new0 (float, n);
  for (guint k = 0; k < n_fft; k++)
    {
      double w = k >= off && k < off + c->win_length ? win->data[k - off] : 0.0;
      for (guint q = 0; q < 2 * q_n; q++)
        {
          guint f = q % q_n;
          double a = 2.0 * G_PI * (double) (((guint64) f * k) % n_fft) / n_fft;
          double v = q < q_n ? w * cos (a) : -w * sin (a);
          double hi = trunc (v * 128.0) / 128.0;
          m->dft[(gsize) k * 2 * q_n + q] = (float) v;
          m->dft_hi[(gsize) k * 2 * q_n + q] = (float) hi;
          m->dft_lo[(gsize) k * 2 * q_n + q] = (float) (v - hi);
        }
    }
  m->mel_fb2 = g_new (float, (gsize) 2 * q_n * c->n_mels);
  memcpy (m->mel_fb2, fb->data, sizeof (float) * q_n * c->n_mels);
  memcpy (m->mel_fb2 + (gsize) q_n * c->n_mels, fb->data, sizeof (float) * q_n * c->n_mels);
}

/* ---- the model ---- */

/* A torch checkpoint or a folder's JSON given where a model is read: say
 * what to give instead rather than fail on its bytes. */
static gboolean
check_not_checkpoint (const char *path, GError **error)
{
  if (g_str_has_suffix (path, ".json"))
    {
      g_set_error (error, MOROK_IO_ERROR, MOROK_IO_ERROR_UNSUPPORTED,
                   "%s: a JSON file: give the model's folder, which holds config.json and the "
                   "weights",
                   path);
      return FALSE;
    }
  if (!g_str_has_suffix (path, ".ckpt") && !g_str_has_suffix (path, ".pt")
      && !g_str_has_suffix (path, ".bin"))
    return TRUE;
  g_set_error (error, MOROK_IO_ERROR, MOROK_IO_ERROR_UNSUPPORTED,
               "%s: a PyTorch checkpoint, which Morok does not read: convert it with "
               "scripts/gigaam/convert.py (docs/gigaam-model.md), or give the model's "
               "folder as downloaded (config.json, model.safetensors)",
               path);
  return FALSE;
}

/* The normalised config of a Morok file: its "morok.config". */
static char *
open_file (MorokGigaAm *m, const char *path, GError **error)
{
  if (!check_not_checkpoint (path, error))
    return NULL;
  MorokSafetensors *st = morok_safetensors_open (path, error);
  if (!st)
    return NULL;
  g_ptr_array_add (m->tensors.files, st);
  const char *json = morok_safetensors_metadata (st, "morok.config");
  if (!json)
    g_set_error (error, MOROK_IO_ERROR, MOROK_IO_ERROR_NOT_FOUND,
                 "%s: no 'morok.config' in __metadata__: not a Morok GigaAM file "
                 "(convert it with scripts/gigaam/convert.py, or give the model's folder "
                 "as downloaded)",
                 m->file);
  return g_strdup (json);
}

MorokGigaAm *
morok_gigaam_load (const char *path, GError **error)
{
  g_return_val_if_fail (path != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);
  g_autoptr (MorokGigaAm) m = g_new0 (MorokGigaAm, 1);
  m->ref_count = 1;
  m->path = g_strdup (path);
  m->file = g_path_get_basename (path);
  m->weights
      = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) weight_free);
  m->tables = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  m->tensors.files = g_ptr_array_new_with_free_func ((GDestroyNotify) morok_safetensors_free);
  m->folder = g_file_test (path, G_FILE_TEST_IS_DIR);
  g_autofree char *json = m->folder ? gigaam_hub_open (m, path, error) : open_file (m, path, error);
  if (!json || !gigaam_read_config (m, json, error))
    return NULL;
  if (m->folder)
    gigaam_hub_add_frontend (m);
  if (!read_weights (m, error))
    return NULL;
  make_frontend_tables (m);
  /* all of it, once all is read: a read maps its neighbours' pages too
   * (the kernel's fault-around), those of tensors dropped before it */
  morok_gigaam_drop_file_pages (m);
  m->max_batch = 1;
  m->max_samples = (gint64) DEFAULT_MAX_SECONDS * m->config.sample_rate;
  g_debug ("%s: GigaAM %s, %u layers, d_model %u, %u heads, conv kernel %u, %u classes", m->file,
           m->config.version == MOROK_GIGAAM_V3 ? "v3" : "v2", m->config.n_layers,
           m->config.d_model, m->config.n_heads, m->config.conv_kernel, m->config.n_classes);
  return g_steal_pointer (&m);
}

MorokGigaAm *
morok_gigaam_ref (MorokGigaAm *model)
{
  g_return_val_if_fail (model != NULL, NULL);
  g_atomic_int_inc (&model->ref_count);
  return model;
}

void
morok_gigaam_unref (MorokGigaAm *model)
{
  if (!model || !g_atomic_int_dec_and_test (&model->ref_count))
    return;
  g_strfreev (model->config.tokens);
  g_free (model->config.piece_types);
  g_free (model->config.unk_surface);
  g_hash_table_unref (model->weights);
  gigaam_tensors_clear (&model->tensors);
  g_hash_table_unref (model->tables);
  g_free (model->dft);
  g_free (model->dft_hi);
  g_free (model->dft_lo);
  g_free (model->mel_fb2);
  g_free (model->path);
  g_free (model->file);
  g_free (model);
}

gsize
morok_gigaam_weight_bytes_owned (const MorokGigaAm *model)
{
  g_return_val_if_fail (model != NULL, 0);
  gsize bytes = 0;
  GHashTableIter iter;
  gpointer value;
  g_hash_table_iter_init (&iter, model->weights);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    {
      const GigaAmWeight *w = value;
      gsize n = w->copy ? 1 : 0;
      for (guint i = 0; n && i < w->rank; i++)
        n *= (gsize) w->dims[i];
      bytes += n * sizeof (float);
    }
  return bytes;
}

const MorokGigaAmConfig *
morok_gigaam_config (const MorokGigaAm *model)
{
  g_return_val_if_fail (model != NULL, NULL);
  return &model->config;
}

const char *
morok_gigaam_path (const MorokGigaAm *model)
{
  g_return_val_if_fail (model != NULL, NULL);
  return model->path;
}

gboolean
morok_gigaam_check_sample_rate (const MorokGigaAm *model, guint rate, GError **error)
{
  g_return_val_if_fail (model != NULL, FALSE);
  if (model->config.sample_rate == rate)
    return TRUE;
  g_set_error (error, MOROK_IO_ERROR, MOROK_IO_ERROR_UNSUPPORTED,
               "%s: 'preprocessor.sample_rate' is %u Hz, the audio is %u Hz", model->file,
               model->config.sample_rate, rate);
  return FALSE;
}

void
morok_gigaam_set_limits (MorokGigaAm *model, guint max_batch, gint64 max_samples)
{
  g_return_if_fail (model != NULL);
  g_return_if_fail (max_batch >= 1 && max_samples >= morok_gigaam_min_samples (model));
  model->max_batch = max_batch;
  model->max_samples = max_samples;
}

guint
morok_gigaam_max_batch (const MorokGigaAm *model)
{
  g_return_val_if_fail (model != NULL, 0);
  return model->max_batch;
}

gint64
morok_gigaam_max_samples (const MorokGigaAm *model)
{
  g_return_val_if_fail (model != NULL, 0);
  return model->max_samples;
}

gint64
morok_gigaam_min_samples (const MorokGigaAm *model)
{
  g_return_val_if_fail (model != NULL, 0);
  return model->config.center ? model->config.n_fft / 2 + 1 : model->config.n_fft;
}

gint64
morok_gigaam_feature_frames (const MorokGigaAm *model, gint64 samples)
{
  g_return_val_if_fail (model != NULL, 0);
  const MorokGigaAmConfig *c = &model->config;
  if (c->center)
    return samples < 0 ? 0 : samples / c->hop_length + 1;
  return samples < c->n_fft ? 0 : (samples - c->n_fft) / c->hop_length + 1;
}

gint64
morok_gigaam_encoded_frames (const MorokGigaAm *model, gint64 samples)
{
  g_return_val_if_fail (model != NULL, 0);
  return gigaam_stage_frames (model, samples, 2);
}

gint64
gigaam_stage_frames (const MorokGigaAm *model, gint64 samples, guint stage)
{
  gint64 t = morok_gigaam_feature_frames (model, samples);
  for (guint i = 0; i < stage; i++)
    t = subsample_length (&model->config, t);
  return t;
}

void
morok_gigaam_vocabulary (const MorokGigaAm *model, MorokVocabulary *out)
{
  g_return_if_fail (model != NULL && out != NULL);
  const MorokGigaAmConfig *c = &model->config;
  *out = (MorokVocabulary){ .tokens = (const char *const *) c->tokens,
                            .n_tokens = c->n_classes - 1,
                            .sentencepiece = c->vocab_type == MOROK_GIGAAM_VOCAB_SENTENCEPIECE,
                            .types = c->piece_types,
                            .unk_surface = c->unk_surface,
                            .strip_first_space = c->strip_first_space };
}

double
morok_gigaam_frame_seconds (const MorokGigaAm *model)
{
  g_return_val_if_fail (model != NULL, 0);
  return 4.0 * model->config.hop_length / model->config.sample_rate;
}

/* ---- for the builders ---- */

/* A plan has packed the weight and reads it nowhere else: the model lets go
 * of its copy, or of the file's pages that the packing read. */
static void
release_weight (gpointer weight, gconstpointer data)
{
  GigaAmWeight *w = weight;
  if (w->data != data)
    return;
  weight_drop_pages (w);
  g_clear_pointer (&w->copy, g_free);
  w->data = NULL;
}

void
morok_gigaam_drop_file_pages (MorokGigaAm *model)
{
  g_return_if_fail (model != NULL);
  for (guint i = 0; i < model->tensors.files->len; i++)
    morok_safetensors_drop (model->tensors.files->pdata[i]);
}

void
morok_gigaam_set_release_packed (MorokGigaAm *model, gboolean release)
{
  g_return_if_fail (model != NULL);
  model->release_packed = release;
}

GigaAmWeight *
gigaam_weight_data (MorokGigaAm *model, const char *name, GError **error)
{
  GigaAmWeight *w = g_hash_table_lookup (model->weights, name);
  if (w && w->data)
    return w;
  g_set_error (error, MOROK_TENSOR_ERROR, MOROK_TENSOR_ERROR_ARGUMENT,
               w ? "%s: weight '%s' was freed once a plan had packed it "
                   "(morok_gigaam_set_release_packed): load the model again"
                 : "%s: the model has no weight '%s'",
               model->file, name);
  return NULL;
}

MorokTensor *
gigaam_weight (MorokGigaAm *model, MorokGraph *g, GError **error, const char *fmt, ...)
{
  if (error && *error)
    return NULL;
  va_list ap;
  va_start (ap, fmt);
  g_autofree char *name = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  GigaAmWeight *w = gigaam_weight_data (model, name, error);
  if (!w)
    return NULL;
  if (!model->release_packed)
    return morok_tensor_weight (g, name, MOROK_DTYPE_F32, w->data, w->dims, w->rank);
  return morok_tensor_weight_with_release (g, name, MOROK_DTYPE_F32, w->data, w->dims, w->rank,
                                           release_weight, w);
}

float *
gigaam_table (MorokGigaAm *model, const char *name, gsize n, gboolean *out_fill)
{
  g_autofree char *key = g_strdup_printf ("%s:%" G_GSIZE_FORMAT, name, n);
  float *t = g_hash_table_lookup (model->tables, key);
  *out_fill = t == NULL;
  if (!t)
    {
      t = g_new0 (float, MAX (n, 1));
      g_hash_table_insert (model->tables, g_steal_pointer (&key), t);
    }
  return t;
}
