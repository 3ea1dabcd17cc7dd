/* SPDX-License-Identifier: MIT */
/* The kernel library's build facts where meson found no clang: there is no
 * library, and every unit compiles the kernel headers' bodies itself. */
#include "kernels/kernel-lib.h"

const MorokKernelLibBuild morok_kernel_lib_build = { 0 };
