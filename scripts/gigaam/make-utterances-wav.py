#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes tests/fixtures/gigaam-utterances-16k.wav: the three utterances of
gigaam-audio.safetensors (audio.0, audio.1, audio.2; PCM-exact values
k/32768, make-fixtures.py) as one 16 kHz mono S16LE recording, each after
SILENCE_S of digital silence and with SILENCE_S after the last, for the
examples' and elements' end-to-end tests.

usage: make-utterances-wav.py [FIXTURES_DIR]   (default tests/fixtures)
Standard library only: the safetensors header is read as its format says
(u64 length, JSON, data).
"""
import json
import os
import struct
import sys
import wave

RATE = 16000
SILENCE_S = 0.6


def read_f32(path, names):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack_from("<Q", data, 0)
    header = json.loads(data[8:8 + n])
    out = {}
    for name in names:
        t = header[name]
        assert t["dtype"] == "F32", name
        begin, end = t["data_offsets"]
        out[name] = struct.unpack_from("<%df" % ((end - begin) // 4), data, 8 + n + begin)
    return out


def main():
    folder = sys.argv[1] if len(sys.argv) > 1 else os.path.join("tests", "fixtures")
    names = ["audio.%d" % i for i in range(3)]
    audio = read_f32(os.path.join(folder, "gigaam-audio.safetensors"), names)
    silence = [0] * int(SILENCE_S * RATE)
    pcm = []
    for name in names:
        pcm += silence
        samples = [round(v * 32768) for v in audio[name]]
        assert all(-32768 <= s < 32768 and s / 32768 == v for s, v in zip(samples, audio[name]))
        pcm += samples
    pcm += silence
    path = os.path.join(folder, "gigaam-utterances-16k.wav")
    with wave.open(path, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(RATE)
        w.writeframes(struct.pack("<%dh" % len(pcm), *pcm))
    print("%s: %d samples" % (path, len(pcm)))


if __name__ == "__main__":
    main()
