/* SPDX-License-Identifier: MIT */
/* Fuzz target: building the Silero VAD model from an ONNX file
 * (core/models/silero-vad.c): finding the rate switch and the network's
 * version in the graph structure, and checking and copying the weights.
 * Nothing is planned or compiled. */
#include "fuzz-input.h"

#include "models/silero-vad.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  guint n_rates;

  fuzz_input_setup ();
  g_autoptr (FuzzFile) file = fuzz_file_new (data, size);
  g_autoptr (MorokSileroVad) vad = morok_silero_vad_load (file->path, NULL);
  if (vad == NULL)
    return 0;
  (void) morok_silero_vad_version_name (morok_silero_vad_version (vad));
  const guint *rates = morok_silero_vad_sample_rates (vad, &n_rates);
  for (guint k = 0; k < n_rates; k++)
    (void) morok_silero_vad_input_len (vad, rates[k]);
  (void) morok_silero_vad_output_len (vad);
  return 0;
}
