/* SPDX-License-Identifier: MIT */
/* morok-io.c: the error domain of the weight readers. */
#include "io/morok-io.h"

/* clang-format off */
G_DEFINE_QUARK (morok-io-error-quark, morok_io_error)
/* clang-format on */
