#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Fit the polynomial coefficients of kernels/include/morok-vmath.h.

Each polynomial approximates the smooth part left after range reduction (see
the header for the reductions), fitted with Chebyshev interpolation in 40-digit
arithmetic, which is within a small factor of the minimax error, and printed
rounded to float, lowest degree first. The header's error table is measured on
the float code, not taken from these fit errors.

usage: python3 kernels/fit-vmath.py   (needs python3-mpmath)
"""
import struct

import mpmath as mp

mp.mp.dps = 40


def f32(v):
    return struct.unpack("f", struct.pack("f", float(v)))[0]


def fit(name, f, a, b, deg):
    c, err = mp.chebyfit(f, [a, b], deg + 1, error=True)
    print("%s: degree %d on [%g, %g], fit error %.2g" % (name, deg, a, b, float(err)))
    print("  " + ", ".join("%.9gf" % f32(x) for x in reversed(c)))


def safe(f, at0):
    return lambda v: at0 if v == 0 else f(v)


half_ln2 = mp.log(2) / 2
# exp: e^r = 1 + r + r^2 Q(r), |r| <= ln2/2
fit("exp Q(r)", safe(lambda r: (mp.exp(r) - 1 - r) / r**2, mp.mpf(1) / 2), -half_ln2, half_ln2, 4)

# log: log(1+f) = f - f^2/2 + s (f^2/2 + z P(z)), s = f/(2+f), z = s^2,
# 1+f in [sqrt(1/2), sqrt(2)) so z <= ((sqrt2-1)/(sqrt2+1))^2
zmax = ((mp.sqrt(2) - 1) / (mp.sqrt(2) + 1)) ** 2


def log_p(z):
    s = mp.sqrt(z)
    return (mp.log((1 + s) / (1 - s)) - 2 * s) / s / z


fit("log P(z)", safe(log_p, mp.mpf(2) / 3), 0, zmax, 3)

# tanh, |x| < 0.625: tanh x = x + x^3 P(x^2)
fit("tanh P(z)", safe(lambda z: (mp.tanh(mp.sqrt(z)) - mp.sqrt(z)) / mp.sqrt(z) ** 3,
                      -mp.mpf(1) / 3), 0, mp.mpf(0.625) ** 2, 5)

# erf, |x| < 1: erf x = x + x P(x^2)
fit("erf P(z)", safe(lambda z: mp.erf(mp.sqrt(z)) / mp.sqrt(z) - 1, 2 / mp.sqrt(mp.pi) - 1), 0, 1, 6)

# erfc, 1 <= x < 4: erfc x = exp(-x^2) G(s), s = (1/(1+x) - 0.35) / 0.15 in [-1, 1]
fit("erfc G(s)", lambda s: mp.erfc(1 / (0.35 + 0.15 * s) - 1) * mp.exp((1 / (0.35 + 0.15 * s) - 1) ** 2),
    -1, 1, 7)
