#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks that objects reference no outside symbol: generated kernels are
loaded by Morok's own ELF loader, which resolves nothing outside the object,
so the kernel headers must never make clang emit a libm/libc call (roundevenf
without SSE4.1, a memcpy under another name, ...). Run on the per-ISA builds of
the headers (kernels/kernel-headers-export.c).

usage: check-freestanding.py NM OBJECT...
"""
import subprocess
import sys

nm, objects = sys.argv[1], sys.argv[2:]
bad = False
for obj in objects:
    out = subprocess.run([nm, "-u", obj], check=True, capture_output=True, text=True).stdout
    symbols = [line.split()[-1] for line in out.splitlines() if line.strip()]
    if symbols:
        print("%s: undefined symbols: %s" % (obj, ", ".join(symbols)))
        bad = True
    else:
        print("%s: no undefined symbols" % obj)
sys.exit(1 if bad else 0)
