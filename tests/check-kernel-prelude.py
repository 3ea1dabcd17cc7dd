#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Compiles the kernel prelude as generated code gets it, the kernel headers
pasted in order with their `#pragma once` lines dropped (as
kernels/embed-headers.py does), followed by a kernel that calls into every
header, for each MOROK_ISA_* with the JIT's flags and -Werror, and checks
that the object references no outside symbol (the in-memory loader resolves
none).

usage: check-kernel-prelude.py CLANG NM OUTDIR HEADER...
"""
import os
import subprocess
import sys

clang, nm, outdir, headers = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
prelude = ""
for h in headers:
    with open(h, encoding="utf-8") as f:
        prelude += "\n".join(l for l in f.read().splitlines() if not l.startswith("#pragma once")) + "\n"

KERNEL = r"""
void
morok_k0 (void *const *bufs, const int64_t *vars, uint32_t tid, uint32_t nthreads)
{
  float *x = bufs[0], *y = bufs[1];
  uint16_t *h = bufs[2];
  int64_t n = vars[0] * nthreads + tid;
  for (int64_t i = 0; i < n; i++)
    y[i] = morok_expf (x[i]) + morok_logf (x[i]) + morok_tanhf (x[i]) + morok_sigmoidf (x[i])
           + morok_erff (x[i]) + morok_sqrtf (x[i]) + morok_powf (x[i], y[i])
           + morok_f16_to_f32 (h[i]) + morok_bf16_to_f32 (h[i]);
  for (int64_t i = 0; i < n; i++)
    h[i] = morok_f32_to_f16 (y[i]) ^ morok_f32_to_bf16 (y[i]);
#ifdef MOROK_ISA_AVX512 /* a 16-wide vector in a call is an AVX-512 register */
  for (int64_t i = 0; i + 16 <= n; i += 16)
    {
      morok_f32x16 v = *(const morok_f32x16 *) (x + i);
      *(morok_f32x16 *) (y + i) = morok_exp_f32x16 (v) + morok_log_f32x16 (v)
                                  + morok_tanh_f32x16 (v) + morok_sigmoid_f32x16 (v);
    }
#endif
#ifndef MOROK_ISA_PORTABLE /* portable kernels are scalar loops */
  for (int64_t i = 0; i + 8 <= n; i += 8)
    {
      morok_f32x8 w = *(const morok_f32x8 *) (x + i);
      *(morok_f32x8 *) (y + i) += morok_exp_f32x8 (w) + morok_log_f32x8 (w)
                                  + morok_tanh_f32x8 (w) + morok_sigmoid_f32x8 (w);
    }
#endif
  morok_gemm_f32 (vars[1], vars[2], vars[3], x, vars[3], 1, y, 1, vars[3], bufs[3], vars[2], 0);
  const float *fr[2] = { x, y };
  morok_dft_mag_f32 (vars[4], vars[5], fr, vars[6], x, 1, y, bufs[3]);
}
"""
FLAGS = ["-O2", "-ffreestanding", "-fno-math-errno", "-fassociative-math", "-fno-signed-zeros",
         "-fno-trapping-math", "-ffp-contract=fast", "-Wall", "-Wextra", "-Werror",
         "-Wno-unused-parameter", "-x", "c", "-c", "-"]
ISAS = {"AVX512": ["-march=native", "-mavx512f", "-mavx512vl", "-mavx512bw", "-mavx512dq"],
        "AVX2": ["-march=native", "-mavx2", "-mfma"], "PORTABLE": []}
failed = False
os.makedirs(outdir, exist_ok=True)
for isa, march in ISAS.items():
    src = "#define MOROK_ISA_%s 1\n%s%s" % (isa, prelude, KERNEL)
    obj = os.path.join(outdir, "prelude-%s.o" % isa.lower())
    cc = subprocess.run([clang] + FLAGS + march + ["-o", obj], input=src, text=True,
                        capture_output=True)
    if cc.returncode != 0:
        print("%s: clang failed:\n%s" % (isa, cc.stderr))
        failed = True
        continue
    out = subprocess.run([nm, "-u", obj], check=True, capture_output=True, text=True).stdout
    undefined = [l.split()[-1] for l in out.splitlines() if l.strip()]
    print("%s: %s" % (isa, "undefined symbols: " + ", ".join(undefined) if undefined else "ok"))
    failed = failed or bool(undefined)
sys.exit(1 if failed else 0)
