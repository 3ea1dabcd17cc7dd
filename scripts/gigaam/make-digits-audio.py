#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Write a recording of spoken digit sequences in held-out voices, with its truth.

usage: make-digits-audio.py [--sequences N] [--seed S] OUT.wav

OUT.wav (16 kHz mono, 16-bit) holds N sequences of 1-6 digit words
(digits_speech.py), each in its own voice drawn from the held-out accents,
variants and speeds that train-digits.py never uses, separated by 0.6-1.0 s
of near silence. OUT.json beside it holds the truth:

    {"sample_rate": 16000,
     "sequences": [{"voice": "en-us+m3", "speed": 155, "pitch": 40,
                    "text": "four two", "start": 0.31, "end": 1.12}, ...],
     "words": [{"word": "four", "start": 0.31, "end": 0.66}, ...]}

times in seconds from the start of the file; a word runs from its first to
its last sound (digits_speech.synth_word). Needs espeak-ng. The same seed
gives the same files with the same espeak-ng. tests/fixtures/digits-16k.wav
was made with the defaults (3 sequences, seed 1).
"""

import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import digits_speech  # noqa: E402

SR = digits_speech.SR


def make_recording(n_sequences, seed):
    """(wave f32, truth dict) of n_sequences in held-out voices."""
    rng = np.random.default_rng(seed)
    voices = digits_speech.held_out_voices(rng, n_sequences)
    bank = digits_speech.synth_bank(voices)
    pieces, sequences, words, pos = [], [], [], 0
    for voice in voices:
        if pieces:
            gap = np.zeros(int(rng.uniform(0.6, 1.0) * SR), np.float32)
            gap += (rng.standard_normal(len(gap)) * 1e-4).astype(np.float32)
            pieces.append(gap)
            pos += len(gap)
        wave, seq_words = digits_speech.make_utterance(rng, {voice: bank[voice]})
        t0 = pos / SR
        seq_words = [{"word": w["word"], "start": round(t0 + w["start"], 4),
                      "end": round(t0 + w["end"], 4)} for w in seq_words]
        accent, variant, speed, pitch = voice
        sequences.append({"voice": "%s+%s" % (accent, variant), "speed": speed,
                          "pitch": pitch, "text": digits_speech.text_of(seq_words),
                          "start": seq_words[0]["start"], "end": seq_words[-1]["end"]})
        words += seq_words
        pieces.append(wave)
        pos += len(wave)
    truth = {"sample_rate": SR, "sequences": sequences, "words": words}
    return np.concatenate(pieces), truth


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out", help="output .wav; the truth goes to the same name with .json")
    ap.add_argument("--sequences", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    wave, truth = make_recording(args.sequences, args.seed)
    digits_speech.write_wav(args.out, wave)
    with open(os.path.splitext(args.out)[0] + ".json", "w") as f:
        json.dump(truth, f, indent=1)
        f.write("\n")
    print("%s: %.2f s, %d words" % (args.out, len(wave) / SR, len(truth["words"])))


if __name__ == "__main__":
    main()
