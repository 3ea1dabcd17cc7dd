/* SPDX-License-Identifier: MIT */
/* Fuzz target: the ELF loader (kernels/elf-loader.c), with objects as clang
 * emits them as seeds. Loads and frees: the loaded code is never called. */
#include "fuzz-input.h"

#include "kernels/morok-compiler.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  fuzz_input_setup ();
  morok_object_free (morok_object_load (data, size, NULL));
  return 0;
}
