/* SPDX-License-Identifier: MIT */
#define G_LOG_DOMAIN "morok-io"

#include "morok-io.h"

/* clang-format off */
G_DEFINE_QUARK (morok-io-error-quark, morok_io_error)
/* clang-format on */
