/* SPDX-License-Identifier: MIT */
/* Fuzz target: the safetensors reader (core/io/safetensors.c) and loading a
 * GigaAM model from it (core/models/gigaam.c): the header, every tensor's
 * values, the metadata, then the "morok.config" JSON, the weights checked
 * against it and the front-end's tables. No graph is built. */
#include "fuzz-input.h"

#include "io/safetensors.h"
#include "models/gigaam.h"

static void
visit_safetensors (const MorokSafetensors *st)
{
  for (guint k = 0; k < morok_safetensors_n_tensors (st); k++)
    {
      const MorokSafetensor *t = morok_safetensors_nth (st, k);
      (void) morok_safetensors_find (st, t->name);
      if (morok_safetensor_dtype_is_float (t->dtype))
        g_free (morok_safetensor_dup_f32 (t, NULL));
    }
  g_autofree const char **keys = morok_safetensors_metadata_keys (st);
  for (guint k = 0; keys[k] != NULL; k++)
    (void) morok_safetensors_metadata (st, keys[k]);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  fuzz_input_setup ();
  g_autoptr (FuzzFile) file = fuzz_file_new (data, size);
  g_autoptr (MorokSafetensors) st = morok_safetensors_open (file->path, NULL);
  if (st == NULL)
    return 0;
  visit_safetensors (st);

  g_autoptr (MorokGigaAm) model = morok_gigaam_load (file->path, NULL);
  if (model == NULL)
    return 0;
  (void) morok_gigaam_config (model);
  gint64 samples = morok_gigaam_min_samples (model);
  (void) morok_gigaam_encoded_frames (model, samples);
  (void) morok_gigaam_encoded_frames (model, morok_gigaam_max_samples (model));
  return 0;
}
